"""Timing helpers shared by the bench scripts: run a command in a fresh process, read its wall time
and peak memory."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

_PROBE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); subprocess.run(sys.argv[1:], "
    "check=True); print(time.perf_counter() - t, "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)"
)


def process_run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(seconds, peak bytes, what it printed) of one run of ``cmd`` in its own process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *cmd], capture_output=True, text=True, check=True, env=env
    ).stdout
    # the probe's line comes last (the command may print too)
    *printed, probe = out.rstrip("\n").split("\n")
    seconds, peak = probe.split()
    return float(seconds), int(peak), "\n".join(printed)


def printed_stats(text: str) -> list[float]:
    """The numbers of the summary lines an official scorer prints as ``... ] = 0.365``, in order."""
    return [float(v) for v in re.findall(r"\] = (-?[0-9.]+)$", text, flags=re.MULTILINE)]


def best_process_run(cmd: list[str], runs: int = 3) -> tuple[float, int]:
    """(seconds, peak bytes) of the fastest of ``runs`` runs of ``cmd``, each in its own process."""
    return min(process_run(cmd)[:2] for _ in range(runs))


def compile_like_an_install() -> None:
    """Write vlbench's bytecode, as pip does when it installs a wheel: a process then starts from
    ``.pyc`` files. Without it, a tree run from source under ``PYTHONDONTWRITEBYTECODE`` (set on
    these machines) compiles every module it imports at each start (~0.1-0.2 s of a whole ``vlbench
    score``), a cost no installed user pays and the parse-floor process (orjson alone) never has."""
    import vlbench

    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(vlbench.__file__).parent)], check=True
    )
