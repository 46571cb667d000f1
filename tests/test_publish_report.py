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
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                     if p.is_file() and not p.name.startswith("."))  # not the local build manifest
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


SCORE_FOR_LEADERBOARD = {
    "ref_l4": lambda s: ["--references", str(s["ref_l4"]), "--predictions", str(s["ref_l4"] / "predictions_good.json"),
                         "--split", "test"],
    "omnilabel": lambda s: ["--references", str(s["omnilabel"] / "dataset_val.json"),
                            "--predictions", str(s["omnilabel"] / "predictions_good.json")],
    "ovdeval": lambda s: ["--references", str(s["ovdeval"] / "annotations"),
                          "--predictions", str(s["ovdeval"] / "predictions_good")],
    "nocaps": lambda s: ["--references", str(s["nocaps"] / "nocaps_val_captions.json"),
                         "--predictions", str(s["nocaps"] / "predictions_good.json")],
}


@pytest.mark.parametrize("bench", list(BUILDS))
def test_registration_eval_yaml_and_eval_results_agree_and_dry_run_lists_the_folder(
        bench, tmp_path, sample_release, omnilabel_sample, ovdeval_sample, nocaps_sample):
    from vlbench.benchmarks import get_benchmark

    samples = {"ref_l4": sample_release, "omnilabel": omnilabel_sample, "ovdeval": ovdeval_sample,
               "nocaps": nocaps_sample}
    args, _ = BUILDS[bench]
    out = tmp_path / "hub"
    run_cli("build", bench, *args(samples), "--out", str(out), check=True)
    # the dry run lists exactly the files of the folder, eval.yaml included
    proc = run_cli("publish", "dataset", bench, "--folder", str(out), "--repo-id", f"me/{bench}", "--dry-run", check=True)
    listed = sorted(line.split()[-1] for line in proc.stdout.split("--- README.md ---", 1)[0].splitlines()
                    if line.strip() and line.split()[0][0].isdigit() and not line.strip().endswith("file(s)"))
    assert listed == sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                     if p.is_file() and not p.name.startswith("."))  # not the local build manifest
    assert "eval.yaml" in listed

    # eval.yaml: the registration fields; every task points at a config/split the card lists
    spec = yaml.safe_load((out / "eval.yaml").read_text())
    assert spec["name"] and spec["description"] and spec["evaluation_framework"] == "vlbench"
    card = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    splits = {c["config_name"]: [f["split"] for f in c["data_files"]] for c in card["configs"]}
    assert spec["tasks"]
    for task in spec["tasks"]:
        assert task["split"] in (splits[task["config"]] if "config" in task else sum(splits.values(), [])), task

    # .eval_results from a scored result: every task_id is a task of eval.yaml, values are the result's
    result_path = tmp_path / "result.json"
    run_cli("score", bench, *SCORE_FOR_LEADERBOARD[bench](samples), "--output", str(result_path), "--quiet",
            check=True)
    proc = run_cli("report", str(result_path), "--eval-results", str(tmp_path / "model"), "--dataset-id",
                   f"me/{bench}", "--date", "2026-11-22", check=True)
    entries = yaml.safe_load((tmp_path / "model" / ".eval_results" / f"{bench}.yaml").read_text())
    metrics = json.loads(result_path.read_text())["metrics"]
    by_id = {t.id: t for t in get_benchmark(bench).eval_tasks()}
    task_ids = {t["id"] for t in spec["tasks"]}
    assert entries and len(entries) == len({e["dataset"]["task_id"] for e in entries})
    for e in entries:
        assert e["dataset"]["id"] == f"me/{bench}" and e["dataset"]["task_id"] in task_ids and e["date"] == "2026-11-22"
        task = by_id[e["dataset"]["task_id"]]
        key = f"NMS_AP_{task.config}" if bench == "ovdeval" and task.config else task.metric
        assert e["value"] == round(metrics[key], 4)


def test_metric_cards_are_generated_from_the_dataset_card_sources():
    """The metric cards' generated blocks (outputs, quirks, data, citation) equal what the sources give now."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.metric_card import REGIONS, render

    for bench in ("ref_l4", "omnilabel", "ovdeval", "nocaps"):
        text = (ROOT / "metrics" / bench / "README.md").read_text()
        assert render(text, bench) == text, f"metrics/{bench}/README.md is stale: run python -m vlbench.metric_card"
        assert all(f"vlbench.metric_card: {name} " in text for name in REGIONS), bench
        info = get_benchmark(bench)
        assert info.quirks and all(q in text for q in info.quirks) and info.citation in text
