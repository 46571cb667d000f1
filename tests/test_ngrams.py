"""The n-gram table under BLEU and CIDEr-D against a plain count with ``collections.Counter``."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np

from vlbench.engine.captions.ngrams import _gram_ids, count_ngrams


def _counted(sentences: list[str], max_n: int = 4) -> dict[tuple[int, tuple[str, ...]], int]:
    """(sentence, n-gram words) -> count, as ``precook`` counts them: whitespace-split words, orders
    1..max_n."""
    out: dict[tuple[int, tuple[str, ...]], int] = {}
    for s, text in enumerate(sentences):
        words = text.split()
        for n in range(1, max_n + 1):
            for gram, c in Counter(
                tuple(words[i : i + n]) for i in range(len(words) - n + 1)
            ).items():
                out[(s, gram)] = c
    return out


def test_counts_equal_a_plain_count_and_ids_rank_the_words():
    """Every (sentence, n-gram) count equals Counter's; one id per distinct n-gram; ids grow with
    the order, and within an order follow the lexicographic order of the words' first-appearance
    numbers; lengths are word counts (empty and whitespace-only sentences included)."""
    rng = random.Random(3)
    vocab = ["a", "b", "c", "dog", "the", "x"]
    sentences = [
        " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 9))) for _ in range(300)
    ] + ["", "  ", "a"]
    table = count_ngrams(sentences)
    first_seen = {w: i for i,
                  w in enumerate(dict.fromkeys(w for s in sentences for w in s.split()))}
    want = _counted(sentences)
    # the id of each n-gram: its rank among the distinct n-grams of its order (by word numbers),
    # after lower orders
    distinct = sorted({g for _, g in want}, key=lambda g: (len(g), [first_seen[w] for w in g]))
    gram_id = {g: i for i, g in enumerate(distinct)}
    got = {(s, g): c for s, g,
           c in zip(table.sentence.tolist(), table.ngram.tolist(), table.count.tolist())}
    assert got == {(s, gram_id[g]): c for (s, g), c in want.items()}
    assert table.n_ngrams == len(distinct)
    assert table.order.tolist() == [len(distinct[g]) for g in table.ngram.tolist()]
    assert table.length.tolist() == [len(s.split()) for s in sentences]
    rows = list(zip(table.sentence.tolist(), table.ngram.tolist()))
    assert rows == sorted(rows)                          # by sentence, then n-gram id


def test_short_and_empty_corpora():
    """No sentence long enough for the higher orders, or no word at all: the counts that exist,
    nothing else."""
    table = count_ngrams(["a b", "b"])
    got = sorted(zip(table.sentence.tolist(), table.ngram.tolist(), table.order.tolist(),
                     table.count.tolist()))
    assert got == [(0, 0, 1, 1), (0, 1, 1, 1), (0, 2, 2, 1), (1, 1, 1, 1)]     # a=0, b=1, "a b"=2
    assert table.n_ngrams == 3
    for corpus in ([""], []):
        empty = count_ngrams(corpus)
        assert (
            len(empty.sentence) == 0
            and empty.n_ngrams == 0
            and empty.length.tolist() == [0] * len(corpus)
        )


def test_gram_ids_past_int64_keys_rank_as_the_packed_keys_do():
    """Prefix ids too large for one int64 key (prefix * words + word) take the two-column sort: the
    same ranks as ranking the (prefix, word) tuples."""
    rng = np.random.default_rng(0)
    prefix = rng.integers(0, 5, 2000)
    last = rng.integers(0, 7, 2000)
    small, n_small = _gram_ids(prefix, last, 7)
    big, n_big = _gram_ids(prefix + 2**61, last, 7)
    pairs = sorted(set(zip(prefix.tolist(), last.tolist())))
    want = np.array([pairs.index(p) for p in zip(prefix.tolist(), last.tolist())])
    np.testing.assert_array_equal(small, want)
    np.testing.assert_array_equal(big, want)
    assert n_small == n_big == len(pairs)
