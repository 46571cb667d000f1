"""Where ids sit in a sorted array of distinct ids: the lookup every reader and scorer makes from
image, category or description ids to array positions, with the check that an id is there at all
(``searchsorted`` alone files an unknown id under its neighbour)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["find_ids", "DENSE_SPAN"]

#: the widest id range (largest id - smallest + 1) looked up through a dense table (int32 entries:
#: 16 MiB at most)
DENSE_SPAN = 1 << 22


def find_ids(sorted_ids: NDArray[np.int64], ids: NDArray[np.int64]) -> tuple[NDArray[np.int64],
                                                                             NDArray[np.bool_]]:
    """(position of each of ``ids`` in ``sorted_ids`` (sorted, distinct), whether it is there);
    position 0 where not.

    Ids within a narrow range (most datasets number their images and descriptions densely) go
    through a table indexed by id: one gather instead of a binary search per id. Any other range
    takes ``np.searchsorted``. Both give the same answer."""
    ids = np.asarray(ids)
    n = len(sorted_ids)
    if n == 0:
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
    # the table only for signed integers: other ids (floats, unsigned) are compared by value, never
    # cast
    signed = ids.dtype.kind == "i" and np.asarray(sorted_ids).dtype.kind == "i"
    lo, hi = (int(sorted_ids[0]), int(sorted_ids[-1])) if signed else (0, DENSE_SPAN)
    span = hi - lo + 1
    # the table costs no more than the searches
    if signed and span <= DENSE_SPAN and span <= 4 * (n + len(ids)):
        table = np.full(span, -1, dtype=np.int32)
        table[sorted_ids - lo] = np.arange(n, dtype=np.int32)
        inside = (ids >= lo) & (ids <= hi)
        # ids outside [lo, hi] never index the table
        pos = table[np.where(inside, ids, lo) - lo]
        found = inside & (pos >= 0)
        return np.where(found, pos, 0).astype(np.int64), found
    pos = np.minimum(np.searchsorted(sorted_ids, ids), n - 1)
    found = sorted_ids[pos] == ids
    return np.where(found, pos, 0), found
