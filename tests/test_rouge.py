"""ROUGE-L as pycocoevalcap's ``Rouge`` computes it, checked by hand and against the textbook LCS
table."""

from __future__ import annotations

import random

import pytest

from vlbench.engine.captions.rouge import lcs_length, rouge_l


def _lcs_table(a: list[str], b: list[str]) -> int:
    """The O(len(a) * len(b)) dynamic programme (an independent LCS)."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev, row = row, [0]
        for j, y in enumerate(b):
            row.append(prev[j] + 1 if x == y else max(prev[j + 1], row[j]))
    return row[-1]


def test_lcs_equals_the_table_either_way_round():
    """The bit-parallel LCS (masks built from either side) equals the table on random token lists,
    empty tokens and lists included, and across the 63/64-token word boundary of the masks."""
    rng = random.Random(7)
    for _ in range(400):
        a = [rng.choice(["a", "b", "c", ""]) for _ in range(rng.randint(0, 70))]
        b = [rng.choice(["a", "b", "c", "d"]) for _ in range(rng.randint(0, 70))]
        assert lcs_length(a, b) == lcs_length(b, a) == _lcs_table(a, b)


def test_rouge_l_takes_precision_and_recall_maxima_independently():
    """Caption "a b c d"; reference 1 "a c d e e": LCS 3, P 3/4, R 3/5; reference 2 "b": LCS 1, P
    1/4, R 1/1. The toolkit takes max P = 3/4 and max R = 1 from different references: F = (1 +
    1.2^2) P R / (R + 1.2^2 P) = 2.44 * 0.75 / (1 + 1.08) = 1.83 / 2.08. A caption sharing no token
    scores 0."""
    got = rouge_l(["a b c d", "x y"], [["a c d e e", "b"], ["a b"]])
    assert got[0] == pytest.approx(1.83 / 2.08, rel=1e-12)
    assert got[1] == 0.0
