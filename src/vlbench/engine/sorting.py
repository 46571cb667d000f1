"""Stable orders of numpy arrays: the permutations the official scorers' stable sorts give, fast on
full splits.

Every ranking the official scorers make is a stable sort (Python's ``sorted``, numpy's
``kind="stable"``): tied keys keep file order. :func:`stable_argsort` and :func:`stable_group_order`
give exactly ``np.argsort(keys, kind="stable")``, by radix passes on 16-bit digits or a packed value
sort where numpy's own argsort would merge-sort; :func:`key_runs` and :func:`same_key_combinations`
join two keyed arrays on top of them. Used by the detection engine (:mod:`vlbench.engine.cocoeval`),
the caption metrics and the readers.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["stable_order", "stable_group_order", "stable_argsort", "sortable_bits", "score_key",
           "concat_ranges", "nonzero_2d", "key_runs", "same_key_combinations"]

def stable_order(*keys: NDArray) -> NDArray[np.int64]:
    """``np.lexsort`` with the first key primary (lexsort takes the primary key last)."""
    return np.lexsort(keys[::-1])


def stable_group_order(group: NDArray[np.integer]) -> NDArray[np.int64]:
    """``np.argsort(group, kind="stable")`` for non-negative integers (group, pair or run numbers):
    numpy radix-sorts 16-bit keys in linear time, so keys below 2^16 take one such pass and keys
    below 2^32 two (:func:`_radix_order`); 64-bit keys go through a merge sort (bench/HISTORY.md has
    the measurements)."""
    top = int(group.max(initial=0))
    if top >= 2**32 or int(group.min(initial=0)) < 0:
        return np.argsort(group, kind="stable")
    return _radix_order(group, 1 if top < 2**16 else 2)


def _radix_order(keys: NDArray, n_digits: int) -> NDArray[np.int64]:
    """``np.argsort(keys, kind="stable")`` for non-negative integer keys below 2^(16 * n_digits), as
    a least-significant-digit radix sort: numpy's stable argsort (a radix sort on 16-bit keys) of
    each 16-bit digit in turn, the lowest first, each pass on the order so far."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    for c in range(1, n_digits):
        order = order[np.argsort(((keys[order] >> 16 * c) & 0xFFFF).astype(np.uint16),
                                 kind="stable")]
    return order


def _descending_rank(values: NDArray) -> NDArray[np.int64]:
    """Dense rank of each value, 0 for the largest, NaN after every number (as numpy sorts
    ``-score``)."""
    return np.unique(-values, return_inverse=True)[1].astype(np.int64).reshape(-1)


def score_key(score: NDArray[np.float64], exact: NDArray[np.int64] | None,
              integer_mode: NDArray[np.bool_] | None
               ) -> NDArray:
    """Sort key for descending scores: ``-score``, or, where some rankings are int64 arrays
    officially, the rank of the exact integer in those and of the float64 value elsewhere (two rank
    scales never compared: one ranking uses one of them)."""
    if exact is None or integer_mode is None:
        return -score
    return np.where(integer_mode, _descending_rank(exact), _descending_rank(score))


def concat_ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Concatenation of ``arange(s, s + c)`` for every (s, c), without a Python loop: each start
    less the items before its range, repeated over the range, plus a running count (one repeat)."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)


def nonzero_2d(mask: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.nonzero`` of a 2-D mask (row-major order) as one flat search and a division: numpy's
    multi-dimensional nonzero is several times slower on the (thresholds, detections) masks of the
    matching and the accumulation."""
    width = mask.shape[1]
    flat = np.flatnonzero(mask)
    if width == 0:
        return flat, flat
    row = flat // width
    return row, flat - row * width


_SIGN_BIT, _ALL_BITS = np.uint64(1 << 63), np.uint64(2**64 - 1)


def sortable_bits(keys: NDArray) -> NDArray[np.uint64]:
    """uint64 values in the order numpy sorts ``keys`` (uint64 as is; int64 with the sign bit
    flipped; float64 as its bits, all of them flipped for negatives and the sign bit for the rest,
    -0.0 as 0.0 and every NaN last, as equals)."""
    if keys.dtype == np.uint64:
        return keys
    if keys.dtype.kind in "iub":
        return keys.astype(np.int64, copy=False).view(np.uint64) ^ _SIGN_BIT
    # -0.0 + 0.0 is 0.0: numpy ranks the two zeros equal
    x = np.asarray(keys, dtype=np.float64) + 0.0
    bits = x.view(np.uint64)
    out = bits ^ np.where((bits >> np.uint64(63)).astype(bool), _ALL_BITS, _SIGN_BIT)
    out[np.isnan(x)] = _ALL_BITS
    return out


#: up to this many keys, four 16-bit radix passes beat the packed sort; beyond, their gathers leave
#: the cache and the packed sort wins (bench/HISTORY.md)
_RADIX_MAX = 1 << 19


def stable_argsort(keys: NDArray) -> NDArray[np.int64]:
    """``np.argsort(keys, kind="stable")`` for 1-D integer or float keys, faster on millions: numpy
    sorts uint64 values with SIMD but argsorts with a merge sort, so each key's high bits are packed
    with its index (the low bits) and sorted as values. Keys agreeing on those high bits come out in
    index order; one stable pass over the full keys, then nearly sorted (a linear run merge for
    timsort), orders them, and only if it is needed. Integer keys in [0, 2^32) take
    :func:`stable_group_order`'s radix passes instead, and up to :data:`_RADIX_MAX` keys
    :func:`_radix_order`'s."""
    n = len(keys)
    if keys.dtype.kind in "iub" and n and int(keys.min()) >= 0 and int(keys.max()) < 2**32:
        return stable_group_order(keys)
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


def key_runs(a_key: NDArray[np.integer], b_key: NDArray[np.integer]
             ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``b_order`` (``b`` sorted by key, stable) and, per ``a``, where its key's run starts in that
    order and how long it is: ``b_order[first[i]:first[i] + count[i]]`` are the ``j`` with
    ``b_key[j] == a_key[i]``, in order."""
    b_order = stable_argsort(b_key)
    b_sorted = b_key[b_order]
    first = np.searchsorted(b_sorted, a_key)
    return b_order, first, np.searchsorted(b_sorted, a_key, side="right") - first


def same_key_combinations(a_key: NDArray[np.int64],
                          b_key: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """Every (i, j) with ``a_key[i] == b_key[j]``, as two index arrays: ``b`` sorted once, each
    ``a`` meets its key's run (:func:`key_runs`; replaces a loop over the keys)."""
    b_order, first, count = key_runs(a_key, b_key)
    return np.repeat(np.arange(len(a_key)), count), b_order[concat_ranges(first, count)]
