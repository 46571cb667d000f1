"""The code as a reviewer's tools read it: ruff (lint and import order, configured in
pyproject.toml) and mypy (the type hints, over ``src/vlbench``) are clean. Both run as the test
extra installs them; a finding fails the test with the tool's own report."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


def test_ruff_is_clean():
    pytest.importorskip("ruff")
    proc = _run("ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean():
    pytest.importorskip("mypy")
    proc = _run("mypy", "--no-incremental")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
