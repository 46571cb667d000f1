"""The METEOR jar's statistics lines: pycocoevalcap's ``SCORE`` line and how the jar splits it, the
23 statistics of an alignment, and the METEOR score computed from them as the jar's
``computeMetrics`` does (for one alignment, or summed over a corpus as its ``EVAL``). Shared by the
jar backend (:mod:`.meteor`) and the Python one (:mod:`.pymeteor`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import VlbenchError

__all__ = ["score_lines", "split_like_jar", "java_trim", "parse_stats", "summable_stats",
           "meteor_from_stats", "N_STATS"]

#: what ``String.trim()`` removes: the code units up to U+0020
_TRIM = "".join(map(chr, range(33)))


def score_lines(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
    """pycocoevalcap's ``SCORE`` line of every (hypothesis, references) pair."""
    return [" ||| ".join(("SCORE", " ||| ".join(rs), hyp.replace("|||", "").replace("  ", " ")))
            for hyp, rs in zip(hyps, refs)]


def java_trim(text: str) -> str:
    """``String.trim()``: every code unit up to U+0020 removed from both ends."""
    return text.strip(_TRIM)


def split_like_jar(line: str) -> list[str]:
    """The texts the jar scores for a ``SCORE`` line: ``line.split("\\|\\|\\|")`` (trailing empty
    parts dropped, as Java does) after the keyword, each trimmed; the last one is the hypothesis."""
    parts = line.split("|||")
    while parts and parts[-1] == "":
        parts.pop()
    return [java_trim(p) for p in parts[1:]]


# -- METEOR from its sufficient statistics ---------------------------------------------------------
#: METEOR 1.5 parameters for English under the default task ("rank"), which pycocoevalcap uses:
#: alpha, beta, gamma, delta and the module weights (exact, stem, synonym, paraphrase).
ALPHA, BETA, GAMMA, DELTA = 0.85, 0.20, 0.60, 0.75
MODULE_WEIGHTS = (1.0, 0.6, 0.8, 0.6)
#: Fields of a statistics line: lengths, function words, 4 modules x (test/ref x content/function),
#: chunks, word matches.
N_STATS = 23


def parse_stats(lines: Sequence[str]) -> NDArray[np.float64]:
    """Statistics lines (``Meteor.stats``) -> float array (n, 23)."""
    values = np.asarray([line.split() for line in lines], dtype=np.float64).reshape(len(lines), -1)
    if values.shape[1] != N_STATS:
        raise VlbenchError(f"unexpected METEOR statistics line with {values.shape[1]} fields "
                           f"(expected {N_STATS})")
    return values


def summable_stats(stats: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-segment statistics ready to be summed into a corpus aggregate: METEOR's ``EVAL`` does not
    add the chunk of a segment that matches its reference exactly (one chunk, every word matched);
    found by comparing with the jar's aggregates, which this then reproduces (to the last bit or
    two)."""
    s = np.array(stats, dtype=np.float64)
    module = s[:, 4:20].reshape(len(s), 4, 4)
    perfect = ((module[:, :, 0].sum(1) + module[:, :, 2].sum(1) == s[:, 0])
               & (module[:, :, 1].sum(1) + module[:, :, 3].sum(1) == s[:, 1]) & (s[:, 20] == 1))
    s[perfect, 20] = 0.0
    return s


def meteor_from_stats(stats: NDArray[np.float64]) -> NDArray[np.float64]:
    """METEOR score of statistics (..., 23), as ``MeteorScorer.computeMetrics`` does, in its order
    of operations: weighted precision and recall over content/function words, Fmean, fragmentation
    penalty. For one alignment's statistics (the score that picks the best reference) or summed ones
    (``EVAL``)."""
    s = np.asarray(stats, dtype=np.float64)
    test_len, ref_len, test_fn, ref_fn = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    # per module: test content, ref content, test fn, ref fn
    module = s[..., 4:20].reshape(s.shape[:-1] + (4, 4))
    chunks, test_words, ref_words = s[..., 20], s[..., 21], s[..., 22]
    test_weighted, ref_weighted = np.zeros(s.shape[:-1]), np.zeros(s.shape[:-1])
    # Java's accumulation order: content, then function
    for part, factor in ((0, DELTA), (2, 1.0 - DELTA)):
        for i, w in enumerate(MODULE_WEIGHTS):
            test_weighted = test_weighted + module[..., i, part] * w * factor
            ref_weighted = ref_weighted + module[..., i, part + 1] * w * factor
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = test_weighted / (DELTA * (test_len - test_fn) + (1 - DELTA) * test_fn)
        recall = ref_weighted / (DELTA * (ref_len - ref_fn) + (1 - DELTA) * ref_fn)
        fmean = 1.0 / ((1 - ALPHA) / precision + ALPHA / recall)
        test_total = module[..., 0].sum(-1) + module[..., 2].sum(-1)
        ref_total = module[..., 1].sum(-1) + module[..., 3].sum(-1)
        exact = (test_total == test_len) & (ref_total == ref_len) & (chunks == 1)
        frag = np.where(exact, 0.0, chunks / ((test_words + ref_words) / 2))
        score = fmean * (1.0 - GAMMA * frag**BETA)
    return np.where(np.isnan(score), 0.0, np.maximum(score, 0.0))
