"""Reporting and publishing: the model-index block from a result file, and publish dry runs."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import ROOT, run_cli


def test_report_model_index_round_trips_through_huggingface_hub(tmp_path, ovdeval_sample):
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    result = tmp_path / "r.json"
    run_cli("score", "ovdeval", "--references", str(ovdeval_sample / "annotations" / "color.json"), "--predictions",
            str(ovdeval_sample / "predictions_good" / "color.json"), "--output", str(result), "--quiet", check=True)
    block = run_cli("report", str(result), "--model-index", "--model-name", "det-x", "--split", "test", check=True).stdout
    card = ModelCard(f"---\n{block}---\n# det-x\n")
    name, evals = model_index_to_eval_results(card.data.to_dict()["model-index"])
    metrics = json.loads(result.read_text())["metrics"]
    assert name == "det-x"
    assert {e.metric_type: e.metric_value for e in evals} == {k: round(v, 4) for k, v in metrics.items() if v is not None}
    assert all(e.dataset_config == "color" and e.dataset_split == "test" for e in evals)
    csv_dir = tmp_path / "csv"
    run_cli("report", str(result), "--csv", str(csv_dir), check=True)
    assert {p.name for p in csv_dir.iterdir()} == {"all_metrics.csv", "per_category.csv"}


def test_report_rejects_other_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"a": 1}))
    proc = run_cli("report", str(bad), "--model-index")
    assert proc.returncode == 2 and "not a vlbench result JSON" in proc.stderr


@pytest.mark.parametrize("bench", ["ref_l4", "omnilabel", "ovdeval", "nocaps"])
def test_publish_metric_dry_run_lists_the_space_files(bench):
    proc = run_cli("publish", "metric", bench, "--folder", str(ROOT / "metrics" / bench), "--repo-id", f"me/{bench}",
                   "--dry-run", check=True)
    plan = proc.stdout.split("--- README.md ---", 1)[0]
    listed = [line.split()[-1] for line in plan.splitlines() if line.strip() and line.split()[0][0].isdigit()
              and not line.strip().endswith("file(s)")]
    assert sorted(listed) == sorted(["README.md", "app.py", f"{bench}.py", "requirements.txt"])
    front = proc.stdout.split("--- README.md ---", 1)[1].split("---")[1]
    meta = yaml.safe_load(front)
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and "evaluate" in meta["tags"]


def test_publish_dataset_dry_run_lists_exactly_the_folder(tmp_path, omnilabel_sample):
    from huggingface_hub import DatasetCard

    out = tmp_path / "hub"
    run_cli("build", "omnilabel", "--raw", str(omnilabel_sample / "dataset_val.json"), "--images",
            str(omnilabel_sample / "images"), "--out", str(out), check=True)
    proc = run_cli("publish", "dataset", "omnilabel", "--folder", str(out), "--repo-id", "me/omnilabel", "--dry-run",
                   check=True)
    listed = sorted(line.split()[-1] for line in proc.stdout.split("--- README.md ---", 1)[0].splitlines()
                    if line.strip() and line.split()[0][0].isdigit() and not line.strip().endswith("file(s)"))
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert listed == on_disk
    card = DatasetCard.load(out / "README.md")
    assert [c["config_name"] for c in card.data.to_dict()["configs"]] == ["all", "coco", "objects365", "descriptions"]


BUILDS = {
    "ref_l4": (lambda s: ["--raw", str(s["ref_l4"])], "cc-by-nc-4.0"),
    "omnilabel": (lambda s: ["--raw", str(s["omnilabel"] / "dataset_val.json"), str(s["omnilabel"] / "dataset_test.json"),
                             "--images", str(s["omnilabel"] / "images")], "other"),
    "ovdeval": (lambda s: ["--raw", str(s["ovdeval"])], "openrail"),
    "nocaps": (lambda s: ["--raw", str(s["nocaps"] / "nocaps_val_captions.json"),
                          str(s["nocaps"] / "nocaps_test_image_info.json"), "--images", str(s["nocaps"] / "images")],
               "cc-by-2.0"),
}


@pytest.mark.parametrize("bench", list(BUILDS))
def test_every_card_parses_and_every_listed_config_split_loads(bench, tmp_path, sample_release, omnilabel_sample,
                                                               ovdeval_sample, nocaps_sample):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    samples = {"ref_l4": sample_release, "omnilabel": omnilabel_sample, "ovdeval": ovdeval_sample,
               "nocaps": nocaps_sample}
    args, license_id = BUILDS[bench]
    out = tmp_path / "hub"
    run_cli("build", bench, *args(samples), "--out", str(out), check=True)
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == license_id and data["pretty_name"] and data["task_categories"]
    assert "Known quirks of the official scorer" in card.text and "```bibtex" in card.text
    for config in data["configs"]:
        for entry in config["data_files"]:
            ds = load_dataset(str(out), config["config_name"], split=entry["split"])
            assert len(ds) > 0, (config["config_name"], entry["split"])
