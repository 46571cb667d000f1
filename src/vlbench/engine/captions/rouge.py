"""ROUGE-L as pycocoevalcap's ``Rouge`` computes it: per image, LCS with every reference (tokens
split on single spaces), precision and recall maxima taken independently, F with beta = 1.2."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["lcs_length", "rouge_l"]

BETA = 1.2


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (bit-parallel: one big-int step per token of ``b``)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def rouge_l(hyps: list[str], refs: list[list[str]]) -> NDArray[np.float64]:
    """Per-image ROUGE-L (the corpus value is their mean)."""
    out = np.zeros(len(hyps))
    b2 = BETA**2
    for i, (hyp, rs) in enumerate(zip(hyps, refs)):
        tc = hyp.split(" ")
        prec, rec = 0.0, 0.0
        for ref in rs:
            tr = ref.split(" ")
            lcs = lcs_length(tr, tc)
            prec = max(prec, lcs / float(len(tc)))
            rec = max(rec, lcs / float(len(tr)))
        if prec != 0 and rec != 0:
            out[i] = ((1 + b2) * prec * rec) / float(rec + b2 * prec)
    return out
