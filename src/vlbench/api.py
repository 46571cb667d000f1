"""The library entry point: ``vlbench.score(benchmark, references, predictions, ...)``."""

from __future__ import annotations

import os
from typing import Any

from .benchmarks import get_benchmark
from .errors import InputError
from .result import Result

__all__ = ["score", "load_references"]


def load_references(benchmark: str, references: str | os.PathLike, *, split: str | None = None) -> Any:
    """Read a benchmark's references (official file, Hub folder or Hub id) into its record type."""
    info = get_benchmark(benchmark)
    reader = info.module("reader")
    return reader.load_references(references, split or info.default_split)


def score(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
          protocol: str = "official", **options: Any) -> Result:
    """Score ``predictions`` (a path or the parsed official JSON) against ``references`` (a path or records).

    ``options`` are benchmark-specific (Ref-L4: ``missing="error"|"miss"``); an unknown one is an error.
    """
    from .io import read_json

    info = get_benchmark(benchmark)
    split = split or info.default_split
    scorer = info.module("scorer")
    refs = references
    if isinstance(references, (str, os.PathLike)):
        refs = load_references(info.id, references, split=None if info.id == "ovdeval" else split)
    if hasattr(scorer, "score_sources"):  # benchmarks whose predictions may be a folder of files
        if options:
            raise InputError(f"option(s) {', '.join(sorted(options))} do not apply to {info.id}")
        return scorer.score_sources(refs, predictions, protocol=protocol, split=split)
    source = "predictions"
    if isinstance(predictions, (str, os.PathLike)):
        source = str(predictions)
        predictions = read_json(predictions, what="prediction file")
    allowed = {"ref_l4": {"missing", "with_samples"}, "omnilabel": {"with_per_description"},
               "nocaps": {"cider_idf", "tokenizer", "missing", "meteor", "spice"}}.get(info.id, set())
    unknown = set(options) - allowed
    if unknown:
        raise InputError(f"option(s) {', '.join(sorted(unknown))} do not apply to {info.id}",
                         fix=f"{info.id} takes: {', '.join(sorted(allowed)) or 'no extra option'}")
    return scorer.score(refs, predictions, protocol=protocol, split=split, source=source, **options)
