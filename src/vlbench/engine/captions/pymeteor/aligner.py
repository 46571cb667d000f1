"""METEOR 1.5's aligner: the four matchers and the beam search of ``edu.cmu.meteor.aligner``.

What the jar does, and this module reproduces, for a hypothesis (line 1) and a reference (line 2):

- Words are compared by ``String.hashCode`` (two different words with one hash match exactly); stems
  by the hash of the Snowball stem; synonyms by shared WordNet synsets (of the word, its exception
  bases or its morphy form); paraphrases by the table's phrase pairs, looked up from the reference
  into the hypothesis and then from the hypothesis into the reference. Candidate matches are listed
  per reference start position in exactly that order (module, then hypothesis position).
- A candidate that is the only one at its start and overlaps no other is fixed; the rest is a
  left-to-right beam search (40 paths) ranked by (more weighted matches, fewer chunks, less
  distance), the weights being 1 for exact and 0.5 for the others, with every addition truncated to
  an int as the jar's ``int += double`` does. The jar's quirks are kept: a path's distance grows on
  the parent while its children are made (each later child inherits the earlier ones' distances).
- The best path's matches are then counted per module as content or function words, and chunks are
  counted afresh from the chosen matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

__all__ = ["Sentence", "align_stats", "BEAM_SIZE"]

BEAM_SIZE = 40
EXACT, STEM, SYNONYM, PARAPHRASE = range(4)
# a match: (reference start, reference length, hypothesis start, hypothesis length, module)
Match = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class Sentence:
    """A normalised, lowercased line as the matchers see it (built once per distinct text)."""

    words: tuple[str, ...]
    hashes: tuple[int, ...]
    stems: tuple[int, ...]                 # hash of each word's stem
    synsets: tuple[frozenset[int], ...]
    function: tuple[bool, ...]
    # paraphrase table phrases starting in this line: (start, length, the phrases they pair with in
    # file order, the same as a set), by start then length: the order of the jar's transducer
    phrase_hits: tuple[tuple[int, int, tuple[tuple[str, ...], ...], frozenset[tuple[str, ...]]],
                       ...]
    # each table phrase in this line -> its starts
    occurrences: dict[tuple[str, ...], tuple[int, ...]]
    by_hash: dict[int, tuple[int, ...]]    # word hash -> positions
    by_stem: dict[int, tuple[int, ...]]    # stem hash -> positions

    @classmethod
    def build(cls, words: Sequence[str], hashes: Sequence[int], stems: Sequence[int],
              synsets: Sequence[frozenset[int]], function: Sequence[bool],
              table: Mapping[tuple[str, ...],
                             tuple[tuple[tuple[str, ...], ...], frozenset[tuple[str, ...]]]],
              phrases: frozenset[tuple[str, ...]], max_words: int) -> Sentence:
        """A sentence with its lookup tables; ``table`` maps a first phrase to its paraphrases in
        file order (and as a set), ``phrases`` holds every phrase of ``table`` (either side)."""
        words = tuple(words)
        hits: list[tuple] = []
        occurrences: dict[tuple[str, ...], list[int]] = {}
        for j in range(len(words)):
            for length in range(1, min(max_words, len(words) - j) + 1):
                gram = words[j:j + length]
                if gram in phrases:
                    occurrences.setdefault(gram, []).append(j)
                    others = table.get(gram)
                    if others:
                        hits.append((j, length, *others))
        return cls(words, tuple(hashes), tuple(stems), tuple(synsets), tuple(function), tuple(hits),
                   {k: tuple(v) for k, v in occurrences.items()}, _positions(hashes),
                   _positions(stems))


def _positions(keys: Sequence[int]) -> dict[int, tuple[int, ...]]:
    out: dict[int, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return {k: tuple(v) for k, v in out.items()}


def _candidates(hyp: Sentence, ref: Sentence) -> tuple[list[list[Match]], list[int], list[int]]:
    """Every candidate match, listed under its reference start in the jar's order (module by module;
    within a module by hypothesis position), and how many candidates cover each hypothesis and
    reference word. The jar compares every word pair; the lookups here visit only the pairs that can
    match."""
    n1, n2 = len(hyp.words), len(ref.words)
    found: list[list[Match]] = [[] for _ in range(n2)]
    cover1, cover2 = [0] * n1, [0] * n2

    def add(m: Match) -> None:
        j, length, i, mlength, _ = m
        found[j].append(m)
        for k in range(i, i + mlength):
            cover1[k] += 1
        for k in range(j, j + length):
            cover2[k] += 1

    h1, h2 = hyp.hashes, ref.hashes
    for j in range(n2):                    # exact: equal hashes
        for i in hyp.by_hash.get(h2[j], ()):
            add((j, 1, i, 1, EXACT))
    if h1 == h2:                           # identical lines: the jar stops after exact matching
        return found, cover1, cover2
    s2 = ref.stems
    for j in range(n2):                    # stem: equal stem hashes, different word hashes
        for i in hyp.by_stem.get(s2[j], ()):
            if h1[i] != h2[j]:
                add((j, 1, i, 1, STEM))
    y1, y2 = hyp.synsets, ref.synsets
    with_sets = [i for i in range(n1) if y1[i]]
    for j in range(n2):                    # synonym: a shared synset, different word hashes
        if y2[j]:
            for i in with_sets:
                if h1[i] != h2[j] and not y2[j].isdisjoint(y1[i]):
                    add((j, 1, i, 1, SYNONYM))
    # paraphrase: reference phrases found in the hypothesis, then hypothesis phrases in the
    # reference
    for j, length, others, other_set in ref.phrase_hits:
        if not other_set.isdisjoint(hyp.occurrences):
            for other in others:
                for i in hyp.occurrences.get(other, ()):
                    add((j, length, i, len(other), PARAPHRASE))
    for i, length, others, other_set in hyp.phrase_hits:
        if not other_set.isdisjoint(ref.occurrences):
            for other in others:
                for j in ref.occurrences.get(other, ()):
                    add((j, len(other), i, length, PARAPHRASE))
    return found, cover1, cover2


# A search path is a list (the jar's ``PartialAlignment`` without its unused fields):
NEG_WEIGHTED, CHUNKS, DISTANCE, IDX, LAST_END, USED1, USED2, CHOSEN = range(8)
# more weighted matches, fewer chunks, less distance
_RANK = itemgetter(NEG_WEIGHTED, CHUNKS, DISTANCE)


def _gain(m: Match) -> int:
    """What a match adds to ``matches1 + matches2``: the jar adds length * weight (1 exact, 0.5
    otherwise) to int fields, so each addition is truncated."""
    _, length, _, mlength, module = m
    return mlength + length if module == EXACT else mlength // 2 + length // 2


def _resolve(found: list[list[Match]], fixed: list[Match | None], used1: int,
             used2: int) -> list[Match | None]:
    """The jar's beam search over the reference positions, left to right; the matches of the best
    path (indexed by reference start). Used words are bit masks; a path's own choices a linked
    list."""
    n2 = len(found)
    options = [[(m, ((1 << m[3]) - 1) << m[2], ((1 << m[1]) - 1) << m[0], _gain(m), m[2],
                 m[0] + m[1], m[2] + m[3], abs(m[0] - m[2])) for m in ms] for ms in found]
    paths: list[list[Any]] = [[0, 0, 0, 0, -1, used1, used2, None]]
    for current in range(n2):
        paths.sort(key=_RANK)                    # stable, as Collections.sort
        del paths[BEAM_SIZE:]
        bit, grown = 1 << current, []
        for path in paths:
            if path[USED2] & bit:
                if current < path[IDX]:          # inside the match just taken
                    grown.append(path)
                elif (f := fixed[path[IDX]]) is not None:   # a fixed match starts here
                    m = f
                    path[NEG_WEIGHTED] -= _gain(m)
                    if path[LAST_END] != -1 and m[2] != path[LAST_END]:
                        path[CHUNKS] += 1
                    path[IDX], path[LAST_END] = m[0] + m[1], m[2] + m[3]
                    path[DISTANCE] += abs(m[0] - m[2])
                    grown.append(path)
                continue
            for m, mask1, mask2, gain, mstart, end2, end1, delta in options[current]:
                if path[USED1] & mask1 or path[USED2] & mask2:
                    continue
                child = path[:]
                child[USED1] |= mask1
                child[USED2] |= mask2
                child[CHOSEN] = (m, path[CHOSEN])
                child[NEG_WEIGHTED] -= gain
                if child[LAST_END] != -1 and mstart != child[LAST_END]:
                    child[CHUNKS] += 1
                child[IDX], child[LAST_END] = end2, end1
                path[DISTANCE] += delta          # (sic) on the parent: later children inherit it
                grown.append(child)
            if path[LAST_END] != -1:             # or skip this reference word
                path[CHUNKS] += 1
                path[LAST_END] = -1
            path[IDX] += 1
            grown.append(path)
        paths = grown or paths[:1]               # the jar's "unexpected conditions" fallback
    paths.sort(key=_RANK)
    del paths[BEAM_SIZE:]
    for path in paths:                           # complete: close the last chunk
        if path[LAST_END] != -1:
            path[CHUNKS] += 1
    # the first of the lowest rank, as the final stable sort
    best = min(paths, key=_RANK)
    matches = list(fixed)
    chosen = best[CHOSEN]
    while chosen is not None:
        m, chosen = chosen
        matches[m[0]] = m
    return matches


def _count_chunks(matches: Sequence[Match | None]) -> int:
    """Chunks of the chosen matches: runs contiguous in both lines (``getCountAndChunks``)."""
    chunks, idx, last_end = 0, 0, -1
    while idx < len(matches):
        m = matches[idx]
        if m is None:
            if last_end != -1:
                chunks += 1
                last_end = -1
            idx += 1
        else:
            if last_end != -1 and m[2] != last_end:
                chunks += 1
            idx = m[0] + m[1]
            last_end = m[2] + m[3]
    return chunks + (last_end != -1)


def _definite(found: list[list[Match]], cover1: list[int],
              cover2: list[int]) -> tuple[list[Match | None], int, int, bool]:
    """The one-to-one, non-overlapping candidates (fixed before the search), the words they use (bit
    masks) and whether any other candidate is left to choose from."""
    fixed: list[Match | None] = [None] * len(found)
    used1 = used2 = 0
    open_choice = False
    for j, ms in enumerate(found):
        if len(ms) == 1:
            _, length, mstart, mlength, _ = m = ms[0]
            if all(c == 1 for c in cover2[j : j + length]) and all(
                c == 1 for c in cover1[mstart : mstart + mlength]
            ):
                fixed[j] = m
                used2 |= ((1 << length) - 1) << j
                used1 |= ((1 << mlength) - 1) << mstart
                continue
        open_choice = open_choice or bool(ms)
    return fixed, used1, used2, open_choice


def _stats(hyp: Sentence, ref: Sentence, matches: Sequence[Match | None]) -> list[float]:
    """The statistics of an alignment (``MeteorScorer.getMeteorStats``)."""
    # per module: hyp content, ref content, hyp function, ref function
    module = [0.0] * 16
    for m in matches:
        if m is None:
            continue
        j, length, i, mlength, mod = m
        for k in range(i, i + mlength):
            module[4 * mod + (2 if hyp.function[k] else 0)] += 1
        for k in range(j, j + length):
            module[4 * mod + (3 if ref.function[k] else 1)] += 1
    hyp_matched = sum(module[0::4]) + sum(module[2::4])
    ref_matched = sum(module[1::4]) + sum(module[3::4])
    return [float(len(hyp.words)), float(len(ref.words)), float(sum(hyp.function)),
            float(sum(ref.function)), *module, float(_count_chunks(matches)), hyp_matched,
            ref_matched]


def align_stats(hyp: Sentence, ref: Sentence) -> list[float]:
    """The 23 sufficient statistics of ``hyp`` against ``ref`` (``MeteorScorer.getMeteorStats`` of
    one alignment): lengths, function words, per module (hyp content, ref content, hyp function, ref
    function) matches, chunks, hyp and ref matched words."""
    found, cover1, cover2 = _candidates(hyp, ref)
    fixed, used1, used2, open_choice = _definite(found, cover1, cover2)
    # with nothing left to choose every path of the search ends with the definite matches alone
    return _stats(hyp, ref, _resolve(found, fixed, used1, used2) if open_choice else fixed)
