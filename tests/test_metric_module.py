"""The evaluate face: `evaluate.load("metrics/ref_l4")` offline, in the README's notebook loop."""

from __future__ import annotations

import doctest
import importlib.util
import json
import subprocess
import sys
import warnings
from pathlib import Path

import evaluate
import pytest
from datasets import load_dataset

from conftest import ROOT, run_cli
from vlbench.benchmarks import all_benchmarks

METRIC_DIR = ROOT / "metrics" / "ref_l4"

#: every built-in benchmark, from the registry (a fifth one is checked without editing this file)
BUILT_IN = [b.id for b in all_benchmarks(plugins=False)]


@pytest.fixture(scope="module")
def hub_folder(sample_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("hub")
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out), check=True)
    return out


@pytest.mark.parametrize("protocol", ["official", "corrected"])
@pytest.mark.heavy
def test_notebook_loop_equals_cli(hub_folder, sample_release, tmp_path, protocol):
    preds = {p["id"]: p for p in json.loads((sample_release / "predictions_poor.json").read_text())}
    ds = load_dataset(str(hub_folder), split="val")
    metric = evaluate.load(str(METRIC_DIR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:  # whole rows, PIL image included, as the README shows
            p = preds[row["id"]]
            metric.add(prediction={"pred_bbox": p["pred_bbox"], "format": p["format"]},
                       reference=row)
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
        metric.add_batch(predictions=[{"pred_bbox": preds[i]["pred_bbox"],
                                       "format": preds[i]["format"]}
                                      for i in batch["id"]], references=batch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        details = metric.compute(return_details=True)
    assert details["counts"]["rows"] == len(ds)
    assert len(details["breakdowns"]["samples"]["iou"]) == len(ds)


def test_bad_prediction_in_the_loop_is_a_clear_error():
    metric = evaluate.load(str(METRIC_DIR))
    from vlbench.engine.errors import PredictionError

    with pytest.raises(PredictionError, match="'format' is 'cxcywh'"):
        metric.compute(predictions=[{"pred_bbox": [0, 0, 1, 1], "format": "cxcywh"}],
                       references=[{"id": 0, "bbox": [0, 0, 1, 1], "ori_category_id": "o365_1"}],
                       protocol="corrected")


@pytest.mark.parametrize("metric_id", BUILT_IN)
def test_docstring_and_card_examples_run(metric_id, tmp_path, monkeypatch):
    """From a working directory outside the repository: the examples load the module by
    vlbench.metric_path."""
    import vlbench

    monkeypatch.chdir(tmp_path)
    folder = Path(vlbench.metric_path(metric_id))
    # the repository's metric Space is that folder
    assert (ROOT / "metrics" / metric_id).resolve() == folder
    spec = importlib.util.spec_from_file_location(f"{metric_id}_metric_module",
                                                  folder / f"{metric_id}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parser = doctest.DocTestParser()
    globs = {"__name__": "doctest"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in (module._KWARGS_DESCRIPTION, (folder / "README.md").read_text()):
            test = parser.get_doctest(text.replace("```python", "").replace("```", ""), globs,
                                      "example", None, 0)
            runner = doctest.DocTestRunner()
            runner.run(test)
            assert runner.failures == 0 and runner.tries > 0


# -- malformed inputs through the real evaluate modules (issue #15) --------------------------------

_OMNI_REF = {"image_id": 1, "labelspace": [{"id": 7, "text": "Cup", "type": "category"}],
             "boxes": [{"id": 1, "bbox": [0, 0, 10, 10], "description_ids": [7], "iscrowd": 0}]}
_OVD_REF = {"image_id": 1,
            "boxes": [{"id": 1, "bbox": [0, 0, 10, 10], "category_id": 7, "area": 100, "iscrowd": 0,
                                      "label": "cup"}]}


@pytest.mark.parametrize("module, prediction, reference", [
    ("omnilabel",
     {"boxes": [[5, 5, 1, 1], [0, 0, 10, 10]], "scores": [0.9], "description_ids": [7, 7]},
     _OMNI_REF),
    ("ovdeval", {"boxes": [[5, 5, 1, 1], [0, 0, 10, 10]], "scores": [0.9, 0.8], "labels": [7]},
     _OVD_REF),
])
def test_unequal_per_box_lists_are_an_error_not_dropped_boxes(module, prediction, reference):
    """zip() would drop the second (correct) box and score AP 0 instead of 100."""
    from vlbench.engine.errors import PredictionError

    metric = evaluate.load(str(ROOT / "metrics" / module))
    with pytest.raises(PredictionError, match=r"example 0: the per-box lists differ in length"):
        metric.compute(predictions=[prediction], references=[reference])


def test_no_predictions_is_a_clear_error():
    from vlbench.engine.errors import PredictionError

    metric = evaluate.load(str(ROOT / "metrics" / "omnilabel"))
    with pytest.raises(PredictionError, match="no predictions were given"):
        metric.compute(predictions=None, references=[_OMNI_REF])


@pytest.mark.heavy
def test_ovdeval_module_counts_like_the_cli(ovdeval_sample):
    """Hub rows list only the categories of their boxes: the module must not call a hard-negative
    label 'not a category' (the CLI, reading the file's category list, says 0)."""
    from datasets import load_dataset

    out = ROOT / "test-artifacts" / "ovd-hub-module"
    run_cli("build", "ovdeval", "--raw", str(ovdeval_sample), "--out", str(out), "--overwrite",
            check=True)
    ds = load_dataset(str(out), "color", split="test")
    preds = json.loads((ovdeval_sample / "predictions_good" / "color.json").read_text())
    by_image: dict = {}
    for p in preds:
        e = by_image.setdefault(p["image_id"], {"boxes": [], "scores": [], "labels": []})
        (
            e["boxes"].append(p["bbox"]),
            e["scores"].append(p["score"]),
            e["labels"].append(p["category_id"]),
        )
    metric = evaluate.load(str(ROOT / "metrics" / "ovdeval"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = metric.compute(predictions=[by_image.get(r["image_id"],
                                                       {"boxes": [], "scores": [], "labels": []})
                                          for r in ds], references=list(ds), return_details=True)
    assert not [w for w in caught if "not a category" in str(w.message)]
    cli = json.loads(
        run_cli(
            "score",
            "ovdeval",
            "--references",
            str(ovdeval_sample / "annotations" / "color.json"),
            "--predictions",
            str(ovdeval_sample / "predictions_good" / "color.json"),
            "--output",
            str(out / "r.json"),
            "--quiet",
            check=True,
        ).stdout
        or (out / "r.json").read_text()
    )
    assert got["counts"]["category_without_gt"] == cli["counts"]["category_without_gt"]
    assert got["NMS_AP"] == pytest.approx(cli["metrics"]["NMS_AP"], abs=1e-9)


def test_nocaps_domain_minus_one_is_no_domain_not_out_domain():
    """ClassLabel's -1 ("no label") is no domain: the image counts overall only (out-domain keys
    stay null)."""
    metric = evaluate.load(str(ROOT / "metrics" / "nocaps"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = metric.compute(
            predictions=["a red cup"],
            references=[{"image_id": 1, "domain": -1, "captions": ["a red cup on a table"]}],
            tokenizer="python",
        )
    assert got["B1"] is not None and got["B1_out"] is None and got["CIDEr_out"] is None


def test_publish_metric_from_anywhere_writes_a_deployable_folder(tmp_path):
    """`vlbench publish metric` run outside the repository: the module, its card and app, the wheel,
    and a requirements.txt installing that wheel; nothing uploaded (--dry-run)."""
    from vlbench.library.publish import _source_checkout

    wheel = tmp_path / "vlbench-0.1.0-py3-none-any.whl"
    # a stand-in: the folder is listed, not installed (tests/test_packaging.py does)
    wheel.write_bytes(b"PK")
    out = tmp_path / "metric-space"
    proc = subprocess.run([sys.executable, "-m", "vlbench", "publish", "metric", "ovdeval",
                           "--repo-id", "me/ovdeval",
                           "--dry-run", "--wheel", str(wheel), "--out", str(out)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == {"ovdeval.py", "README.md", "app.py",
                                               "requirements.txt", wheel.name}
    assert (out / "requirements.txt").read_text().splitlines()[0] == f"./{wheel.name}[java]"
    assert "would upload to space me/ovdeval" in proc.stdout and "ovdeval.py" in proc.stdout
    again = subprocess.run([sys.executable, "-m", "vlbench", "publish", "metric", "ovdeval",
                            "--repo-id", "me/o",
                            "--dry-run", "--wheel", str(wheel), "--out", str(out)], cwd=tmp_path,
                           capture_output=True, text=True)
    assert again.returncode != 0 and "not empty" in again.stderr and "Traceback" not in again.stderr
    # this run is from the checkout; a wheel install has none
    assert _source_checkout() is not None
