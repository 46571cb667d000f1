"""What every ``metrics/<id>`` evaluate module shares: batch rows and the compute output."""

from __future__ import annotations

import warnings
from typing import Any

from .result import Result

__all__ = ["RowInputs", "batch_rows", "compute_output", "compute"]


def batch_rows(references: Any) -> Any:
    """A ``Dataset`` batch (a dict of columns) -> a list of rows; anything else unchanged."""
    if isinstance(references, dict):
        return [dict(zip(references, values)) for values in zip(*references.values())]
    return references


class RowInputs:
    """Mixin for the ``evaluate`` modules (before ``evaluate.Metric`` in the bases): whole Hub rows or a
    ``Dataset`` batch in, only the fields the module declares kept. Modules override the two hooks."""

    @staticmethod
    def slim_prediction(prediction: Any) -> Any:
        """Keep the fields of a prediction the module declares."""
        return prediction

    @staticmethod
    def slim_reference(reference: Any) -> Any:
        """Keep the fields of a reference the module declares."""
        return reference

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one prediction and its reference (a whole Hub row is fine: extra keys are dropped)."""
        super().add(prediction=self.slim_prediction(prediction), reference=self.slim_reference(reference), **kwargs)

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of predictions and references (Hub rows or a Dataset batch)."""
        from .errors import PredictionError

        if predictions is None or references is None:
            missing = "predictions" if predictions is None else "references"
            raise PredictionError(f"no {missing} were given", file=missing,
                                  fix="pass predictions=[...] and references=[...], one entry per example")
        if predictions is not None:
            predictions = [self.slim_prediction(p) for p in predictions]
        if references is not None:
            references = [self.slim_reference(r) for r in batch_rows(references)]
        super().add_batch(predictions=predictions, references=references, **kwargs)


def compute_output(result: Result, return_details: bool, ci: float | None = None, resamples: int = 1000,
                   seed: int = 0) -> dict[str, Any]:
    """The metrics dict of a Result; its warnings as Python warnings; details on request. With ``ci``,
    also ``confidence_intervals``: metric -> (low, high), a percentile bootstrap over images."""
    if ci is not None:
        from .uncertainty import add_intervals

        add_intervals(result, ci, resamples=resamples, seed=seed)
    for message in result.warnings:
        warnings.warn(message, stacklevel=4)
    out: dict[str, Any] = dict(result.metrics)
    if ci is not None:
        out["confidence_intervals"] = {k: (v["low"], v["high"])
                                       for k, v in result.breakdowns["confidence_intervals"]["metrics"].items()}
    if return_details:
        out.update(breakdowns=result.breakdowns, counts=result.counts, warnings=result.warnings)
    return out


def compute(benchmark: str, predictions: list[Any], references: list[Any], *, return_details: bool = False,
            ci: float | None = None, resamples: int = 1000, seed: int = 0, split: str | None = None,
            **options: Any) -> dict[str, Any]:
    """What every evaluate module's ``_compute`` does: rows -> records, examples -> official entries, score
    through the benchmark protocol, then :func:`compute_output`."""
    from .benchmarks import get_benchmark

    bench = get_benchmark(benchmark)
    references = list(references)
    refs = bench.references_from_rows(references)
    entries = bench.entries_from_examples(references, list(predictions))
    result = bench.score(refs, entries, bench.options(split=split, details=return_details, **options))
    return compute_output(result, return_details, ci, resamples, seed)
