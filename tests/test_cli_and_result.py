"""The CLI's contract (version, alias, exit codes, light start-up) and the result's renderings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli
from vlbench import __version__
from vlbench.engine.result import Result
from vlbench.library.publish import plan_upload

CONTRACT_KEYS = ["Acc50", "Acc75", "Acc90", "mAcc", "small_Acc50", "small_mAcc", "medium_Acc50",
                 "medium_mAcc", "large_Acc50", "large_mAcc", "class_Acc50", "class_mAcc"]


def test_version():
    proc = run_cli("--version", check=True)
    assert proc.stdout.strip() == f"vlbench {__version__}"


def test_no_command_prints_help_and_exits_2():
    proc = run_cli()
    assert proc.returncode == 2 and "score" in proc.stdout and "build" in proc.stdout


def test_cli_startup_imports_nothing_heavy():
    code = ("import sys, vlbench.cli; heavy = [m for m in ('numpy', 'pyarrow', 'datasets', "
            "'evaluate', 'pandas', 'torch', 'gradio') if m in sys.modules]; print(heavy)")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_score_never_imports_pandas_or_datasets(sample_release):
    code = ("import sys; from vlbench.cli import main; "
            f"main(['score', 'ref-l4', '--references', {str(sample_release)!r}, '--predictions', "
            f"{str(sample_release / 'predictions_good.json')!r}, '--quiet']); "
            "print([m for m in ('pandas', 'datasets', 'evaluate', 'torch') if m in sys.modules])")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_result_json_follows_the_contract(sample_release, tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("score", "ref-l4", "--references", str(sample_release), "--predictions",
                   str(sample_release / "predictions_poor.json"), "--split", "val", "--output",
                   str(out), check=True)
    result = json.loads(out.read_text())
    assert set(result) >= {"benchmark", "protocol", "metrics", "breakdowns", "counts", "warnings",
                           "version"}
    assert result["benchmark"] == "ref_l4" and result["version"] == __version__
    assert list(result["metrics"]) == CONTRACT_KEYS
    assert all(v is None or 0 <= v <= 100 for v in result["metrics"].values())
    assert result["counts"]["rows"] == 8 and result["options"]["split"] == "val"
    assert set(result["breakdowns"]) >= {"per_size", "per_source", "per_class", "samples",
                                         "acc_by_threshold"}
    # the terminal table shows the same numbers, rounded
    assert f"{result['metrics']['mAcc']:.2f}" in proc.stdout


def test_model_index_round_trips_through_huggingface_hub(sample_release):
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from vlbench import score

    result = score("ref_l4", sample_release, sample_release / "predictions_poor.json", split="val")
    from vlbench.library.model_card import model_index_yaml

    block = model_index_yaml(result, "my-grounding-model", dataset_id="vlbench/ref-l4", split="val")
    card = ModelCard(f"---\n{block}---\n\n# my-grounding-model\n")
    name, evals = model_index_to_eval_results(card.data.to_dict()["model-index"])
    assert name == "my-grounding-model"
    by_type = {e.metric_type: e for e in evals}
    assert set(by_type) == {k for k, v in result.metrics.items() if v is not None}
    for key, e in by_type.items():
        assert e.metric_value == round(result.metrics[key], 4)
        assert e.dataset_type == "vlbench/ref-l4" and e.dataset_split == "val"
        assert e.task_type == "object-detection"
    assert by_type["Acc50"].metric_name == "Acc@0.5"
    yaml.safe_load(block)  # valid YAML on its own


def test_result_json_turns_nan_into_null():
    import numpy as np

    r = Result("ref_l4", "official", {"Acc50": float("nan")},
               breakdowns={"x": np.array([1.0, np.inf])})
    data = json.loads(r.to_json())
    assert data["metrics"]["Acc50"] is None and data["breakdowns"]["x"] == [1.0, None]


@pytest.mark.heavy
def test_publish_dry_run_lists_exactly_the_folder_files(sample_release, tmp_path):
    out = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out), check=True)
    plan = plan_upload(out)
    names = [re.sub(r"-[0-9a-f]{16}\.parquet$", "-DIGEST.parquet", p) for p, _ in plan.files]
    assert names == ["README.md", "data/test-00000-of-00001-DIGEST.parquet",
                     "data/val-00000-of-00001-DIGEST.parquet", "eval.yaml"]
    proc = subprocess.run([sys.executable, str(ROOT / "dataset_scripts" / "ref_l4.py"), "--raw",
                           str(sample_release),
                           "--out", str(out), "--dry-run", "--overwrite"], capture_output=True,
                          text=True, check=True)
    assert "would upload" in proc.stdout and "4 file(s)" in proc.stdout


def test_publish_without_token_is_a_clear_error(tmp_path, sample_release, monkeypatch):
    from vlbench.engine.errors import InputError
    from vlbench.library.publish import publish_folder

    out = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out), "--eval-framework",
            "vlbench", check=True)
    monkeypatch.setenv("HF_TOKEN", "")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with pytest.raises(InputError, match="evaluation_framework 'vlbench' is not on the Hub's list"):
        publish_folder(out, "someone/ref-l4")       # checked first: the Hub would refuse the push
    spec = (out / "eval.yaml").read_text()
    (out / "eval.yaml").write_text(spec.replace("evaluation_framework: vlbench",
                                                "evaluation_framework: inspect-ai"))
    with pytest.raises(InputError, match="no Hugging Face token"):
        publish_folder(out, "someone/ref-l4")


def test_the_first_command_says_where_each_metric_is_explained(sample_release):
    """The README's first command ends by naming the metric card (its formulas and quirks), a file
    that exists."""
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                   str(sample_release / "predictions_good.json"), check=True)
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("What each metric means: the metric card ")
    card = Path(last.removeprefix("What each metric means: the metric card "))
    assert card.is_file() and "Acc50" in card.read_text()
