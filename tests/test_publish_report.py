"""Reporting and publishing: the model-index block from a result file, and publish dry runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli
from vlbench.benchmarks import all_benchmarks

#: every built-in benchmark, from the registry (a fifth one is checked without editing this file)
BUILT_IN = [b.id for b in all_benchmarks(plugins=False)]


def test_report_model_index_round_trips_through_huggingface_hub(tmp_path, ovdeval_sample):
    """The block parsed back by huggingface_hub: the result's metrics, config, split and dataset,
    and the file the number was scored against with its SHA-256 (hashlib's, over the file's bytes)
    in ``dataset.args``."""
    import hashlib

    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    result = tmp_path / "r.json"
    run_cli("score", "ovdeval", "--references", str(ovdeval_sample / "annotations" / "color.json"),
            "--predictions",
            str(ovdeval_sample / "predictions_good" / "color.json"), "--output", str(result),
            "--quiet", check=True)
    block = run_cli("report", str(result), "--model-index", "--model-name", "det-x", "--split",
                    "test", "--dataset-id", "me/ovdeval", check=True).stdout
    card = ModelCard(f"---\n{block}---\n# det-x\n")
    name, evals = model_index_to_eval_results(card.data.to_dict()["model-index"])
    metrics = json.loads(result.read_text())["metrics"]
    assert name == "det-x"
    assert {e.metric_type: e.metric_value for e in evals} == {k: round(v, 4) for k,
                                                              v in metrics.items() if v is not None}
    assert all(
        e.dataset_config == "color" and e.dataset_split == "test" and e.dataset_type == "me/ovdeval"
        for e in evals
    )
    digest = hashlib.sha256(
        (ovdeval_sample / "annotations" / "color.json").read_bytes()
    ).hexdigest()
    assert all(
        e.dataset_args == {"source": {"release": "color.json", "files": {"color.json": digest}}}
        for e in evals
    )
    csv_dir = tmp_path / "csv"
    run_cli("report", str(result), "--csv", str(csv_dir), check=True)
    assert {p.name for p in csv_dir.iterdir()} == {"all_metrics.csv", "per_category.csv"}
    # a file's name where a folder is meant is refused (it made a folder named tables.csv), and
    # nothing is made
    for flag, name in (("--csv", "tables.csv"), ("--eval-results", "results.yaml")):
        proc = run_cli("report", str(result), flag, str(tmp_path / "new" / name), "--dataset-id",
                       "me/ovdeval")
        assert (
            proc.returncode == 2
            and f"{name} names a file" in proc.stderr
            and "Traceback" not in proc.stderr
        )
        assert not (tmp_path / "new").exists()


def test_report_rejects_other_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"a": 1}))
    proc = run_cli("report", str(bad), "--model-index")
    assert proc.returncode == 2 and "not a vlbench result JSON" in proc.stderr


@pytest.mark.parametrize("bench", BUILT_IN)
def test_publish_metric_dry_run_lists_the_space_files(bench, tmp_path):
    wheel = tmp_path / "vlbench-0.1.0-py3-none-any.whl"
    # a stand-in: listed, not installed (tests/test_packaging.py installs a real one)
    wheel.write_bytes(b"PK")
    proc = run_cli("publish", "metric", bench, "--folder", str(ROOT / "metrics" / bench),
                   "--repo-id", f"me/{bench}", "--dry-run", "--wheel", str(wheel), check=True)
    plan = proc.stdout.split("--- README.md ---", 1)[0]
    listed = [
        line.split()[-1]
        for line in plan.splitlines()
        if line.strip() and line.split()[0][0].isdigit() and not line.strip().endswith("file(s)")
    ]
    assert sorted(listed) == sorted(["README.md", "app.py", f"{bench}.py", "requirements.txt",
                                     wheel.name])
    front = proc.stdout.split("--- README.md ---", 1)[1].split("---")[1]
    meta = yaml.safe_load(front)
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and "evaluate" in meta["tags"]


@pytest.mark.heavy
def test_publish_dataset_dry_run_lists_exactly_the_folder(tmp_path, omnilabel_sample):
    from huggingface_hub import DatasetCard

    out = tmp_path / "hub"
    run_cli("build", "omnilabel", "--raw", str(omnilabel_sample / "dataset_val.json"), "--images",
            str(omnilabel_sample / "images"), "--out", str(out), "--eval-framework", "vlbench",
            check=True)
    proc = run_cli("publish", "dataset", "omnilabel", "--folder", str(out), "--repo-id",
                   "me/omnilabel", "--dry-run")
    # the framework vlbench writes is not on the Hub's list
    assert proc.returncode == 1 and "refused:" in proc.stdout
    listed = sorted(
        line.split()[-1]
        for line in proc.stdout.split("--- README.md ---", 1)[0].splitlines()
        if line.strip() and line.split()[0][0].isdigit() and not line.strip().endswith("file(s)")
    )
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                     if p.is_file() and not p.name.startswith("."))  # not the local build manifest
    assert listed == on_disk
    card = DatasetCard.load(out / "README.md")
    assert [c["config_name"] for c in card.data.to_dict()["configs"]] == ["all", "coco",
                                                                          "objects365",
                                                                          "descriptions"]


BUILDS = {
    "ref_l4": (lambda s: ["--raw", str(s["ref_l4"])], "cc-by-nc-4.0"),
    "omnilabel": (lambda s: ["--raw", str(s["omnilabel"] / "dataset_val.json"),
                             str(s["omnilabel"] / "dataset_test.json"),
                             "--images", str(s["omnilabel"] / "images")], "other"),
    "ovdeval": (lambda s: ["--raw", str(s["ovdeval"])], "openrail"),
    "nocaps": (lambda s: ["--raw", str(s["nocaps"] / "nocaps_val_captions.json"),
                          str(s["nocaps"] / "nocaps_test_image_info.json"), "--images",
                          str(s["nocaps"] / "images")],
               "cc-by-2.0"),
}


@pytest.mark.parametrize("bench", list(BUILDS))
@pytest.mark.heavy
def test_every_card_parses_and_every_listed_config_split_loads(bench, tmp_path, sample_release,
                                                               omnilabel_sample, ovdeval_sample,
                                                               nocaps_sample):
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
    "ref_l4": lambda s: ["--references", str(s["ref_l4"]), "--predictions",
                         str(s["ref_l4"] / "predictions_good.json"), "--split", "test"],
    "omnilabel": lambda s: ["--references", str(s["omnilabel"] / "dataset_val.json"),
                            "--predictions", str(s["omnilabel"] / "predictions_good.json")],
    "ovdeval": lambda s: ["--references", str(s["ovdeval"] / "annotations"),
                          "--predictions", str(s["ovdeval"] / "predictions_good")],
    "nocaps": lambda s: ["--references", str(s["nocaps"] / "nocaps_val_captions.json"),
                         "--predictions", str(s["nocaps"] / "predictions_good.json")],
}


@pytest.mark.parametrize("bench", list(BUILDS))
@pytest.mark.heavy
def test_registration_eval_yaml_and_eval_results_agree_and_dry_run_lists_the_folder(
        bench, tmp_path, sample_release, omnilabel_sample, ovdeval_sample, nocaps_sample):
    from vlbench.benchmarks import get_benchmark

    samples = {"ref_l4": sample_release, "omnilabel": omnilabel_sample, "ovdeval": ovdeval_sample,
               "nocaps": nocaps_sample}
    args, _ = BUILDS[bench]
    out = tmp_path / "hub"
    built = run_cli("build", bench, *args(samples), "--out", str(out), "--eval-framework",
                    "vlbench", check=True)
    assert (
        "eval.yaml the Hub would refuse at push time: evaluation_framework 'vlbench'"
        in built.stdout + built.stderr
    )
    # the dry run lists exactly the files of the folder, eval.yaml included, and says the Hub would
    # refuse the framework vlbench writes (not on the Hub's list, huggingface.js eval.ts); with a
    # listed one it passes
    proc = run_cli("publish", "dataset", bench, "--folder", str(out), "--repo-id", f"me/{bench}",
                   "--dry-run")
    assert (
        proc.returncode == 1
        and "evaluation_framework 'vlbench' is not on the Hub's list" in proc.stdout
    )
    assert (
        "packages/tasks/src/eval.ts" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    )
    listed_framework = (out / "eval.yaml").read_text().replace("evaluation_framework: vlbench",
                                                               "evaluation_framework: inspect-ai")
    (out / "eval.yaml").write_text(listed_framework)
    proc = run_cli("publish", "dataset", bench, "--folder", str(out), "--repo-id", f"me/{bench}",
                   "--dry-run", check=True)
    listed = sorted(
        line.split()[-1]
        for line in proc.stdout.split("--- README.md ---", 1)[0].splitlines()
        if line.strip() and line.split()[0][0].isdigit() and not line.strip().endswith("file(s)")
    )
    assert listed == sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                     if p.is_file() and not p.name.startswith("."))  # not the local build manifest
    assert "eval.yaml" in listed

    # eval.yaml: the registration fields; every task points at a config/split the card lists
    spec = yaml.safe_load((out / "eval.yaml").read_text())
    assert spec["name"] and spec["description"] and spec["evaluation_framework"] == "inspect-ai"
    card = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    splits = {c["config_name"]: [f["split"] for f in c["data_files"]] for c in card["configs"]}
    assert spec["tasks"]
    for task in spec["tasks"]:
        assert task["split"] in (
            splits[task["config"]] if "config" in task else sum(splits.values(), [])
        ), task

    # .eval_results from a scored result: every task_id is a task of eval.yaml, values are the
    # result's
    result_path = tmp_path / "result.json"
    run_cli("score", bench, *SCORE_FOR_LEADERBOARD[bench](samples), "--output", str(result_path),
            "--quiet", check=True)
    proc = run_cli("report", str(result_path), "--eval-results", str(tmp_path / "model"),
                   "--dataset-id", f"me/{bench}", "--date", "2026-11-22", check=True)
    entries = yaml.safe_load((tmp_path / "model" / ".eval_results" / f"{bench}.yaml").read_text())
    metrics = json.loads(result_path.read_text())["metrics"]
    by_id = {t.id: t for t in get_benchmark(bench).leaderboards.tasks()}
    task_ids = {t["id"] for t in spec["tasks"]}
    assert entries and len(entries) == len({e["dataset"]["task_id"] for e in entries})
    for e in entries:
        assert (
            e["dataset"]["id"] == f"me/{bench}"
            and e["dataset"]["task_id"] in task_ids
            and e["date"] == "2026-11-22"
        )
        task = by_id[e["dataset"]["task_id"]]
        key = f"NMS_AP_{task.config}" if bench == "ovdeval" and task.config else task.metric
        assert e["value"] == round(metrics[key], 4)
    # read back by huggingface_hub's own parser of the format (#33): the same datasets, tasks,
    # values and dates
    from huggingface_hub import parse_eval_result_entries

    parsed = parse_eval_result_entries(entries)
    assert [(p.dataset_id, p.task_id, p.value, p.date) for p in parsed] == \
        [(e["dataset"]["id"], e["dataset"]["task_id"], e["value"], e["date"]) for e in entries]


def test_metric_cards_are_generated_from_the_dataset_card_sources():
    """The metric cards' generated blocks (outputs, quirks, data, citation) equal what the sources
    give now."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.library.metric_card import REGIONS, render

    for bench in BUILT_IN:
        text = (ROOT / "metrics" / bench / "README.md").read_text()
        assert render(text, bench) == text, (
            f"metrics/{bench}/README.md is stale: run python -m vlbench.library.metric_card"
        )
        assert all(f"vlbench.library.metric_card: {name} " in text for name in REGIONS), bench
        info = get_benchmark(bench)
        assert (
            info.card.quirks
            and all(q in text for q in info.card.quirks)
            and info.card.citation in text
        )


# -- the model-card flow (issue #17) ---------------------------------------------------------------

CARD = """---
license: apache-2.0
tags:
- object-detection
model-index:
- name: det-x
  results:
  - task:
      type: image-to-text
    dataset:
      name: nocaps
      type: someone/nocaps
      split: validation
    metrics:
    - type: CIDEr
      value: 90.5
---

# det-x

A detector. Its scores below were written by hand.
"""


def _ref_l4_result(tmp_path, sample_release, split="val", *extra) -> Path:
    out = tmp_path / f"ref_l4_{split}.json"
    run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
            str(sample_release / "predictions_poor.json"), "--split", split, "--output", str(out),
            "--quiet", *extra, check=True)
    return out


@pytest.mark.heavy
def test_report_into_merges_into_an_existing_card_and_rerunning_replaces(tmp_path, sample_release):
    """Parsed back with huggingface_hub: the other metadata and the prose as they were, the
    hand-written nocaps entry kept, the Ref-L4 entries added once (a second run replaces them, here
    with the other split's values)."""
    from huggingface_hub import ModelCard

    card_path = tmp_path / "README.md"
    card_path.write_text(CARD)
    val = _ref_l4_result(tmp_path, sample_release, "val", "--dataset-id", "me/ref-l4")
    for _ in range(2):
        run_cli("report", str(val), "--into", str(card_path), check=True)
    card = ModelCard.load(card_path)
    assert card.data.license == "apache-2.0" and card.data.tags == ["object-detection"]
    assert card.text.strip() == "# det-x\n\nA detector. Its scores below were written by hand."
    assert card.data.model_name == "det-x"
    kept = [e for e in card.data.eval_results if e.dataset_type == "someone/nocaps"]
    ours = [e for e in card.data.eval_results if e.dataset_type == "me/ref-l4"]
    assert [(e.metric_type, e.metric_value) for e in kept] == [("CIDEr", 90.5)]
    metrics = json.loads(val.read_text())["metrics"]
    assert {e.metric_type: e.metric_value for e in ours} == {k: round(v, 4) for k,
                                                             v in metrics.items()
                                                               if v is not None}
    assert len(ours) == len({e.metric_type for e in ours}) and all(
        e.dataset_split == "val" for e in ours
    )
    # the same number scored against another release replaces the entries, which then name that
    # release
    moved = json.loads(val.read_text())
    moved["source"] = {"release": "hf://JierunChen/Ref-L4", "revision": "e" * 40,
                       "files": {"x.parquet": "f" * 64}}
    val.write_text(json.dumps(moved))
    run_cli("report", str(val), "--into", str(card_path), check=True)
    again = [
        e for e in ModelCard.load(card_path).data.eval_results if e.dataset_type == "me/ref-l4"
    ]
    assert len(again) == len(ours) and all(
        e.dataset_args == {"source": moved["source"]} for e in again
    )


@pytest.mark.heavy
def test_ref_l4_all_and_unnamed_datasets_are_refused_with_the_fix(tmp_path, sample_release):
    merged = _ref_l4_result(tmp_path, sample_release, "all", "--dataset-id", "me/ref-l4")
    for flag in (["--model-index"], ["--into", str(tmp_path / "README.md")]):
        proc = run_cli("report", str(merged), *flag)
        assert (
            proc.returncode == 2 and "per split" in proc.stderr and "--split test" in proc.stderr
        ), proc.stderr
        assert not (tmp_path / "README.md").exists()
    unnamed = _ref_l4_result(tmp_path, sample_release, "val")
    assert json.loads(unnamed.read_text())["dataset"] == {"id": None}
    proc = run_cli("report", str(unnamed), "--model-index")
    assert (
        proc.returncode == 2
        and "--dataset-id ORG/ref-l4" in proc.stderr
        and "vlbench/" not in proc.stdout
    )


@pytest.mark.heavy
def test_a_published_folder_names_its_dataset_in_results(tmp_path, sample_release):
    """After 'vlbench publish dataset' (its bookkeeping, as the upload cannot run here), a result
    scored against the folder carries the Hub id, and the card and .eval_results use it without
    --dataset-id."""
    from huggingface_hub import ModelCard

    from vlbench.library.api import record_hub_id

    folder = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(folder),
            "--eval-framework", "vlbench", check=True)
    record_hub_id(folder, "me/ref-l4")
    out = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(folder), "--predictions",
            str(sample_release / "predictions_poor.json"), "--split", "test", "--output", str(out),
            "--quiet", check=True)
    assert json.loads(out.read_text())["dataset"] == {"id": "me/ref-l4"}
    block = run_cli("report", str(out), "--model-index", "--model-name", "g", check=True).stdout
    assert {e.dataset_type for e in ModelCard(f"---\n{block}---\n").data.eval_results} == {
        "me/ref-l4"
    }
    publish = run_cli("publish", "dataset", "ref_l4", "--folder", str(folder), "--repo-id",
                      "me/other", "--dry-run")
    # eval.yaml's framework: not on the Hub's list
    assert publish.returncode == 1 and "refused:" in publish.stdout
    assert ".vlbench-build.json" not in publish.stdout        # the bookkeeping is not uploaded


def test_push_dry_run_prints_the_diff_and_the_one_commit(tmp_path, sample_release):
    card_path = tmp_path / "README.md"
    card_path.write_text(CARD)
    test = _ref_l4_result(tmp_path, sample_release, "test", "--dataset-id", "me/ref-l4")
    proc = run_cli("report", str(test), "--into", str(card_path), "--push", "me/det-x", "--dry-run",
                   "--date", "2026-11-22", check=True)
    assert "would commit to model me/det-x (one commit)" in proc.stdout
    assert "README.md" in proc.stdout and ".eval_results/ref_l4.yaml" in proc.stdout
    assert "+      type: me/ref-l4" in proc.stdout and "-license" not in proc.stdout
    assert "A detector." in card_path.read_text()


def test_existing_eval_results_missing_a_hub_field_are_refused_with_the_fix():
    """An existing .eval_results entry without a value (huggingface_hub's parser needs one) is a
    clear error naming the file; a valid one with fields the library does not know is kept as
    written (never lost)."""
    from vlbench.engine.errors import InputError
    from vlbench.library.registration import merge_eval_results

    new = [{"dataset": {"id": "me/ref-l4", "task_id": "acc50_test"}, "value": 50.0}]
    with pytest.raises(InputError, match="lacks a field the Hub needs"):
        merge_eval_results("- dataset: {id: someone/x, task_id: t}\n", new,
                           source="model/.eval_results/x.yaml")
    kept = merge_eval_results("- dataset: {id: someone/x, task_id: t}\n  value: 1.5\n  mine: keep "
                              "me\n", new)
    assert kept[0] == {"dataset": {"id": "someone/x", "task_id": "t"}, "value": 1.5,
                       "mine": "keep me"}


def test_an_eval_yaml_the_hub_would_refuse_is_refused_with_the_fix():
    """The Hub's push-time rules (huggingface.js eval.ts and the Hub docs' fields), each broken
    once; a build keeps an unlisted framework as a warning, publishing refuses it."""
    from vlbench.engine.errors import InputError
    from vlbench.library.registration import check_eval_yaml, eval_yaml_problems

    good = {"name": "X", "description": "d", "evaluation_framework": "inspect-ai",
            "tasks": [{"id": "a", "config": "c", "split": "test"}, {"id": "b"}]}
    assert eval_yaml_problems(good) == [] and check_eval_yaml(good) == []
    cases = [({"evaluation_framework": "vlbench"},
              "evaluation_framework 'vlbench' is not on the Hub's list"),
             ({"name": " "}, "'name' must be non-empty text"),
             ({"tasks": []}, "'tasks' must be a non-empty list"),
             ({"tasks": [{"id": "a"}, {"id": "a"}]}, "task id 'a' is used twice"),
             ({"tasks": [{"config": "c"}]}, "tasks[0] needs an 'id'"),
             ({"tasks": [{"id": "a", "split": 3}]}, "'config' and 'split' must be text")]
    for change, problem in cases:
        assert problem in " ".join(eval_yaml_problems({**good, **change})), change
        with pytest.raises(InputError, match="the Hub would refuse this eval.yaml") as err:
            check_eval_yaml({**good, **change}, "me/eval.yaml")
        assert problem in str(err.value) and "Fix:" in str(err.value)
    warnings = check_eval_yaml({**good, "evaluation_framework": "vlbench"}, allow_unlisted=True)
    assert len(warnings) == 1 and "eval.ts" in warnings[0]


@pytest.mark.heavy
def test_a_build_for_inspect_names_a_framework_the_hub_takes(tmp_path, sample_release):
    """--eval-framework inspect-ai: eval.yaml names it, the build warns of nothing, the dry run is
    not refused."""
    out = tmp_path / "hub"
    built = run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out),
                    "--eval-framework", "inspect-ai", check=True)
    assert yaml.safe_load((out / "eval.yaml").read_text())["evaluation_framework"] == "inspect-ai"
    assert "the Hub would refuse" not in built.stdout + built.stderr
    proc = run_cli("publish", "dataset", "ref_l4", "--folder", str(out), "--repo-id", "me/ref-l4",
                   "--dry-run")
    assert proc.returncode == 0 and "refused" not in proc.stdout


@pytest.mark.heavy
def test_a_folder_the_hub_would_refuse_or_that_leaks_a_file_is_refused_by_the_dry_run(tmp_path,
                                                                                      sample_release):
    """A built Ref-L4 folder, changed four ways: a link to a file outside it (refused, exit 2, the
    target named, nothing listed); a card whose front matter is no YAML mapping; a config whose
    data_files match no file; an eval.yaml task on a split the card does not declare. The last three
    are the dry run's 'refused:' (exit 1), with huggingface_hub's own card parser reading the
    card."""
    import shutil

    built = tmp_path / "built"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(built), check=True)

    def changed(name: str, change) -> Path:
        folder = tmp_path / name
        shutil.copytree(built, folder, symlinks=True)
        change(folder)
        return folder

    def dry_run(folder: Path):
        return run_cli("publish", "dataset", "ref_l4", "--folder", str(folder), "--repo-id", "me/x",
                       "--dry-run")

    secret = tmp_path / "token.txt"
    secret.write_text("hf_secret")
    leak = changed("leak", lambda f: (f / "data" / "notes.txt").symlink_to(secret))
    proc = dry_run(leak)
    assert (
        proc.returncode == 2 and "outside the folder" in proc.stderr and str(secret) in proc.stderr
    )
    assert "Traceback" not in proc.stderr and "hf_secret" not in proc.stdout + proc.stderr

    def card(text_change):
        return lambda f: (f / "README.md").write_text(text_change((f / "README.md").read_text()))

    cases = {
        "yaml": (card(lambda t: t.replace("license: cc-by-nc-4.0", "license: [cc-by-nc-4.0", 1)),
                 "cannot read the card's front matter"),
        "files": (card(lambda t: re.sub(r"- data/test-(\S+)", r"- data/tst-\1", t, count=1)),
                  "matches 'data/tst-"),
        "split": (lambda f: (f / "eval.yaml").write_text((f / "eval.yaml").read_text().replace(
            "split: val", "split: validation")),
                  "split 'validation', which the dataset card does not declare"),
    }
    for name, (change, says) in cases.items():
        proc = dry_run(changed(name, change))
        assert proc.returncode == 1 and "refused:" in proc.stdout and says in proc.stdout, (
            name,
            proc.stdout[-800:],
        )
    assert dry_run(built).returncode == 0


def test_an_offline_push_dry_run_is_refused_not_previewed_as_a_repo_without_card(sample_release,
                                                                                 tmp_path):
    """``HF_HUB_OFFLINE=1 vlbench report result.json --push ORG/model --dry-run`` with nothing
    cached: before #68 huggingface_hub's LocalEntryNotFoundError (a subclass of EntryNotFoundError)
    read as "the repo has no card", so the preview, and a push, would have replaced the repo's card
    by the model-index alone. Now exit 1 naming the repo and the way round (--into a local copy);
    nothing written."""
    import os

    out = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
            str(sample_release / "predictions_good.json"), "--split", "val", "--output", str(out),
            "--quiet", check=True)
    proc = run_cli("report", str(out), "--push", "me/model", "--dry-run", "--dataset-id",
                   "me/ref-l4",
                   env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "cannot read README.md of me/model" in proc.stderr and "--into" in proc.stderr
    assert "model-index" not in proc.stdout


def test_report_csv_says_what_it_wrote(sample_release, tmp_path):
    """``report --csv FOLDER`` names the tables it wrote (it printed nothing before #68)."""
    out = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
            str(sample_release / "predictions_good.json"), "--split", "val", "--output", str(out),
            "--quiet", check=True)
    proc = run_cli("report", str(out), "--csv", str(tmp_path / "csv"), check=True)
    written = sorted(p.name for p in (tmp_path / "csv").iterdir())
    assert written and f"wrote {len(written)} CSV table(s)" in proc.stdout
    assert all(name in proc.stdout for name in written)


def test_a_temporary_file_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    """``report --into README.md`` killed before its rename leaves ``.README.md.<pid>.<random>.tmp``
    (empty, or half a card); the next write of README.md removes it once its process is gone, and
    leaves a live writer's."""
    import os
    import subprocess
    import sys

    from vlbench.engine.io import write_text_atomic

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    stale = tmp_path / f".README.md.{dead.stdout.strip()}.abc123.tmp"
    stale.write_text("")
    live = tmp_path / f".README.md.{os.getpid()}.def456.tmp"
    live.write_text("")
    write_text_atomic(tmp_path / "README.md", "# card\n")
    assert (
        (tmp_path / "README.md").read_text() == "# card\n" and not stale.exists() and live.exists()
    )
