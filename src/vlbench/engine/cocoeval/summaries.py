"""Summaries: the 12 stats of pycocotools' ``COCOeval.summarize()``, and which (area, max-dets)
steps they read.

In: ``precision`` (T, R, K, A, M) and ``recall`` (T, K, A, M) from :mod:`.accumulation`. Out:
``{stat name: fraction}``, -1 where undefined, in :data:`~.data.STAT_NAMES` order.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .data import STATS, Params


def mean_of_valid(s: NDArray[np.float64]) -> float:
    """pycocotools ``_summarize``: mean of the entries > -1, or -1 when there are none."""
    valid = s[s > -1]
    return -1.0 if len(valid) == 0 else float(np.mean(valid))


def summary_value(precision: NDArray, recall: NDArray, params: Params, *, ap: bool,
                  iou_thr: float | None = None, area: str = "all", max_det: int = 100) -> float:
    """One line of ``COCOeval.summarize()`` (same slicing, hence the same summation order)."""
    aind = [i for i, lbl in enumerate(params.area_labels) if lbl == area]
    mind = [i for i, d in enumerate(params.max_dets) if d == max_det]
    s = precision if ap else recall
    if iou_thr is not None:
        s = s[np.where(iou_thr == params.iou_thrs)[0]]
    s = s[:, :, :, aind, mind] if ap else s[:, :, aind, mind]
    return mean_of_valid(s)


def summarize(precision: NDArray, recall: NDArray, params: Params = Params()) -> dict[str, float]:
    """The 12 stats of ``COCOeval.summarize()`` as fractions (-1 where undefined), keyed by
    STAT_NAMES."""
    return {s.name: summary_value(precision, recall, params, ap=s.ap, iou_thr=s.iou_thr,
                                  area=s.area, max_det=params.max_dets[s.max_det]) for s in STATS}


def stat_steps(params: Params) -> tuple[tuple[int, ...], tuple[int, ...],
                                        tuple[tuple[int, int], ...]]:
    """What the 12 stats of :func:`summarize` read: (area ranges, max-dets steps) whose whole
    accumulation the AP stats need, and the other (area, max-dets) steps the AR stats read, where
    the final recall is enough."""
    M = len(params.max_dets)
    ap = {(params.area_labels.index(s.area), s.max_det % M) for s in STATS if s.ap}
    areas, max_dets = tuple(sorted({a for a, _ in ap})), tuple(sorted({mi for _, mi in ap}))
    ar = {(params.area_labels.index(s.area), s.max_det % M) for s in STATS if not s.ap}
    return areas, max_dets, tuple(sorted(ar - {(a, mi) for a in areas for mi in max_dets}))


