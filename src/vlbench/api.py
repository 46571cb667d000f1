"""The library entry points: ``vlbench.score``, ``compare``, ``load_references``, ``build``, ``export``.

Each works for every registered benchmark through the :class:`~vlbench.benchmark.Benchmark` protocol:
options are validated once, paths are read here (the scorers never touch files), and predictions are
checked not to be another benchmark's file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .benchmarks import expect_prediction_list, get_benchmark
from .result import Result

__all__ = ["score", "compare", "load_references", "build", "export"]


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def load_references(benchmark: str, references: str | os.PathLike, *, split: str | None = None) -> Any:
    """Read a benchmark's references (official file, Hub folder or Hub id) into its records type."""
    bench = get_benchmark(benchmark)
    return bench.load_references(references, split or bench.default_split)


def _prepare(benchmark: str, references: Any, split: str | None, protocol: str, options: dict[str, Any]):
    bench = get_benchmark(benchmark)
    opts = bench.options(protocol=protocol, split=split, **options)
    refs = bench.load_references(references, opts.split) if _is_path(references) else references
    return bench, opts, refs


def _score(bench: Any, opts: Any, refs: Any, predictions: Any, max_bytes: int | None = None) -> Result:
    source = "predictions"
    if _is_path(predictions):
        source = str(predictions)
        predictions = bench.read_predictions(predictions, max_bytes=max_bytes)
    if isinstance(predictions, list):
        expect_prediction_list(predictions, bench.id, source, bench.prediction_form)
    return bench.score(refs, predictions, opts, source=source)


def score(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
          protocol: str = "official", ci: float | None = None, resamples: int = 1000, seed: int = 0,
          max_bytes: int | None = None, **options: Any) -> Result:
    """Score ``predictions`` (a path or the parsed official JSON) against ``references`` (a path or records).

    ``options`` are the benchmark's own (see its ``options_type``); an unknown one is an error. With
    ``ci`` (e.g. 0.95), ``breakdowns["confidence_intervals"]`` holds a percentile bootstrap interval over
    images for every metric (``resamples`` draws from ``seed``); the metrics themselves are unchanged.
    """
    bench, opts, refs = _prepare(benchmark, references, split, protocol, options)
    result = _score(bench, opts, refs, predictions, max_bytes)
    if ci is not None:
        from .uncertainty import add_intervals

        add_intervals(result, ci, resamples=resamples, seed=seed)
    return result


def compare(benchmark: str, references: Any, predictions_a: Any, predictions_b: Any, *, split: str | None = None,
            protocol: str = "official", ci: float = 0.95, resamples: int = 1000, seed: int = 0,
            names: tuple[str, str] | None = None, max_bytes: int | None = None, **options: Any):
    """Paired bootstrap of two prediction files on the same references (see :func:`vlbench.uncertainty.compare`).
    Returns ``(comparison, result_a, result_b)``."""
    from .uncertainty import compare as paired

    bench, opts, refs = _prepare(benchmark, references, split, protocol, options)   # read once, scored twice
    a = _score(bench, opts, refs, predictions_a, max_bytes)
    b = _score(bench, opts, refs, predictions_b, max_bytes)
    if names is None:
        names = tuple(str(p) if _is_path(p) else label for p, label in ((predictions_a, "A"), (predictions_b, "B")))
    return paired(a, b, ci, resamples=resamples, seed=seed, names=names), a, b


def build(benchmark: str, raw: Any, out: str | os.PathLike, **kwargs: Any) -> Any:
    """Official release -> Hub folder (the benchmark's builder), then the folder's ``eval.yaml``."""
    from .registration import write_eval_yaml
    from .validation import read_card_metadata

    bench = get_benchmark(benchmark)
    report = bench.build(raw, out, **kwargs)
    write_eval_yaml(out, bench.id, read_card_metadata(out))
    report.files.insert(1, "eval.yaml")
    return report


def export(benchmark: str, folder: str | os.PathLike, *, split: str | None = None) -> Any:
    """Hub folder -> the benchmark's official annotation data (JSON-serialisable)."""
    bench = get_benchmark(benchmark)
    if not Path(folder).is_dir():
        from .errors import FormatError

        raise FormatError("the folder does not exist", file=str(folder), fix="pass the folder 'vlbench build' wrote")
    return bench.export(folder, split)
