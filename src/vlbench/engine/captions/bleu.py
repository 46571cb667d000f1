"""BLEU-1..4 as pycocoevalcap's ``Bleu(4)`` computes it: corpus statistics, ``closest`` reference
length (ties to the shorter reference), clipped n-gram counts, and its epsilons (1e-15 / 1e-9)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .ngrams import NgramTable

__all__ = ["BleuStats", "bleu_stats", "corpus_bleu", "bleu_from_totals", "image_bleu"]

_TINY, _SMALL = 1e-15, 1e-9


@dataclass(frozen=True)
class BleuStats:
    """Per image: clipped matches and hypothesis n-grams per order, hypothesis and closest reference
    length."""

    correct: NDArray[np.int64]   # (I, 4)
    guess: NDArray[np.int64]     # (I, 4)
    testlen: NDArray[np.int64]   # (I,)
    reflen: NDArray[np.int64]    # (I,)

    def subset(self, mask: NDArray[np.bool_]) -> BleuStats:
        """The statistics of the images in ``mask``."""
        return BleuStats(self.correct[mask], self.guess[mask], self.testlen[mask],
                         self.reflen[mask])


def bleu_stats(table: NgramTable, hyp_sentence: NDArray[np.int64], ref_sentence: NDArray[np.int64],
               ref_image: NDArray[np.int64], n_images: int, max_n: int = 4) -> BleuStats:
    """Sufficient statistics of every image (hypothesis i is sentence ``hyp_sentence[i]``)."""
    G = max(table.n_ngrams, 1)
    image_of = np.full(len(table.length), -1, dtype=np.int64)
    is_ref = np.zeros(len(table.length), dtype=bool)
    image_of[ref_sentence] = ref_image
    is_ref[ref_sentence] = True
    hyp_image = np.full(len(table.length), -1, dtype=np.int64)
    hyp_image[hyp_sentence] = np.arange(n_images)
    # max count of each n-gram over an image's references
    r = is_ref[table.sentence]
    r_key = image_of[table.sentence[r]] * G + table.ngram[r]
    order = np.argsort(r_key, kind="stable")
    r_key, r_count = r_key[order], table.count[r][order]
    starts = np.r_[0, np.flatnonzero(np.diff(r_key)) + 1] if len(r_key) else np.zeros(0, np.int64)
    max_key = r_key[starts]
    max_count = np.maximum.reduceat(r_count, starts) if len(r_key) else np.zeros(0, np.int64)
    # clip the hypothesis counts
    h = hyp_image[table.sentence] >= 0
    h_image = hyp_image[table.sentence[h]]
    h_key = h_image * G + table.ngram[h]
    pos = np.minimum(np.searchsorted(max_key, h_key), max(len(max_key) - 1, 0))
    ref_max = np.where((len(max_key) > 0) & (max_key[pos] == h_key) if len(max_key) else False,
                       max_count[pos] if len(max_count) else 0, 0)
    clipped = np.minimum(table.count[h], ref_max)
    correct = np.zeros((n_images, max_n), dtype=np.int64)
    np.add.at(correct, (h_image, table.order[h] - 1), clipped)
    testlen = table.length[hyp_sentence]
    guess = np.maximum(0, testlen[:, None] - np.arange(max_n)[None, :])
    # closest reference length, ties to the shorter one
    ref_len = table.length[ref_sentence]
    key = np.abs(ref_len - testlen[ref_image]) * (1 << 32) + ref_len
    best = np.full(n_images, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, ref_image, key)
    return BleuStats(correct, guess, testlen, best & ((1 << 32) - 1))


def corpus_bleu(stats: BleuStats, max_n: int = 4) -> list[float]:
    """BLEU-1..max_n of the summed statistics, with pycocoevalcap's operation order."""
    out = bleu_from_totals(stats.correct.sum(axis=0).astype(np.float64),
                           stats.guess.sum(axis=0).astype(np.float64),
                           np.asarray(stats.testlen.sum(), np.float64),
                           np.asarray(stats.reflen.sum(), np.float64), max_n)
    return [float(v) for v in out]


def bleu_from_totals(correct: NDArray[np.float64], guess: NDArray[np.float64],
                     testlen: NDArray[np.float64],
                     reflen: NDArray[np.float64], max_n: int = 4) -> NDArray[np.float64]:
    """Corpus BLEU-1..max_n from summed counts, for any leading shape: ``correct``/``guess`` (...,
    max_n), lengths (...) -> (..., max_n). Same operations as pycocoevalcap's ``compute_score``."""
    precision = (correct[..., :max_n] + _TINY) / (guess[..., :max_n] + _SMALL)
    bleus = np.cumprod(precision, axis=-1) ** (1.0 / np.arange(1, max_n + 1))
    ratio = (testlen + _TINY) / (reflen + _SMALL)
    with np.errstate(divide="ignore", over="ignore"):
        brevity = np.where(ratio < 1, np.exp(1 - 1 / np.where(ratio < 1, ratio, 1.0)), 1.0)
    return bleus * np.asarray(brevity)[..., None]


def image_bleu(stats: BleuStats, max_n: int = 4) -> NDArray[np.float64]:
    """Per-image BLEU-1..max_n (pycocoevalcap's ``bleu_list``), shape (I, max_n)."""
    ratios = (stats.correct + _TINY) / (stats.guess + _SMALL)
    out = np.cumprod(ratios, axis=1) ** (1.0 / np.arange(1, max_n + 1))[None, :]
    ratio = (stats.testlen + _TINY) / (stats.reflen + _SMALL)
    with np.errstate(divide="ignore"):
        bp = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
    return out * bp[:, None]
