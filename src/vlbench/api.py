"""The library entry point: ``vlbench.score(benchmark, references, predictions, ...)``."""

from __future__ import annotations

import os
from typing import Any

from .benchmarks import get_benchmark
from .errors import InputError
from .result import Result

__all__ = ["score", "compare", "load_references"]


def load_references(benchmark: str, references: str | os.PathLike, *, split: str | None = None) -> Any:
    """Read a benchmark's references (official file, Hub folder or Hub id) into its record type."""
    info = get_benchmark(benchmark)
    reader = info.module("reader")
    return reader.load_references(references, split or info.default_split)


def score(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
          protocol: str = "official", ci: float | None = None, resamples: int = 1000, seed: int = 0,
          **options: Any) -> Result:
    """Score ``predictions`` (a path or the parsed official JSON) against ``references`` (a path or records).

    ``options`` are benchmark-specific (Ref-L4: ``missing="error"|"miss"``); an unknown one is an error.
    With ``ci`` (e.g. 0.95), ``breakdowns["confidence_intervals"]`` holds a percentile bootstrap interval
    over images for every metric (``resamples`` draws from ``seed``); the metrics themselves are unchanged.
    """
    result = _score(benchmark, references, predictions, split=split, protocol=protocol, **options)
    if ci is not None:
        from .uncertainty import add_intervals

        add_intervals(result, ci, resamples=resamples, seed=seed)
    return result


def compare(benchmark: str, references: Any, predictions_a: Any, predictions_b: Any, *, split: str | None = None,
            protocol: str = "official", ci: float = 0.95, resamples: int = 1000, seed: int = 0,
            names: tuple[str, str] | None = None, **options: Any):
    """Paired bootstrap of two prediction files on the same references (see :func:`vlbench.uncertainty.compare`).
    Returns ``(comparison, result_a, result_b)``."""
    from .benchmarks import get_benchmark
    from .uncertainty import compare as paired

    info = get_benchmark(benchmark)
    refs = _read_references(info, references, split or info.default_split)   # read once, scored twice
    a = _score(info.id, refs, predictions_a, split=split, protocol=protocol, **options)
    b = _score(info.id, refs, predictions_b, split=split, protocol=protocol, **options)
    if names is None:
        names = tuple(str(p) if isinstance(p, (str, os.PathLike)) else label
                      for p, label in ((predictions_a, "A"), (predictions_b, "B")))
    return paired(a, b, ci, resamples=resamples, seed=seed, names=names), a, b


def _read_references(info: Any, references: Any, split: str | None) -> Any:
    """References given as a path are read (OVDEval: every sub-dataset, the split picks one later)."""
    if not isinstance(references, (str, os.PathLike)):
        return references
    return load_references(info.id, references, split=None if info.id == "ovdeval" else split)


def _score(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
           protocol: str = "official", **options: Any) -> Result:
    from .io import read_json

    info = get_benchmark(benchmark)
    split = split or info.default_split
    scorer = info.module("scorer")
    refs = _read_references(info, references, split)
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
