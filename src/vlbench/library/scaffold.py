"""``vlbench new-benchmark ID``: a plug-in package holding every file a benchmark needs, working from the start.

The package (``templates/new_benchmark/``, each file's placeholders filled in) is a complete benchmark for a
stand-in task, counting objects, whose parts the author replaces one by one: records, scorer, dataset builder,
views, predictor, Space sample, the ``BENCHMARK`` record, the ``evaluate`` module with its metric card (generated
regions filled in here) and metric Space, sample files, a golden case and the test that checks golden cases. It
registers itself through the ``vlbench.benchmarks`` entry point of its ``pyproject.toml``.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from ..benchmarks import canonical_id, register, unregister
from ..engine.errors import InputError
from .metric_card import render

__all__ = ["TEMPLATE", "new_benchmark"]

#: the package's files, each ending in ``.tmpl`` (so no tool reads them as this package's code)
TEMPLATE = Path(__file__).parent / "templates" / "new_benchmark"
_ID = re.compile(r"[a-z][a-z0-9_]{1,39}")


def _placeholders(benchmark_id: str, display_name: str | None) -> dict[str, str]:
    """The template's placeholders: the id, the display name, and the class-name prefix (``my_bench`` -> ``MyBench``)."""
    camel = "".join(part.capitalize() for part in benchmark_id.split("_"))
    return {"__ID__": benchmark_id, "__NAME__": display_name or camel, "__CLASS__": camel}


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _check_id(benchmark_id: str) -> None:
    """A new id: a Python identifier in lower case, not a registered benchmark's name."""
    if not _ID.fullmatch(benchmark_id) or benchmark_id.endswith("_"):
        raise InputError(f"{benchmark_id!r} cannot be a benchmark id",
                         fix="use 2-40 lower-case letters, digits and underscores, starting with a letter (my_bench)")
    try:
        taken = canonical_id(benchmark_id)
    except InputError:                  # unknown: free
        return
    raise InputError(f"{benchmark_id!r} is already a registered benchmark ({taken})", fix="choose another id")


def _fill_card(package_src: Path, benchmark_id: str) -> None:
    """The metric card's generated regions, rendered from the new package's own ``BENCHMARK`` record."""
    card = package_src / f"vlbench_{benchmark_id}" / "evaluate_modules" / benchmark_id / "README.md"
    sys.path.insert(0, str(package_src))
    try:
        module = importlib.import_module(f"vlbench_{benchmark_id}")
        register(module.BENCHMARK)
        try:
            card.write_text(render(card.read_text(encoding="utf-8"), benchmark_id), encoding="utf-8")
        finally:
            unregister(benchmark_id)
    finally:
        sys.path.remove(str(package_src))
        for name in [m for m in sys.modules if m == f"vlbench_{benchmark_id}" or m.startswith(f"vlbench_{benchmark_id}.")]:
            del sys.modules[name]


def new_benchmark(benchmark_id: str, out: str | os.PathLike, display_name: str | None = None) -> list[Path]:
    """Write the plug-in package for ``benchmark_id`` into the new folder ``out`` and return its files (relative).
    ``out`` must not exist: nothing of the user's is overwritten, and a failure leaves no folder behind (the
    package is written beside it, then renamed)."""
    _check_id(benchmark_id)
    target = Path(out)
    if target.exists():
        raise InputError(f"{target} already exists", fix="pass --out with a new folder (nothing is overwritten)")
    target.parent.mkdir(parents=True, exist_ok=True)
    values = _placeholders(benchmark_id, display_name)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        files = []
        for source in sorted(p for p in TEMPLATE.rglob("*.tmpl") if p.is_file()):
            relative = Path(_fill(str(source.relative_to(TEMPLATE)), values)).with_suffix("")
            dest = staging / relative
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(_fill(source.read_text(encoding="utf-8"), values), encoding="utf-8")
            files.append(relative)
        _fill_card(staging / "src", benchmark_id)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files
