"""A confidence for each box a generative model writes, from the model's own token probabilities.

A generated answer carries no score, and AP ranks detections by score: with every box scored 1 the
official scorers break the ties by file order (see the result's ``tie_bounds``). ``vlbench predict``
therefore scores each box it parses from an answer by the tokens that wrote it::

    confidence(box) = exp( mean_{i in T(box)} log p(token_i | image, prompt, tokens_<i) )

where ``T(box)`` are the answer's tokens overlapping the characters that write the box (its
coordinates and its label, see :class:`~vlbench.predict.parsers.LabelledBox`) and ``p`` is the
model's softmax over its raw logits at the step that produced the token (greedy decoding picks the
most probable token, so ``p`` is that maximum). This is the geometric mean of the tokens'
probabilities: the mean log-probability (so a long label is not penalised for its length, as a
product would be) mapped back into (0, 1] (a score like a detector's, for thresholds and plots); it
is the length-normalised sequence likelihood beam search ranks by, computed from the numbers serving
engines return as ``logprobs``. Only the order of the scores matters to AP. A box whose characters
no token covers is scored by the mean over the whole answer; an answer without token probabilities
(a model whose generate keeps them to itself, an imported harness file) scores its boxes 1 and the
run's meta file says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["BOX_SCORES", "TOKEN_PROBABILITY", "CONSTANT", "TokenScores", "strip_with_offsets",
           "box_confidence"]

TOKEN_PROBABILITY, CONSTANT = "token-probability", "constant"

#: ``--box-scores`` rule -> what it is (recorded in the run's meta file)
BOX_SCORES = {
    TOKEN_PROBABILITY: "exp(mean log-probability of the tokens writing the box's coordinates and "
                       "label)",
    CONSTANT: "1 for every box (the official scorers then rank tied boxes by file order)",
}


@dataclass(frozen=True)
class TokenScores:
    """An answer's generated tokens: log-probability of each (NaN where unknown) and the (start,
    end) characters of the answer text each one wrote (start == end: a token that wrote nothing
    there, e.g. a stripped end token)."""

    logprob: NDArray[np.float64]
    start: NDArray[np.int64]
    end: NDArray[np.int64]


def strip_with_offsets(text: str, remove: set[str]) -> tuple[str, NDArray[np.int64]]:
    """``text`` without the ``remove`` strings and surrounding whitespace, and where each of its
    positions 0..len(text) lands in the result (so token offsets of the raw decode can follow the
    cleaning)."""
    keep = np.ones(len(text), dtype=bool)
    for token in remove:
        for m in re.finditer(re.escape(token), text):
            keep[m.start():m.end()] = False
    kept = "".join(c for c, k in zip(text, keep.tolist()) if k)
    stripped = kept.strip()
    lead = len(kept) - len(kept.lstrip())
    position = np.concatenate([[0], np.cumsum(keep)]) - lead
    return stripped, np.clip(position, 0, len(stripped)).astype(np.int64)


def box_confidence(tokens: TokenScores | None, span: tuple[int, int] | None) -> float | None:
    """The box's confidence (see the module docstring): the tokens overlapping ``span``, else the
    whole answer's (``span`` None, or no token there); None when the answer has no token
    probabilities."""
    if tokens is None:
        return None
    known = np.isfinite(tokens.logprob) & (tokens.end > tokens.start)
    if span is not None:
        inside = known & (tokens.start < span[1]) & (tokens.end > span[0])
        if inside.any():
            known = inside
    if not known.any():
        return None
    return float(np.exp(tokens.logprob[known].mean()))
