"""Strings hashed, compared and inspected 8 bytes at a time: the phrase hashes of METEOR's
paraphrase index.

:class:`Chunks` reads the 8-byte little-endian words at any byte offset of a byte string (two
gathers from one uint64 view instead of a read per byte); :func:`string_hashes` gives each string
polynomial hashes of its words, :func:`string_shapes` its spaces and non-ASCII bytes;
:func:`lines_ngram_hashes` hashes every n-gram of a corpus's lines the same way, so a phrase of the
table and an n-gram of a line with the same bytes get the same hash.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["Chunks", "longest_first", "string_hashes", "string_shapes", "hashes_and_shapes",
           "ngram_hashes", "lines_ngram_hashes", "sorted_distinct"]

# the low r bytes of a word
_BYTE_MASK = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)
_LOW7, _HIGH = np.uint64(0x7F7F7F7F7F7F7F7F), np.uint64(0x8080808080808080)
_SPACE8 = np.uint64(0x2020202020202020)


class Chunks:
    """The 8-byte little-endian words at any byte offset of a byte string: an unaligned word is the
    two aligned words around it, shifted together (two gathers from one uint64 view instead of a
    read per byte). Strings are then hashed, compared and inspected a word (8 bytes) at a time."""

    def __init__(self, data: NDArray[np.uint8]) -> None:
        padded = np.zeros(8 * (len(data) // 8 + 2), dtype=np.uint8)
        padded[:len(data)] = data
        self.aligned = padded.view("<u8")

    def words(self, offset: NDArray[np.int64], length: NDArray[np.int64], going: list[int]
              ) -> Iterator[tuple[int, NDArray[np.uint64]]]:
        """Word k = 0, 1, ... of the strings ``[offset, offset + length)`` that have one, as ``(n,
        words)``: the strings ordered longest first (:func:`longest_first`, which gives ``going``),
        so those are the first ``n = going[k]``. A string's shift is the same for all its words, and
        the aligned word after word k is the one before word k + 1: one gather per step; only a
        string's last word has bytes past its end to zero."""
        if not going:
            return
        index = offset[:going[0]] >> 3
        shift = (offset[:going[0]] & 7).astype(np.uint64) << np.uint64(3)
        # numpy shifts by 64 or more give 0: nothing of the next word then
        up = np.uint64(64) - shift
        below = self.aligned[index]
        for k, n in enumerate(going):
            above = self.aligned[k + 1:][index[:n]]
            w = below[:n] >> shift[:n]
            w |= above << up[:n]
            whole = going[k + 1] if k + 1 < len(going) else 0  # strings with a later word
            w[whole:] &= _BYTE_MASK[length[whole:n] - 8 * k]
            yield n, w
            below = above


def longest_first(length: NDArray[np.int64]) -> tuple[NDArray[np.int64], list[int]]:
    """An order of strings, longest first, and per word index k how many strings have a word k (a
    prefix of that order): the loops over words then work on prefixes instead of masks."""
    words = (length + 7) // 8
    order = np.argsort(-words.astype(np.int16), kind="stable")
    return order, (len(words) - np.searchsorted(words[order][::-1],
                                                np.arange(int(words.max(initial=0))),
                                               side="right")).tolist()


def string_hashes(chunks: Chunks, start: NDArray[np.int64], length: NDArray[np.int64],
                  multipliers: Sequence[int]) -> list[NDArray[np.uint64]]:
    """Per string ``[start, start + length)`` of ``chunks``, one polynomial hash of its 8-byte words
    and its length per multiplier M (``h = h * M + word`` for each word, then ``h * M + length``,
    mod 2**64: the same bytes hash alike wherever they are). One step per word index, over all
    strings at once, in place."""
    return _read_strings(chunks, start, length, multipliers, shapes=False)[0]


def string_shapes(chunks: Chunks, start: NDArray[np.int64], length: NDArray[np.int64]
                  ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Per string ``[start, start + length)`` of ``chunks``: its number of spaces and whether it has
    a byte >= 128, a word (8 bytes) at a time over all strings (spaces counted by a SWAR zero-byte
    test on ``word ^ 0x2020..``)."""
    _, spaces, high = _read_strings(chunks, start, length, [], shapes=True)
    return spaces, high


def hashes_and_shapes(chunks: Chunks, start: NDArray[np.int64], length: NDArray[np.int64],
                      multiplier: int
                      ) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.bool_]]:
    """:func:`string_hashes` under one multiplier and :func:`string_shapes` from one reading of the
    strings' words."""
    (hashes,), spaces, high = _read_strings(chunks, start, length, [multiplier], shapes=True)
    return hashes, spaces, high


def _read_strings(chunks: Chunks, start: NDArray[np.int64], length: NDArray[np.int64],
                  multipliers: Sequence[int], shapes: bool
                  ) -> tuple[list[NDArray[np.uint64]], NDArray[np.int64], NDArray[np.bool_]]:
    """The strings' words read once (longest strings first: :func:`longest_first`), giving a hash
    per multiplier and, with ``shapes``, the spaces and the high-byte flag (else empty arrays)."""
    order, going = longest_first(length)
    first, size = start[order], length[order]
    hashes = [np.zeros(len(order), dtype=np.uint64) for _ in multipliers]
    ms = [np.uint64(m) for m in multipliers]
    spaces = np.zeros(len(order) if shapes else 0, dtype=np.int64)
    high = np.zeros(len(order) if shapes else 0, dtype=bool)
    for n, w in chunks.words(first, size, going):
        for h, m in zip(hashes, ms):
            step = h[:n]
            step *= m
            step += w
        if shapes:
            t = w ^ _SPACE8                 # (bytes past a string's end are 0 in w: never a space)
            is_space = ~(((t & _LOW7) + _LOW7) | t | _LOW7)
            spaces[:n] += np.bitwise_count(is_space)
            high[:n] |= (w & _HIGH) != 0
    out = []
    for h, m in zip(hashes, ms):
        h *= m
        h += size.astype(np.uint64)
        out.append(_unsorted(h, order))
    return out, _unsorted(spaces, order), _unsorted(high, order)


def _unsorted(values: NDArray, order: NDArray[np.int64]) -> NDArray:
    """Values computed in ``order`` put back in the strings' own order (empty values stay empty)."""
    if not len(values):
        return values
    back = np.empty_like(values)
    back[order] = values
    return back


def ngram_hashes(text: bytes, max_n: int, multiplier: int) -> NDArray[np.uint64]:
    """Hashes (:func:`string_hashes`) of every run of at most ``max_n`` consecutive words of every
    line of ``text`` (words one space apart, lines ended by newlines), as the bytes of those words
    one space apart, which is how a phrase of the table reads; unsorted, repeats kept
    (:func:`lines_ngram_hashes` sorts once: a sort per n, then of their union, cost 1.6x as
    much)."""
    data = np.frombuffer(text, dtype=np.uint8)
    is_word = (data != 32) & (data != 10)
    edges = np.diff(is_word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    start, end = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    line = np.cumsum(data == 10)[start] if len(start) else start
    chunks = Chunks(data)
    found = []
    for n in range(1, max_n + 1):
        first = (
            np.flatnonzero(line[n - 1 :] == line[: len(line) - n + 1])
            if len(line) >= n
            else start[:0]
        )
        found.append(
            string_hashes(chunks, start[first], end[first + n - 1] - start[first], [multiplier])[0]
        )
    return np.concatenate(found) if found else np.zeros(0, dtype=np.uint64)


def lines_bytes(lines: Sequence[Sequence[str]]) -> bytes:
    """Lines of words as :func:`ngram_hashes` reads them: words one space apart, each line ended by
    a newline."""
    return "".join(" ".join(words) + "\n" for words in lines).encode(
        "utf-8", errors="surrogatepass"
    )


def lines_ngram_hashes(lines: Sequence[Sequence[str]], max_n: int, multiplier: int, part: int = 8192
                        ) -> NDArray[np.uint64]:
    """:func:`ngram_hashes` of lines split into words, ``part`` lines at a time (the per-n-gram
    temporaries of 45,000 lines at once were ~100 MB), as one sorted distinct array (one sort of
    all: 2.8 M hashes, 22 MB, for 45,000 lines up to 8 words)."""
    found = [
        ngram_hashes(lines_bytes(lines[x : x + part]), max_n, multiplier)
        for x in range(0, len(lines), part)
    ]
    return sorted_distinct(np.concatenate(found)) if found else np.zeros(0, dtype=np.uint64)


def sorted_distinct(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """``np.unique(values)`` by a sort (numpy 2's hash-based unique is several times slower on
    these)."""
    out = np.sort(values)
    return out[np.r_[True, out[1:] != out[:-1]]] if len(out) else out
