"""The engine's parameters and arrays: what goes into :func:`~.matching.match` and what comes out.

A *pair* is one (image, label) of the evaluation, numbered ``0 <= pair < P``; GT boxes and
detections are filed under pairs (a multi-label GT box once per label). Axes used throughout the
package: ``A`` area ranges, ``T`` IoU thresholds, ``R`` recall thresholds, ``M`` max-dets settings
(all from :class:`Params`), ``K`` ranking groups, ``N`` kept detections.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..sorting import stable_argsort

#: Detection states after matching, per (area range, IoU threshold).
FP, TP, IGNORED = np.uint8(0), np.uint8(1), np.uint8(2)


@dataclass(frozen=True)
class Stat:
    """One line of ``COCOeval.summarize()``: AP or AR, at one IoU threshold (None: the mean over
    all), over one area range, with the ``max_det``-th max-detections setting (an index into
    ``Params.max_dets``)."""

    name: str
    ap: bool
    iou_thr: float | None = None
    area: str = "all"
    max_det: int = 2


#: The 12 stats of ``COCOeval.summarize()`` in their order (its ``_summarizeDets``).
STATS = (Stat("AP", True), Stat("AP50", True, 0.5), Stat("AP75", True, 0.75),
         Stat("AP_small", True, area="small"),
         Stat("AP_medium", True, area="medium"), Stat("AP_large", True, area="large"),
         Stat("AR1", False, max_det=0), Stat("AR10", False, max_det=1), Stat("AR100", False),
         Stat("AR_small", False, area="small"), Stat("AR_medium", False, area="medium"),
         Stat("AR_large", False, area="large"))
STAT_NAMES = tuple(s.name for s in STATS)


@dataclass(frozen=True)
class Params:
    """pycocotools ``Params(iouType="bbox")`` defaults (thresholds are the exact linspace
    values)."""

    iou_thrs: NDArray[np.float64] = field(default_factory=lambda: np.linspace(0.5, 0.95, 10))
    rec_thrs: NDArray[np.float64] = field(default_factory=lambda: np.linspace(0.0, 1.0, 101))
    max_dets: tuple[int, ...] = (1, 10, 100)
    area_rngs: tuple[tuple[float, float], ...] = ((0.0, 1e10), (0.0, 32.0**2), (32.0**2, 96.0**2),
                                                  (96.0**2, 1e10))
    area_labels: tuple[str, ...] = ("all", "small", "medium", "large")

    def __post_init__(self) -> None:
        # COCOeval.evaluate() sorts p.maxDets, so the max-det axis of its arrays is in ascending
        # order whatever order the user set
        object.__setattr__(self, "max_dets", tuple(sorted(self.max_dets)))


@dataclass(frozen=True)
class GroundTruth:
    """Ground-truth boxes, in file order, each filed under one pair (copies for multi-label
    boxes)."""

    pair: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    # the area used for the ranges (COCO: the file's ``area`` field)
    area: NDArray[np.float64]
    # crowd boxes: crowd IoU, and they absorb any number of detections
    iscrowd: NDArray[np.bool_]
    ann_id: NDArray[np.int64]          # annotation id (id 0 triggers the pycocotools quirk)
    #: ignored boxes (pycocotools' ``ignore``); None: the crowd boxes. They differ where ``iscrowd``
    #: is a string: ``ignore`` takes its truthiness ("0" is truthy), IoU and matching
    #: ``int(iscrowd)``.
    ignore: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class PairDetections:
    """Detections in file order, each filed under one pair.

    ``exact`` / ``is_int``: for files whose integer scores go beyond float64's 2^53, the exact
    integers and which scores were JSON integers. The official code sorts lists of Python numbers,
    so numpy makes an int64 array of a list of integers and float64 of a list holding a float (or of
    an empty one): a pair ranks exactly where all its scores are integers, a pooled ranking where
    every one of its per-image lists is a non-empty integer list (see :func:`score_key`). None (the
    usual case): float64 orders them the same.
    """

    pair: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    score: NDArray[np.float64]
    # COCO loadRes: w*h (may be negative); some scorers clip it: max(0, w*h)
    area: NDArray[np.float64]
    exact: NDArray[np.int64] | None = None
    is_int: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class Matches:
    """Result of :func:`match`: the kept detections (top ``max_dets[-1]`` per pair) with their
    states."""

    det_index: NDArray[np.int64]       # index into the input detections
    pair: NDArray[np.int64]
    rank: NDArray[np.int64]            # 0-based position in its pair's score order
    score: NDArray[np.float64]
    state: NDArray[np.uint8]           # (A, T, N): FP / TP / IGNORED
    npig: NDArray[np.int64]            # (A, P): non-ignored GT per pair and area range
    # (P,): the pair has GT or detections (else COCOeval returns None)
    has_result: NDArray[np.bool_]
    id0_matches: int                   # matches whose state the GT-id-0 quirk changed (all A, T)
    exact: NDArray[np.int64] | None = None     # see :class:`PairDetections`
    is_int: NDArray[np.bool_] | None = None
    #: detections one of whose IoUs is NaN (a NaN coordinate): matched by pycocotools' own loop
    nan_iou: int = 0
    #: with ``match(..., keep_gt_at=t)``: the GT (index into the input GT arrays) each detection
    #: took at threshold t over the first area range, -1 for none (the error analysis needs which GT
    #: a true positive used)
    gt_taken: NDArray[np.int64] | None = None

    @functools.cached_property
    def score_order(self) -> NDArray[np.int64]:
        """The kept detections by descending score, ties in (pair, rank) order: the rows are in that
        order, so a stable sort on the score alone gives it. Shared by every pooled ranking of these
        matches."""
        return stable_argsort(-self.score)
