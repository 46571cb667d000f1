"""ROUGE-L as pycocoevalcap's ``Rouge`` computes it: per image, LCS with every reference (tokens
split on single spaces), precision and recall maxima taken independently, F with beta = 1.2."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["lcs_length", "rouge_l"]

BETA = 1.2


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (bit-parallel: one big-int step per token of
    ``b``)."""
    return _lcs_against(_token_masks(a), len(a), b)


def _token_masks(a: list[str]) -> dict[str, int]:
    """Each token of ``a`` -> the bit mask of its positions in ``a``."""
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    return masks


def _lcs_against(masks: dict[str, int], n: int, b: list[str]) -> int:
    """LCS length of a sequence of ``n`` tokens with these :func:`_token_masks` and ``b``."""
    if not n or not b:
        return 0
    full = (1 << n) - 1
    v = full
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return n - v.bit_count()


def rouge_l(hyps: list[str], refs: list[list[str]]) -> NDArray[np.float64]:
    """Per-image ROUGE-L (the corpus value is their mean). The LCS is symmetric, so the caption's
    token masks are built once and every reference runs against them (not a mask table per
    reference)."""
    out = np.zeros(len(hyps))
    b2 = BETA**2
    for i, (hyp, rs) in enumerate(zip(hyps, refs)):
        tc = hyp.split(" ")
        masks = _token_masks(tc)
        prec, rec = 0.0, 0.0
        for ref in rs:
            tr = ref.split(" ")
            lcs = _lcs_against(masks, len(tc), tr)
            prec = max(prec, lcs / float(len(tc)))
            rec = max(rec, lcs / float(len(tr)))
        if prec != 0 and rec != 0:
            out[i] = ((1 + b2) * prec * rec) / float(rec + b2 * prec)
    return out
