"""SPICE as an optional backend: pycocoevalcap's spice-1.0.jar needs Stanford CoreNLP 3.6.0, which
no package registry here ships (the toolkit downloads it at run time). vlbench never downloads it:
it looks for the two CoreNLP jars and reports exactly what is missing.

Where the jars are looked for: ``$VLBENCH_CORENLP_DIR``, then pycocoevalcap's ``spice/lib``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import VlbenchError
from . import java

__all__ = ["spice_available", "spice_scores", "CORENLP_JARS"]

CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
#: Java 17 closes the internals SPICE 1.0 (written for Java 8) reflects on.
_ADD_OPENS = ["--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens",
              "java.base/java.util=ALL-UNNAMED",
              "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens",
              "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"]


def _spice_jar() -> Path | None:
    root = java.pycocoevalcap_dir()
    jar = root / "spice" / "spice-1.0.jar" if root else None
    return jar if jar and jar.exists() else None


def _corenlp_dir() -> Path | None:
    candidates = [os.environ.get("VLBENCH_CORENLP_DIR")]
    root = java.pycocoevalcap_dir()
    if root:
        candidates.append(str(root / "spice" / "lib"))
    for c in candidates:
        if c and all((Path(c) / j).exists() for j in CORENLP_JARS):
            return Path(c)
    return None


def spice_available() -> tuple[bool, str]:
    """Whether SPICE can run here, and if not exactly what to install."""
    if java.java_executable() is None:
        return False, f"SPICE needs Java: {java.find_java()[1]}"
    if _spice_jar() is None:
        return False, "pycocoevalcap's spice/spice-1.0.jar is missing (pip install pycocoevalcap)"
    if _corenlp_dir() is None:
        root = java.pycocoevalcap_dir()
        lib = root / "spice" / "lib" if root else "spice/lib"
        return False, (f"SPICE needs Stanford CoreNLP 3.6.0 ({' and '.join(CORENLP_JARS)}) in "
                       f"{lib} or in the folder named by VLBENCH_CORENLP_DIR; get them from "
                       "stanford-corenlp-full-2015-12-09.zip")
    return True, "ok"


def spice_scores(hyps: Sequence[str], refs: Sequence[Sequence[str]], *,
                 cache_dir: str | None = None) -> list[float]:
    """Per-image SPICE F-scores (``scores.All.f``), one JVM run; NaN where SPICE gives no number."""
    ok, why = spice_available()
    if not ok:
        raise VlbenchError(f"SPICE is not available: {why}")
    jar, corenlp = _spice_jar(), _corenlp_dir()
    # spice_available said yes: only a file removed meanwhile gets here
    if jar is None or corenlp is None:
        raise VlbenchError("SPICE is not available: its jars went missing")
    cache = Path(cache_dir) if cache_dir else java.cache_dir() / "spice"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vlbench-spice-") as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps([{"image_id": i, "test": h, "refs": list(r)} for i,
                                   (h, r) in enumerate(zip(hyps, refs))]))
        classpath = os.pathsep.join([str(jar)] + [str(corenlp / j) for j in CORENLP_JARS])
        cmd = [java.require_java(), *_ADD_OPENS, "-Xmx8G", "-cp",
               classpath + os.pathsep + str(jar.parent / "lib" / "*"),
               "edu.anu.spice.SpiceScorer", str(inp), "-cache", str(cache), "-out", str(out),
               "-subset", "-silent"]
        proc = subprocess.run(cmd, cwd=str(jar.parent), capture_output=True)
        if proc.returncode != 0 or not out.exists():
            raise VlbenchError(f"SPICE failed: {proc.stderr.decode(errors='replace')[-500:]}")
        results = {r["image_id"]: r for r in json.loads(out.read_text())}
    scores = []
    for i in range(len(hyps)):
        try:
            scores.append(float(results[i]["scores"]["All"]["f"]))
        except (KeyError, TypeError, ValueError):
            scores.append(float("nan"))
    return scores
