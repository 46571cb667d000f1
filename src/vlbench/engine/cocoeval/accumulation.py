"""Accumulation: pycocotools' ``COCOeval.accumulate()`` for any grouping of pairs into rankings.

In: :class:`~.data.Matches` and a membership (``member_pair[i]`` belongs to group
``member_group[i]``, K groups; a pair may be in several). Per group, its pairs' kept detections are
ranked by score (ties by pair, then rank), and per (IoU threshold, area range, max-dets) the
precision envelope is read at the 101 recall thresholds. Out: ``precision`` (T, R, K, A, M) and
``recall`` (T, K, A, M), -1 where a group has no result or no GT, and ``npig`` (K, A).

One accumulation serves every AP vlbench reports: a ranking reduced to its true positives, then
:func:`tp_envelope`, :func:`recall_hits` and :func:`interpolated_precision` /
:func:`interpolated_ap`. The variants differ in what they count: the official order or the tie
orders' extremes (:data:`TIE_ORDERS`), a single threshold (:func:`average_precision_at`, for the
error analysis), counts alone (:func:`recall_only`, :func:`threshold_counts`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..sorting import concat_ranges, nonzero_2d, score_key, stable_group_order
from .data import FP, TP, Matches, Params


def _segment_reverse_cummax(values: NDArray[np.float64],
                            segment: NDArray[np.int64]) -> NDArray[np.float64]:
    """``max(values[i:end_of_segment])`` down axis 0 for every i, ``segment`` sorted (a loop over
    segments, in one running maximum). Exact: numpy orders complex numbers lexicographically, so
    with the segment's place in the reversed walk as real part and the value as imaginary part, no
    maximum carries from one segment to the next."""
    if not len(values):
        return values
    run = np.cumsum(np.r_[True, segment[1:] != segment[:-1]])
    # the walk along the last axis: contiguous
    z = np.empty(values.shape[::-1], np.complex128)
    z.real = (run[-1] - run)[::-1]
    z.imag = values[::-1].T
    return np.ascontiguousarray(np.maximum.accumulate(z, axis=-1).imag.T[::-1])


# -- one AP accumulation ---------------------------------------------------------------------------
# pycocotools' accumulate, for one ranking at one IoU threshold: tp_sum and fp_sum down the ranking,
# pr = tp / (fp + tp + eps), the envelope pr[i] = max(pr[i:]), rc = tp / npig and q[r] =
# pr[searchsorted(rc, recThrs[r], "left")]. Recall moves only at true positives, so q reads the
# envelope there alone. Every AP in vlbench (plain, pooled, tie bounds, per description, error
# analysis, bootstrap) reduces its rankings to their true positives, "rows" grouped by segment (one
# segment per ranking and threshold) in ranking order, and goes through these four functions; only
# how it counts ``tp`` and ``seen`` differs (exact integers, or image weights).

def tp_envelope(tp: NDArray, seen: NDArray, segment: NDArray[np.int64]) -> NDArray[np.float64]:
    """pycocotools' precision envelope at each true positive: ``tp / (seen + eps)`` (``seen`` = tp +
    fp up to it, ``eps`` = ``np.spacing(1)``, its order of operations), then the max over the
    segment's later true positives. ``tp``/``seen``: (rows,) exact counts, or (rows, S) weighted
    counts of S resamples."""
    return _segment_reverse_cummax(tp / (seen + np.spacing(1)), segment)


def recall_hits(tp: NDArray, n_gt: NDArray, segment: NDArray[np.int64],
                rec_thrs: NDArray[np.float64] ) -> NDArray[np.int64]:
    """How many recall thresholds land on each true positive: those its recall ``tp / n_gt`` reaches
    first (pycocotools' ``searchsorted(rc, recThrs, side="left")``, counted from the other side).
    Shapes as :func:`tp_envelope`; ``n_gt`` per row (> 0)."""
    reached = np.searchsorted(rec_thrs, tp / n_gt, side="right")
    hits = reached.copy()
    hits[1:] -= reached[:-1]
    first = segment_starts(segment)
    hits[first] = reached[first]
    return hits


def interpolated_precision(envelope: NDArray[np.float64], hits: NDArray[np.int64],
                           segment: NDArray[np.int64], n_segments: int,
                           n_rec: int) -> NDArray[np.float64]:
    """pycocotools' ``q`` per segment, (n_segments, n_rec): each true positive's envelope value at
    the recall thresholds it reaches first, 0 past the last one. The values are copies of the
    envelope (bit for bit)."""
    q = np.zeros((n_segments, n_rec))
    if not len(hits):
        return q
    seg_of = np.repeat(segment, hits)
    per_segment = np.bincount(seg_of, minlength=n_segments)
    column = np.arange(len(seg_of)) - np.repeat(np.cumsum(per_segment) - per_segment, per_segment)
    q[seg_of, column] = np.repeat(envelope, hits)
    return q


def interpolated_ap(envelope: NDArray[np.float64], hits: NDArray[np.int64],
                    segment: NDArray[np.int64], n_segments: int, n_rec: int) -> NDArray[np.float64]:
    """The mean of :func:`interpolated_precision` over the recall thresholds, per segment
    ((n_segments,) or (n_segments, S)), without the (segments, n_rec) array: equal up to summation
    order."""
    out = np.zeros((n_segments,) + envelope.shape[1:])
    if len(hits):
        first = segment_starts(segment)
        out[segment[first]] = np.add.reduceat(envelope * hits, first, axis=0) / n_rec
    return out


def segment_starts(segment: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row index where each run of equal (sorted) segment numbers starts."""
    return (
        np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
        if len(segment)
        else np.zeros(0, np.int64)
    )


@dataclass(frozen=True)
class Curves:
    """One (max-det, area) step of the accumulation, all IoU thresholds and all groups at once,
    reduced to its true positives: rows in segment ``threshold * K + group`` order, each with its
    envelope and recall hits."""

    valid: NDArray[np.bool_]          # (K,) the group has a result and non-ignored GT
    segment: NDArray[np.int64]        # per TP: threshold * K + group
    envelope: NDArray[np.float64]     # per TP: the precision envelope there (:func:`tp_envelope`)
    # per TP: the recall thresholds it reaches first (:func:`recall_hits`)
    hits: NDArray[np.int64]
    recall: NDArray[np.float64]       # (T, K) final recall (0 without detections)

    def q(self, n_rec: int) -> NDArray[np.float64]:
        """(T, K, R): interpolated precision at every recall threshold (0 past the last TP)."""
        T, K = self.recall.shape
        return interpolated_precision(self.envelope, self.hits, self.segment, T * K, n_rec).reshape(
            T, K, n_rec
        )


#: Work size per block of IoU thresholds in the accumulation (bounds memory on million-detection
#: rankings).
_BLOCK_ELEMENTS = 4_000_000


def memberships(member_pair: NDArray[np.int64], n_pairs: int, pairs: NDArray[np.int64]
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The memberships of each of ``pairs`` (repeats allowed), end to end: indices into the member
    arrays (a pair's in member order), and how many each pair has."""
    count = np.bincount(member_pair, minlength=n_pairs)
    by_pair = stable_group_order(member_pair)
    return by_pair[concat_ranges((np.cumsum(count) - count)[pairs], count[pairs])], count[pairs]


def group_entries(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                   max_det: int | None = None) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """Detections expanded to (detection, group) entries: grouped by group, each group in ranking
    order; int32 indices (int64 beyond 2^31).

    With ``m.exact`` (integer scores beyond 2^53) a group ranks by the exact integers where
    ``accumulate``'s concatenation is int64 (every per-image list of the group non-empty and all
    integers, within ``max_det``), else by float64; the entries then hold only detections ranked
    below ``max_det``."""
    if m.exact is None:
        # Matches are in (pair, rank) order, so a stable sort on the score alone breaks ties by
        # (pair, rank).
        global_order = m.score_order
    else:
        global_order = np.flatnonzero(
            m.rank < (max_det if max_det is not None else m.rank.max(initial=0) + 1)
        )
    # int32 entries where the indices fit: half the memory, and half the first touches of fresh
    # pages
    index = np.dtype(
        np.int32 if max(len(m.score), int(member_group.max(initial=0)) + 1) < 2**31 else np.int64
    )
    member, reps = memberships(member_pair, len(m.has_result), m.pair[global_order])
    entry_det: NDArray[np.integer] = np.repeat(global_order.astype(index), reps)
    entry_group: NDArray[np.integer] = np.asarray(member_group, dtype=index)[member]
    if m.exact is None or m.is_int is None:
        # stable: keeps the ranking order inside a group
        by_group = stable_group_order(entry_group)
        return entry_det[by_group], entry_group[by_group]
    n_groups = int(member_group.max(initial=-1)) + 1
    dets_of_pair = np.bincount(m.pair[global_order], minlength=len(m.has_result))
    # an empty list: float64
    empty_list = m.has_result[member_pair] & (dets_of_pair[member_pair] == 0)
    not_int = np.bincount(entry_group, weights=~m.is_int[entry_det], minlength=n_groups) > 0
    float_group = not_int | (np.bincount(member_group, weights=empty_list, minlength=n_groups) > 0)
    key = score_key(m.score[entry_det], m.exact[entry_det], ~float_group[entry_group])
    # ties: concatenation order, i.e. (pair, rank)
    order = np.lexsort((entry_det, key, entry_group))
    return entry_det[order], entry_group[order]


#: How tied detections of a ranking are ordered: as the official stable sort does (file order), or
#: every tie block with its true positives first (the highest AP any order gives) or last (the
#: lowest).
TIE_ORDERS = ("official", "best", "worst")


def _tie_span(m: Matches, e_det: NDArray[np.integer],
              e_group: NDArray[np.integer]) -> tuple[NDArray, NDArray]:
    """(first, last) position of each entry's tie block, int32: the run of entries of its group with
    an equal score (NaN equal to NaN; with exact integer scores, equal integers too). Replaces a
    walk along every group's ranking."""
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
    """How many kept detections share their score with another (then a ranking may hold a tie, and
    its AP depend on the order the official code gives the tie): NaN ties with NaN, as the official
    sorts put NaNs together; with exact integer scores, equal integers. Read off the descending
    score order that the pooled rankings share (adjacent equal scores), not a sort of its own."""
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
    """Whether two kept detections share a score (:func:`tied_detections`): scoring without ties
    costs nothing more."""
    return tied_detections(m) > 0


def accumulate_steps(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                     n_groups: int, params: Params, areas: tuple[int, ...],
                     max_dets: tuple[int, ...], *, orders: tuple[str, ...] = ("official",),
                     orders_at: tuple[int, ...] | None = None,
                     npig: NDArray[np.int64] | None = None):
    """The core of :func:`accumulate`: yields ``(mi, a, curves)`` per (max-det, area), ``curves``
    one per tie order of ``orders`` (TIE_ORDERS), sharing the ranking and the cumulative counts: the
    precision at a true positive counts the false positives before it in the official order, or, for
    the bounds, those before its tie block (``best``: its true positives first) or up to the block's
    end (``worst``). ``orders_at``: the max-det indices where every order is computed; elsewhere
    only the first (a step nobody asks bounds of costs nothing more). ``npig``: :func:`group_npig`'s
    value, when the caller has it."""
    K = n_groups
    npig = group_npig(m, member_pair, member_group, K) if npig is None else npig
    group_has = npig[:, 0] >= 0
    npig_group = np.maximum(npig, 0)                    # a group without any result has no GT

    grouped = group_entries(m, member_pair, member_group) if m.exact is None else None

    all_orders = orders
    # the last step's curves
    done: tuple[int, tuple[str, ...], dict[int, tuple[Curves, ...]]] | None = None
    for mi in max_dets:
        orders = all_orders if orders_at is None or mi in orders_at else all_orders[:1]
        if grouped is not None:
            entry_det, entry_group = grouped
            keep = m.rank[entry_det] < params.max_dets[mi]
            n_kept = int(keep.sum())
            # the kept sets of two cuts are nested, so as many kept is the same ranking: its curves
            # again
            if done is not None and done[0] == n_kept and done[1] == orders:
                yield from ((mi, a, done[2][a]) for a in areas)
                continue
            e_det, e_group = (entry_det, entry_group) if n_kept == len(keep) else (entry_det[keep],
                                                                                   entry_group[keep])
        else:       # the ranking's dtype can change with the cut: one order per max-det
            e_det, e_group = group_entries(m, member_pair, member_group, params.max_dets[mi])
        curves: dict[int, tuple[Curves, ...]] = {}
        for a, step in _step_curves(m, e_det, e_group, K, params, areas, orders, group_has,
                                    npig_group):
            curves[a] = step
            yield mi, a, step
        if grouped is not None:
            done = (len(e_det), orders, curves)


def _step_curves(m: Matches, e_det: NDArray[np.integer], e_group: NDArray[np.integer], K: int,
                 params: Params,
                 areas: tuple[int, ...], orders: tuple[str, ...], group_has: NDArray[np.bool_],
                 npig_group: NDArray[np.int64]):
    """One max-det step of :func:`accumulate_steps` (its entries ``e_det`` / ``e_group`` grouped,
    each group in ranking order): yields ``(a, curves)`` per area range (they share the ranking and
    differ only in the states they read)."""
    nd = np.bincount(e_group, minlength=K)
    group_start = np.cumsum(nd) - nd
    # the last position whose FPs count
    fp_ats: list[NDArray[np.int32] | None] = [None] * len(orders)
    if set(orders) - {"official"}:
        tie_first, tie_last = _tie_span(m, e_det, e_group)
        tie_first -= 1  # best: the FPs before the block
        fp_ats = [
            None if o == "official" else tie_first if o == "best" else tie_last for o in orders
        ]
        del tie_first, tie_last
    step = functools.partial(_area_curves, m, e_det, e_group, K, params, fp_ats, group_has,
                             npig_group, nd, group_start)
    yield from ((a, step(a)) for a in areas)


def _area_curves(m: Matches, e_det: NDArray[np.integer], e_group: NDArray[np.integer], K: int,
                 params: Params,
                 fp_ats: list[NDArray[np.int32] | None], group_has: NDArray[np.bool_],
                 npig_group: NDArray[np.int64],
                 nd: NDArray[np.int64], group_start: NDArray[np.int64],
                 a: int) -> tuple[Curves, ...]:
    """:func:`_step_curves` for area range ``a``: one curve per tie order (per entry of
    ``fp_ats``)."""
    T, n = len(params.iou_thrs), len(e_det)
    npig_a = np.maximum(npig_group[:, a], 1)
    # Thresholds in blocks (all at once when the ranking is short): TP t of group g is segment t * K
    # + g.
    block = max(1, min(T, _BLOCK_ELEMENTS // max(n, 1)))
    segments, tps, seens = [], [], []
    n_tp = np.zeros((T, K), dtype=np.int64)
    for t0 in range(0, T, block):
        st = m.state[a][t0:t0 + block][:, e_det] if n else np.zeros((min(block, T - t0), 0),
                                                                    np.uint8)
        seg, tp_b, seen_b, n_tp[t0:t0 + len(st)] = _tp_counts(st, t0, e_group, group_start, K,
                                                              fp_ats)
        segments.append(seg)
        tps.append(tp_b)
        seens.append(seen_b)
    segment, tp = np.concatenate(segments), np.concatenate(tps)
    hits = recall_hits(tp, npig_a[segment % K], segment, params.rec_thrs)
    valid = group_has & (npig_group[:, a] > 0)
    recall = np.where(nd[None] > 0, n_tp / npig_a[None], 0.0)
    return tuple(Curves(valid, segment,
                        tp_envelope(tp, np.concatenate([s[i] for s in seens]), segment), hits,
                        recall)
                 for i in range(len(fp_ats)))


def _tp_counts(st: NDArray[np.uint8], t0: int, e_group: NDArray[np.integer],
               group_start: NDArray[np.int64],
               K: int, fp_ats: list[NDArray[np.int32] | None]) -> tuple[NDArray[np.int64],
                                                                        NDArray[np.int64],
                                                                     list[NDArray[np.int64]],
                                                                        NDArray[np.int64]]:
    """One block of thresholds ``st`` (b, n) starting at ``t0``: every TP's segment ``t * K +
    group``, its group's TP count up to it, the detections counted up to it (TPs and FPs) once per
    entry of ``fp_ats``, and the TP count per (threshold, group). The FPs counted are those before
    the TP in the ranking (None), or those up to a given position per entry: the tie bounds'
    orders."""
    n = st.shape[1]
    fp_cum = np.cumsum(st == FP, axis=1, dtype=np.int32)                             # (b, n)
    # row-major: (t, group) order
    t_idx, pos = nonzero_2d(st == TP)
    seg = (t0 + t_idx) * K + e_group[pos]
    n_tp_b = np.bincount(seg - t0 * K, minlength=len(st) * K).reshape(len(st), K)
    first_b = (np.cumsum(n_tp_b) - n_tp_b.ravel())
    # tp_sum at the TP
    k = np.arange(len(pos)) - first_b[seg - t0 * K] + 1
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


def accumulate(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
               n_groups: int,
               params: Params = Params(), *, areas: tuple[int, ...] | None = None,
               max_dets: tuple[int, ...] | None = None,
               ties: str = "official") -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                NDArray[np.int64]]:
    """``COCOeval.accumulate()`` with arbitrary ranking groups.

    A group is a set of pairs (``member_pair[i]`` belongs to ``member_group[i]``; a pair may be in
    several groups). Within a group, detections are ranked by score, ties broken by pair index
    (pairs must be numbered in the official concatenation order) and then by rank in the pair.
    Returns ``precision`` (T, R, K, A, M), ``recall`` (T, K, A, M) and ``npig`` (K, A), with -1
    where a group has no result or no non-ignored GT (npig -1 for no result). ``areas`` /
    ``max_dets`` restrict the work to some indices (the rest stays -1). ``ties`` ("best" / "worst"):
    the precision of every tied block of a ranking ordered for the highest / lowest AP (see
    :data:`TIE_ORDERS`; recall does not depend on the order).
    """
    return accumulate_orders(m, member_pair, member_group, n_groups, params, areas=areas,
                             max_dets=max_dets, orders=(ties,))[ties]


def accumulate_orders(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                      n_groups: int, params: Params = Params(), *,
                      areas: tuple[int, ...] | None = None, max_dets: tuple[int, ...] | None = None,
                      orders: tuple[str, ...] = ("official",)
                      ) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64],
                                           NDArray[np.int64]]]:
    """:func:`accumulate` for several tie orders at once (the ranking and the counts computed once):
    order -> (precision, recall, npig)."""
    T, R = len(params.iou_thrs), len(params.rec_thrs)
    A, M = len(params.area_rngs), len(params.max_dets)
    areas = tuple(range(A)) if areas is None else areas
    max_dets = tuple(range(M)) if max_dets is None else max_dets
    precision = {o: -np.ones((T, R, n_groups, A, M)) for o in orders}
    recall = {o: -np.ones((T, n_groups, A, M)) for o in orders}
    for mi, a, curves in accumulate_steps(m, member_pair, member_group, n_groups, params, areas,
                                          max_dets, orders=orders):
        for o, c in zip(orders, curves):
            store_curves(c, precision[o], recall[o], a, mi, R)
    npig = group_npig(m, member_pair, member_group, n_groups)
    return {o: (precision[o], recall[o], npig) for o in orders}


def mean_ap_per_group(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                      n_groups: int,
                      params: Params = Params(), *, area: int = 0,
                      max_det: int = -1) -> tuple[NDArray, NDArray]:
    """AP and AP@0.5 per group (mean interpolated precision over thresholds x recall points; -1
    undefined) for many small groups (per-description diagnostics), without (K, R) arrays
    (:func:`interpolated_ap`). Equal to the pycocotools values up to floating-point summation
    order."""
    mi = max_det % len(params.max_dets)
    T, R, K = len(params.iou_thrs), len(params.rec_thrs), n_groups
    t50 = int(np.flatnonzero(params.iou_thrs == 0.5)[0])
    (_, _, (c,)), = accumulate_steps(m, member_pair, member_group, K, params, (area,), (mi,))
    per_segment = interpolated_ap(c.envelope, c.hits, c.segment, T * K, R).reshape(T, K)
    return np.where(c.valid, per_segment.mean(axis=0), -1.0), np.where(c.valid, per_segment[t50],
                                                                       -1.0)


def threshold_counts(m: Matches, params: Params = Params(), *, iou_thr: float = 0.5, area: int = 0,
                     max_det: int = -1, pairs: NDArray[np.bool_] | None = None) -> tuple[int, int,
                                                                                         int]:
    """(true positives, false positives, non-ignored GT) at one IoU threshold, every detection kept
    within the max-dets cut counted as predicted (no score threshold: a file without confidences is
    a set of boxes), each matched as the official greedy matching matches it; ``pairs`` restricts
    them to some pairs. Not an official number: the counts behind precision, recall and F1 at that
    IoU."""
    t = int(np.flatnonzero(params.iou_thrs == iou_thr)[0])
    state = m.state[area, t]
    kept = m.rank < params.max_dets[max_det % len(params.max_dets)]
    if pairs is not None:
        kept &= pairs[m.pair]
    npig = m.npig[area] if pairs is None else m.npig[area][pairs]
    return int((kept & (state == TP)).sum()), int((kept & (state == FP)).sum()), int(npig.sum())


def precision_recall_f1(tp: int, fp: int, n_gt: int) -> dict[str, float | None]:
    """Precision TP / (TP + FP), recall TP / GT and their harmonic mean F1, in percent (None where
    undefined)."""
    precision = 100.0 * tp / (tp + fp) if tp + fp else None
    recall = 100.0 * tp / n_gt if n_gt else None
    f1 = (None if precision is None or recall is None else
          0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
    return {"precision": precision, "recall": recall, "F1": f1}


def average_precision_at(group: NDArray[np.int64], rank_key: NDArray[np.int64],
                         tp: NDArray[np.bool_],
                         n_gt: NDArray[np.int64], params: Params = Params()) -> NDArray[np.float64]:
    """COCO AP at one IoU threshold for each ranking group, from per-detection outcomes: ``tp``
    (else a false positive; ignored detections are left out by the caller), ``rank_key`` ordering a
    group's detections as the official ranking does (lower first), ``n_gt`` non-ignored GT per
    group. The 101-point interpolated precision averaged, as ``accumulate`` + ``summarize`` give one
    threshold's AP; -1 where a group has no GT. Detections already in ``rank_key`` order sort in
    linear time (a stable radix sort on the small group numbers)."""
    K = len(n_gt)
    if len(rank_key) > 1 and bool((rank_key[1:] >= rank_key[:-1]).all()):
        order = stable_group_order(group)
    else:
        order = np.lexsort((rank_key, group))
    g, hit = group[order], tp[order].astype(np.int64)
    start = np.searchsorted(g, np.arange(K))
    tp_sum = np.cumsum(hit)
    before = np.r_[0, tp_sum][start]                     # TPs of the groups before each group
    is_tp = hit.astype(bool)
    # the group's TP count up to each true positive
    k = (tp_sum - before[g])[is_tp]
    seen = (np.arange(len(g)) - start[g] + 1)[is_tp]     # its detections up to there
    segment = g[is_tp]
    ap = np.full(K, -1.0)
    has = n_gt > 0
    if not has.any():
        return ap
    hits = recall_hits(k, np.maximum(n_gt, 1)[segment], segment, params.rec_thrs)
    q = interpolated_precision(tp_envelope(k, seen, segment), hits, segment, K,
                               len(params.rec_thrs))
    ap[has] = q[has].mean(axis=1)
    return ap


def recall_only(m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
                n_groups: int,
                params: Params, area: int, max_det: int, *, npig: NDArray[np.int64] | None = None
                ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """(valid groups, final recall (T, K)) of one (area, max-dets) step, as :func:`accumulate` gives
    them, from counts alone: the true positives among each group's detections within the cut, over
    its non-ignored GT (no ranking; the order of a ranking does not change where it ends). ``npig``:
    :func:`group_npig`'s value, when the caller has it."""
    T, P, K = len(params.iou_thrs), len(m.has_result), n_groups
    kept = np.flatnonzero(m.rank < params.max_dets[max_det])
    t_idx, pos = nonzero_2d(m.state[area][:, kept] == TP)
    # each true positive counted in every group its pair belongs to
    member, reps = memberships(member_pair, P, m.pair[kept][pos])
    n_tp = np.bincount(np.repeat(t_idx, reps) * K + member_group[member], minlength=T * K).reshape(
        T, K
    )
    # -1: no result
    npig_area = (group_npig(m, member_pair, member_group, K) if npig is None else npig)[:, area]
    # a group without detections in the cut has no true positive: recall 0, as accumulate() sets it
    return npig_area > 0, n_tp / np.maximum(npig_area, 1)[None]


def store_curves(c: Curves, precision: NDArray[np.float64], recall: NDArray[np.float64], a: int,
                 mi: int, R: int) -> None:
    """One (area, max-dets) step's curves into ``accumulate``'s (T, R, K, A, M) precision and (T, K,
    A, M) recall."""
    precision[:, :, c.valid, a, mi] = c.q(R)[:, c.valid, :].transpose(0, 2, 1)
    recall[:, c.valid, a, mi] = c.recall[:, c.valid]
