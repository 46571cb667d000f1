"""The engine's stable orders (radix passes, the packed value sort) against numpy's own stable
argsort."""

from __future__ import annotations

import numpy as np
import pytest

from vlbench.engine.sorting import stable_argsort, stable_group_order


@pytest.mark.parametrize("top", [2, 2**15, 2**16 - 1, 2**16, 150_000, 2**32 - 1, 2**40])
def test_the_radix_group_order_is_numpys_stable_argsort(top):
    """One 16-bit radix pass below 2^16, two (low half, then high half) below 2^32, numpy's merge
    sort above: the same permutation as ``np.argsort(keys, kind="stable")`` on keys with many
    repeats (stability shows)."""
    rng = np.random.default_rng(top)
    keys = rng.integers(0, top + 1, 50_000, dtype=np.int64)
    keys[:1000] = keys[1000:2000]                       # repeats in every range
    assert np.array_equal(stable_group_order(keys), np.argsort(keys, kind="stable"))
    # a negative key: numpy's own sort, whatever the range
    keys[::7] *= -1
    assert np.array_equal(stable_group_order(keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("kind", ["uint64", "int64", "float64", "float_ties", "float_specials",
                                  "int32", "bool"])
@pytest.mark.parametrize("n", [0, 1, 2, 5_000, 300_000, 600_000])
def test_stable_argsort_is_numpys_stable_argsort(kind, n):
    """The 16-bit radix passes (up to 2^19 keys) and the packed sort (high bits and index sorted as
    values, then a stable pass where the high bits tied; 600,000 keys) give the permutation of
    ``np.argsort(keys, kind="stable")``: repeats keep their index order, keys equal in their high
    bits but not in their low bits are still ordered (narrow ranges force that), and floats sort as
    numpy sorts them: -0.0 equal to 0.0, every NaN last and equal, infinities at the ends."""
    rng = np.random.default_rng(n)
    keys = {
        "uint64": lambda: rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True),
        "int64": lambda: (
            rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64) >> rng.integers(0, 63, n)
        ),
        # one exponent: only low bits differ
        "float64": lambda: rng.random(n) * 1e-3 + 0.5,
        "float_ties": lambda: -np.round(rng.random(n), 2),
        "float_specials": lambda: rng.choice(
            [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-300, -1e-300, 5e-324, 0.25], n
        ),
        "int32": lambda: rng.integers(-50, 50, n).astype(np.int32),
        "bool": lambda: rng.random(n) < 0.5,
    }[kind]()
    if n > 10:
        keys[: n // 10] = keys[n // 10: 2 * (n // 10)]      # repeats: stability shows
    got = stable_argsort(keys)
    assert got.dtype == np.int64 and np.array_equal(got, np.argsort(keys, kind="stable"))
