"""The COCO-style detection engine: pycocotools ``COCOeval`` bbox semantics, vectorised with numpy.

Reproduces pycocotools 2.0.11 exactly (OFFICIAL-SCORERS.md, section 5) for any grouping of
(image, category) *pairs* into ranking groups:

- plain COCO: one group per category, holding that category's pairs on every image;
- pooled evaluation: a few groups (e.g. all categories, all free-form descriptions), each holding many
  (image, label) pairs that share one score ranking.

The three steps mirror ``COCOeval``: :func:`match` (``evaluate``: per pair, greedy matching in score
order at every IoU threshold and area range), :func:`accumulate` (per group: pooled ranking,
precision envelope, 101-point interpolation) and :func:`summarize` (the 12 COCO stats).
Instead of a Python loop per pair, :func:`match` walks the detection *ranks* (at most 100) and
handles every pair at once; :func:`accumulate` works on whole groups with segment operations.

Every AP here (plain, pooled, tie bounds, per description, the error analysis's :func:`average_precision_at`, the
bootstrap's :class:`WeightedRanking`) is one accumulation: a ranking reduced to its true positives, then
:func:`tp_envelope`, :func:`recall_hits` and :func:`interpolated_precision` / :func:`interpolated_ap`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from .geometry import coco_iou_xywh
from .lookup import find_ids

__all__ = ["Params", "GroundTruth", "PairDetections", "Matches", "match", "accumulate", "summarize", "evaluate_bbox",
           "CocoEvalResult", "mean_ap_per_group", "Stat", "STATS", "STAT_NAMES", "TP", "FP", "IGNORED", "concat_ranges",
           "stable_argsort", "sortable_bits", "key_runs", "stat_steps", "recall_only",
           "TIE_ORDERS", "has_ties", "tied_detections", "tie_bounds_bbox", "accumulate_orders", "tp_envelope",
           "recall_hits", "interpolated_precision", "interpolated_ap"]

#: Detection states after matching, per (area range, IoU threshold).
FP, TP, IGNORED = np.uint8(0), np.uint8(1), np.uint8(2)


@dataclass(frozen=True)
class Stat:
    """One line of ``COCOeval.summarize()``: AP or AR, at one IoU threshold (None: the mean over all), over one area
    range, with the ``max_det``-th max-detections setting (an index into ``Params.max_dets``)."""

    name: str
    ap: bool
    iou_thr: float | None = None
    area: str = "all"
    max_det: int = 2


#: The 12 stats of ``COCOeval.summarize()`` in their order (its ``_summarizeDets``).
STATS = (Stat("AP", True), Stat("AP50", True, 0.5), Stat("AP75", True, 0.75), Stat("AP_small", True, area="small"),
         Stat("AP_medium", True, area="medium"), Stat("AP_large", True, area="large"),
         Stat("AR1", False, max_det=0), Stat("AR10", False, max_det=1), Stat("AR100", False),
         Stat("AR_small", False, area="small"), Stat("AR_medium", False, area="medium"),
         Stat("AR_large", False, area="large"))
STAT_NAMES = tuple(s.name for s in STATS)


@dataclass(frozen=True)
class Params:
    """pycocotools ``Params(iouType="bbox")`` defaults (thresholds are the exact linspace values)."""

    iou_thrs: NDArray[np.float64] = field(default_factory=lambda: np.linspace(0.5, 0.95, 10))
    rec_thrs: NDArray[np.float64] = field(default_factory=lambda: np.linspace(0.0, 1.0, 101))
    max_dets: tuple[int, ...] = (1, 10, 100)
    area_rngs: tuple[tuple[float, float], ...] = ((0.0, 1e10), (0.0, 32.0**2), (32.0**2, 96.0**2), (96.0**2, 1e10))
    area_labels: tuple[str, ...] = ("all", "small", "medium", "large")

    def __post_init__(self) -> None:
        # COCOeval.evaluate() sorts p.maxDets, so the max-det axis of its arrays is in ascending order whatever
        # order the user set
        object.__setattr__(self, "max_dets", tuple(sorted(self.max_dets)))


@dataclass(frozen=True)
class GroundTruth:
    """Ground-truth boxes, in file order, each filed under one pair (copies for multi-label boxes)."""

    pair: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    area: NDArray[np.float64]          # the area used for the ranges (COCO: the file's ``area`` field)
    iscrowd: NDArray[np.bool_]         # crowd boxes: crowd IoU, and they absorb any number of detections
    ann_id: NDArray[np.int64]          # annotation id (id 0 triggers the pycocotools quirk)
    #: ignored boxes (pycocotools' ``ignore``); None: the crowd boxes. They differ where ``iscrowd`` is a
    #: string: ``ignore`` takes its truthiness ("0" is truthy), IoU and matching ``int(iscrowd)``.
    ignore: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class PairDetections:
    """Detections in file order, each filed under one pair.

    ``exact`` / ``is_int``: for files whose integer scores go beyond float64's 2^53, the exact integers and which
    scores were JSON integers. The official code sorts lists of Python numbers, so numpy makes an int64 array of
    a list of integers and float64 of a list holding a float (or of an empty one): a pair ranks exactly where all
    its scores are integers, a pooled ranking where every one of its per-image lists is a non-empty integer list
    (see :func:`_score_key`). None (the usual case): float64 orders them the same.
    """

    pair: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    score: NDArray[np.float64]
    area: NDArray[np.float64]          # COCO loadRes: w*h (may be negative); some scorers clip it: max(0, w*h)
    exact: NDArray[np.int64] | None = None
    is_int: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class Matches:
    """Result of :func:`match`: the kept detections (top ``max_dets[-1]`` per pair) with their states."""

    det_index: NDArray[np.int64]       # index into the input detections
    pair: NDArray[np.int64]
    rank: NDArray[np.int64]            # 0-based position in its pair's score order
    score: NDArray[np.float64]
    state: NDArray[np.uint8]           # (A, T, N): FP / TP / IGNORED
    npig: NDArray[np.int64]            # (A, P): non-ignored GT per pair and area range
    has_result: NDArray[np.bool_]      # (P,): the pair has GT or detections (else COCOeval returns None)
    id0_matches: int                   # matches whose state the GT-id-0 quirk changed (all A, T)
    exact: NDArray[np.int64] | None = None     # see :class:`PairDetections`
    is_int: NDArray[np.bool_] | None = None
    #: detections one of whose IoUs is NaN (a NaN coordinate): matched by pycocotools' own loop
    nan_iou: int = 0
    #: with ``match(..., keep_gt_at=t)``: the GT (index into the input GT arrays) each detection took at threshold
    #: t over the first area range, -1 for none (the error analysis needs which GT a true positive used)
    gt_taken: NDArray[np.int64] | None = None

    @functools.cached_property
    def score_order(self) -> NDArray[np.int64]:
        """The kept detections by descending score, ties in (pair, rank) order: the rows are in that order, so a
        stable sort on the score alone gives it. Shared by every pooled ranking of these matches."""
        return stable_argsort(-self.score)


def _stable_order(*keys: NDArray) -> NDArray[np.int64]:
    """``np.lexsort`` with the first key primary (lexsort takes the primary key last)."""
    return np.lexsort(keys[::-1])


def _stable_group_order(group: NDArray[np.integer]) -> NDArray[np.int64]:
    """``np.argsort(group, kind="stable")`` for non-negative integers (group, pair or run numbers): numpy radix-sorts
    16-bit keys in linear time, so keys below 2^16 take one such pass and keys below 2^32 two (:func:`_radix_order`);
    64-bit keys go through a merge sort (bench/HISTORY.md has the measurements)."""
    top = int(group.max(initial=0))
    if top >= 2**32 or int(group.min(initial=0)) < 0:
        return np.argsort(group, kind="stable")
    return _radix_order(group, 1 if top < 2**16 else 2)


def _radix_order(keys: NDArray, n_digits: int) -> NDArray[np.int64]:
    """``np.argsort(keys, kind="stable")`` for non-negative integer keys below 2^(16 * n_digits), as a
    least-significant-digit radix sort: numpy's stable argsort (a radix sort on 16-bit keys) of each 16-bit digit
    in turn, the lowest first, each pass on the order so far."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    for c in range(1, n_digits):
        order = order[np.argsort(((keys[order] >> 16 * c) & 0xFFFF).astype(np.uint16), kind="stable")]
    return order


def _descending_rank(values: NDArray) -> NDArray[np.int64]:
    """Dense rank of each value, 0 for the largest, NaN after every number (as numpy sorts ``-score``)."""
    return np.unique(-values, return_inverse=True)[1].astype(np.int64).reshape(-1)


def _score_key(score: NDArray[np.float64], exact: NDArray[np.int64] | None, integer_mode: NDArray[np.bool_] | None
               ) -> NDArray:
    """Sort key for descending scores: ``-score``, or, where some rankings are int64 arrays officially, the rank of
    the exact integer in those and of the float64 value elsewhere (two rank scales never compared: one ranking
    uses one of them)."""
    if exact is None or integer_mode is None:
        return -score
    return np.where(integer_mode, _descending_rank(exact), _descending_rank(score))


def concat_ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Concatenation of ``arange(s, s + c)`` for every (s, c), without a Python loop: each start less the items
    before its range, repeated over the range, plus a running count (one repeat)."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)


def nonzero_2d(mask: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.nonzero`` of a 2-D mask (row-major order) as one flat search and a division: numpy's multi-dimensional
    nonzero is several times slower on the (thresholds, detections) masks of the matching and the accumulation."""
    width = mask.shape[1]
    flat = np.flatnonzero(mask)
    if width == 0:
        return flat, flat
    row = flat // width
    return row, flat - row * width


_SIGN_BIT, _ALL_BITS = np.uint64(1 << 63), np.uint64(2**64 - 1)


def sortable_bits(keys: NDArray) -> NDArray[np.uint64]:
    """uint64 values in the order numpy sorts ``keys`` (uint64 as is; int64 with the sign bit flipped; float64 as
    its bits, all of them flipped for negatives and the sign bit for the rest, -0.0 as 0.0 and every NaN last, as
    equals)."""
    if keys.dtype == np.uint64:
        return keys
    if keys.dtype.kind in "iub":
        return keys.astype(np.int64, copy=False).view(np.uint64) ^ _SIGN_BIT
    x = np.asarray(keys, dtype=np.float64) + 0.0            # -0.0 + 0.0 is 0.0: numpy ranks the two zeros equal
    bits = x.view(np.uint64)
    out = bits ^ np.where((bits >> np.uint64(63)).astype(bool), _ALL_BITS, _SIGN_BIT)
    out[np.isnan(x)] = _ALL_BITS
    return out


#: up to this many keys, four 16-bit radix passes beat the packed sort (1.3-2x from 20,000 to 500,000 keys on this
#: machine); beyond, their gathers leave the cache and the packed sort wins
_RADIX_MAX = 1 << 19


def stable_argsort(keys: NDArray) -> NDArray[np.int64]:
    """``np.argsort(keys, kind="stable")`` for 1-D integer or float keys, faster on millions: numpy sorts
    uint64 values with SIMD but argsorts with a merge sort, so each key's high bits are packed with its index (the
    low bits) and sorted as values. Keys agreeing on those high bits come out in index order; one stable pass over
    the full keys, then nearly sorted (a linear run merge for timsort), orders them, and only if it is needed.
    Integer keys in [0, 2^32) take :func:`_stable_group_order`'s radix passes instead, and up to
    :data:`_RADIX_MAX` keys :func:`_radix_order`'s."""
    n = len(keys)
    if keys.dtype.kind in "iub" and n and int(keys.min()) >= 0 and int(keys.max()) < 2**32:
        return _stable_group_order(keys)
    bits = sortable_bits(keys)
    if n <= _RADIX_MAX:
        return _radix_order(bits, 4)
    low = np.uint64(max(1, (n - 1).bit_length()))               # bits that hold an index
    packed = bits >> low                                        # in place from here: one array of n
    packed <<= low
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    packed &= (np.uint64(1) << low) - np.uint64(1)
    order = packed.view(np.int64)
    in_order = bits[order]
    if n > 1 and (in_order[1:] < in_order[:-1]).any():
        order = order[np.argsort(in_order, kind="stable")]
    return order


#: from this many detections (entries of a ranking) on, :func:`match` splits the pairs in two halves matched in two
#: threads and :func:`_step_curves` the area ranges (below, the halves' copies and a thread's start cost about what
#: the second core saves: matching 1.05x at 50,000, 0.94x at 100,000, 0.83x at 300,000 on this project's 2-core
#: machine)
SPLIT_DETECTIONS = 100_000


def match(gt: GroundTruth, dt: PairDetections, n_pairs: int, params: Params = Params(), *,
          id0_quirk: bool = True, keep_gt_at: float | None = None, threads: int = 2) -> Matches:
    """``COCOeval.evaluate()`` for every pair: greedy matching in score order, per area range and threshold.

    Per pair, detections are sorted by score (stable: file order breaks ties) and cut to the best ``max_dets[-1]``.
    A detection takes, among the GTs not yet taken at that threshold (crowd GTs are never taken), the one with the
    highest IoU >= t, non-ignored GTs first, ties to the later GT. With ``id0_quirk`` a match to a GT whose
    annotation id is 0 counts as unmatched, as in pycocotools (``dtm`` holds the GT id and is tested against 0).
    ``keep_gt_at``: also keep which GT each detection took at that threshold (:attr:`Matches.gt_taken`).

    A pair's matching depends on nothing outside the pair, so with ``threads=2`` (the default; 1 where the caller
    keeps the other core busy) and :data:`SPLIT_DETECTIONS` detections or more, the pairs below and above the
    detections' median pair are matched in two threads (numpy releases the GIL on large arrays) and the halves
    joined: the same arrays as one pass (the gain is in bench/HISTORY.md)."""
    args = (params, id0_quirk, keep_gt_at)
    cut = _median_pair(dt.pair, n_pairs) if threads > 1 and len(dt.pair) >= SPLIT_DETECTIONS else None
    if cut is None:
        return _match_pairs(gt, dt, n_pairs, *args)
    with ThreadPoolExecutor(max_workers=1) as pool:
        upper = pool.submit(_match_range, gt, dt, cut, n_pairs, *args)
        lower = _match_range(gt, dt, 0, cut, *args)
        return _joined(lower, upper.result())


def _median_pair(d_pair: NDArray[np.int64], n_pairs: int) -> int | None:
    """The first pair of the upper half: the pairs before it hold about half the detections (None: no such cut)."""
    before = np.cumsum(np.bincount(d_pair, minlength=n_pairs))
    cut = int(np.searchsorted(before, len(d_pair) // 2)) + 1
    return cut if 0 < cut < n_pairs else None


#: one half of :func:`match`: its matches, numbered within the half, and its detections' and GTs' indices in the whole
_Half = tuple["Matches", int, NDArray[np.int64], NDArray[np.int64]]
_Columns = TypeVar("_Columns", GroundTruth, PairDetections)


def _match_range(gt: GroundTruth, dt: PairDetections, lo: int, hi: int, params: Params, id0_quirk: bool,
                 keep_gt_at: float | None) -> _Half:
    """:func:`match` of the pairs ``lo <= pair < hi`` alone (pairs renumbered from 0)."""
    d_idx = np.flatnonzero((dt.pair >= lo) & (dt.pair < hi))
    g_idx = np.flatnonzero((gt.pair >= lo) & (gt.pair < hi))
    return _match_pairs(_rows(gt, g_idx, lo), _rows(dt, d_idx, lo), hi - lo, params, id0_quirk, keep_gt_at), lo, d_idx, g_idx


def _rows(columns: _Columns, idx: NDArray[np.int64], lo: int) -> _Columns:
    """Rows ``idx`` of a :class:`GroundTruth` or :class:`PairDetections` (every column; an absent one stays None), their
    pairs renumbered from ``lo``."""
    taken: dict[str, Any] = {f.name: None if (v := getattr(columns, f.name)) is None else v[idx] for f in fields(columns)}
    taken["pair"] -= lo                 # a fresh array (fancy indexing copies)
    return replace(columns, **taken)


def _joined(*halves: _Half) -> Matches:
    """The halves of :func:`match` as one :class:`Matches` over every pair (their rows are in (pair, rank) order
    and the pair ranges follow each other, so concatenating keeps that order)."""
    ms = [h[0] for h in halves]
    cat = lambda name: np.concatenate([getattr(m, name) for m in ms])  # noqa: E731
    optional = lambda name: None if getattr(ms[0], name) is None else cat(name)  # noqa: E731
    taken = (None if ms[0].gt_taken is None
             else np.concatenate([_in_order(m.gt_taken, g_idx) for m, _, _, g_idx in halves if m.gt_taken is not None]))
    return Matches(det_index=np.concatenate([d_idx[m.det_index] for m, _, d_idx, _ in halves]),
                   pair=np.concatenate([m.pair + lo for m, lo, _, _ in halves]), rank=cat("rank"), score=cat("score"),
                   state=np.concatenate([m.state for m in ms], axis=2), npig=np.concatenate([m.npig for m in ms], axis=1),
                   has_result=cat("has_result"), id0_matches=sum(m.id0_matches for m in ms), exact=optional("exact"),
                   is_int=optional("is_int"), nan_iou=sum(m.nan_iou for m in ms), gt_taken=taken)


def _match_pairs(gt: GroundTruth, dt: PairDetections, n_pairs: int, params: Params, id0_quirk: bool,
                 keep_gt_at: float | None) -> Matches:
    """:func:`match` in one pass over every pair."""
    A, T = len(params.area_rngs), len(params.iou_thrs)
    det_index, d_pair, d_rank = _ranked(dt, n_pairs, params.max_dets[-1])
    d_box, d_score, d_area, n_det = dt.box_xywh[det_index], dt.score[det_index], dt.area[det_index], len(det_index)

    # -- ground truth: per pair in file order --------------------------------------------------------
    g_order = np.argsort(gt.pair, kind="stable")
    g_pair, g_box, g_area = gt.pair[g_order], gt.box_xywh[g_order], gt.area[g_order]
    g_crowd, g_id = gt.iscrowd[g_order], gt.ann_id[g_order]
    g_ignore = (gt.iscrowd if gt.ignore is None else gt.ignore)[g_order]
    g_count = np.bincount(g_pair, minlength=n_pairs)
    g_start = np.cumsum(g_count) - g_count
    # ignored per area range: ignored (crowd) boxes, or area outside the (inclusive) range
    g_ignored = g_ignore[None, :] | _outside_area_ranges(g_area, params)                  # (A, G)
    npig = np.zeros((A, n_pairs), dtype=np.int64)
    for a in range(A):
        npig[a] = np.bincount(g_pair[~g_ignored[a]], minlength=n_pairs)
    d_count = np.bincount(d_pair, minlength=n_pairs)
    has_result = (g_count + d_count) > 0

    thr = np.minimum(params.iou_thrs, 1 - 1e-10)
    c_det, c_gt, c_iou, nan_det = _candidates(d_box, d_pair, g_box, g_crowd, g_count, g_start, thr.min())

    # -- outcome per (area, threshold, detection) -------------------------------------------------------
    d_outside = _outside_area_ranges(d_area, params)                                      # (A, N)
    state = np.where(d_outside, IGNORED, FP)[:, None, :].repeat(T, axis=1)               # unmatched default
    id0_changed = 0
    gt_taken = None if keep_gt_at is None else np.full(n_det, -1, dtype=np.int64)
    if len(c_det):
        # one sort for every area range; each range then only moves its non-ignored GTs last within a detection
        pre = _stable_order(d_rank[c_det], c_det, c_iou, c_gt)
        c_det, c_gt, c_iou = c_det[pre], c_gt[pre], c_iou[pre]
        c_rank = d_rank[c_det]
        for a, matched_gt in enumerate(_range_matches(c_det, c_gt, c_iou, c_rank, d_pair, g_ignored, g_pair, g_count,
                                                      g_crowd, thr, nan_det)):
            if a == 0 and gt_taken is not None:     # in the caller's GT order
                gt_taken = _in_order(matched_gt[int(np.flatnonzero(params.iou_thrs == keep_gt_at)[0])], g_order)
            id0_changed += _record_outcomes(state[a], matched_gt, g_ignored[a], g_id, d_outside[a], id0_quirk)
    return Matches(det_index=det_index, pair=d_pair, rank=d_rank, score=d_score, state=state, npig=npig,
                   has_result=has_result, id0_matches=id0_changed,
                   exact=None if dt.exact is None else dt.exact[det_index],
                   is_int=None if dt.is_int is None else dt.is_int[det_index], nan_iou=int(nan_det.sum()),
                   gt_taken=gt_taken)


def _range_matches(c_det, c_gt, c_iou, c_rank, d_pair, g_ignored, g_pair, g_count, g_crowd, thr, nan_det
                   ) -> Iterator[NDArray[np.int32]]:
    """Per area range, the GT each detection takes at each threshold, (T, N) as :func:`_greedy_match` gives it. The
    first range is matched over every pair; another only over the pairs where its ignore flags can change a choice
    (:func:`_same_matching`), taking the first range's matches elsewhere: on the benches' data 2-9% of the detections
    are in such pairs."""
    n_det, n_gt = len(d_pair), len(g_pair)
    first = _greedy_match(c_det, c_gt, c_iou, c_rank, ~g_ignored[0], g_crowd, thr, n_det, n_gt, nan_det)
    yield first
    for flags in g_ignored[1:]:
        redo = ~_same_matching(flags, g_ignored[0], g_pair, g_count)
        if not redo.any():
            yield first
            continue
        sel = redo[d_pair[c_det]]
        apart = _greedy_match(c_det[sel], c_gt[sel], c_iou[sel], c_rank[sel], ~flags, g_crowd, thr, n_det, n_gt, nan_det)
        matched = first.copy()
        cols = np.flatnonzero(redo[d_pair])
        matched[:, cols] = apart[:, cols]
        yield matched


def _same_matching(ignored: NDArray[np.bool_], ignored_first: NDArray[np.bool_], g_pair: NDArray[np.int64],
                   g_count: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per pair, whether an area range's matching is the first range's. ``evaluateImg`` sees the area range only
    through the GTs' ignore flags: they order the GTs (non-ignored first) and stop a search at an ignored GT after a
    non-ignored match. So the matching is the same where every GT of the pair has the same flag in both ranges, or
    where each range's flags are all equal within the pair (the order is then the file order and no search stops)."""
    n = len(g_count)
    differ = np.bincount(g_pair, weights=ignored != ignored_first, minlength=n) > 0
    uniform = np.ones(n, dtype=bool)
    for flags in (ignored, ignored_first):
        n_ignored = np.bincount(g_pair, weights=flags, minlength=n)
        uniform &= (n_ignored == 0) | (n_ignored == g_count)
    return ~differ | uniform


def _record_outcomes(state: NDArray[np.uint8], matched_gt: NDArray[np.int32], g_ignored: NDArray[np.bool_],
                     g_id: NDArray[np.int64], d_outside: NDArray[np.bool_], id0_quirk: bool) -> int:
    """One area range's (T, N) states from its matches: TP, or IGNORED where the GT taken is ignored; with
    ``id0_quirk`` a match to a GT of annotation id 0 is unmatched (pycocotools' ``dtm`` holds the GT id and is
    tested against 0). Returns how many matches that quirk changed."""
    t_idx, d_idx = nonzero_2d(matched_gt >= 0)
    m = matched_gt[t_idx, d_idx]
    ignored = g_ignored[m]
    zero_id = (g_id[m] == 0) & ~ignored
    new = np.where(ignored, IGNORED, TP).astype(np.uint8)
    if id0_quirk:   # dtm == 0: the detection counts as unmatched (FP, or ignored if outside the range)
        new = np.where(zero_id, np.where(d_outside[d_idx], IGNORED, FP), new).astype(np.uint8)
    state[t_idx, d_idx] = new
    return int(zero_id.sum()) if id0_quirk else 0


def _in_order(taken: NDArray[np.integer], g_order: NDArray[np.int64]) -> NDArray[np.int64]:
    """GT indices into a reordered or partial GT (-1 for none) -> indices into the GT as given (``g_order``: the
    given index of each; it may be empty when nothing was taken)."""
    out = np.full(len(taken), -1, dtype=np.int64)
    hit = taken >= 0
    out[hit] = g_order[taken[hit]]
    return out


def _ranked(dt: PairDetections, n_pairs: int, max_det: int) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                                  NDArray[np.int64]]:
    """Per pair by descending score (stable: file order breaks ties), the top ``max_det``: (index into ``dt``, pair,
    rank in the pair). A pair's list sorts as int64 when all its scores are JSON integers."""
    pair_int = (None if dt.exact is None or dt.is_int is None
                else np.bincount(dt.pair, weights=~dt.is_int, minlength=n_pairs)[dt.pair] == 0)
    # lexsort((key, pair)) as two stable passes, the minor key first: the score's argsort, then a radix pass on the
    # pair (:func:`_stable_group_order`), faster than lexsort on millions; ranks from each pair's start
    by_score = stable_argsort(_score_key(dt.score, dt.exact, pair_int))
    order = by_score[_stable_group_order(dt.pair[by_score])]
    pair_sorted = dt.pair[order]
    count = np.bincount(pair_sorted, minlength=n_pairs)
    rank_sorted = np.arange(len(order)) - (np.cumsum(count) - count)[pair_sorted]
    keep = rank_sorted < max_det
    return order[keep], pair_sorted[keep], rank_sorted[keep]


def _outside_area_ranges(area: NDArray[np.float64], params: Params) -> NDArray[np.bool_]:
    """(A, N): each area outside each (inclusive) area range."""
    lo = np.array([r[0] for r in params.area_rngs])[:, None]
    hi = np.array([r[1] for r in params.area_rngs])[:, None]
    return (area[None, :] < lo) | (area[None, :] > hi)


def _candidates(d_box, d_pair, g_box, g_crowd, g_count, g_start, lowest: float):
    """(detection, GT) combinations of the same pair with IoU >= the lowest threshold, and the detections with a
    NaN IoU: in pycocotools' loop a NaN is never below the running best, so every later GT can take its place;
    such detections keep all their GTs (:func:`_loop_match` handles them)."""
    n_gt_of_det = g_count[d_pair]
    c_det = np.repeat(np.arange(len(d_pair)), n_gt_of_det)
    c_gt = concat_ranges(g_start[d_pair], n_gt_of_det)
    c_iou = coco_iou_xywh(np.ascontiguousarray(d_box.T)[:, c_det], np.ascontiguousarray(g_box.T)[:, c_gt],
                          g_crowd[c_gt])
    nan_det = np.zeros(len(d_pair), dtype=bool)
    nan_det[c_det[np.isnan(c_iou)]] = True
    close = (c_iou >= lowest) | nan_det[c_det]
    return c_det[close], c_gt[close], c_iou[close], nan_det


def _greedy_match(c_det, c_gt, c_iou, c_rank, g_nonignored, g_crowd, thr, n_det, n_gt,
                  nan_det=None) -> NDArray[np.int32]:
    """For one area range: the GT each detection takes at each threshold (-1 if none), shape (T, N), int32 (GT
    indices; half the memory of int64 on (10, millions)).
    Candidates come sorted by (rank, detection, IoU, GT).

    Walks the ranks: the r-th detections of all pairs choose at once, since a detection only
    competes with the higher-scored detections of its own pair. Detections in ``nan_det`` go through
    pycocotools' loop itself (:func:`_loop_match`).
    """
    T = len(thr)
    # Within each detection, candidates in ascending preference: (non-ignored, IoU, later GT). A stable sort on
    # (detection's run, non-ignored) keeps the given (IoU, GT) order inside each class (replaces a 5-key lexsort).
    run = np.cumsum(np.r_[True, c_det[1:] != c_det[:-1]]) if len(c_det) else np.zeros(0, np.int64)
    pref = _stable_group_order(2 * run + g_nonignored[c_gt])
    c_det, c_gt, c_iou, c_rank = c_det[pref], c_gt[pref], c_iou[pref], c_rank[pref]
    looped = np.zeros(len(c_det), dtype=bool) if nan_det is None else nan_det[c_det]
    taken = np.zeros((T, n_gt), dtype=bool)
    out = np.full((T, n_det), -1, dtype=np.int32)
    bounds = np.flatnonzero(np.diff(c_rank)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(c_rank)]):
        plain = ~looped[lo:hi]
        det, g, iou = c_det[lo:hi][plain], c_gt[lo:hi][plain], c_iou[lo:hi][plain]
        if len(det):
            seg = np.r_[0, np.flatnonzero(np.diff(det)) + 1]
            valid = (iou[None, :] >= thr[:, None]) & (g_crowd[g][None, :] | ~taken[:, g])
            best = np.maximum.reduceat(np.where(valid, np.arange(len(det))[None, :], -1), seg, axis=1)  # (T, S)
            t_idx, s_idx = np.nonzero(best >= 0)
            chosen = g[best[t_idx, s_idx]]
            out[t_idx, det[seg[s_idx]]] = chosen
            taken[t_idx, chosen] = True
        for d in np.unique(c_det[lo:hi][~plain]).tolist():       # different pairs: independent of the above
            rows = lo + np.flatnonzero(c_det[lo:hi] == d)
            _loop_match(d, c_gt[rows], c_iou[rows], g_nonignored, g_crowd, thr, taken, out)
    return out


def _loop_match(det: int, gts: NDArray[np.int64], ious: NDArray[np.float64], g_nonignored: NDArray[np.bool_],
                g_crowd: NDArray[np.bool_], thr: NDArray[np.float64], taken: NDArray[np.bool_],
                out: NDArray[np.int32]) -> None:
    """``COCOeval.evaluateImg``'s matching loop for one detection (its pair's GTs non-ignored first, file order):
    a GT already taken (not crowd) is skipped, an ignored GT ends the search once a non-ignored one matched, and a
    GT whose IoU is not below the running best becomes the match. A NaN is never below anything, and nothing is
    below a NaN: after a NaN IoU every later GT replaces the match."""
    order = np.lexsort((gts, ~g_nonignored[gts]))
    gts, ious = gts[order].tolist(), ious[order].tolist()
    for t, threshold in enumerate(thr.tolist()):
        best, m = threshold, -1
        for g, iou in zip(gts, ious):
            if taken[t, g] and not g_crowd[g]:
                continue
            if m > -1 and g_nonignored[m] and not g_nonignored[g]:
                break
            if iou < best:
                continue
            best, m = iou, g
        if m > -1:
            out[t, det] = m
            taken[t, m] = True


def _segment_reverse_cummax(values: NDArray[np.float64], segment: NDArray[np.int64]) -> NDArray[np.float64]:
    """``max(values[i:end_of_segment])`` down axis 0 for every i, ``segment`` sorted (a loop over segments, in one
    running maximum). Exact: numpy orders complex numbers lexicographically, so with the segment's place in the
    reversed walk as real part and the value as imaginary part, no maximum carries from one segment to the next."""
    if not len(values):
        return values
    run = np.cumsum(np.r_[True, segment[1:] != segment[:-1]])
    z = np.empty(values.shape[::-1], np.complex128)            # the walk along the last axis: contiguous
    z.real = (run[-1] - run)[::-1]
    z.imag = values[::-1].T
    return np.ascontiguousarray(np.maximum.accumulate(z, axis=-1).imag.T[::-1])


# -- one AP accumulation ---------------------------------------------------------------------------------
# pycocotools' accumulate, for one ranking at one IoU threshold: tp_sum and fp_sum down the ranking,
# pr = tp / (fp + tp + eps), the envelope pr[i] = max(pr[i:]), rc = tp / npig and q[r] = pr[searchsorted(rc,
# recThrs[r], "left")]. Recall moves only at true positives, so q reads the envelope there alone. Every AP in
# vlbench (plain, pooled, tie bounds, per description, error analysis, bootstrap) reduces its rankings to their
# true positives, "rows" grouped by segment (one segment per ranking and threshold) in ranking order, and goes
# through these four functions; only how it counts ``tp`` and ``seen`` differs (exact integers, or image weights).

def tp_envelope(tp: NDArray, seen: NDArray, segment: NDArray[np.int64]) -> NDArray[np.float64]:
    """pycocotools' precision envelope at each true positive: ``tp / (seen + eps)`` (``seen`` = tp + fp up to it,
    ``eps`` = ``np.spacing(1)``, its order of operations), then the max over the segment's later true positives.
    ``tp``/``seen``: (rows,) exact counts, or (rows, S) weighted counts of S resamples."""
    return _segment_reverse_cummax(tp / (seen + np.spacing(1)), segment)


def recall_hits(tp: NDArray, n_gt: NDArray, segment: NDArray[np.int64], rec_thrs: NDArray[np.float64]
                ) -> NDArray[np.int64]:
    """How many recall thresholds land on each true positive: those its recall ``tp / n_gt`` reaches first
    (pycocotools' ``searchsorted(rc, recThrs, side="left")``, counted from the other side). Shapes as
    :func:`tp_envelope`; ``n_gt`` per row (> 0)."""
    reached = np.searchsorted(rec_thrs, tp / n_gt, side="right")
    hits = reached.copy()
    hits[1:] -= reached[:-1]
    first = _segment_starts(segment)
    hits[first] = reached[first]
    return hits


def interpolated_precision(envelope: NDArray[np.float64], hits: NDArray[np.int64], segment: NDArray[np.int64],
                           n_segments: int, n_rec: int) -> NDArray[np.float64]:
    """pycocotools' ``q`` per segment, (n_segments, n_rec): each true positive's envelope value at the recall
    thresholds it reaches first, 0 past the last one. The values are copies of the envelope (bit for bit)."""
    q = np.zeros((n_segments, n_rec))
    if not len(hits):
        return q
    seg_of = np.repeat(segment, hits)
    per_segment = np.bincount(seg_of, minlength=n_segments)
    column = np.arange(len(seg_of)) - np.repeat(np.cumsum(per_segment) - per_segment, per_segment)
    q[seg_of, column] = np.repeat(envelope, hits)
    return q


def interpolated_ap(envelope: NDArray[np.float64], hits: NDArray[np.int64], segment: NDArray[np.int64],
                    n_segments: int, n_rec: int) -> NDArray[np.float64]:
    """The mean of :func:`interpolated_precision` over the recall thresholds, per segment ((n_segments,) or
    (n_segments, S)), without the (segments, n_rec) array: equal up to summation order."""
    out = np.zeros((n_segments,) + envelope.shape[1:])
    if len(hits):
        first = _segment_starts(segment)
        out[segment[first]] = np.add.reduceat(envelope * hits, first, axis=0) / n_rec
    return out


def _segment_starts(segment: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row index where each run of equal (sorted) segment numbers starts."""
    return np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]]) if len(segment) else np.zeros(0, np.int64)


@dataclass(frozen=True)
class _Curves:
    """One (max-det, area) step of the accumulation, all IoU thresholds and all groups at once, reduced to its true
    positives: rows in segment ``threshold * K + group`` order, each with its envelope and recall hits."""

    valid: NDArray[np.bool_]          # (K,) the group has a result and non-ignored GT
    segment: NDArray[np.int64]        # per TP: threshold * K + group
    envelope: NDArray[np.float64]     # per TP: the precision envelope there (:func:`tp_envelope`)
    hits: NDArray[np.int64]           # per TP: the recall thresholds it reaches first (:func:`recall_hits`)
    recall: NDArray[np.float64]       # (T, K) final recall (0 without detections)

    def q(self, n_rec: int) -> NDArray[np.float64]:
        """(T, K, R): interpolated precision at every recall threshold (0 past the last TP)."""
        T, K = self.recall.shape
        return interpolated_precision(self.envelope, self.hits, self.segment, T * K, n_rec).reshape(T, K, n_rec)


#: Work size per block of IoU thresholds in the accumulation (bounds memory on million-detection rankings).
_BLOCK_ELEMENTS = 4_000_000


def _memberships(member_pair: NDArray[np.int64], n_pairs: int, pairs: NDArray[np.int64]
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The memberships of each of ``pairs`` (repeats allowed), end to end: indices into the member arrays (a pair's
    in member order), and how many each pair has."""
    count = np.bincount(member_pair, minlength=n_pairs)
    by_pair = _stable_group_order(member_pair)
    return by_pair[concat_ranges((np.cumsum(count) - count)[pairs], count[pairs])], count[pairs]


def _group_entries(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                   max_det: int | None = None) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """Detections expanded to (detection, group) entries: grouped by group, each group in ranking order; int32
    indices (int64 beyond 2^31).

    With ``m.exact`` (integer scores beyond 2^53) a group ranks by the exact integers where ``accumulate``'s
    concatenation is int64 (every per-image list of the group non-empty and all integers, within ``max_det``),
    else by float64; the entries then hold only detections ranked below ``max_det``."""
    if m.exact is None:
        # Matches are in (pair, rank) order, so a stable sort on the score alone breaks ties by (pair, rank).
        global_order = m.score_order
    else:
        global_order = np.flatnonzero(m.rank < (max_det if max_det is not None else m.rank.max(initial=0) + 1))
    # int32 entries where the indices fit: half the memory, and half the first touches of fresh pages
    index = np.dtype(np.int32 if max(len(m.score), int(member_group.max(initial=0)) + 1) < 2**31 else np.int64)
    member, reps = _memberships(member_pair, len(m.has_result), m.pair[global_order])
    entry_det: NDArray[np.integer] = np.repeat(global_order.astype(index), reps)
    entry_group: NDArray[np.integer] = np.asarray(member_group, dtype=index)[member]
    if m.exact is None or m.is_int is None:
        by_group = _stable_group_order(entry_group)         # stable: keeps the ranking order inside a group
        return entry_det[by_group], entry_group[by_group]
    n_groups = int(member_group.max(initial=-1)) + 1
    dets_of_pair = np.bincount(m.pair[global_order], minlength=len(m.has_result))
    empty_list = m.has_result[member_pair] & (dets_of_pair[member_pair] == 0)      # an empty list: float64
    not_int = np.bincount(entry_group, weights=~m.is_int[entry_det], minlength=n_groups) > 0
    float_group = not_int | (np.bincount(member_group, weights=empty_list, minlength=n_groups) > 0)
    key = _score_key(m.score[entry_det], m.exact[entry_det], ~float_group[entry_group])
    order = np.lexsort((entry_det, key, entry_group))     # ties: concatenation order, i.e. (pair, rank)
    return entry_det[order], entry_group[order]


#: How tied detections of a ranking are ordered: as the official stable sort does (file order), or every tie
#: block with its true positives first (the highest AP any order gives) or last (the lowest).
TIE_ORDERS = ("official", "best", "worst")


def _tie_span(m: Matches, e_det: NDArray[np.integer], e_group: NDArray[np.integer]) -> tuple[NDArray, NDArray]:
    """(first, last) position of each entry's tie block, int32: the run of entries of its group with an equal score
    (NaN equal to NaN; with exact integer scores, equal integers too). Replaces a walk along every group's ranking."""
    n = len(e_det)
    if n == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int32)
    score = m.score[e_det]
    with np.errstate(invalid="ignore"):
        same = (score[1:] == score[:-1]) | (np.isnan(score[1:]) & np.isnan(score[:-1]))
    same &= e_group[1:] == e_group[:-1]
    if m.exact is not None:
        same &= m.exact[e_det][1:] == m.exact[e_det][:-1]
    starts = np.flatnonzero(np.r_[True, ~same]).astype(np.int32)
    block = np.cumsum(np.r_[True, ~same]) - 1
    ends = np.r_[starts[1:], n].astype(np.int32) - 1
    return starts[block], ends[block]


def tied_detections(m: Matches) -> int:
    """How many kept detections share their score with another (then a ranking may hold a tie, and its AP depend on
    the order the official code gives the tie): NaN ties with NaN, as the official sorts put NaNs together; with
    exact integer scores, equal integers. Read off the descending score order that the pooled rankings share
    (adjacent equal scores), not a sort of its own."""
    n = len(m.score)
    if n < 2:
        return 0
    if m.exact is None:
        ranked = m.score[m.score_order]                        # NaNs last, together
        with np.errstate(invalid="ignore"):
            same = (ranked[1:] == ranked[:-1]) | (np.isnan(ranked[1:]) & np.isnan(ranked[:-1]))
    else:
        ranked_exact = np.sort(m.exact)
        same = ranked_exact[1:] == ranked_exact[:-1]
    tied = np.zeros(n, dtype=bool)
    tied[1:] = same
    tied[:-1] |= same
    return int(tied.sum())


def has_ties(m: Matches) -> bool:
    """Whether two kept detections share a score (:func:`tied_detections`): scoring without ties costs nothing more."""
    return tied_detections(m) > 0


def _accumulate_iter(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
                     params: Params, areas: tuple[int, ...], max_dets: tuple[int, ...], *,
                     orders: tuple[str, ...] = ("official",), orders_at: tuple[int, ...] | None = None, threads: int = 1,
                     npig: NDArray[np.int64] | None = None):
    """The core of :func:`accumulate`: yields ``(mi, a, curves)`` per (max-det, area), ``curves`` one per tie order
    of ``orders`` (TIE_ORDERS), sharing the ranking and the cumulative counts: the precision at a true positive
    counts the false positives before it in the official order, or, for the bounds, those before its tie block
    (``best``: its true positives first) or up to the block's end (``worst``). ``orders_at``: the max-det indices
    where every order is computed; elsewhere only the first (a step nobody asks bounds of costs nothing more).
    ``threads=2``: the area ranges of a step two at a time (:func:`_step_curves`). ``npig``: :func:`group_npig`'s
    value, when the caller has it."""
    K = n_groups
    npig = group_npig(m, member_pair, member_group, K) if npig is None else npig
    group_has = npig[:, 0] >= 0
    npig_group = np.maximum(npig, 0)                    # a group without any result has no GT

    grouped = _group_entries(m, member_pair, member_group) if m.exact is None else None

    all_orders = orders
    done: tuple[int, tuple[str, ...], dict[int, tuple[_Curves, ...]]] | None = None   # the last step's curves
    for mi in max_dets:
        orders = all_orders if orders_at is None or mi in orders_at else all_orders[:1]
        if grouped is not None:
            entry_det, entry_group = grouped
            keep = m.rank[entry_det] < params.max_dets[mi]
            n_kept = int(keep.sum())
            # the kept sets of two cuts are nested, so as many kept is the same ranking: its curves again
            if done is not None and done[0] == n_kept and done[1] == orders:
                yield from ((mi, a, done[2][a]) for a in areas)
                continue
            e_det, e_group = (entry_det, entry_group) if n_kept == len(keep) else (entry_det[keep], entry_group[keep])
        else:       # the ranking's dtype can change with the cut: one order per max-det
            e_det, e_group = _group_entries(m, member_pair, member_group, params.max_dets[mi])
        curves: dict[int, tuple[_Curves, ...]] = {}
        for a, step in _step_curves(m, e_det, e_group, K, params, areas, orders, group_has, npig_group, threads):
            curves[a] = step
            yield mi, a, step
        if grouped is not None:
            done = (len(e_det), orders, curves)


def _step_curves(m: Matches, e_det: NDArray[np.integer], e_group: NDArray[np.integer], K: int, params: Params,
                 areas: tuple[int, ...], orders: tuple[str, ...], group_has: NDArray[np.bool_],
                 npig_group: NDArray[np.int64], threads: int = 1):
    """One max-det step of :func:`_accumulate_iter` (its entries ``e_det`` / ``e_group`` grouped, each group in
    ranking order): yields ``(a, curves)`` per area range. The area ranges share the ranking and differ only in the
    states they read, so with ``threads=2`` every second one is computed in a worker thread."""
    nd = np.bincount(e_group, minlength=K)
    group_start = np.cumsum(nd) - nd
    fp_ats: list[NDArray[np.int32] | None] = [None] * len(orders)      # the last position whose FPs count
    if set(orders) - {"official"}:
        tie_first, tie_last = _tie_span(m, e_det, e_group)
        tie_first -= 1                                   # best: the FPs before the block
        fp_ats = [None if o == "official" else tie_first if o == "best" else tie_last for o in orders]
        del tie_first, tie_last
    step = functools.partial(_area_curves, m, e_det, e_group, K, params, fp_ats, group_has, npig_group, nd, group_start)
    if threads < 2 or len(areas) < 2 or len(e_det) < SPLIT_DETECTIONS:
        yield from ((a, step(a)) for a in areas)
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = {a: pool.submit(step, a) for a in areas[1::2]}
        for a in areas:
            yield a, later[a].result() if a in later else step(a)


def _area_curves(m: Matches, e_det: NDArray[np.integer], e_group: NDArray[np.integer], K: int, params: Params,
                 fp_ats: list[NDArray[np.int32] | None], group_has: NDArray[np.bool_], npig_group: NDArray[np.int64],
                 nd: NDArray[np.int64], group_start: NDArray[np.int64], a: int) -> tuple[_Curves, ...]:
    """:func:`_step_curves` for area range ``a``: one curve per tie order (per entry of ``fp_ats``)."""
    T, n = len(params.iou_thrs), len(e_det)
    npig_a = np.maximum(npig_group[:, a], 1)
    # Thresholds in blocks (all at once when the ranking is short): TP t of group g is segment t * K + g.
    block = max(1, min(T, _BLOCK_ELEMENTS // max(n, 1)))
    segments, tps, seens = [], [], []
    n_tp = np.zeros((T, K), dtype=np.int64)
    for t0 in range(0, T, block):
        st = m.state[a][t0:t0 + block][:, e_det] if n else np.zeros((min(block, T - t0), 0), np.uint8)
        seg, tp_b, seen_b, n_tp[t0:t0 + len(st)] = _tp_counts(st, t0, e_group, group_start, K, fp_ats)
        segments.append(seg)
        tps.append(tp_b)
        seens.append(seen_b)
    segment, tp = np.concatenate(segments), np.concatenate(tps)
    hits = recall_hits(tp, npig_a[segment % K], segment, params.rec_thrs)
    valid = group_has & (npig_group[:, a] > 0)
    recall = np.where(nd[None] > 0, n_tp / npig_a[None], 0.0)
    return tuple(_Curves(valid, segment, tp_envelope(tp, np.concatenate([s[i] for s in seens]), segment), hits, recall)
                 for i in range(len(fp_ats)))


def _tp_counts(st: NDArray[np.uint8], t0: int, e_group: NDArray[np.integer], group_start: NDArray[np.int64],
               K: int, fp_ats: list[NDArray[np.int32] | None]) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                                     list[NDArray[np.int64]], NDArray[np.int64]]:
    """One block of thresholds ``st`` (b, n) starting at ``t0``: every TP's segment ``t * K + group``, its group's TP
    count up to it, the detections counted up to it (TPs and FPs) once per entry of ``fp_ats``, and the TP count per
    (threshold, group). The FPs counted are those before the TP in the ranking (None), or those up to a given
    position per entry: the tie bounds' orders."""
    n = st.shape[1]
    fp_cum = np.cumsum(st == FP, axis=1, dtype=np.int32)                             # (b, n)
    t_idx, pos = nonzero_2d(st == TP)                                                # row-major: (t, group) order
    seg = (t0 + t_idx) * K + e_group[pos]
    n_tp_b = np.bincount(seg - t0 * K, minlength=len(st) * K).reshape(len(st), K)
    first_b = (np.cumsum(n_tp_b) - n_tp_b.ravel())
    k = np.arange(len(pos)) - first_b[seg - t0 * K] + 1                              # tp_sum at the TP
    before = np.zeros((len(st), K), dtype=np.int64)
    if n:
        before[:, group_start > 0] = fp_cum[:, group_start[group_start > 0] - 1]
    fp_before = before[t_idx, e_group[pos]]
    seen = []
    for fp_at in fp_ats:
        if fp_at is None:
            fp_here = fp_cum[t_idx, pos]
        else:           # FPs up to fp_at (none before the ranking's first entry)
            fp_here = np.where(fp_at[pos] >= 0, fp_cum[t_idx, np.maximum(fp_at[pos], 0)], 0)
        seen.append(fp_here - fp_before + k)
    return seg, k, seen, n_tp_b


def group_npig(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                n_groups: int) -> NDArray[np.int64]:
    """num-gt per (group, area): non-ignored GT, or -1 for a group without any result."""
    A = m.npig.shape[0]
    group_has = np.zeros(n_groups, dtype=bool)
    group_has[member_group[m.has_result[member_pair]]] = True
    npig = np.stack([np.bincount(member_group, weights=m.npig[a][member_pair], minlength=n_groups)
                     for a in range(A)], axis=1).astype(np.int64)
    return np.where(group_has[:, None], npig, -1)


def accumulate(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
               params: Params = Params(), *, areas: tuple[int, ...] | None = None, max_dets: tuple[int, ...] | None = None,
               ties: str = "official") -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """``COCOeval.accumulate()`` with arbitrary ranking groups.

    A group is a set of pairs (``member_pair[i]`` belongs to ``member_group[i]``; a pair may be in
    several groups). Within a group, detections are ranked by score, ties broken by pair index
    (pairs must be numbered in the official concatenation order) and then by rank in the pair.
    Returns ``precision`` (T, R, K, A, M), ``recall`` (T, K, A, M) and ``npig`` (K, A), with -1
    where a group has no result or no non-ignored GT (npig -1 for no result). ``areas`` /
    ``max_dets`` restrict the work to some indices (the rest stays -1). ``ties`` ("best" / "worst"): the precision
    of every tied block of a ranking ordered for the highest / lowest AP (see :data:`TIE_ORDERS`; recall does not
    depend on the order).
    """
    return accumulate_orders(m, member_pair, member_group, n_groups, params, areas=areas, max_dets=max_dets,
                             orders=(ties,))[ties]


def accumulate_orders(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
                      params: Params = Params(), *, areas: tuple[int, ...] | None = None,
                      max_dets: tuple[int, ...] | None = None, orders: tuple[str, ...] = ("official",)
                      ) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]]:
    """:func:`accumulate` for several tie orders at once (the ranking and the counts computed once): order ->
    (precision, recall, npig)."""
    T, R = len(params.iou_thrs), len(params.rec_thrs)
    A, M = len(params.area_rngs), len(params.max_dets)
    areas = tuple(range(A)) if areas is None else areas
    max_dets = tuple(range(M)) if max_dets is None else max_dets
    precision = {o: -np.ones((T, R, n_groups, A, M)) for o in orders}
    recall = {o: -np.ones((T, n_groups, A, M)) for o in orders}
    for mi, a, curves in _accumulate_iter(m, member_pair, member_group, n_groups, params, areas, max_dets,
                                          orders=orders):
        for o, c in zip(orders, curves):
            _store(c, precision[o], recall[o], a, mi, R)
    npig = group_npig(m, member_pair, member_group, n_groups)
    return {o: (precision[o], recall[o], npig) for o in orders}


def mean_ap_per_group(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
                      params: Params = Params(), *, area: int = 0, max_det: int = -1) -> tuple[NDArray, NDArray]:
    """AP and AP@0.5 per group (mean interpolated precision over thresholds x recall points; -1 undefined)
    for many small groups (per-description diagnostics), without (K, R) arrays (:func:`interpolated_ap`).
    Equal to the pycocotools values up to floating-point summation order."""
    mi = max_det % len(params.max_dets)
    T, R, K = len(params.iou_thrs), len(params.rec_thrs), n_groups
    t50 = int(np.flatnonzero(params.iou_thrs == 0.5)[0])
    (_, _, (c,)), = _accumulate_iter(m, member_pair, member_group, K, params, (area,), (mi,))
    per_segment = interpolated_ap(c.envelope, c.hits, c.segment, T * K, R).reshape(T, K)
    return np.where(c.valid, per_segment.mean(axis=0), -1.0), np.where(c.valid, per_segment[t50], -1.0)


def threshold_counts(m: Matches, params: Params = Params(), *, iou_thr: float = 0.5, area: int = 0,
                     max_det: int = -1, pairs: NDArray[np.bool_] | None = None) -> tuple[int, int, int]:
    """(true positives, false positives, non-ignored GT) at one IoU threshold, every detection kept within the
    max-dets cut counted as predicted (no score threshold: a file without confidences is a set of boxes), each
    matched as the official greedy matching matches it; ``pairs`` restricts them to some pairs. Not an official
    number: the counts behind precision, recall and F1 at that IoU."""
    t = int(np.flatnonzero(params.iou_thrs == iou_thr)[0])
    state = m.state[area, t]
    kept = m.rank < params.max_dets[max_det % len(params.max_dets)]
    if pairs is not None:
        kept &= pairs[m.pair]
    npig = m.npig[area] if pairs is None else m.npig[area][pairs]
    return int((kept & (state == TP)).sum()), int((kept & (state == FP)).sum()), int(npig.sum())


def precision_recall_f1(tp: int, fp: int, n_gt: int) -> dict[str, float | None]:
    """Precision TP / (TP + FP), recall TP / GT and their harmonic mean F1, in percent (None where undefined)."""
    precision = 100.0 * tp / (tp + fp) if tp + fp else None
    recall = 100.0 * tp / n_gt if n_gt else None
    f1 = (None if precision is None or recall is None else
          0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
    return {"precision": precision, "recall": recall, "F1": f1}


def key_runs(a_key: NDArray[np.integer], b_key: NDArray[np.integer]
             ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``b_order`` (``b`` sorted by key, stable) and, per ``a``, where its key's run starts in that order and how
    long it is: ``b_order[first[i]:first[i] + count[i]]`` are the ``j`` with ``b_key[j] == a_key[i]``, in order."""
    b_order = stable_argsort(b_key)
    b_sorted = b_key[b_order]
    first = np.searchsorted(b_sorted, a_key)
    return b_order, first, np.searchsorted(b_sorted, a_key, side="right") - first


def same_key_combinations(a_key: NDArray[np.int64], b_key: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """Every (i, j) with ``a_key[i] == b_key[j]``, as two index arrays: ``b`` sorted once, each ``a`` meets its
    key's run (:func:`key_runs`; replaces a loop over the keys)."""
    b_order, first, count = key_runs(a_key, b_key)
    return np.repeat(np.arange(len(a_key)), count), b_order[concat_ranges(first, count)]


def on_objects(d_image: NDArray[np.int64], d_box_xywh: NDArray[np.float64], g_image: NDArray[np.int64],
               g_box_xywh: NDArray[np.float64], iou_thr: float = 0.5) -> NDArray[np.bool_]:
    """Whether each detection overlaps some GT box of its image with IoU >= ``iou_thr`` (no crowd rule): a box that
    lies on an object, whatever label either one carries."""
    from .geometry import iou_aligned_xyxy, xywh_to_xyxy

    c_det, c_gt = same_key_combinations(d_image, g_image)
    d_xyxy, g_xyxy = xywh_to_xyxy(d_box_xywh), xywh_to_xyxy(g_box_xywh)
    out = np.zeros(len(d_image), dtype=bool)
    for lo in range(0, len(c_det), _ON_OBJECTS_PART):     # parts: a few hundred bytes of temporaries per combination
        det, gt = c_det[lo:lo + _ON_OBJECTS_PART], c_gt[lo:lo + _ON_OBJECTS_PART]
        with np.errstate(invalid="ignore", over="ignore"):
            iou = iou_aligned_xyxy(d_xyxy[det], g_xyxy[gt], dtype=np.float64, eps=0.0)
        out[det[np.nan_to_num(iou, nan=0.0) >= iou_thr]] = True
    return out


#: (detection, GT) combinations per part in :func:`on_objects`
_ON_OBJECTS_PART = 1 << 18


def recall_any_score(g_key: NDArray[np.int64], g_xyxy: NDArray[np.float64], d_key: NDArray[np.int64],
                     d_xyxy: NDArray[np.float64], iou_thr: float = 0.5) -> float | None:
    """Percent of GT boxes that some detection of the same key (image and label) overlaps with IoU >= ``iou_thr``,
    whatever its score or rank: how much of the GT a file's boxes cover, cheap and free of ranking (what the
    convention check compares between readings of the same numbers). None without GT."""
    from .geometry import iou_aligned_xyxy

    if not len(g_key):
        return None
    c_gt, c_det = same_key_combinations(g_key, d_key)
    with np.errstate(invalid="ignore", over="ignore"):
        iou = iou_aligned_xyxy(g_xyxy[c_gt], d_xyxy[c_det], dtype=np.float64, eps=0.0)
    covered = np.zeros(len(g_key), dtype=bool)
    covered[c_gt[np.nan_to_num(iou, nan=0.0) >= iou_thr]] = True
    return 100.0 * float(covered.mean())


def average_precision_at(group: NDArray[np.int64], rank_key: NDArray[np.int64], tp: NDArray[np.bool_],
                         n_gt: NDArray[np.int64], params: Params = Params()) -> NDArray[np.float64]:
    """COCO AP at one IoU threshold for each ranking group, from per-detection outcomes: ``tp`` (else a false
    positive; ignored detections are left out by the caller), ``rank_key`` ordering a group's detections as the
    official ranking does (lower first), ``n_gt`` non-ignored GT per group. The 101-point interpolated precision
    averaged, as ``accumulate`` + ``summarize`` give one threshold's AP; -1 where a group has no GT. Detections
    already in ``rank_key`` order sort in linear time (a stable radix sort on the small group numbers)."""
    K = len(n_gt)
    if len(rank_key) > 1 and bool((rank_key[1:] >= rank_key[:-1]).all()):
        order = _stable_group_order(group)
    else:
        order = np.lexsort((rank_key, group))
    g, hit = group[order], tp[order].astype(np.int64)
    start = np.searchsorted(g, np.arange(K))
    tp_sum = np.cumsum(hit)
    before = np.r_[0, tp_sum][start]                     # TPs of the groups before each group
    is_tp = hit.astype(bool)
    k = (tp_sum - before[g])[is_tp]                      # the group's TP count up to each true positive
    seen = (np.arange(len(g)) - start[g] + 1)[is_tp]     # its detections up to there
    segment = g[is_tp]
    ap = np.full(K, -1.0)
    has = n_gt > 0
    if not has.any():
        return ap
    hits = recall_hits(k, np.maximum(n_gt, 1)[segment], segment, params.rec_thrs)
    q = interpolated_precision(tp_envelope(k, seen, segment), hits, segment, K, len(params.rec_thrs))
    ap[has] = q[has].mean(axis=1)
    return ap


def mean_of_valid(s: NDArray[np.float64]) -> float:
    """pycocotools ``_summarize``: mean of the entries > -1, or -1 when there are none."""
    valid = s[s > -1]
    return -1.0 if len(valid) == 0 else float(np.mean(valid))


def summary_value(precision: NDArray, recall: NDArray, params: Params, *, ap: bool, iou_thr: float | None = None,
                  area: str = "all", max_det: int = 100) -> float:
    """One line of ``COCOeval.summarize()`` (same slicing, hence the same summation order)."""
    aind = [i for i, lbl in enumerate(params.area_labels) if lbl == area]
    mind = [i for i, d in enumerate(params.max_dets) if d == max_det]
    s = precision if ap else recall
    if iou_thr is not None:
        s = s[np.where(iou_thr == params.iou_thrs)[0]]
    s = s[:, :, :, aind, mind] if ap else s[:, :, aind, mind]
    return mean_of_valid(s)


def summarize(precision: NDArray, recall: NDArray, params: Params = Params()) -> dict[str, float]:
    """The 12 stats of ``COCOeval.summarize()`` as fractions (-1 where undefined), keyed by STAT_NAMES."""
    return {s.name: summary_value(precision, recall, params, ap=s.ap, iou_thr=s.iou_thr, area=s.area,
                                  max_det=params.max_dets[s.max_det]) for s in STATS}


@dataclass(frozen=True)
class CocoEvalResult:
    """What ``COCOeval`` leaves behind: ``stats`` (fractions, -1 undefined), ``precision``, ``recall``."""

    stats: dict[str, float]
    precision: NDArray[np.float64]
    recall: NDArray[np.float64]
    npig: NDArray[np.int64]
    matches: Matches
    category_ids: NDArray[np.int64]
    skipped_detections: int  # detections whose category is not a GT category (pycocotools skips them)
    skipped_gt: int = 0      # GT annotations of images not in ``image_ids`` (pycocotools never looks them up)
    #: the GT and detections as matched (pairs ``image index * K + category index``), for the error analysis
    truth: GroundTruth | None = None
    detections: PairDetections | None = None
    #: :func:`tie_bounds_bbox`'s values when ``evaluate_bbox(..., tie_bounds=True)`` found tied scores
    tie_bounds: dict[str, tuple[float, float]] | None = None


def resolve_by_id(gt: dict[str, NDArray], image_ids: NDArray[np.int64],
                  category_ids: NDArray[np.int64]) -> tuple[dict[str, NDArray], NDArray[np.bool_]]:
    """The GT annotations ``COCOeval`` evaluates, as pycocotools' ``COCO`` index gives them, and the orphan mask.

    ``_prepare`` loads ``loadAnns(getAnnIds(imgIds, catIds))``: the annotations of the evaluated images and
    categories, in image-id then file order, each looked up again *by its id* in ``anns``, where the last
    annotation with an id wins. With unique ids that is the annotations themselves; with a repeated id every
    annotation carrying it becomes the last one (which is then evaluated once per copy, under its own image and
    category). Annotations of images not in ``image_ids`` are never looked up (orphans).
    """
    image, category = np.asarray(gt["image_id"]), np.asarray(gt["category_id"])
    orphan = ~np.isin(image, image_ids)
    ids = np.asarray(gt["id"])
    if len(np.unique(ids)) == len(ids):
        return gt, orphan
    wanted = np.flatnonzero(~orphan & np.isin(category, category_ids))
    wanted = wanted[np.argsort(image[wanted], kind="stable")]            # getAnnIds: by image id, then file order
    uniq, inverse = np.unique(ids, return_inverse=True)
    last = np.full(len(uniq), -1)
    np.maximum.at(last, inverse, np.arange(len(ids)))                       # anns[id]: the last one wins
    rows = last[inverse[wanted]]
    return {key: np.asarray(value)[rows] for key, value in gt.items()}, orphan


def evaluate_bbox(image_ids: NDArray[np.int64], category_ids: NDArray[np.int64], gt: dict[str, NDArray],
                  dt: dict[str, NDArray], params: Params = Params(), *, id0_quirk: bool = True,
                  keep_gt_at: float | None = None, tie_bounds: bool = False, stats_only: bool = False,
                  threads: int = 2) -> CocoEvalResult:
    """Stock ``COCOeval(gt, dt, "bbox")`` evaluate + accumulate + summarize, one group per category.

    ``gt``: arrays ``image_id, category_id, bbox (xywh), area, iscrowd, id`` in file order;
    ``dt``: ``image_id, category_id, bbox, score`` in file order, every image a GT image (as
    ``loadRes`` asserts), and optionally ``score_exact`` / ``score_is_int`` (see :class:`PairDetections`).
    Detection area is ``w * h`` as ``loadRes`` sets it. ``keep_gt_at``: see :func:`match`. ``tie_bounds``: when
    scores tie, :func:`tie_bounds_bbox`'s values too, from the same accumulation (kept in the result).
    ``stats_only``: the precision and recall arrays hold only the (area, max-dets) entries the 12 stats read
    (:func:`stat_steps`), the rest -1: the stats are the same, at about half the accumulation's cost. ``threads``:
    2 matches (:func:`match`) and accumulates (the area ranges, :func:`_step_curves`) in two threads; 1 where the
    caller keeps the other core busy.
    """
    imgs = np.unique(np.asarray(image_ids, dtype=np.int64))
    cats = np.unique(np.asarray(category_ids, dtype=np.int64))
    K = len(cats)

    def pair_of(image_id, category_id):
        # an id that is not there is recognised, not filed under its neighbour (pycocotools only looks up
        # annotations of the evaluated image ids)
        (i, i_known), (k, k_known) = find_ids(imgs, image_id), find_ids(cats, category_id)
        known = i_known & k_known
        return np.where(known, i * K + k, 0), known

    gt, g_orphan = resolve_by_id(gt, imgs, cats)
    g_pair, g_known = pair_of(np.asarray(gt["image_id"]), np.asarray(gt["category_id"]))
    d_pair, d_known = pair_of(np.asarray(dt["image_id"]), np.asarray(dt["category_id"]))
    g_box = np.asarray(gt["bbox"], dtype=np.float64).reshape(-1, 4)
    d_box = np.asarray(dt["bbox"], dtype=np.float64).reshape(-1, 4)
    truth = GroundTruth(pair=g_pair[g_known], box_xywh=g_box[g_known],
                        area=np.asarray(gt["area"], dtype=np.float64)[g_known],
                        iscrowd=np.asarray(gt["iscrowd"]).astype(bool)[g_known],
                        ann_id=np.asarray(gt["id"], dtype=np.int64)[g_known])
    exact = dt.get("score_exact")
    with np.errstate(invalid="ignore", over="ignore"):
        d_area = d_box[:, 2] * d_box[:, 3]
    dets = PairDetections(pair=d_pair[d_known], box_xywh=d_box[d_known],
                      score=np.asarray(dt["score"], dtype=np.float64)[d_known], area=d_area[d_known],
                      exact=None if exact is None else np.asarray(exact, dtype=np.int64)[d_known],
                      is_int=None if exact is None else np.asarray(dt["score_is_int"], dtype=bool)[d_known])
    n_pairs = len(imgs) * K
    matches = match(truth, dets, n_pairs, params, id0_quirk=id0_quirk, keep_gt_at=keep_gt_at, threads=threads)
    precision, recall, npig, bounds = _accumulate_bbox(matches, K, params, tie_bounds and has_ties(matches),
                                                       stats_only=stats_only, threads=threads)
    return CocoEvalResult(stats=summarize(precision, recall, params), precision=precision, recall=recall,
                          npig=npig, matches=matches, category_ids=cats,
                          skipped_detections=int((~d_known).sum()), skipped_gt=int(g_orphan.sum()),
                          truth=truth, detections=dets, tie_bounds=bounds)


def _accumulate_bbox(m: Matches, K: int, params: Params, bounds: bool, *, stats_only: bool = False, threads: int = 1
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], dict | None]:
    """:func:`accumulate` with one group per category; with ``bounds``, :func:`tie_bounds_bbox`'s values from the
    same pass (the bounds' orders only at the max-dets step the AP stats read, taken to stats at once: no (T, R, K,
    A, M) arrays of theirs). ``stats_only``: only the steps the stats read (:func:`stat_steps`). ``threads``: see
    :func:`_step_curves`."""
    T, R, A, M = len(params.iou_thrs), len(params.rec_thrs), len(params.area_rngs), len(params.max_dets)
    pairs = np.arange(len(m.has_result))
    category = pairs % max(K, 1)
    precision, recall = -np.ones((T, R, K, A, M)), -np.ones((T, K, A, M))
    areas, max_dets, recall_steps = stat_steps(params) if stats_only else (tuple(range(A)), tuple(range(M)), ())
    step = _bounds_step(params)
    out = _BoundStats(params) if bounds else None
    npig = group_npig(m, pairs, category, K)
    for mi, a, curves in _accumulate_iter(m, pairs, category, K, params, areas, max_dets,
                                          orders=("official", "worst", "best") if bounds else ("official",),
                                          orders_at=(step,), threads=threads, npig=npig):
        _store(curves[0], precision, recall, a, mi, R)
        if out is not None and mi == step:
            out.add(a, curves[1:])
    for a, mi in recall_steps:
        valid, final = recall_only(m, pairs, category, K, params, a, mi, npig=npig)
        recall[:, valid, a, mi] = final[:, valid]
    return precision, recall, npig, None if out is None else out.values()


def stat_steps(params: Params) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    """What the 12 stats of :func:`summarize` read: (area ranges, max-dets steps) whose whole accumulation the AP
    stats need, and the other (area, max-dets) steps the AR stats read, where the final recall is enough."""
    M = len(params.max_dets)
    ap = {(params.area_labels.index(s.area), s.max_det % M) for s in STATS if s.ap}
    areas, max_dets = tuple(sorted({a for a, _ in ap})), tuple(sorted({mi for _, mi in ap}))
    ar = {(params.area_labels.index(s.area), s.max_det % M) for s in STATS if not s.ap}
    return areas, max_dets, tuple(sorted(ar - {(a, mi) for a in areas for mi in max_dets}))


def recall_only(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
                params: Params, area: int, max_det: int, *, npig: NDArray[np.int64] | None = None
                ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """(valid groups, final recall (T, K)) of one (area, max-dets) step, as :func:`accumulate` gives them, from
    counts alone: the true positives among each group's detections within the cut, over its non-ignored GT (no
    ranking; the order of a ranking does not change where it ends). ``npig``: :func:`group_npig`'s value, when the
    caller has it."""
    T, P, K = len(params.iou_thrs), len(m.has_result), n_groups
    kept = np.flatnonzero(m.rank < params.max_dets[max_det])
    t_idx, pos = nonzero_2d(m.state[area][:, kept] == TP)
    # each true positive counted in every group its pair belongs to
    member, reps = _memberships(member_pair, P, m.pair[kept][pos])
    n_tp = np.bincount(np.repeat(t_idx, reps) * K + member_group[member], minlength=T * K).reshape(T, K)
    npig_area = (group_npig(m, member_pair, member_group, K) if npig is None else npig)[:, area]   # -1: no result
    # a group without detections in the cut has no true positive: recall 0, as accumulate() sets it
    return npig_area > 0, n_tp / np.maximum(npig_area, 1)[None]


def _store(c: _Curves, precision: NDArray[np.float64], recall: NDArray[np.float64], a: int, mi: int, R: int) -> None:
    """One (area, max-dets) step's curves into ``accumulate``'s (T, R, K, A, M) precision and (T, K, A, M) recall."""
    precision[:, :, c.valid, a, mi] = c.q(R)[:, c.valid, :].transpose(0, 2, 1)
    recall[:, c.valid, a, mi] = c.recall[:, c.valid]


def _bounds_step(params: Params) -> int:
    """The max-dets index the AP stats read (AR gets no bounds: it depends only on ties within an image)."""
    (step,) = stat_steps(params)[1]
    return step


class _BoundStats:
    """The AP stats' (low, high) gathered from the worst / best curves of each area range at :func:`_bounds_step`:
    each stat taken from the curves directly (no (T, R, K, A, M) arrays: an upload's memory stays as it was)."""

    def __init__(self, params: Params):
        self.params, self.stats = params, [s for s in STATS if s.ap]
        self.out = {s.name: [-1.0, -1.0] for s in self.stats}

    def add(self, a: int, worst_best: tuple[_Curves, ...]) -> None:
        """Take area range ``a``'s AP stats from its worst and best curves."""
        p = self.params
        for side, c in enumerate(worst_best):
            q = c.q(len(p.rec_thrs)).transpose(0, 2, 1)[:, :, c.valid]     # (T, R, valid K): precision's layout
            for stat in self.stats:
                if p.area_labels.index(stat.area) == a:
                    sel = q if stat.iou_thr is None else q[np.flatnonzero(p.iou_thrs == stat.iou_thr)]
                    self.out[stat.name][side] = mean_of_valid(sel)

    def values(self) -> dict[str, tuple[float, float]]:
        """Stat name -> (low, high), fractions, -1 undefined."""
        return {name: (low, high) for name, (low, high) in self.out.items()}


def tie_bounds_bbox(res: CocoEvalResult, params: Params = Params()) -> dict[str, tuple[float, float]]:
    """The lowest and highest value of each AP stat of :func:`evaluate_bbox` over the orders of its tied detections
    (fractions, -1 undefined), each detection matched as the official order matches it; ``{}`` when no two
    detections share a score. Per IoU threshold a tie block's true positives go last / first, the extreme orders.
    Those of ``evaluate_bbox(..., tie_bounds=True)`` when it computed them in its own pass; else only the area ranges
    and the max-dets step the AP stats read are accumulated."""
    if not has_ties(res.matches):
        return {}
    if res.tie_bounds is not None:
        return res.tie_bounds
    K, pairs = len(res.category_ids), np.arange(len(res.matches.has_result))
    step = _bounds_step(params)
    areas = tuple(sorted({params.area_labels.index(s.area) for s in STATS if s.ap}))
    out = _BoundStats(params)
    for _, a, curves in _accumulate_iter(res.matches, pairs, pairs % max(K, 1), K, params, areas, (step,),
                                         orders=("worst", "best")):
        out.add(a, curves)
    return out.values()


# -- bootstrap: the accumulation under image weights --------------------------------------------------

def _segment_cumsum(x: NDArray[np.float64], starts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Cumulative sums down axis 0 restarting at each row in ``starts`` (sorted, starts[0] == 0)."""
    cs = np.cumsum(x, axis=0)
    if len(starts) > 1:
        before = np.zeros((len(starts),) + x.shape[1:])
        before[1:] = cs[starts[1:] - 1]
        cs -= np.repeat(before, np.diff(np.r_[starts, len(x)]), axis=0)
    return cs


@dataclass(frozen=True)
class WeightedRanking:
    """One (area range, max-dets) step of :func:`accumulate`, reduced to what image weights change.

    A resample duplicates or drops whole images; in a group's pooled ranking every detection then
    counts with its image's weight, and so does every non-ignored GT. Precision only matters at true
    positives, so the ranking is cut into blocks ending at the rows where some threshold has a TP;
    the weighted number of detections up to such a row is a cumulative sum of (block x image) counts
    times the weights, i.e. one sparse product per batch of resamples. With all weights 1 this is
    ``accumulate`` (tested); ties of equal scores across copies of an image keep the copies together.
    """

    rec_thrs: NDArray[np.float64]
    n_groups: int
    blocks: Any                         # scipy CSR (rows, units): detections ranked after the previous row, up to it
    ignored: tuple[Any, ...]            # per threshold: those of them ignored at that threshold (or None)
    row_unit: NDArray[np.int64]         # (rows,) unit of the detection at the row
    row_tp: NDArray[np.bool_]           # (T, rows) the row's detection is a TP at threshold t
    row_group: NDArray[np.int64]        # (rows,) sorted
    npig: Any                           # scipy CSR (groups, units): non-ignored GT

    @classmethod
    def build(cls, m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64], n_groups: int,
              unit_of_pair: NDArray[np.int64], n_units: int, params: Params = Params(), *, area: int = 0,
              max_det: int = -1) -> WeightedRanking:
        """The pooled ranking of every group, with detection and GT weights indexed by image."""
        from scipy import sparse

        mi = max_det % len(params.max_dets)
        entry_det, entry_group = _group_entries(m, member_pair, member_group, params.max_dets[mi])
        keep = m.rank[entry_det] < params.max_dets[mi]
        e_det, e_group = entry_det[keep], entry_group[keep]
        state = m.state[area][:, e_det]                                   # (T, n)
        e_unit = unit_of_pair[m.pair[e_det]]
        rows = np.flatnonzero((state == TP).any(axis=0))
        counted = np.flatnonzero((state != IGNORED).any(axis=0))
        block = np.searchsorted(rows, counted, side="left")
        inside = block < len(rows)
        inside[inside] = e_group[rows[block[inside]]] == e_group[counted[inside]]   # after a group's last TP: irrelevant
        counted, block = counted[inside], block[inside]
        shape = (len(rows), n_units)
        blocks = sparse.csr_matrix((np.ones(len(counted)), (block, e_unit[counted])), shape=shape)
        ignored = []
        for t in range(state.shape[0]):
            sel = state[t, counted] == IGNORED
            ignored.append(sparse.csr_matrix((np.ones(int(sel.sum())), (block[sel], e_unit[counted[sel]])), shape=shape)
                           if sel.any() else None)
        npig = sparse.csr_matrix((m.npig[area][member_pair].astype(np.float64), (member_group, unit_of_pair[member_pair])),
                                 shape=(n_groups, n_units))
        return cls(params.rec_thrs, n_groups, blocks, tuple(ignored), e_unit[rows], state[:, rows] == TP,
                   e_group[rows].astype(np.int64), npig)

    def __call__(self, weights: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        """``weights`` (R, units) -> (ap, recall, valid): ap and recall (R, T, K), valid (R, K) npig > 0."""
        R, T, K = len(weights), self.row_tp.shape[0], self.n_groups
        wt = np.ascontiguousarray(weights.T)                               # (units, R)
        npig = np.asarray(self.npig @ wt).T                                # (R, K)
        valid = npig > 0
        ap = np.zeros((R, T, K))
        recall = np.zeros((R, T, K))
        n = len(self.row_unit)
        if n:
            starts = _segment_starts(self.row_group)
            counted = _segment_cumsum(np.asarray(self.blocks @ wt), starts)   # (rows, R) detections up to the row
            row_w = wt[self.row_unit]                                          # (rows, R)
            for t in range(T):
                idx = np.flatnonzero(self.row_tp[t])                           # only TPs of t move recall
                if not len(idx):
                    continue
                total = counted[idx]
                if self.ignored[t] is not None:
                    total = total - _segment_cumsum(np.asarray(self.ignored[t] @ wt), starts)[idx]
                group = self.row_group[idx]
                first = _segment_starts(group)
                tp = _segment_cumsum(row_w[idx], first)
                n_gt = np.maximum(npig.T[group], 1e-300)
                hits = recall_hits(tp, n_gt, group, self.rec_thrs)
                ap[:, t] = interpolated_ap(tp_envelope(tp, total, group), hits, group, K, len(self.rec_thrs)).T
                recall[:, t, group[first]] = (tp / n_gt)[np.r_[first[1:], len(idx)] - 1].T
        nan = np.where(valid, 0.0, np.nan)[:, None, :]
        return ap + nan, recall + nan, valid


def summary_replicates(rankings: dict[tuple[int, int], WeightedRanking], weights: NDArray[np.float64],
                       params: Params = Params()) -> dict[str, NDArray[np.float64]]:
    """The 12 ``summarize()`` stats (fractions, NaN undefined) per resample, one group per category;
    ``rankings`` keyed by (area index, max-det index) for the steps the stats use."""
    cache: dict[tuple[int, int], tuple] = {}

    def get(a: int, mi: int):
        if (a, mi) not in cache:
            cache[(a, mi)] = rankings[(a, mi)](weights)
        return cache[(a, mi)]

    def mean(x: NDArray) -> NDArray:   # mean over every axis but the first, of the defined entries (NaN if none)
        flat = x.reshape(len(x), -1)
        defined = np.isfinite(flat)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined, flat, 0.0).sum(axis=1) / defined.sum(axis=1)

    out = {}
    for s in STATS:
        x = get(params.area_labels.index(s.area), s.max_det)[0 if s.ap else 1]        # (R, T, K)
        if s.iou_thr is not None:
            x = x[:, np.flatnonzero(params.iou_thrs == s.iou_thr)]
        out[s.name] = mean(x)
    return out


def summary_rankings(res: CocoEvalResult, params: Params = Params()) -> dict[tuple[int, int], WeightedRanking]:
    """The (area, max-det) weighted rankings of a stock ``evaluate_bbox`` run (one group per category,
    pairs ``image * K + category``, the image the resampling unit)."""
    K = len(res.category_ids)
    n_pairs = len(res.matches.has_result)
    pairs = np.arange(n_pairs)
    n_images = n_pairs // max(K, 1)
    M = len(params.max_dets) - 1
    steps = [(a, M) for a in range(len(params.area_rngs))] + [(0, mi) for mi in range(M)]
    return {(a, mi): WeightedRanking.build(res.matches, pairs, pairs % max(K, 1), K, pairs // max(K, 1), n_images,
                                           params, area=a, max_det=mi) for a, mi in steps}
