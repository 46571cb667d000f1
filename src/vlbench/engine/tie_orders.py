"""What a fair order of tied scores gives: the metrics over seeded random file orders of the
predictions.

Where detections share a score, the official scorers rank them by their position in the file (a
stable sort), so the same boxes in another order can score differently. ``tie_bounds`` (per scorer)
gives the extremes; this module gives the likely value: each of ``orders`` runs shuffles the
prediction list with a seeded generator and scores it again, exactly as the official scorer would
score that file. Shuffling a whole list changes only the order among equal scores, since every other
order is set by the scores themselves.

Result (``breakdowns["tie_orders"]``)::

    {"orders": 20, "seed": 0, "interval": [5, 95],
     "keys": {"AP": {"mean": 7.4, "low": 7.2, "high": 7.6}, ...}}

``low`` / ``high`` are the 5th and 95th percentiles (numpy's linear interpolation) over the sampled
orders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["random_tie_orders", "default_orders", "DEFAULT_ORDERS", "AUTO_MAX_ENTRIES", "INTERVAL"]

#: orders sampled by default: each is one more scoring of the file
DEFAULT_ORDERS = 20
#: the largest prediction list sampled by default: on a whole split 20 more scorings would multiply
#: the wait by ~20
AUTO_MAX_ENTRIES = 50_000
#: the central interval reported, percent of the sampled orders
INTERVAL = (5.0, 95.0)


def default_orders(entries: int) -> int:
    """The orders sampled when the caller does not say: :data:`DEFAULT_ORDERS` for a list of up to
    :data:`AUTO_MAX_ENTRIES` entries, else none (asked for by number, they are sampled whatever the
    size)."""
    return DEFAULT_ORDERS if entries <= AUTO_MAX_ENTRIES else 0


def random_tie_orders(score: Callable[[list[Any]], dict[str, float | None]], entries: Sequence[Any],
                      keys: Sequence[str], orders: int = DEFAULT_ORDERS,
                      seed: int = 0) -> dict[str, Any]:
    """Score ``orders`` seeded shuffles of ``entries`` with ``score`` (entries -> metrics) and
    summarise ``keys``: the mean and the central :data:`INTERVAL` over the orders (a key undefined
    in some order: over the others; in none: None)."""
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {key: [] for key in keys}
    for _ in range(orders):
        metrics = score([entries[i] for i in rng.permutation(len(entries)).tolist()])
        for key in keys:
            if metrics.get(key) is not None:
                values[key].append(float(metrics[key]))   # type: ignore[arg-type]  # checked just above
    summary: dict[str, dict[str, float | None]] = {}
    for key, got in values.items():
        if got:
            low, high = np.percentile(got, INTERVAL)
            summary[key] = {"mean": float(np.mean(got)), "low": float(low), "high": float(high)}
        else:
            summary[key] = {"mean": None, "low": None, "high": None}
    return {"orders": orders, "seed": seed, "interval": list(INTERVAL), "keys": summary}
