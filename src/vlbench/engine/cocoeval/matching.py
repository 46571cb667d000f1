"""Matching: pycocotools' ``COCOeval.evaluate()`` for every (image, label) pair at once.

In: :class:`~.data.GroundTruth` (G boxes) and :class:`~.data.PairDetections` (D detections), each
filed under one of P pairs. Out: :class:`~.data.Matches`: the N detections kept (the best
``max_dets[-1]`` of each pair by score, ties in file order) with ``state`` (A, T, N) FP / TP /
IGNORED and ``npig`` (A, P), the non-ignored GT per pair.

Instead of pycocotools' loop over pairs, then detections, then GTs, :func:`match` walks the
detection *ranks* (at most ``max_dets[-1]``) and matches the detections of that rank in every pair
at once, greedily, as the official loop does (highest IoU >= t among the GTs not yet taken,
non-ignored GTs first, ties to the later GT). Also here: :func:`on_objects` and
:func:`recall_any_score`, which ask whether a box lies on any GT at all.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from ..geometry import coco_iou_xywh, iou_aligned_xyxy, xywh_to_xyxy
from ..sorting import (
    concat_ranges,
    nonzero_2d,
    same_key_combinations,
    score_key,
    stable_argsort,
    stable_group_order,
    stable_order,
)
from .data import FP, IGNORED, TP, GroundTruth, Matches, PairDetections, Params


def match(gt: GroundTruth, dt: PairDetections, n_pairs: int, params: Params = Params(), *,
          id0_quirk: bool = True, keep_gt_at: float | None = None) -> Matches:
    """``COCOeval.evaluate()`` for every pair: greedy matching in score order, per area range and
    threshold.

    Per pair, detections are sorted by score (stable: file order breaks ties) and cut to the best
    ``max_dets[-1]``. A detection takes, among the GTs not yet taken at that threshold (crowd GTs
    are never taken), the one with the highest IoU >= t, non-ignored GTs first, ties to the later
    GT. With ``id0_quirk`` a match to a GT whose annotation id is 0 counts as unmatched, as in
    pycocotools (``dtm`` holds the GT id and is tested against 0). ``keep_gt_at``: also keep which
    GT each detection took at that threshold (:attr:`Matches.gt_taken`)."""
    return _match_pairs(gt, dt, n_pairs, params, id0_quirk, keep_gt_at)


def _match_pairs(gt: GroundTruth, dt: PairDetections, n_pairs: int, params: Params, id0_quirk: bool,
                 keep_gt_at: float | None) -> Matches:
    """:func:`match` in one pass over every pair."""
    A, T = len(params.area_rngs), len(params.iou_thrs)
    det_index, d_pair, d_rank = _ranked(dt, n_pairs, params.max_dets[-1])
    d_box, d_score, d_area, n_det = (
        dt.box_xywh[det_index],
        dt.score[det_index],
        dt.area[det_index],
        len(det_index),
    )

    # -- ground truth: per pair in file order ------------------------------------------------------
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
    c_det, c_gt, c_iou, nan_det = _candidates(d_box, d_pair, g_box, g_crowd, g_count, g_start,
                                              thr.min())

    # -- outcome per (area, threshold, detection) --------------------------------------------------
    d_outside = _outside_area_ranges(d_area, params)                                      # (A, N)
    # unmatched default
    state = np.where(d_outside, IGNORED, FP)[:, None, :].repeat(T, axis=1)
    id0_changed = 0
    gt_taken = None if keep_gt_at is None else np.full(n_det, -1, dtype=np.int64)
    if len(c_det):
        # one sort for every area range; each range then only moves its non-ignored GTs last within
        # a detection
        pre = stable_order(d_rank[c_det], c_det, c_iou, c_gt)
        c_det, c_gt, c_iou = c_det[pre], c_gt[pre], c_iou[pre]
        c_rank = d_rank[c_det]
        for a, matched_gt in enumerate(_range_matches(c_det, c_gt, c_iou, c_rank, d_pair, g_ignored,
                                                      g_pair, g_count, g_crowd, thr, nan_det)):
            if a == 0 and gt_taken is not None:  # in the caller's GT order
                gt_taken = _in_order(
                    matched_gt[int(np.flatnonzero(params.iou_thrs == keep_gt_at)[0])], g_order
                )
            id0_changed += _record_outcomes(state[a], matched_gt, g_ignored[a], g_id, d_outside[a],
                                            id0_quirk)
    return Matches(det_index=det_index, pair=d_pair, rank=d_rank, score=d_score, state=state,
                   npig=npig, has_result=has_result, id0_matches=id0_changed,
                   exact=None if dt.exact is None else dt.exact[det_index],
                   is_int=None if dt.is_int is None else dt.is_int[det_index],
                   nan_iou=int(nan_det.sum()), gt_taken=gt_taken)


def _range_matches(c_det, c_gt, c_iou, c_rank, d_pair, g_ignored, g_pair, g_count, g_crowd, thr,
                   nan_det ) -> Iterator[NDArray[np.int32]]:
    """Per area range, the GT each detection takes at each threshold, (T, N) as
    :func:`_greedy_match` gives it. The first range is matched over every pair; another only over
    the pairs where its ignore flags can change a choice (:func:`_same_matching`), taking the first
    range's matches elsewhere: on the benches' data 2-9% of the detections are in such pairs."""
    n_det, n_gt = len(d_pair), len(g_pair)
    first = _greedy_match(c_det, c_gt, c_iou, c_rank, ~g_ignored[0], g_crowd, thr, n_det, n_gt,
                          nan_det)
    yield first
    for flags in g_ignored[1:]:
        redo = ~_same_matching(flags, g_ignored[0], g_pair, g_count)
        if not redo.any():
            yield first
            continue
        sel = redo[d_pair[c_det]]
        apart = _greedy_match(c_det[sel], c_gt[sel], c_iou[sel], c_rank[sel], ~flags, g_crowd, thr,
                              n_det, n_gt, nan_det)
        matched = first.copy()
        cols = np.flatnonzero(redo[d_pair])
        matched[:, cols] = apart[:, cols]
        yield matched


def _same_matching(ignored: NDArray[np.bool_], ignored_first: NDArray[np.bool_],
                   g_pair: NDArray[np.int64], g_count: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per pair, whether an area range's matching is the first range's. ``evaluateImg`` sees the
    area range only through the GTs' ignore flags: they order the GTs (non-ignored first) and stop a
    search at an ignored GT after a non-ignored match. So the matching is the same where every GT of
    the pair has the same flag in both ranges, or where each range's flags are all equal within the
    pair (the order is then the file order and no search stops)."""
    n = len(g_count)
    differ = np.bincount(g_pair, weights=ignored != ignored_first, minlength=n) > 0
    uniform = np.ones(n, dtype=bool)
    for flags in (ignored, ignored_first):
        n_ignored = np.bincount(g_pair, weights=flags, minlength=n)
        uniform &= (n_ignored == 0) | (n_ignored == g_count)
    return ~differ | uniform


def _record_outcomes(state: NDArray[np.uint8], matched_gt: NDArray[np.int32],
                     g_ignored: NDArray[np.bool_],
                     g_id: NDArray[np.int64], d_outside: NDArray[np.bool_], id0_quirk: bool) -> int:
    """One area range's (T, N) states from its matches: TP, or IGNORED where the GT taken is
    ignored; with ``id0_quirk`` a match to a GT of annotation id 0 is unmatched (pycocotools'
    ``dtm`` holds the GT id and is tested against 0). Returns how many matches that quirk
    changed."""
    t_idx, d_idx = nonzero_2d(matched_gt >= 0)
    m = matched_gt[t_idx, d_idx]
    ignored = g_ignored[m]
    zero_id = (g_id[m] == 0) & ~ignored
    new = np.where(ignored, IGNORED, TP).astype(np.uint8)
    # dtm == 0: the detection counts as unmatched (FP, or ignored if outside the range)
    if id0_quirk:
        new = np.where(zero_id, np.where(d_outside[d_idx], IGNORED, FP), new).astype(np.uint8)
    state[t_idx, d_idx] = new
    return int(zero_id.sum()) if id0_quirk else 0


def _in_order(taken: NDArray[np.integer], g_order: NDArray[np.int64]) -> NDArray[np.int64]:
    """GT indices into a reordered or partial GT (-1 for none) -> indices into the GT as given
    (``g_order``: the given index of each; it may be empty when nothing was taken)."""
    out = np.full(len(taken), -1, dtype=np.int64)
    hit = taken >= 0
    out[hit] = g_order[taken[hit]]
    return out


def _ranked(dt: PairDetections, n_pairs: int, max_det: int) -> tuple[NDArray[np.int64],
                                                                     NDArray[np.int64],
                                                                  NDArray[np.int64]]:
    """Per pair by descending score (stable: file order breaks ties), the top ``max_det``: (index
    into ``dt``, pair, rank in the pair). A pair's list sorts as int64 when all its scores are JSON
    integers."""
    pair_int = (None if dt.exact is None or dt.is_int is None
                else np.bincount(dt.pair, weights=~dt.is_int, minlength=n_pairs)[dt.pair] == 0)
    # lexsort((key, pair)) as two stable passes, the minor key first: the score's argsort, then a
    # radix pass on the pair (:func:`stable_group_order`), faster than lexsort on millions; ranks
    # from each pair's start
    by_score = stable_argsort(score_key(dt.score, dt.exact, pair_int))
    order = by_score[stable_group_order(dt.pair[by_score])]
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
    """(detection, GT) combinations of the same pair with IoU >= the lowest threshold, and the
    detections with a NaN IoU: in pycocotools' loop a NaN is never below the running best, so every
    later GT can take its place; such detections keep all their GTs (:func:`_loop_match` handles
    them)."""
    n_gt_of_det = g_count[d_pair]
    c_det = np.repeat(np.arange(len(d_pair)), n_gt_of_det)
    c_gt = concat_ranges(g_start[d_pair], n_gt_of_det)
    c_iou = coco_iou_xywh(np.ascontiguousarray(d_box.T)[:, c_det],
                          np.ascontiguousarray(g_box.T)[:, c_gt], g_crowd[c_gt])
    nan_det = np.zeros(len(d_pair), dtype=bool)
    nan_det[c_det[np.isnan(c_iou)]] = True
    close = (c_iou >= lowest) | nan_det[c_det]
    return c_det[close], c_gt[close], c_iou[close], nan_det


def _greedy_match(c_det, c_gt, c_iou, c_rank, g_nonignored, g_crowd, thr, n_det, n_gt,
                  nan_det=None) -> NDArray[np.int32]:
    """For one area range: the GT each detection takes at each threshold (-1 if none), shape (T, N),
    int32 (GT indices; half the memory of int64 on (10, millions)).
    Candidates come sorted by (rank, detection, IoU, GT).

    Walks the ranks: the r-th detections of all pairs choose at once, since a detection only
    competes with the higher-scored detections of its own pair. Detections in ``nan_det`` go through
    pycocotools' loop itself (:func:`_loop_match`).
    """
    T = len(thr)
    # Within each detection, candidates in ascending preference: (non-ignored, IoU, later GT). A
    # stable sort on (detection's run, non-ignored) keeps the given (IoU, GT) order inside each
    # class (replaces a 5-key lexsort).
    run = np.cumsum(np.r_[True, c_det[1:] != c_det[:-1]]) if len(c_det) else np.zeros(0, np.int64)
    pref = stable_group_order(2 * run + g_nonignored[c_gt])
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
            best = np.maximum.reduceat(np.where(valid, np.arange(len(det))[None, :], -1), seg,
                                       axis=1)  # (T, S)
            t_idx, s_idx = np.nonzero(best >= 0)
            chosen = g[best[t_idx, s_idx]]
            out[t_idx, det[seg[s_idx]]] = chosen
            taken[t_idx, chosen] = True
        # different pairs: independent of the above
        for d in np.unique(c_det[lo:hi][~plain]).tolist():
            rows = lo + np.flatnonzero(c_det[lo:hi] == d)
            _loop_match(d, c_gt[rows], c_iou[rows], g_nonignored, g_crowd, thr, taken, out)
    return out


def _loop_match(det: int, gts: NDArray[np.int64], ious: NDArray[np.float64],
                g_nonignored: NDArray[np.bool_],
                g_crowd: NDArray[np.bool_], thr: NDArray[np.float64], taken: NDArray[np.bool_],
                out: NDArray[np.int32]) -> None:
    """``COCOeval.evaluateImg``'s matching loop for one detection (its pair's GTs non-ignored first,
    file order): a GT already taken (not crowd) is skipped, an ignored GT ends the search once a
    non-ignored one matched, and a GT whose IoU is not below the running best becomes the match. A
    NaN is never below anything, and nothing is below a NaN: after a NaN IoU every later GT replaces
    the match."""
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


def on_objects(d_image: NDArray[np.int64], d_box_xywh: NDArray[np.float64],
               g_image: NDArray[np.int64],
               g_box_xywh: NDArray[np.float64], iou_thr: float = 0.5) -> NDArray[np.bool_]:
    """Whether each detection overlaps some GT box of its image with IoU >= ``iou_thr`` (no crowd
    rule): a box that lies on an object, whatever label either one carries."""
    c_det, c_gt = same_key_combinations(d_image, g_image)
    d_xyxy, g_xyxy = xywh_to_xyxy(d_box_xywh), xywh_to_xyxy(g_box_xywh)
    out = np.zeros(len(d_image), dtype=bool)
    for lo in range(0, len(c_det),
                    # parts: a few hundred bytes of temporaries per combination
                    _ON_OBJECTS_PART):
        det, gt = c_det[lo:lo + _ON_OBJECTS_PART], c_gt[lo:lo + _ON_OBJECTS_PART]
        with np.errstate(invalid="ignore", over="ignore"):
            iou = iou_aligned_xyxy(d_xyxy[det], g_xyxy[gt], dtype=np.float64, eps=0.0)
        out[det[np.nan_to_num(iou, nan=0.0) >= iou_thr]] = True
    return out


#: (detection, GT) combinations per part in :func:`on_objects`
_ON_OBJECTS_PART = 1 << 18


def recall_any_score(g_key: NDArray[np.int64], g_xyxy: NDArray[np.float64],
                     d_key: NDArray[np.int64],
                     d_xyxy: NDArray[np.float64], iou_thr: float = 0.5) -> float | None:
    """Percent of GT boxes that some detection of the same key (image and label) overlaps with IoU
    >= ``iou_thr``, whatever its score or rank: how much of the GT a file's boxes cover, cheap and
    free of ranking (what the convention check compares between readings of the same numbers). None
    without GT."""
    if not len(g_key):
        return None
    c_gt, c_det = same_key_combinations(g_key, d_key)
    with np.errstate(invalid="ignore", over="ignore"):
        iou = iou_aligned_xyxy(g_xyxy[c_gt], d_xyxy[c_det], dtype=np.float64, eps=0.0)
    covered = np.zeros(len(g_key), dtype=bool)
    covered[c_gt[np.nan_to_num(iou, nan=0.0) >= iou_thr]] = True
    return 100.0 * float(covered.mean())
