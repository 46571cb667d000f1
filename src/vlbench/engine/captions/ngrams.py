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

from ..sorting import stable_argsort

__all__ = ["NgramTable", "count_ngrams"]


@dataclass(frozen=True)
class NgramTable:
    """Sparse counts: row i says sentence[i] holds n-gram ngram[i] (of order order[i]) count[i]
    times."""

    sentence: NDArray[np.int64]
    ngram: NDArray[np.int64]       # global id, shared by all sentences of the call
    order: NDArray[np.int64]       # 1..4
    count: NDArray[np.int64]
    length: NDArray[np.int64]      # words per sentence
    n_ngrams: int


def _dense_ids(key: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """(``np.unique(key, return_inverse=True)``'s inverse, the number of distinct keys), from one
    packed sort (:func:`stable_argsort`) instead of numpy's index sort."""
    if not len(key):
        return np.zeros(0, np.int64), 0
    order = stable_argsort(key)
    ranked = key[order]
    return _ranks(np.r_[True, ranked[1:] != ranked[:-1]], order)


def _ranks(new: NDArray[np.bool_], order: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """Each item's rank among the distinct values (and their number), given the sort ``order`` and
    where a new value starts along it (``new``)."""
    ids = np.empty(len(order), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, int(new.sum())


def _gram_ids(prefix: NDArray[np.int64], last: NDArray[np.int64],
              n_last: int) -> tuple[NDArray[np.int64], int]:
    """Ids of n-grams given as (id of their (n-1)-gram prefix, last word id < ``n_last``), ranked by
    (prefix, word): with prefix ids ranked lexicographically, the lexicographic order of the
    n-grams' words (replaces ``np.unique`` of a polynomial key over the n words, which needs Python
    integers past 2^62)."""
    if len(prefix) == 0 or int(prefix.max()) < 2**62 // max(n_last, 1):
        return _dense_ids(prefix * n_last + last)
    order = np.lexsort((last, prefix))
    p, w = prefix[order], last[order]
    return _ranks(np.r_[True, (p[1:] != p[:-1]) | (w[1:] != w[:-1])], order)


def count_ngrams(sentences: list[str], max_n: int = 4) -> NgramTable:
    """Count the n-grams (orders 1..max_n) of whitespace-split sentences, all at once. N-gram ids
    rank the n-grams of order 1, then 2, ...; within an order, lexicographically by word ids (words
    numbered as they first occur)."""
    words = [s.split() for s in sentences]
    length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    # ids in order of first appearance (dict.fromkeys and map run in C: no Python loop over the
    # words)
    vocab = {w: i for i, w in enumerate(dict.fromkeys(chain.from_iterable(words)))}
    flat = np.fromiter(map(vocab.__getitem__, chain.from_iterable(words)), dtype=np.int64,
                       count=int(length.sum()))
    sent_of_word = np.repeat(np.arange(len(words)), length)
    # words from each position to its end
    room = np.repeat(np.cumsum(length), length) - np.arange(len(flat))
    n_words = len(vocab)
    del words, vocab
    rows_s, rows_g = [], []
    first_id = [0]                  # where each order's ids start
    # the id of the (n-1)-gram starting at each position; unigram ids are word ids
    gram_at = flat
    # one order at a time: its keys are dropped before the next (peak memory)
    for n in range(1, max_n + 1):
        # windows that stay inside their sentence
        start = np.flatnonzero(room >= n)
        if n == 1:
            ids, n_ids = flat, n_words
        else:
            ids, n_ids = _gram_ids(gram_at[start], flat[start + n - 1], n_words)
        rows_s.append(sent_of_word[start].astype(np.int32))
        rows_g.append(ids + first_id[-1])
        first_id.append(first_id[-1] + n_ids)
        gram_at = np.zeros(len(flat), dtype=np.int64)
        gram_at[start] = ids
        del start, ids
    del gram_at
    n_ngrams = first_id[-1]
    s = np.concatenate(rows_s) if rows_s else np.zeros(0, np.int32)
    g = np.concatenate(rows_g) if rows_g else np.zeros(0, np.int64)
    del rows_s, rows_g
    # counts per (sentence, n-gram): a value sort puts equal pairs side by side, and the sentence
    # and the n-gram are read back from the pair (no index sort)
    pair = s.astype(np.int64) * max(n_ngrams, 1) + g
    del s, g
    pair.sort()
    first = (
        np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]]) if len(pair) else np.zeros(0, np.int64)
    )
    count = np.diff(np.r_[first, len(pair)])
    sentence, ngram = np.divmod(pair[first], max(n_ngrams, 1))
    order = np.searchsorted(np.asarray(first_id[1:-1], dtype=np.int64), ngram, side="right") + 1
    return NgramTable(sentence=sentence, ngram=ngram, order=order.astype(np.int64),
                      count=count.astype(np.int64), length=length, n_ngrams=n_ngrams)
