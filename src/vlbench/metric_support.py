"""What every ``metrics/<id>`` evaluate module shares: batch rows and the compute output."""

from __future__ import annotations

import warnings
from typing import Any

from .result import Result

__all__ = ["batch_rows", "compute_output"]


def batch_rows(references: Any) -> Any:
    """A ``Dataset`` batch (a dict of columns) -> a list of rows; anything else unchanged."""
    if isinstance(references, dict):
        return [dict(zip(references, values)) for values in zip(*references.values())]
    return references


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
