"""What every ``metrics/<id>`` evaluate module shares: batch rows and the compute output."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from ..engine.result import Result

__all__ = ["RowInputs", "batch_rows", "compute_output", "compute", "check_examples"]


def batch_rows(references: Any) -> Any:
    """A ``Dataset`` batch (a dict of columns) -> a list of rows; anything else unchanged."""
    if isinstance(references, dict):
        return [dict(zip(references, values)) for values in zip(*references.values())]
    return references


class RowInputs:
    """Mixin for the ``evaluate`` modules (before ``evaluate.Metric`` in the bases): whole Hub rows
    or a ``Dataset`` batch in, only the fields the module declares kept. Modules override the two
    hooks."""

    features: Any       # evaluate.Metric's, set from the module's MetricInfo

    @staticmethod
    def slim_prediction(prediction: Any) -> Any:
        """Keep the fields of a prediction the module declares."""
        return prediction

    @staticmethod
    def slim_reference(reference: Any) -> Any:
        """Keep the fields of a reference the module declares."""
        return reference

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one prediction and its reference (a whole Hub row is fine: extra keys are
        dropped)."""
        prediction, reference = self.slim_prediction(prediction), self.slim_reference(reference)
        check_examples(self.features, [prediction], [reference])
        super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]  # evaluate.Metric's

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of predictions and references (Hub rows or a Dataset batch)."""
        from ..engine.errors import PredictionError

        if predictions is None or references is None:
            missing = "predictions" if predictions is None else "references"
            raise PredictionError(f"no {missing} were given", file=missing,
                                  fix="pass predictions=[...] and references=[...], one entry per "
                                      "example")
        if predictions is not None:
            predictions = [self.slim_prediction(p) for p in predictions]
        if references is not None:
            references = [self.slim_reference(r) for r in batch_rows(references)]
        check_examples(self.features, predictions, references)
        super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]


def check_examples(features: Any, predictions: Any, references: Any) -> None:
    """Each example against the module's declared features, before ``evaluate`` encodes it (whose
    own errors, a bare ``KeyError``, Arrow's ``UnicodeEncodeError``, would name neither the example
    nor the fix, and which would silently turn the text "0.5" into a number): a missing key,
    ``None``, text where a number goes (or the reverse), a lone surrogate, are a
    :class:`~vlbench.engine.errors.PredictionError` naming the example and the key."""
    for name, examples in (("predictions", predictions), ("references", references)):
        if examples is None or name not in (features or {}):
            continue
        if not isinstance(examples, (list, tuple)):
            examples = list(examples)
        for n, example in enumerate(examples):
            _check_value(example, features[name], f"{name}[{n}]")


_NUMBER_TYPES = (int, float)


def _check_value(value: Any, feature: Any, where: str) -> None:
    """One value against one feature (a struct dict, a list, a scalar ``Value``)."""
    import re

    import datasets

    from ..engine.errors import PredictionError

    def fail(message: str, fix: str) -> None:
        raise PredictionError(message, file=where.split("[")[0], entry=where, fix=fix)

    if isinstance(feature, dict):
        if not isinstance(value, dict):
            fail(f"expected an object with keys {list(feature)}, got {type(value).__name__}",
                 f"pass dicts with {', '.join(feature)}")
        for key, sub in feature.items():
            if key not in value:
                fail(f"the key {key!r} is missing",
                     f"give every example {', '.join(map(repr, feature))}")
            _check_value(value[key], sub, f"{where}.{key}")
    elif isinstance(feature, (datasets.List, datasets.Sequence)):
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
            fail(f"expected a list, got {type(value).__name__}", "pass a list (possibly empty)")
        inner = feature.feature
        items = list(value)
        if isinstance(inner, datasets.Value) and inner.dtype not in ("string", "large_string"):
            limit = _exact_limit(inner.dtype)
            if set(map(type, items)) <= {int, float} and all(
                -limit <= v <= limit for v in items if type(v) is int
            ):
                return                                      # the common case, checked at once
        for i, item in enumerate(items):
            _check_value(item, inner, f"{where}[{i}]")
    elif isinstance(feature, datasets.Value):
        if value is None:
            fail("the value is null", "give a value (or leave the example out)")
        if feature.dtype in ("string", "large_string"):
            if not isinstance(value, str):
                fail(f"expected text, got {type(value).__name__} {value!r}", "pass text")
            if not value.isascii() and re.search("[\ud800-\udfff]", value):
                fail("the text holds a lone surrogate (not valid Unicode)",
                     "repair the text's encoding")
        elif feature.dtype != "bool" and (
            isinstance(value, (str, bytes)) or not isinstance(value, _NUMBER_TYPES)
        ):
            fail(f"expected a number, got {type(value).__name__} {value!r}",
                 "pass numbers (text such as \"0.5\" is not converted)")
        elif feature.dtype != "bool" and isinstance(value, bool):
            fail(f"expected a number, got the boolean {value!r}, which the module's "
                 f"{feature.dtype} column does not "
                 "take", "write 0 or 1, or score the official file with 'vlbench score' (it reads "
                         "booleans as the official scorer does)")
        elif isinstance(value, int) and abs(value) > _exact_limit(feature.dtype):
            fail(f"the integer {value} is beyond what the module's {feature.dtype} column holds "
                 "exactly",
                 "score the official file with 'vlbench score', which orders such numbers as the "
                 "official scorer does")


def _exact_limit(dtype: str) -> int:
    """The largest integer magnitude a numeric column of ``dtype`` holds exactly (float64: 2^53)."""
    bits = {"float16": 11, "float32": 24, "float64": 53, "int8": 7, "int16": 15, "int32": 31,
            "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}.get(dtype, 63)
    return 2**bits - (0 if dtype.startswith("float") else 1)


def compute_output(result: Result, return_details: bool, ci: float | None = None,
                   resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The metrics dict of a Result; its warnings as Python warnings; details on request. With
    ``ci``, also ``confidence_intervals``: metric -> (low, high), a percentile bootstrap over
    images."""
    if ci is not None:
        from ..engine.uncertainty import add_intervals

        add_intervals(result, ci, resamples=resamples, seed=seed)
    for message in result.warnings:
        warnings.warn(message, stacklevel=4)
    out: dict[str, Any] = dict(result.metrics)
    if ci is not None:
        out["confidence_intervals"] = {
            k: (v["low"], v["high"])
            for k, v in result.breakdowns["confidence_intervals"]["metrics"].items()
        }
    if return_details:
        out.update(breakdowns=result.breakdowns, counts=result.counts, warnings=result.warnings)
    if result.analysis is not None:
        out["analysis"] = result.analysis
    return out


def compute(benchmark: str, predictions: list[Any], references: list[Any], *,
            return_details: bool = False,
            ci: float | None = None, resamples: int = 1000, seed: int = 0, split: str | None = None,
            **options: Any) -> dict[str, Any]:
    """What every evaluate module's ``_compute`` does: rows -> records, examples -> official
    entries, score through the benchmark protocol, then :func:`compute_output`."""
    from ..benchmarks import get_benchmark
    from .api import check_conventions

    bench = get_benchmark(benchmark)
    references = list(references)
    refs = bench.scorer.references_from_rows(references)
    entries = bench.scorer.entries_from_examples(references, list(predictions))
    result = bench.scorer.score(refs, entries,
                                bench.options(split=split, details=return_details, **options))
    check_conventions(bench, refs, entries, result)
    return compute_output(result, return_details, ci, resamples, seed)
