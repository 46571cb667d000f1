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


def compute_output(result: Result, return_details: bool) -> dict[str, Any]:
    """The metrics dict of a Result; its warnings as Python warnings; details on request."""
    for message in result.warnings:
        warnings.warn(message, stacklevel=4)
    out: dict[str, Any] = dict(result.metrics)
    if return_details:
        out.update(breakdowns=result.breakdowns, counts=result.counts, warnings=result.warnings)
    return out
