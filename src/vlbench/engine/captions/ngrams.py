"""Vectorised n-gram counting shared by BLEU and CIDEr-D.

Every sentence is split on whitespace (as ``precook`` does), words become integer ids, and the
n-grams of order 1..4 of all sentences are counted at once with numpy: the result is a sparse
table of (sentence, n-gram id, order, count) rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
from numpy.typing import NDArray

__all__ = ["NgramTable", "count_ngrams"]


@dataclass(frozen=True)
class NgramTable:
    """Sparse counts: row i says sentence[i] holds n-gram ngram[i] (of order order[i]) count[i] times."""

    sentence: NDArray[np.int64]
    ngram: NDArray[np.int64]       # global id, shared by all sentences of the call
    order: NDArray[np.int64]       # 1..4
    count: NDArray[np.int64]
    length: NDArray[np.int64]      # words per sentence
    n_ngrams: int


def count_ngrams(sentences: list[str], max_n: int = 4) -> NgramTable:
    """Count the n-grams (orders 1..max_n) of whitespace-split sentences, all at once."""
    words = [s.split() for s in sentences]
    length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    # ids in order of first appearance (dict.fromkeys and map run in C: no Python loop over the words)
    vocab = {w: i for i, w in enumerate(dict.fromkeys(chain.from_iterable(words)))}
    flat = np.fromiter(map(vocab.__getitem__, chain.from_iterable(words)), dtype=np.int64, count=int(length.sum()))
    sent_of_word = np.repeat(np.arange(len(words)), length)
    pos_in_sent = np.arange(len(flat)) - np.repeat(np.cumsum(length) - length, length)
    base = max(len(vocab), 1) + 1
    del words, vocab
    rows_s, rows_g, rows_n = [], [], []
    ids_offset = 0
    for n in range(1, max_n + 1):   # one order at a time: its keys are dropped before the next (peak memory)
        valid = pos_in_sent + n <= length[sent_of_word]          # windows that stay inside their sentence
        start = np.flatnonzero(valid)
        key = np.zeros(len(start), dtype=object if base ** n >= 2**62 else np.int64)
        for k in range(n):
            key = key * base + (flat[start + k] + 1)
        uniq, inverse = np.unique(key, return_inverse=True)
        rows_s.append(sent_of_word[start].astype(np.int32))
        rows_g.append(inverse.astype(np.int64) + ids_offset)
        rows_n.append(np.full(len(start), n, dtype=np.int8))
        ids_offset += len(uniq)
        del key, uniq, inverse, start, valid
    s = np.concatenate(rows_s) if rows_s else np.zeros(0, np.int32)
    g = np.concatenate(rows_g) if rows_g else np.zeros(0, np.int64)
    o = np.concatenate(rows_n) if rows_n else np.zeros(0, np.int8)
    del rows_s, rows_g, rows_n
    # counts per (sentence, n-gram)
    pair = s.astype(np.int64) * max(ids_offset, 1) + g
    _, first, count = np.unique(pair, return_index=True, return_counts=True)
    del pair
    return NgramTable(sentence=s[first].astype(np.int64), ngram=g[first], order=o[first].astype(np.int64),
                      count=count.astype(np.int64), length=length, n_ngrams=ids_offset)
