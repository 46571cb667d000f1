"""``vlbench new-benchmark``: the package it writes is a benchmark every face takes, with no generic
file edited.

The stand-in task's numbers are derived by hand (the scaffold's golden README): true counts 3, 1, 4,
1, 5, good predictions 3, 1, 4, 2, 9 -> accuracy 100 * 3 / 5 = 60.0, MAE (0 + 0 + 0 + 1 + 4) / 5 =
1.0; poor predictions all 0 -> accuracy 0.0, MAE 14 / 5 = 2.8.
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
    return subprocess.run([sys.executable, "-m", "vlbench", *args], env=env, capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def test_the_package_scores_in_process_and_its_card_is_complete(tmp_path):
    """Written, imported and registered as a notebook would: the sample files give the hand-derived
    numbers, the card has every generated region and they are current (rendering them again changes
    nothing)."""
    with scaffolded(tmp_path / "pkg") as samples:
        files = sorted(
            p.relative_to(tmp_path / "pkg") for p in (tmp_path / "pkg").rglob("*") if p.is_file()
        )
        assert Path("src/vlbench_count_demo/evaluate_modules/count_demo/README.md") in files
        assert Path("tests/golden/example/expected.json") in files and not list(
            (tmp_path / "pkg").rglob("*.tmpl")
        )
        for quality, want in (("good", GOOD), ("poor", POOR)):
            got = vlbench.score("count_demo", samples / "references.json",
                                samples / f"predictions_{quality}.json")
            assert got.metrics == pytest.approx(want)
        card = (Path(vlbench.metric_path("count_demo")) / "README.md").read_text()
        assert missing_regions(card) == [] and render(card, "count_demo") == card
        assert "`MAE` | mean absolute error (objects)" in card


def test_a_bad_id_a_taken_id_or_an_existing_folder_writes_nothing(tmp_path):
    """Each refusal names the fix; an existing folder keeps its files (nothing is overwritten), and
    no staging folder is left beside it."""
    for bad, message in (("Bad-Id", "cannot be a benchmark id"),
                         ("ref_l4", "already a registered benchmark")):
        with pytest.raises(InputError, match=message):
            new_benchmark(bad, tmp_path / bad)
        assert not (tmp_path / bad).exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="already exists"):
        new_benchmark("count_demo", tmp_path / "mine")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


NAMES = ['The "Count" Bench', "Count: v2", "C:\\new\\bench", "Count # 2", "Zähl-Bench '''quoted'''"]


@pytest.mark.parametrize("name", NAMES)
def test_a_display_name_reaches_every_file_as_written(name, tmp_path):
    """Quotes, a colon, backslashes, a hash, other scripts: every Python file parses, the package's
    display name and its metric card's title (huggingface_hub's card parser) are the name exactly,
    and pyproject.toml's description (tomllib) begins with it (before #68: a SyntaxError, a card
    whose YAML did not parse, a newline and a backspace, the title "Count")."""
    import ast
    import tomllib

    from huggingface_hub import ModelCard

    out = tmp_path / "pkg"
    new_benchmark("count_demo", out, name)
    for path in out.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    card = out / "src" / "vlbench_count_demo" / "evaluate_modules" / "count_demo" / "README.md"
    assert ModelCard.load(card).data.title == name
    description = tomllib.loads((out / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "description"
    ]
    assert description.startswith(name + " for vlbench")
    sys.path.insert(0, str(out / "src"))
    try:
        import importlib

        assert importlib.import_module("vlbench_count_demo").BENCHMARK.display_name == name
    finally:
        sys.path.remove(str(out / "src"))
        for module in [m for m in sys.modules if m.split(".")[0] == "vlbench_count_demo"]:
            del sys.modules[module]


@pytest.mark.parametrize("bad_id, says", [("numbers", "is the name of a Python module"),
                                          ("json", "is the name of a Python module"),
                                          ("datasets", "is the name of a Python module")])
def test_an_id_that_names_a_module_is_refused(bad_id, says, tmp_path):
    """A metric Space's ``<id>.py`` beside its app.py would shadow the module (the standard
    library's numbers, json, or an installed package such as datasets), and the Space would not
    start."""
    with pytest.raises(InputError, match=says):
        new_benchmark(bad_id, tmp_path / bad_id)
    assert not list(tmp_path.iterdir())


def test_outs_that_cannot_be_written_are_clear_errors_and_the_package_is_readable(tmp_path):
    """A dangling link and a folder inside a read-only one: the CLI says so (exit 2, no traceback);
    a written package is 0755 like any new folder (mkdtemp made it 0700)."""
    import stat

    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    env = {**os.environ}
    try:
        for out, says in ((tmp_path / "dangling", "already exists (a link)"),
                          (locked / "pkg", "cannot create")):
            proc = _cli(env, "new-benchmark", "count_demo", "--out", str(out))
            # root writes anywhere: the folder is then made
            if os.geteuid() == 0 and out.parent == locked:
                assert proc.returncode == 0, proc.stderr
                continue
            assert (
                proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr
            ), proc.stderr
    finally:
        locked.chmod(0o755)
    new_benchmark("count_demo", tmp_path / "fresh")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o777 & ~umask


def test_the_template_scorer_refuses_a_second_prediction_and_counts_unknown_images(tmp_path):
    """Two counts for image 0 are refused by entry (the template kept the last one without a word);
    a count for an image the references lack is ignored, counted and warned; a missing references
    path is a clear error."""
    from vlbench.engine.errors import FormatError, PredictionError

    with scaffolded(tmp_path / "pkg") as samples:
        good = json.loads((samples / "predictions_good.json").read_text())
        (tmp_path / "twice.json").write_text(json.dumps(good + good[:1]))
        with pytest.raises(PredictionError, match="image 0 has a second prediction"):
            vlbench.score("count_demo", samples / "references.json", tmp_path / "twice.json")
        (tmp_path / "extra.json").write_text(json.dumps(good + [{"image_id": 99, "count": 1}]))
        result = vlbench.score("count_demo", samples / "references.json", tmp_path / "extra.json")
        assert (
            result.metrics == pytest.approx(GOOD) and result.counts["unknown_images_ignored"] == 1
        )
        assert any("images not in the references" in w for w in result.warnings)
        with pytest.raises(FormatError, match="do not exist"):
            vlbench.score("count_demo", tmp_path / "missing.json",
                          samples / "predictions_good.json")


@pytest.mark.heavy
def test_an_installed_scaffold_reaches_every_face(tmp_path):
    """Installed as a distribution (a dist-info with the package's entry point, on PYTHONPATH): the
    CLI scores it, builds and loads its Hub dataset, ``metric_card --check`` passes over every
    registered card (its own included), its metric Space's dry run ships the plug-in's requirement
    beside vlbench's wheel, ``evaluate.load`` computes through ``metric_path``, and its own golden
    test passes."""
    out = tmp_path / "vlbench-count-demo"
    proc = _cli(os.environ, "new-benchmark", "count_demo", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "tests/test_count_demo.py" in proc.stdout
    again = _cli(os.environ, "new-benchmark", "count_demo", "--out", str(out))
    assert (
        again.returncode == 2
        and "already exists" in again.stderr
        and "Traceback" not in again.stderr
    )
    info = tmp_path / "site" / "vlbench_count_demo-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vlbench-count-demo\nVersion: "
                                   "0.1.0\n")
    (info / "entry_points.txt").write_text("[vlbench.benchmarks]\ncount_demo = "
                                           "vlbench_count_demo:BENCHMARK\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(out / "src"),
                                                         os.environ.get("PYTHONPATH", "")])}
    samples = out / "src" / "vlbench_count_demo" / "samples"
    result = tmp_path / "result.json"
    proc = _cli(env, "score", "count_demo", "--references", str(samples / "references.json"),
                "--predictions", str(samples / "predictions_good.json"), "--output", str(result))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(result.read_text())["metrics"] == pytest.approx(GOOD)
    hub = tmp_path / "hub"
    proc = _cli(env, "build", "count_demo", "--raw", str(samples / "references.json"), "--out",
                str(hub), "--images",
                str(samples / "images"))       # the sample ships its images (#68)
    assert proc.returncode == 0, proc.stderr
    proc = _cli(env, "score", "count_demo", "--references", str(hub), "--predictions",
                str(samples / "predictions_poor.json"), "--output", str(result))
    assert proc.returncode == 0 and json.loads(result.read_text())["metrics"] == pytest.approx(
        POOR
    ), proc.stderr
    card = subprocess.run([sys.executable, "-m", "vlbench.library.metric_card", "--check"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert card.returncode == 0 and "stale: none" in card.stdout, card.stdout + card.stderr
    proc = _cli(env, "publish", "metric", "count_demo", "--repo-id", "me/count-demo", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    requirements = proc.stdout.split("--- requirements.txt ---")[1]
    assert "vlbench-count_demo>=0.1.0" in requirements and "[java]" in requirements
    code = ("import evaluate, vlbench, warnings; warnings.simplefilter('ignore'); m = "
            "evaluate.load(vlbench.metric_path('count_demo')); print(m.compute(predictions=[3, 2], "
            "references=[{'image_id': 0, 'count': 3}, {'image_id': 1, 'count': 1}]))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.stdout.strip().splitlines()[-1] == "{'accuracy': 50.0, 'MAE': 0.5}", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=out)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout
