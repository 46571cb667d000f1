"""engine.lookup.find_ids against a dict built from the ids (the obvious lookup), on both of its
paths."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from vlbench.engine.lookup import DENSE_SPAN, find_ids

ID = st.integers(-2**63, 2**63 - 1)


def _expected(sorted_ids, ids):
    where = {int(v): i for i, v in enumerate(sorted_ids)}
    return [where.get(int(v), 0) for v in ids], [int(v) in where for v in ids]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-50, 50) | ID, unique=True, max_size=40),
       st.lists(st.integers(-60, 60) | ID, max_size=60))
def test_positions_and_presence_equal_a_dict_lookup(keys, queries):
    """Any int64 ids (extremes included: no overflow in ``id - smallest``), dense or sparse, known
    or not."""
    sorted_ids = np.array(sorted(keys), dtype=np.int64)
    ids = np.array(queries, dtype=np.int64)
    pos, found = find_ids(sorted_ids, ids)
    want_pos, want_found = _expected(sorted_ids, ids)
    assert pos.tolist() == want_pos and found.tolist() == want_found


def test_both_paths_on_a_million_ids():
    """A dense range (the table) and a range wider than DENSE_SPAN (binary search), unknown ids
    mixed in."""
    rng = np.random.default_rng(0)
    for top in (60_000, 4 * DENSE_SPAN):
        sorted_ids = np.sort(rng.choice(top, 48_000, replace=False)).astype(np.int64)
        ids = np.concatenate([rng.choice(sorted_ids, 1_000_000), rng.integers(-5, top + 5, 1000)])
        pos, found = find_ids(sorted_ids, ids)
        assert np.array_equal(found, np.isin(ids, sorted_ids))
        assert np.array_equal(sorted_ids[pos[found]], ids[found]) and not pos[~found].any()


def test_no_ids():
    pos, found = find_ids(np.zeros(0, np.int64), np.array([1, 2]))
    assert pos.tolist() == [0, 0] and found.tolist() == [False, False]
    pos, found = find_ids(np.array([3], np.int64), np.zeros(0, np.int64))
    assert len(pos) == len(found) == 0
