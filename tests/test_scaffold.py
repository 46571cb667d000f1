"""``vlbench new-benchmark``: the package it writes is a benchmark every face takes, with no generic file edited.

The stand-in task's numbers are derived by hand (the scaffold's golden README): true counts 3, 1, 4, 1, 5, good
predictions 3, 1, 4, 2, 9 -> accuracy 100 * 3 / 5 = 60.0, MAE (0 + 0 + 0 + 1 + 4) / 5 = 1.0; poor predictions all
0 -> accuracy 0.0, MAE 14 / 5 = 2.8.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vlbench
from conftest import scaffolded
from vlbench.engine.errors import InputError
from vlbench.library.metric_card import missing_regions, render
from vlbench.library.scaffold import new_benchmark

GOOD, POOR = {"accuracy": 60.0, "MAE": 1.0}, {"accuracy": 0.0, "MAE": 2.8}


def _cli(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "vlbench", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_the_package_scores_in_process_and_its_card_is_complete(tmp_path):
    """Written, imported and registered as a notebook would: the sample files give the hand-derived numbers, the
    card has every generated region and they are current (rendering them again changes nothing)."""
    with scaffolded(tmp_path / "pkg") as samples:
        files = sorted(p.relative_to(tmp_path / "pkg") for p in (tmp_path / "pkg").rglob("*") if p.is_file())
        assert Path("src/vlbench_count_demo/evaluate_modules/count_demo/README.md") in files
        assert Path("tests/golden/example/expected.json") in files and not list((tmp_path / "pkg").rglob("*.tmpl"))
        for quality, want in (("good", GOOD), ("poor", POOR)):
            got = vlbench.score("count_demo", samples / "references.json", samples / f"predictions_{quality}.json")
            assert got.metrics == pytest.approx(want)
        card = (Path(vlbench.metric_path("count_demo")) / "README.md").read_text()
        assert missing_regions(card) == [] and render(card, "count_demo") == card
        assert "`MAE` | mean absolute error (objects)" in card


def test_a_bad_id_a_taken_id_or_an_existing_folder_writes_nothing(tmp_path):
    """Each refusal names the fix; an existing folder keeps its files (nothing is overwritten), and no staging
    folder is left beside it."""
    for bad, message in (("Bad-Id", "cannot be a benchmark id"), ("ref_l4", "already a registered benchmark")):
        with pytest.raises(InputError, match=message):
            new_benchmark(bad, tmp_path / bad)
        assert not (tmp_path / bad).exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="already exists"):
        new_benchmark("count_demo", tmp_path / "mine")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.heavy
def test_an_installed_scaffold_reaches_every_face(tmp_path):
    """Installed as a distribution (a dist-info with the package's entry point, on PYTHONPATH): the CLI scores it,
    builds and loads its Hub dataset, ``metric_card --check`` passes over every registered card (its own included),
    its metric Space's dry run ships the plug-in's requirement beside vlbench's wheel, ``evaluate.load`` computes
    through ``metric_path``, and its own golden test passes."""
    out = tmp_path / "vlbench-count-demo"
    proc = _cli(os.environ, "new-benchmark", "count_demo", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "tests/test_count_demo.py" in proc.stdout
    again = _cli(os.environ, "new-benchmark", "count_demo", "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr
    info = tmp_path / "site" / "vlbench_count_demo-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vlbench-count-demo\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[vlbench.benchmarks]\ncount_demo = vlbench_count_demo:BENCHMARK\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(out / "src"),
                                                         os.environ.get("PYTHONPATH", "")])}
    samples = out / "src" / "vlbench_count_demo" / "samples"
    result = tmp_path / "result.json"
    proc = _cli(env, "score", "count_demo", "--references", str(samples / "references.json"), "--predictions",
                str(samples / "predictions_good.json"), "--output", str(result))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(result.read_text())["metrics"] == pytest.approx(GOOD)
    hub = tmp_path / "hub"
    proc = _cli(env, "build", "count_demo", "--raw", str(samples / "references.json"), "--out", str(hub),
                "--allow-missing-images")
    assert proc.returncode == 0, proc.stderr
    proc = _cli(env, "score", "count_demo", "--references", str(hub), "--predictions",
                str(samples / "predictions_poor.json"), "--output", str(result))
    assert proc.returncode == 0 and json.loads(result.read_text())["metrics"] == pytest.approx(POOR), proc.stderr
    card = subprocess.run([sys.executable, "-m", "vlbench.library.metric_card", "--check"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert card.returncode == 0 and "stale: none" in card.stdout, card.stdout + card.stderr
    proc = _cli(env, "publish", "metric", "count_demo", "--repo-id", "me/count-demo", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    requirements = proc.stdout.split("--- requirements.txt ---")[1]
    assert "vlbench-count_demo>=0.1.0" in requirements and "[java]" in requirements
    code = ("import evaluate, vlbench, warnings; warnings.simplefilter('ignore'); "
            "m = evaluate.load(vlbench.metric_path('count_demo')); "
            "print(m.compute(predictions=[3, 2], references=[{'image_id': 0, 'count': 3}, {'image_id': 1, 'count': 1}]))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip().splitlines()[-1] == "{'accuracy': 50.0, 'MAE': 0.5}", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=out)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout
