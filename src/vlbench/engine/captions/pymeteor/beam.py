"""The jar's beam search run for many alignments at once, in lock step over reference positions.

``aligner._resolve`` is the search for one hypothesis/reference pair, written as the jar's loop;
this module runs the same search for every pair together on numpy arrays (it replaces the per-pair
Python loop, which dominated the run time). Every path of every pair is a row: rank key (negated
weighted matches, chunks, distance), position, end of the last match in the hypothesis, used words
as bit masks (lines of at most 63 words) and a pointer into a history of chosen candidates. A step
is:

1. a stable sort of each pair's rows by the rank key, keeping the first 40 (``Collections.sort`` and
   the beam);
2. each row either sits inside its last match, takes the definite match starting here, or branches
   into one child per unused candidate starting here (in candidate order) followed by itself
   skipping the word; a child inherits the distances its parent has accumulated from the earlier
   children (the jar adds them to the parent while copying it);
3. rows are laid out again in the jar's list order: per parent, its children, then itself.

A pair whose reference ends at this step closes its open chunk and keeps its first best row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...sorting import stable_argsort

__all__ = ["MAX_WORDS", "resolve_many"]

BEAM_SIZE = 40
#: Longest line (in words) the bit masks hold; longer pairs go through ``aligner._resolve``.
MAX_WORDS = 63

_ONE = np.uint64(1)


def _masks(start: NDArray[np.int64], length: NDArray[np.int64]) -> NDArray[np.uint64]:
    """Bit mask of words start .. start+length-1."""
    return ((_ONE << length.astype(np.uint64)) - _ONE) << start.astype(np.uint64)


def _group_starts(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of the first row of each run of equal keys (keys grouped)."""
    return (
        np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        if len(keys)
        else np.zeros(0, dtype=np.int64)
    )


def _expand(lo: NDArray[np.int64], hi: NDArray[np.int64]) -> tuple[NDArray[np.int64],
                                                                   NDArray[np.int64]]:
    """(row, value) for every value in every range lo[row] .. hi[row]-1 (replaces a loop over
    ranges)."""
    count = hi - lo
    row = np.repeat(np.arange(len(lo)), count)
    return row, np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + lo[row]


def _rank_within(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """Position of each row within its run of equal keys."""
    starts = _group_starts(keys)
    counts = np.diff(np.r_[starts, len(keys)])
    return np.arange(len(keys)) - np.repeat(starts, counts)


# columns of the state matrix: one row per path
PAIR, NEGW, CHUNKS, DIST, IDX, LAST, U1, U2, HIST = range(9)


def _stable_order(state: NDArray[np.int64]) -> NDArray[np.int64]:
    """Rows ordered by pair, then the jar's rank (-weighted, chunks, distance), ties kept in list
    order. One int64 key, the four fields as digits of a mixed radix (each field's range in the
    rows), when it fits (a key below 2^32, the usual case, sorts in two 16-bit radix passes); else a
    lexsort over the four columns."""
    if not len(state):
        return np.zeros(0, np.int64)
    key = np.zeros(len(state), np.int64)
    span = 1
    for column in (PAIR, NEGW, CHUNKS, DIST):
        field = state[:, column]
        low = int(field.min())
        size = int(field.max()) - low + 1
        span *= size
        if span >= 1 << 62:
            return np.lexsort((state[:, DIST], state[:, CHUNKS], state[:, NEGW], state[:, PAIR]))
        key *= size
        key += field - low
    return stable_argsort(key)


@dataclass(frozen=True)
class _Candidates:
    """The candidates as the search reads them: word masks, ends, gains, distances, where each
    position's candidates start (``block``) and the definite one starting at each position
    (``fixed``, or -1)."""

    m1: NDArray[np.int64]
    m2: NDArray[np.int64]
    end1: NDArray[np.int64]
    end2: NDArray[np.int64]
    start1: NDArray[np.int64]
    gain: NDArray[np.int64]
    delta: NDArray[np.int64]
    block: NDArray[np.int64]
    fixed: NDArray[np.int64]


def resolve_many(n2: NDArray[np.int64], ref_start: NDArray[np.int64], used1: NDArray[np.uint64],
                 used2: NDArray[np.uint64], cand: dict[str, NDArray[np.int64]],
                 block: NDArray[np.int64],
                 fixed: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                    NDArray[np.bool_]]:
    """The candidates chosen by the best paths: (pair, candidate) arrays, and the pairs whose search
    reached the jar's "unexpected conditions" dead end (the caller then searches those on its own).

    ``n2``: reference lengths; ``ref_start``: where each pair's reference positions start in the
    flat position arrays; ``used1``/``used2``: the words the definite matches take; ``cand``:
    candidate arrays ``j`` (reference start), ``len2``, ``i`` (hypothesis start), ``len1``, ``gain``
    (weighted matches it adds), flat and grouped by position in the jar's order; ``block``:
    (positions + 1,) offsets of each position's candidates; ``fixed``: (positions,) the definite
    candidate starting at each position or -1.
    """
    c = _Candidates(_masks(cand["i"], cand["len1"]).view(np.int64),
                    _masks(cand["j"], cand["len2"]).view(np.int64),
                    cand["i"] + cand["len1"], cand["j"] + cand["len2"], cand["i"], cand["gain"],
                    np.abs(cand["j"] - cand["i"]), block, fixed)
    n = len(n2)
    state = np.zeros((n, 9), np.int64)
    state[:, PAIR] = np.arange(n)
    state[:, LAST] = -1
    state[:, U1], state[:, U2] = used1.view(np.int64), used2.view(np.int64)
    state[:, HIST] = -1
    hist_cand: list[NDArray[np.int64]] = []
    hist_prev: list[NDArray[np.int64]] = []
    best_hist = np.full(n, -1, np.int64)
    dead = np.zeros(n, dtype=bool)
    current = 0
    while len(state):
        order = _stable_order(state)
        pair = state[order, PAIR]
        if np.bincount(pair).max() > BEAM_SIZE:      # the beam: each pair's first 40 rows
            keep = _rank_within(pair) < BEAM_SIZE
            order, pair = order[keep], pair[keep]
        done = n2[pair] == current
        if done.any():                 # complete: close the open chunk, keep the first best row
            finished = state[order[done]]
            finished[:, CHUNKS] += finished[:, LAST] != -1
            finished = finished[_stable_order(finished)]
            top = finished[_group_starts(finished[:, PAIR])]
            best_hist[top[:, PAIR]] = top[:, HIST]
            order = order[~done]
            if not len(order):
                break
        state = state[order]           # one gather of the rows that go on, in rank order
        grown, stays = _step(state, current, ref_start, n2, c, hist_cand, hist_prev)
        if not stays.all():            # every path of a pair at a dead end: left to the caller
            pairs = state[:, PAIR]  # (a pair's children come from its rows that stay)
            dead |= (np.bincount(pairs, weights=stays, minlength=n) == 0) & (
                np.bincount(pairs, minlength=n) > 0
            )
        state = grown
        current += 1
    return (*_backtrack(best_hist, dead, hist_cand, hist_prev), dead)


def _step(state: NDArray[np.int64], current: int, ref_start: NDArray[np.int64],
          n2: NDArray[np.int64],
          c: _Candidates, hist_cand: list, hist_prev: list) -> tuple[NDArray[np.int64],
                                                                     NDArray[np.bool_]]:
    """One position of the search for every row (the body of the jar's loop over the beam): the rows
    of the next step in the jar's list order, and which rows go on (the others are at a dead end);
    chosen candidates are appended to the history lists."""
    pair, idx, last = state[:, PAIR], state[:, IDX], state[:, LAST]
    used = ((state[:, U2].view(np.uint64) >> np.uint64(current)) & _ONE).astype(bool)
    inside = used & (current < idx)
    at_fixed = used & ~inside
    f_all = np.where(
        at_fixed,
        c.fixed[np.where(at_fixed, ref_start[pair] + np.minimum(idx, n2[pair] - 1), 0)],
        -1,
    )
    alive_fixed = at_fixed & (f_all >= 0)
    if alive_fixed.any():              # take the definite match that starts here
        rows = np.flatnonzero(alive_fixed)
        f, lf = f_all[rows], last[rows]
        state[rows, NEGW] -= c.gain[f]
        state[rows, CHUNKS] += (lf != -1) & (c.start1[f] != lf)
        state[rows, IDX], state[rows, LAST] = c.end2[f], c.end1[f]
        state[rows, DIST] += c.delta[f]
    free = ~used
    # children: every (free row, candidate at this position) whose words are all unused
    rows = np.flatnonzero(free)
    pos = ref_start[pair[rows]] + current
    parent, k_c = _expand(c.block[pos], c.block[pos + 1])
    parent = rows[parent]
    ok = ((state[parent, U1] & c.m1[k_c]) == 0) & ((state[parent, U2] & c.m2[k_c]) == 0)
    parent, k_c = parent[ok], k_c[ok]
    starts = _group_starts(parent)
    sizes = np.diff(np.r_[starts, len(parent)])
    k = np.arange(len(parent)) - np.repeat(starts, sizes)          # child number within its parent
    d = c.delta[k_c]
    # distance of the earlier children, per parent
    before = np.cumsum(d) - d
    before -= np.repeat(before[starts], sizes)
    children = state[parent]
    plast = children[:, LAST]
    children[:, NEGW] -= c.gain[k_c]
    children[:, CHUNKS] += (plast != -1) & (c.start1[k_c] != plast)
    children[:, DIST] += before
    children[:, IDX], children[:, LAST] = c.end2[k_c], c.end1[k_c]
    children[:, U1] |= c.m1[k_c]
    children[:, U2] |= c.m2[k_c]
    children[:, HIST] = sum(map(len, hist_cand)) + np.arange(len(k_c))
    hist_cand.append(k_c)
    hist_prev.append(state[parent, HIST])
    n_children = np.bincount(parent, minlength=len(state))
    state[:, DIST] += np.bincount(parent, weights=d, minlength=len(state)).astype(np.int64)
    state[:, CHUNKS] += free & (last != -1)                       # the parent skips this word
    state[:, LAST] = np.where(free, -1, last)
    state[:, IDX] += free
    # the jar's list order: per row, its children, then itself (rows at a dead end drop out)
    stays = free | inside | alive_fixed
    if not len(children):             # nothing new: the rows that stay, in their order
        return (state if stays.all() else state[stays]), stays
    return _lay_out(state, stays, free, n_children, parent, k, children), stays


def _lay_out(state: NDArray[np.int64], stays: NDArray[np.bool_], free: NDArray[np.bool_],
             n_children: NDArray[np.int64], parent: NDArray[np.int64], k: NDArray[np.int64],
             children: NDArray[np.int64]) -> NDArray[np.int64]:
    """The next step's rows in the jar's list order: per row, its children (child ``k`` of row
    ``parent``), then the row itself if it stays (a free row has ``n_children`` children)."""
    emit = np.where(free, n_children + 1, stays.astype(np.int64))
    offset = np.cumsum(emit) - emit
    grown = np.empty((int(emit.sum()), 9), np.int64)
    place = offset + np.where(free, n_children, 0)
    if stays.all():                   # (the usual case: no copy of the rows that stay)
        grown[place] = state
    else:
        grown[place[stays]] = state[stays]
    grown[offset[parent] + k] = children
    return grown


def _backtrack(best_hist: NDArray[np.int64], dead: NDArray[np.bool_], hist_cand: list,
               hist_prev: list) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(pair, candidate) of every choice on every best path: the histories followed back, all pairs
    at once."""
    all_cand = np.concatenate(hist_cand) if hist_cand else np.zeros(0, np.int64)
    all_prev = np.concatenate(hist_prev) if hist_prev else np.zeros(0, np.int64)
    picked_pair, picked_cand = [], []
    at = np.flatnonzero((best_hist >= 0) & ~dead)
    h = best_hist[at]
    while len(at):
        picked_pair.append(at)
        picked_cand.append(all_cand[h])
        h = all_prev[h]
        at, h = at[h >= 0], h[h >= 0]
    if not picked_pair:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(picked_pair), np.concatenate(picked_cand)
