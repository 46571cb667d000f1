"""The accumulation under image weights: AP of many bootstrap resamples at once.

:class:`WeightedRanking` holds one (area, max-dets) step's rankings as sparse (rows, units) counts;
called with weights (units, S) it gives every group's AP at every threshold for the S resamples,
through the same :func:`~.accumulation.tp_envelope` and :func:`~.accumulation.recall_hits` as the
official number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .accumulation import group_entries, interpolated_ap, recall_hits, segment_starts, tp_envelope
from .data import IGNORED, STATS, TP, Matches, Params
from .evaluate import CocoEvalResult


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
    ``accumulate`` (tested); ties of equal scores across copies of an image keep the copies
    together.
    """

    rec_thrs: NDArray[np.float64]
    n_groups: int
    # scipy CSR (rows, units): detections ranked after the previous row, up to it
    blocks: Any
    # per threshold: those of them ignored at that threshold (or None)
    ignored: tuple[Any, ...]
    row_unit: NDArray[np.int64]         # (rows,) unit of the detection at the row
    row_tp: NDArray[np.bool_]           # (T, rows) the row's detection is a TP at threshold t
    row_group: NDArray[np.int64]        # (rows,) sorted
    npig: Any                           # scipy CSR (groups, units): non-ignored GT

    @classmethod
    def build(cls, m: Matches, member_pair: NDArray[np.int64], member_group: NDArray[np.int64],
              n_groups: int,
              unit_of_pair: NDArray[np.int64], n_units: int, params: Params = Params(), *,
              area: int = 0, max_det: int = -1) -> WeightedRanking:
        """The pooled ranking of every group, with detection and GT weights indexed by image."""
        from scipy import sparse

        mi = max_det % len(params.max_dets)
        entry_det, entry_group = group_entries(m, member_pair, member_group, params.max_dets[mi])
        keep = m.rank[entry_det] < params.max_dets[mi]
        e_det, e_group = entry_det[keep], entry_group[keep]
        state = m.state[area][:, e_det]                                   # (T, n)
        e_unit = unit_of_pair[m.pair[e_det]]
        rows = np.flatnonzero((state == TP).any(axis=0))
        counted = np.flatnonzero((state != IGNORED).any(axis=0))
        block = np.searchsorted(rows, counted, side="left")
        inside = block < len(rows)
        # after a group's last TP: irrelevant
        inside[inside] = e_group[rows[block[inside]]] == e_group[counted[inside]]
        counted, block = counted[inside], block[inside]
        shape = (len(rows), n_units)
        blocks = sparse.csr_matrix((np.ones(len(counted)), (block, e_unit[counted])), shape=shape)
        ignored = []
        for t in range(state.shape[0]):
            sel = state[t, counted] == IGNORED
            ignored.append(
                sparse.csr_matrix(
                    (np.ones(int(sel.sum())), (block[sel], e_unit[counted[sel]])), shape=shape
                )
                if sel.any()
                else None
            )
        npig = sparse.csr_matrix((m.npig[area][member_pair].astype(np.float64),
                                  (member_group, unit_of_pair[member_pair])),
                                 shape=(n_groups, n_units))
        return cls(params.rec_thrs, n_groups, blocks, tuple(ignored), e_unit[rows],
                   state[:, rows] == TP, e_group[rows].astype(np.int64), npig)

    def __call__(self, weights: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        """``weights`` (R, units) -> (ap, recall, valid): ap and recall (R, T, K), valid (R, K) npig
        > 0."""
        R, T, K = len(weights), self.row_tp.shape[0], self.n_groups
        wt = np.ascontiguousarray(weights.T)                               # (units, R)
        npig = np.asarray(self.npig @ wt).T                                # (R, K)
        valid = npig > 0
        ap = np.zeros((R, T, K))
        recall = np.zeros((R, T, K))
        n = len(self.row_unit)
        if n:
            starts = segment_starts(self.row_group)
            # (rows, R) detections up to the row
            counted = _segment_cumsum(np.asarray(self.blocks @ wt), starts)
            row_w = wt[self.row_unit]                                          # (rows, R)
            for t in range(T):
                # only TPs of t move recall
                idx = np.flatnonzero(self.row_tp[t])
                if not len(idx):
                    continue
                total = counted[idx]
                if self.ignored[t] is not None:
                    total = total - _segment_cumsum(np.asarray(self.ignored[t] @ wt), starts)[idx]
                group = self.row_group[idx]
                first = segment_starts(group)
                tp = _segment_cumsum(row_w[idx], first)
                n_gt = np.maximum(npig.T[group], 1e-300)
                hits = recall_hits(tp, n_gt, group, self.rec_thrs)
                ap[:, t] = interpolated_ap(
                    tp_envelope(tp, total, group), hits, group, K, len(self.rec_thrs)
                ).T
                recall[:, t, group[first]] = (tp / n_gt)[np.r_[first[1:], len(idx)] - 1].T
        nan = np.where(valid, 0.0, np.nan)[:, None, :]
        return ap + nan, recall + nan, valid


def summary_replicates(rankings: dict[tuple[int, int], WeightedRanking],
                       weights: NDArray[np.float64],
                       params: Params = Params()) -> dict[str, NDArray[np.float64]]:
    """The 12 ``summarize()`` stats (fractions, NaN undefined) per resample, one group per category;
    ``rankings`` keyed by (area index, max-det index) for the steps the stats use."""
    cache: dict[tuple[int, int], tuple] = {}

    def get(a: int, mi: int):
        if (a, mi) not in cache:
            cache[(a, mi)] = rankings[(a, mi)](weights)
        return cache[(a, mi)]

    # mean over every axis but the first, of the defined entries (NaN if none)
    def mean(x: NDArray) -> NDArray:
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


def summary_rankings(res: CocoEvalResult, params: Params = Params()) -> dict[tuple[int, int],
                                                                             WeightedRanking]:
    """The (area, max-det) weighted rankings of a stock ``evaluate_bbox`` run (one group per
    category, pairs ``image * K + category``, the image the resampling unit)."""
    K = len(res.category_ids)
    n_pairs = len(res.matches.has_result)
    pairs = np.arange(n_pairs)
    n_images = n_pairs // max(K, 1)
    M = len(params.max_dets) - 1
    steps = [(a, M) for a in range(len(params.area_rngs))] + [(0, mi) for mi in range(M)]
    return {(a, mi): WeightedRanking.build(res.matches, pairs, pairs % max(K, 1), K,
                                           pairs // max(K, 1), n_images,
                                           params, area=a, max_det=mi) for a, mi in steps}
