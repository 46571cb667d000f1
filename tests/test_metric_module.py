"""The evaluate face: `evaluate.load("metrics/ref_l4")` offline, in the README's notebook loop."""

from __future__ import annotations

import doctest
import importlib.util
import json
import warnings

import evaluate
import pytest
from datasets import load_dataset

from conftest import ROOT, run_cli

METRIC_DIR = ROOT / "metrics" / "ref_l4"


@pytest.fixture(scope="module")
def hub_folder(sample_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("hub")
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out), check=True)
    return out


@pytest.mark.parametrize("protocol", ["official", "corrected"])
def test_notebook_loop_equals_cli(hub_folder, sample_release, tmp_path, protocol):
    preds = {p["id"]: p for p in json.loads((sample_release / "predictions_poor.json").read_text())}
    ds = load_dataset(str(hub_folder), split="val")
    metric = evaluate.load(str(METRIC_DIR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:  # whole rows, PIL image included, as the README shows
            p = preds[row["id"]]
            metric.add(prediction={"pred_bbox": p["pred_bbox"], "format": p["format"]}, reference=row)
        got = metric.compute(protocol=protocol)
    out = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(hub_folder), "--predictions",
            str(sample_release / "predictions_poor.json"), "--split", "val", "--protocol", protocol,
            "--output", str(out), "--quiet", check=True)
    assert got == json.loads(out.read_text())["metrics"]


def test_add_batch_with_dataset_batches(hub_folder, sample_release):
    preds = {p["id"]: p for p in json.loads((sample_release / "predictions_good.json").read_text())}
    ds = load_dataset(str(hub_folder), split="test")
    metric = evaluate.load(str(METRIC_DIR))
    for batch in ds.iter(batch_size=5):
        metric.add_batch(predictions=[{"pred_bbox": preds[i]["pred_bbox"], "format": preds[i]["format"]}
                                      for i in batch["id"]], references=batch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        details = metric.compute(return_details=True)
    assert details["counts"]["rows"] == len(ds)
    assert len(details["breakdowns"]["samples"]["iou"]) == len(ds)


def test_bad_prediction_in_the_loop_is_a_clear_error():
    metric = evaluate.load(str(METRIC_DIR))
    from vlbench.errors import PredictionError

    with pytest.raises(PredictionError, match="'format' is 'cxcywh'"):
        metric.compute(predictions=[{"pred_bbox": [0, 0, 1, 1], "format": "cxcywh"}],
                       references=[{"id": 0, "bbox": [0, 0, 1, 1], "ori_category_id": "o365_1"}],
                       protocol="corrected")


@pytest.mark.parametrize("metric_id", ["ref_l4", "omnilabel", "ovdeval", "nocaps"])
def test_docstring_and_card_examples_run(metric_id):
    folder = ROOT / "metrics" / metric_id
    spec = importlib.util.spec_from_file_location(f"{metric_id}_metric_module", folder / f"{metric_id}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parser = doctest.DocTestParser()
    globs = {"__name__": "doctest"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in (module._KWARGS_DESCRIPTION, (folder / "README.md").read_text()):
            test = parser.get_doctest(text.replace("```python", "").replace("```", ""), globs, "example", None, 0)
            runner = doctest.DocTestRunner()
            runner.run(test)
            assert runner.failures == 0 and runner.tries > 0
