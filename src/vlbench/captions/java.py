"""Locating Java and the jars shipped with pycocoevalcap (nothing is downloaded)."""

from __future__ import annotations

import os
import shutil
from functools import lru_cache
from pathlib import Path

__all__ = ["cache_dir", "java_executable", "pycocoevalcap_dir", "tokenizer_jar", "meteor_jar"]


def java_executable() -> str | None:
    """The ``java`` on PATH (or in ``$JAVA_HOME/bin``), or None."""
    found = shutil.which("java")
    if found:
        return found
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "java" if home else None
    return str(candidate) if candidate and candidate.exists() else None


@lru_cache(maxsize=1)
def pycocoevalcap_dir() -> Path | None:
    """The installed pycocoevalcap package folder (found without importing it: its eval.py pulls pycocotools)."""
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
    return jar if jar and jar.exists() and (jar.parent / "data" / "paraphrase-en.gz").exists() else None


def cache_dir() -> Path:
    """Where the Java backends keep their caches (METEOR's paraphrase index, SPICE's parses):
    ``$VLBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/vlbench`` (``~/.cache/vlbench``)."""
    if os.environ.get("VLBENCH_CACHE_DIR"):
        return Path(os.environ["VLBENCH_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vlbench"
