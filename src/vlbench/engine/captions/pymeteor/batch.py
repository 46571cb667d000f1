"""METEOR alignments of many (hypothesis, reference) pairs at once, on numpy arrays.

``aligner.align_stats`` is the jar's algorithm for one pair, written loop for loop. This module
computes the same statistics for a whole corpus: candidate matches as joins over flat token arrays
(replacing the jar's double loop over word pairs, per module), the definite ones, the beam search of
the rest (:mod:`.beam`) and the statistics. Pairs with a line longer than the search's bit masks go
through ``aligner`` one by one. Tests hold both to the jar and to each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
from numpy.typing import NDArray

from ..paraphrase import HASH_MULTIPLIER, ParaphraseIndex
from .aligner import EXACT, Sentence, align_stats
from .beam import MAX_WORDS, _expand, _masks, resolve_many

__all__ = ["Corpus", "stats_many"]

#: (String.hashCode, hash of the stem, WordNet synsets, is a function word) of a word
WordInfo = tuple[int, int, frozenset, bool]


def _lookup(sorted_keys: NDArray[np.int64], keys: NDArray[np.int64]) -> tuple[NDArray[np.int64],
                                                                              NDArray[np.int64]]:
    """Join: (row of ``keys``, index into ``sorted_keys``) for every equal pair."""
    lo = np.searchsorted(sorted_keys, keys, "left")
    hi = np.searchsorted(sorted_keys, keys, "right")
    return _expand(lo, hi)


@dataclass(frozen=True)
class Corpus:
    """Distinct lines as flat word arrays, the word table and the paraphrase phrases found in the
    lines."""

    ptr: NDArray[np.int64]           # (lines + 1,) token offsets
    word: NDArray[np.int64]          # (tokens,) word ids
    words: list[str]                 # (words,)
    word32: NDArray[np.int32]        # the same, narrower (for the pair-by-pair arrays)
    hash: NDArray[np.int64]          # (words,) String.hashCode
    # (words,) one number per distinct hash: equal means "same word" to the jar
    hash_id: NDArray[np.int32]
    stem_id: NDArray[np.int32]       # (words,) one number per distinct stem hash
    function: NDArray[np.bool_]      # (words,)
    line_functions: NDArray[np.int64]  # (lines,) function words in each line
    related: NDArray[np.int64]       # sorted keys w1 * words + w2 of words sharing a synset
    has_synsets: NDArray[np.bool_]   # (words,)
    phrases: list[tuple[str, ...]]   # the paraphrase table's phrases these lines can use
    phrase_len: NDArray[np.int64]    # (phrases,)
    entry_ptr: NDArray[np.int64]     # (phrases + 1,) entries of each first phrase, in file order
    entry_second: NDArray[np.int64]  # (entries,)
    # occurrences of phrases in lines: by (line, start, length), and their keys line * phrases +
    # phrase sorted
    occ_ptr: NDArray[np.int64]       # (lines + 1,) offsets into the by-line arrays
    occ_start: NDArray[np.int64]
    occ_phrase: NDArray[np.int64]
    occ_key: NDArray[np.int64]
    occ_start_by_key: NDArray[np.int64]

    @classmethod
    def build(cls, tokens: Sequence[list[str]], info: Callable[[str], WordInfo],
              index: ParaphraseIndex, kept: NDArray[np.int64]) -> Corpus:
        """From the lines' words (normalised, lowercased, split as the jar splits a line), each
        word's (hash, stem hash, synsets, function word), the paraphrase table's index and the
        entries of it these lines can use (:meth:`ParaphraseIndex.kept_entries_for_words`)."""
        vocab = {w: k for k, w in enumerate(dict.fromkeys(chain.from_iterable(tokens)))}
        ptr = np.r_[0, np.cumsum([len(t) for t in tokens])].astype(np.int64)
        word = np.fromiter(map(vocab.__getitem__, chain.from_iterable(tokens)), dtype=np.int64,
                           count=int(ptr[-1]))
        words = list(vocab)
        nw = len(words)
        hashes, stems, synsets, functions = zip(*map(info, words)) if words else ((), (), (), ())
        hash_, stem_ = np.asarray(hashes, np.int64), np.asarray(stems, np.int64)
        fn = np.asarray(functions, bool).reshape(nw)
        n_synsets = np.fromiter(map(len, synsets), np.int64, count=nw)
        syn_word = np.repeat(np.arange(nw), n_synsets)
        related = _sharing_a_synset(syn_word, np.fromiter(chain.from_iterable(synsets), np.int64,
                                                          count=len(syn_word)), nw)
        has_syn = np.bincount(syn_word, minlength=nw) > 0
        # their phrases renumbered in first-seen order
        first_idx, second_idx = (
            index.entry_first[kept].astype(np.int64),
            index.entry_second[kept].astype(np.int64),
        )
        distinct, inverse = np.unique(np.r_[first_idx, second_idx], return_inverse=True)
        firsts, seconds = inverse[:len(kept)], inverse[len(kept):]
        phrases = [tuple(words) for words in index.phrases_words(distinct)]
        order = np.argsort(firsts, kind="stable")  # grouped by first phrase, file order kept
        entry_ptr = np.r_[0, np.cumsum(np.bincount(firsts, minlength=len(phrases)))].astype(
            np.int64
        )
        line, start, phr = _occurrences(word, ptr, phrases, vocab)
        n_ph = len(phrases)
        by_key = np.lexsort((start, line * n_ph + phr))
        hash_id = np.unique(hash_, return_inverse=True)[1].astype(np.int32)
        stem_id = np.unique(stem_, return_inverse=True)[1].astype(np.int32)
        line_fn = np.add.reduceat(np.r_[fn[word].astype(np.int64), 0], ptr[:-1]) * (
            np.diff(ptr) > 0
        )
        return cls(ptr, word, words, word.astype(np.int32), hash_, hash_id, stem_id, fn, line_fn,
                   related, has_syn, phrases,
                   np.asarray([len(q) for q in phrases], np.int64), entry_ptr, seconds[order],
                   np.searchsorted(line, np.arange(len(tokens) + 1)).astype(np.int64), start, phr,
                   (line * n_ph + phr)[by_key], start[by_key])

    def line_table(self, line: int) -> tuple[dict, frozenset]:
        """The reduced table as ``aligner.Sentence.build`` takes it (first phrase -> its paraphrases
        in file order, as a tuple and a set; the set of the phrases), cut to the phrases that occur
        in ``line``. The build looks up only the line's own n-grams, so this gives the same sentence
        as the whole corpus's table, without a dict of every phrase for one long line (the
        occurrences are exact: checked word by word)."""
        here = np.unique(self.occ_phrase[self.occ_ptr[line]:self.occ_ptr[line + 1]]).tolist()
        out = {}
        for f in here:
            others = tuple(
                self.phrases[q]
                for q in self.entry_second[self.entry_ptr[f] : self.entry_ptr[f + 1]]
            )
            if others:
                out[self.phrases[f]] = (others, frozenset(others))
        return out, frozenset(self.phrases[f] for f in here)


def _sharing_a_synset(word: NDArray[np.int64], synset: NDArray[np.int64],
                      n_words: int) -> NDArray[np.int64]:
    """Sorted distinct keys w1 * n_words + w2 of the word pairs that share a synset (the jar's set
    intersection), from (word, synset) incidences: every pair within each synset's group (replaces a
    loop over synsets)."""
    order = np.argsort(synset, kind="stable")
    word, synset = word[order], synset[order]
    member, partner = _expand(np.searchsorted(synset, synset, "left"),
                              np.searchsorted(synset, synset, "right"))
    return np.unique(word[member] * n_words + word[partner])


def _phrase_hashes(phrases: list[tuple[str, ...]], vocab: dict[str, int]) -> tuple[NDArray, NDArray,
                                                                                   list, list]:
    """The phrases as word ids (-1 padded; a phrase with a word outside ``vocab`` cannot occur:
    length 0), their lengths, and per length n: the sorted hashes of the n-word prefixes of longer
    phrases, and (sorted hashes, phrase) of the n-word phrases."""
    n_words = np.fromiter(map(len, phrases), np.int64, count=len(phrases))
    max_len = int(n_words.max(initial=0))
    flat = np.fromiter(map(vocab.get, chain.from_iterable(phrases), repeat(-1)), np.int64,
                       count=int(n_words.sum()))
    row, col = _expand(np.zeros(len(phrases), np.int64), n_words)
    ids = np.full((len(phrases), max(max_len, 1)), -1, np.int64)
    can_occur = np.bincount(row[flat < 0], minlength=len(phrases)) == 0
    keep = can_occur[row]
    ids[row[keep], col[keep]] = flat[keep]
    lengths = (ids >= 0).sum(1)                  # 0 for a phrase that cannot occur
    codes = ids.astype(np.uint64) + np.uint64(1)
    prefix_keys, phrase_keys = [], []
    h = np.zeros(len(phrases), np.uint64)
    for n in range(1, max_len + 1):             # hashes of every phrase prefix, by length
        h = h * HASH_MULTIPLIER + codes[:, n - 1]
        prefix_keys.append(np.unique(h[lengths > n].view(np.int64)))   # prefixes of longer phrases
        full = np.flatnonzero(lengths == n)
        o = np.argsort(h[full].view(np.int64), kind="stable")
        phrase_keys.append((h[full].view(np.int64)[o], full[o]))
    return ids, lengths, prefix_keys, phrase_keys


def _occurrences(word: NDArray[np.int64], ptr: NDArray[np.int64], phrases: list[tuple[str, ...]],
                 vocab: dict[str, int]) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                 NDArray[np.int64]]:
    """(line, start, phrase) of every occurrence of a phrase in a line, by line, start and length:
    n-gram hashes looked up among the phrases' hashes (only n-grams whose shorter prefix starts some
    phrase), each hit then checked word by word. Replaces a loop over every start and length of
    every line."""
    line_of = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    ids, lengths, prefix_keys, phrase_keys = _phrase_hashes(phrases, vocab)
    max_len = len(phrase_keys)                   # the longest phrase's length
    # one-word phrases and the words that begin longer ones: looked up per word (most tokens stop
    # here)
    single = np.full(len(vocab), -1, np.int64)
    single[ids[lengths == 1, 0]] = np.flatnonzero(lengths == 1)
    begins = np.zeros(len(vocab), bool)
    begins[ids[lengths > 1, 0]] = True
    at_one = np.flatnonzero(single[word] >= 0)
    found = [(at_one, single[word[at_one]], 1)]
    starts = np.flatnonzero(begins[word])
    tok_codes = word.astype(np.uint64) + np.uint64(1)
    gram = tok_codes[starts]
    for n in range(2, max_len + 1):
        # n-grams within a line whose (n-1)-word prefix begins some longer phrase
        inside = starts + n - 1 < len(word)
        starts, gram = starts[inside], gram[inside]
        inside = line_of[starts + n - 1] == line_of[starts]
        starts, gram = starts[inside], gram[inside]
        gram = gram * HASH_MULTIPLIER + tok_codes[starts + n - 1]
        keys = gram.view(np.int64)
        sorted_keys, phrase_of = phrase_keys[n - 1]
        row, at = _lookup(sorted_keys, keys)
        tok, ph = starts[row], phrase_of[at]
        good = np.ones(len(tok), bool)
        for k in range(n):                      # word-by-word check against hash collisions
            good &= word[tok + k] == ids[ph, k]
        found.append((tok[good], ph[good], n))
        pre = prefix_keys[n - 1]
        if not len(pre):
            break
        pos = np.minimum(np.searchsorted(pre, keys), len(pre) - 1)
        alive = pre[pos] == keys
        starts, gram = starts[alive], gram[alive]
    if not found:
        z = np.zeros(0, np.int64)
        return z, z, z
    tok = np.concatenate([f[0] for f in found])
    ph = np.concatenate([f[1] for f in found])
    length = np.concatenate([np.full(len(f[0]), f[2], np.int64) for f in found])
    line = line_of[tok]
    start = tok - ptr[line]
    o = np.lexsort((length, start, line))
    return line[o], start[o], ph[o]


def candidates_many(c: Corpus, a: NDArray[np.int64],
                    b: NDArray[np.int64]) -> dict[str, NDArray[np.int64]]:
    """Every candidate match of every pair (hypothesis line a[p], reference line b[p]) as flat
    arrays p, j, len2, i, len1, module, sorted into the jar's order: by pair, reference start,
    module, then as each matcher appends them."""
    n1, n2 = c.ptr[a + 1] - c.ptr[a], c.ptr[b + 1] - c.ptr[b]
    # one row per reference token ...
    ref_pair = np.repeat(np.arange(len(a)), n2)
    ref_j = np.arange(len(ref_pair)) - np.repeat(np.cumsum(n2) - n2, n2)
    ref_word = c.word[c.ptr[b][ref_pair] + ref_j]
    # ... meeting every word of its hypothesis, in the jar's loop order (replaces its double loop)
    width = n1[ref_pair]
    first = c.ptr[a][ref_pair]                      # where that hypothesis starts in c.word
    ends = np.cumsum(width)
    at = (np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
          + np.repeat(first - (ends - width), width))   # c.word index of the hypothesis word
    w1 = c.word32[at]
    # identical lines (same length, same hashes): the jar then looks for exact matches only
    aligned = ref_j < n1[ref_pair]
    equal = c.hash_id[c.word[first[aligned] + ref_j[aligned]]] == c.hash_id[ref_word[aligned]]
    identical = (n1 == n2) & (np.bincount(ref_pair[aligned][equal], minlength=len(a)) == n1)
    same = c.hash_id[w1] == np.repeat(c.hash_id[ref_word], width)
    other = ~same & np.repeat(~identical[ref_pair], width)
    stem = other & (c.stem_id[w1] == np.repeat(c.stem_id[ref_word], width))
    maybe = np.flatnonzero(other & c.has_synsets[w1] & np.repeat(c.has_synsets[ref_word], width))
    syn = np.zeros(len(at), bool)
    if len(c.related) and len(maybe):
        key = w1[maybe].astype(np.int64) * len(c.hash) + np.repeat(ref_word, width)[maybe]
        found = np.minimum(np.searchsorted(c.related, key), len(c.related) - 1)
        syn[maybe[c.related[found] == key]] = True
    parts = []
    token_of = np.repeat(np.arange(len(width)), width)    # the reference token of each row
    for module, mask in ((EXACT, same), (1, stem), (2, syn)):
        rows = np.flatnonzero(mask)
        r = token_of[rows]
        i = at[rows] - first[r]
        one, zero = np.ones(len(rows), np.int64), np.zeros(len(rows), np.int64)
        parts.append((ref_pair[r], ref_j[r], one, i, one, one * module, i, zero, zero, zero))
    parts.extend(_paraphrase_candidates(c, a, b))
    cols = [np.concatenate(col) for col in zip(*parts)]
    order = np.lexsort(tuple(reversed(cols[:2] + cols[5:])))
    names = ("p", "j", "len2", "i", "len1", "module")
    return {name: col[order] for name, col in zip(names, cols[:6])}


def _paraphrase_candidates(c: Corpus, a: NDArray[np.int64], b: NDArray[np.int64]) -> list[tuple]:
    """:func:`candidates_many`'s paraphrase candidates, as its column tuples: phrases of the
    reference found in the hypothesis, then the other way round."""
    out: list[tuple] = []
    for forward in (True, False):
        src, dst = (b, a) if forward else (a, b)
        rp, o = _expand(c.occ_ptr[src], c.occ_ptr[src + 1])
        first = c.occ_phrase[o]
        re_, e = _expand(c.entry_ptr[first], c.entry_ptr[first + 1])
        rp, o, first = rp[re_], o[re_], first[re_]
        second = c.entry_second[e]
        rq, q = _lookup(c.occ_key, dst[rp] * len(c.phrases) + second)
        rp, o, first, second, e = rp[rq], o[rq], first[rq], second[rq], e[rq]
        here, there = c.occ_start[o], c.occ_start_by_key[q]
        three = np.full(len(rp), 3, np.int64)
        if forward:   # ref start, length, hyp start, length; order: length, entry, hyp start
            out.append((rp, here, c.phrase_len[first], there, c.phrase_len[second], three,
                          np.zeros(len(rp), np.int64), c.phrase_len[first], e, there))
        else:         # order: hyp start, length, entry
            out.append((rp, there, c.phrase_len[second], here, c.phrase_len[first], three,
                          np.ones(len(rp), np.int64), here, c.phrase_len[first], e))
    return out


def _ranges(start: NDArray[np.int64], length: NDArray[np.int64]) -> tuple[NDArray[np.int64],
                                                                          NDArray[np.int64]]:
    """(row, position) for every word of every span."""
    return _expand(start, start + length)


def _gain(length2: NDArray[np.int64], length1: NDArray[np.int64],
          module: NDArray[np.int64]) -> NDArray[np.int64]:
    """The weighted matches a candidate adds in the search (see ``aligner._gain``)."""
    return np.where(module == EXACT, length1 + length2, length1 // 2 + length2 // 2)


def stats_many(c: Corpus, a: NDArray[np.int64], b: NDArray[np.int64],
               sentence: Callable[[int], Sentence], *, cells: int = 1 << 19) -> NDArray[np.float64]:
    """The 23 statistics of every pair (hypothesis line a[p], reference line b[p]);
    ``sentence(line)`` gives the per-pair aligner's input for the pairs with a line longer than the
    search's masks.

    The array path holds one row per (hypothesis word, reference word) of its pairs, so pairs are
    scored in parts of at most ``cells`` such rows (a few tens of MB whatever the captions' lengths;
    a part holds one pair at least; the size trades peak memory against numpy's per-call cost:
    bench/HISTORY.md). Long pairs never enter the array path: the per-pair aligner visits only the
    word pairs that can match."""
    n1, n2 = c.ptr[a + 1] - c.ptr[a], c.ptr[b + 1] - c.ptr[b]
    long_ = (n1 > MAX_WORDS) | (n2 > MAX_WORDS)
    rows = np.zeros((len(a), 23))
    short = np.flatnonzero(~long_)
    work = np.cumsum(n1[short] * n2[short])
    cuts = np.unique(
        np.r_[
            0,
            np.searchsorted(
                work, np.arange(cells, int(work[-1]) if len(work) else 0, cells), side="right"
            ),
            len(short),
        ]
    )
    parts = [short[x:y] for x, y in zip(cuts[:-1], cuts[1:]) if y > x]
    # two parts at a time: their numpy work releases the GIL, so the second core takes one
    with ThreadPoolExecutor(max_workers=2) as pool:
        for q, (part, dead) in zip(parts, pool.map(lambda q: _stats_part(c, a[q], b[q]), parts)):
            rows[q] = part
            long_[q[dead]] = True
    # lines beyond the masks, dead ends: the per-pair aligner
    for k in np.flatnonzero(long_).tolist():
        rows[k] = align_stats(sentence(int(a[k])), sentence(int(b[k])))
    return rows


def _stats_part(c: Corpus, a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.float64],
                                                                                NDArray[np.bool_]]:
    """:func:`stats_many` of pairs whose lines fit the search's masks: their statistics, and which
    pairs met the jar's dead-end fallback (left to the per-pair aligner)."""
    n = len(a)
    n1, n2 = c.ptr[a + 1] - c.ptr[a], c.ptr[b + 1] - c.ptr[b]
    hoff, roff = np.r_[0, np.cumsum(n1)[:-1]], np.r_[0, np.cumsum(n2)[:-1]]
    cand = candidates_many(c, a, b)
    p, j, len2, i, len1, module = (cand[k] for k in ("p", "j", "len2", "i", "len1", "module"))
    # how many candidates cover each word, then the definite ones: alone at their start, covering
    # only words no other candidate covers
    r1, at1 = _ranges(hoff[p] + i, len1)
    r2, at2 = _ranges(roff[p] + j, len2)
    cover1 = np.bincount(at1, minlength=int(n1.sum()))
    cover2 = np.bincount(at2, minlength=int(n2.sum()))
    crowded = (np.bincount(r1, weights=cover1[at1] != 1, minlength=len(p))
               + np.bincount(r2, weights=cover2[at2] != 1, minlength=len(p))) > 0
    start = roff[p] + j
    group = np.bincount(start, minlength=int(n2.sum()))
    definite = (group[start] == 1) & ~crowded
    search = np.bincount(p[~definite], minlength=n) > 0
    chosen = definite.copy()
    dead = np.zeros(n, bool)
    if search.any():
        picked, dead = _search(p, j, len2, i, len1, module, definite, search, n2)
        chosen |= picked
    rows = np.zeros((n, 23))
    rows[:, 0], rows[:, 1] = n1, n2
    rows[:, 2], rows[:, 3] = c.line_functions[a], c.line_functions[b]
    k = np.flatnonzero(chosen)
    mr1, mat1 = _ranges(c.ptr[a[p[k]]] + i[k], len1[k])
    mr2, mat2 = _ranges(c.ptr[b[p[k]]] + j[k], len2[k])
    slot1 = p[k][mr1] * 16 + 4 * module[k][mr1] + 2 * c.function[c.word[mat1]]
    slot2 = p[k][mr2] * 16 + 4 * module[k][mr2] + 1 + 2 * c.function[c.word[mat2]]
    rows[:, 4:20] = np.bincount(np.r_[slot1, slot2], minlength=n * 16).reshape(n, 16)
    # chunks: runs of matches contiguous in both lines, in reference order (getCountAndChunks)
    kp, kj, ki = p[k], j[k], i[k]
    new_run = np.r_[
        True,
        (kp[1:] != kp[:-1]) | ((kj + len2[k])[:-1] != kj[1:]) | ((ki + len1[k])[:-1] != ki[1:]),
    ]
    rows[:, 20] = np.bincount(kp[new_run], minlength=n) if len(kp) else 0
    module_counts = rows[:, 4:20].reshape(n, 4, 4)
    rows[:, 21] = module_counts[:, :, 0].sum(1) + module_counts[:, :, 2].sum(1)
    rows[:, 22] = module_counts[:, :, 1].sum(1) + module_counts[:, :, 3].sum(1)
    return rows, dead


def _search(p, j, len2, i, len1, module, definite, search, n2) -> tuple[NDArray[np.bool_],
                                                                        NDArray[np.bool_]]:
    """Run the beam search for the pairs in ``search``: the candidates it chooses (a mask over
    candidates) and the pairs whose search met the jar's dead-end fallback (left to the per-pair
    aligner)."""
    sel = np.flatnonzero(search[p])
    pairs = np.flatnonzero(search)
    local = np.full(len(search), -1, np.int64)
    local[pairs] = np.arange(len(pairs))
    lp = local[p[sel]]
    starts = np.r_[0, np.cumsum(n2[pairs])[:-1]].astype(np.int64)
    pos = starts[lp] + j[sel]
    total = int(n2[pairs].sum())
    block = np.r_[0, np.cumsum(np.bincount(pos, minlength=total))].astype(np.int64)
    fixed = np.full(total, -1, np.int64)
    d = definite[sel]
    fixed[pos[d]] = np.flatnonzero(d)
    masks1, masks2 = _masks(i[sel], len1[sel]), _masks(j[sel], len2[sel])
    used1, used2 = np.zeros(len(pairs), np.uint64), np.zeros(len(pairs), np.uint64)
    np.bitwise_or.at(used1, lp[d], masks1[d])
    np.bitwise_or.at(used2, lp[d], masks2[d])
    cand = {"j": j[sel], "len2": len2[sel], "i": i[sel], "len1": len1[sel],
            "gain": _gain(len2[sel], len1[sel], module[sel])}
    _, picked, dead_local = resolve_many(n2[pairs].astype(np.int64), starts, used1, used2, cand,
                                         block, fixed)
    chosen = np.zeros(len(p), bool)
    chosen[sel[d]] = True
    chosen[sel[picked]] = True
    dead = np.zeros(len(search), bool)
    dead[pairs[dead_local]] = True
    return chosen, dead
