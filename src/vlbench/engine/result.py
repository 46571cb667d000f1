"""The result of scoring one benchmark: plain data, its JSON form and a generic terminal table.

Every number in ``metrics`` is in percent points (0-100) or ``None`` where the official scorer has
no value (its -1, or a crash on an empty subset), as ``FORMATS.md`` fixes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import __version__
from .errors import FormatError

__all__ = ["Result"]


#: value types that are JSON as they are (a float only when finite)
_PLAIN = {int, float, str, bool, type(None)}


def _clean(value: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, numpy scalars and arrays -> Python."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return value.tolist()  # fast path for long per-sample columns
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        # NaN/inf -> None below
        return value.tolist() if np.isfinite(value).all() else _clean(value.tolist())
    if isinstance(value, (list, tuple)):
        if set(map(type, value)) <= _PLAIN:     # long per-description columns: no call per value
            return [None if type(v) is float and not math.isfinite(v) else v for v in value]
        return [_clean(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):
        return _clean(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class Result:
    """Scores of one benchmark run: flat ``metrics``, larger ``breakdowns``, ``counts``,
    ``warnings``.

    ``options`` is the signature of the run (split, protocol-dependent switches, backends), so a
    number can always be traced to the settings that produced it.
    """

    benchmark: str
    protocol: str
    metrics: dict[str, float | None]
    breakdowns: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    version: str = __version__
    #: the Hub id of the dataset the references are (a published folder, or the id scored from);
    #: None if unknown
    dataset_id: str | None = None
    #: the references scored against: a built folder's recorded release, or official files' SHA-256
    #: (FORMATS.md)
    source: dict[str, Any] | None = None
    #: the error analysis (``analysis=True`` / ``--analysis`` / ``vlbench analyze``): why the model
    #: fails; not official
    analysis: dict[str, Any] | None = None
    #: builds the benchmark's bootstrap replicator (see :mod:`vlbench.engine.uncertainty`); not
    #: serialised
    resampler: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The result JSON (FORMATS.md): JSON-safe, NaN as null."""
        return _clean({
            "benchmark": self.benchmark,
            "protocol": self.protocol,
            "metrics": self.metrics,
            "breakdowns": self.breakdowns,
            "counts": self.counts,
            "warnings": list(self.warnings),
            "options": self.options,
            "dataset": {"id": self.dataset_id},
            **({"source": self.source} if self.source is not None else {}),
            "version": self.version,
            **({"analysis": self.analysis} if self.analysis is not None else {}),
        })

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any, source: str = "result JSON") -> Result:
        """A result read back from its JSON (no resampler: intervals need the original run); a
        malformed one (not an object, no benchmark, metrics that are not numbers or null) is a
        :class:`FormatError`."""
        fix = "write it with 'vlbench score ... --output result.json'"
        if not isinstance(data, dict) or not isinstance(data.get("benchmark"), str) \
                or not isinstance(data.get("metrics"), dict):
            raise FormatError(
                "not a vlbench result JSON (no 'benchmark' name and 'metrics' object)",
                file=source,
                fix=fix,
            )
        for key, value in data["metrics"].items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float))
            ):
                raise FormatError(f"metric {key!r} is {value!r}, not a number or null", file=source,
                                  fix=fix)
        for key, kind in (("breakdowns", dict), ("counts", dict), ("options", dict),
                          ("warnings", list), ("analysis", dict), ("source", dict)):
            if not isinstance(data.get(key, kind()), kind):
                raise FormatError(f"'{key}' must be a JSON {'object' if kind is dict else 'list'}",
                                  file=source, fix=fix)
        dataset = data.get("dataset") or {}
        if not isinstance(dataset, dict) or not isinstance(dataset.get("id"), (str, type(None))):
            raise FormatError("'dataset' must be an object whose 'id' is a Hub id or null",
                              file=source, fix=fix)
        return cls(benchmark=data["benchmark"], protocol=str(data.get("protocol", "official")),
                   metrics={str(k): (None if v is None else float(v)) for k,
                            v in data["metrics"].items()},
                   breakdowns=data.get("breakdowns", {}), counts=data.get("counts", {}),
                   warnings=[str(w) for w in data.get("warnings", [])],
                   options=data.get("options", {}),
                   version=str(data.get("version", __version__)), dataset_id=dataset.get("id"),
                   source=data.get("source"), analysis=data.get("analysis"))

    def table(self, digits: int = 2) -> str:
        """The metrics as a plain two-column terminal table, then counts and warnings."""
        width = max((len(k) for k in self.metrics), default=6)
        signature = ", ".join(f"{k}={v}" for k, v in self.options.items())
        lines = [f"{self.benchmark} "
                 f"(protocol={self.protocol}{', ' + signature if signature else ''})"]
        bounds = self.breakdowns.get("tie_bounds") or {}
        orders = (self.breakdowns.get("tie_orders") or {}).get("keys", {})
        rule = "-" * (width + 12 + (52 if bounds or orders else 0))
        # scores tie: what every order and what a random order would give, beside each key
        if bounds or orders:
            n = self.breakdowns.get("tie_orders", {}).get("orders", 0)
            lines.append(f"{'':{width}}  {'':>9}  {'every tie order':>20}  "
                         f"{f'random orders ({n}): mean [5%, 95%]':>28}")
        lines.append(rule)
        for key, value in self.metrics.items():
            line = f"{key.ljust(width)}  {_number(value, digits):>9}"
            if bounds or orders:
                b, o = bounds.get(key), orders.get(key)
                line += f"  {_span(b, digits) if b else '':>20}"
                line += (
                    f"  {(_number(o['mean'], digits) + ' ' + _span(o, digits)) if o else '':>28}"
                )
            lines.append(line.rstrip())
        lines.append(rule)
        flat_counts = {k: v for k, v in self.counts.items() if not isinstance(v, (dict, list))}
        if flat_counts:
            lines.append("counts: " + ", ".join(f"{k}={v}" for k, v in flat_counts.items()))
        for warning in self.warnings:
            lines.append(f"warning: {warning}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _number(value: float | None, digits: int) -> str:
    return "null" if value is None else f"{value:.{digits}f}"


def _span(bound: dict[str, float | None], digits: int) -> str:
    """``[low, high]`` of a tie bound or a random-order interval."""
    return f"[{_number(bound.get('low'), digits)}, {_number(bound.get('high'), digits)}]"
