"""METEOR's English paraphrase table, reduced to the entries a given corpus can use.

``meteor-1.5.jar`` loads ``data/paraphrase-en.gz`` (5.3 M entries, at every run) into a transducer
and, for a hypothesis/reference pair, matches an entry when its first phrase occurs (as consecutive
tokens) in one sentence and its second phrase in the other (``ParaphraseMatcher``). An entry whose
phrases do not both occur somewhere in the normalised, lowercased corpus can therefore never match;
dropping it, and keeping the others in file order (the order in which the jar lists candidate
matches), leaves every statistic unchanged. What is kept here is a superset of those entries:

- a phrase counts as present when its words occur, one after the other, in a corpus line (64-bit
  hashes of the words' bytes one space apart; a hash collision can only keep an entry too many,
  never drop one);
- a phrase with non-ASCII bytes always counts as present: the jar lowercases with Java's
  ``toLowerCase``, which Python's ``str.lower`` equals on everything that lowercases to ASCII, but
  not necessarily beyond (locale and Unicode-version differences); ``U+0130`` in the corpus disables
  the reduction.

The table is read once into an index in the user cache directory in one streamed pass (~120 MB on
disk; its time and peak are in bench/HISTORY.md): every phrase gets two polynomial hashes of its
8-byte words, computed for all phrases of a block at once (:func:`string_hashes`), two blocks at a
time in two threads (numpy releases the GIL), and the distinct phrases are found by sorting the
first (a quarter of the hash range at a time, two threads) and told apart by both.
The index is shared by every installation on the machine (keyed by the table's content); every call
then takes a small part of that to find the entries a corpus can use (its n-grams hashed the same
way) and write the reduced table.

A whole split's references (:data:`SUBTABLE_MIN_LINES` lines or more) scored where that index is not
cached get their own sub-table instead (:meth:`ParaphraseIndex.for_references`): a match needs one
phrase in the hypothesis and the other in a reference, so only the entries with a phrase among the
references' n-grams (12% of the table for 45,000 captions of 4,500 images) can ever match against
them, whatever the hypotheses. One hash per phrase, tested against a bitmap of those n-grams, picks
them while the table streams; only they go through the build (less than the whole index costs), then
cached by the references' content.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..errors import FormatError
from ..io import write_text_atomic
from ..sorting import concat_ranges, stable_argsort
from . import java
from .phrase_hashes import (
    Chunks,
    hashes_and_shapes,
    lines_ngram_hashes,
    sorted_distinct,
    string_hashes,
    string_shapes,
)
from .table_stream import ZLIB, block_phrases, entry_blocks

__all__ = ["HASH_MULTIPLIER", "SUBTABLE_MIN_LINES", "ParaphraseIndex"]

#: Bump when the index layout changes: older files are then rebuilt.
FORMAT = 7
#: Multiplier of ``pymeteor``'s polynomial hashes over word ids (odd, so invertible mod 2**64).
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: (hash, check) multiplier pairs, tried in turn: phrases are numbered by the first hash and told
#: apart by both; two phrases that share the first but not the second (odds ~1e-7 for this table)
#: make the parse start again.
_MULTIPLIERS = ((0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F), (0xD6E8FEB86659FD93, 0xA0761D6478BD642F),
                (0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3))
#: Java's StringTokenizer delimiters, which the jar uses to split phrases and sentences into words.
_JAVA_SPACE = re.compile(r"[ \t\n\r\f]+")
#: The index's arrays, one ``.npy`` file each in its cache folder.
_ARRAYS = ("phrase_text", "phrase_start", "phrase_end", "phrase_hash", "phrase_always",
           "entry_first", "entry_second", "multipliers", "max_words")
#: A file changed less than this long ago gets no stamp (:func:`_stamp`): 2 s, far above any file
#: system's tick.
_SETTLED_NS = 2_000_000_000
#: :meth:`ParaphraseIndex.parse_among` tests phrases of up to this many words against the lines'
#: n-grams; a longer phrase (none in METEOR 1.5's English table, whose longest has 7) is kept
#: untested.
_AMONG_MAX_N = 8
#: References of at least this many distinct lines get their own sub-table
#: (:meth:`ParaphraseIndex.for_references`) on a machine without the whole table's index; fewer
#: share the whole index, built once.
SUBTABLE_MIN_LINES = 10_000


def _digest_file(path: Path) -> str:
    """SHA-1 of a file's bytes: the table's content key (``hashlib.file_digest`` reads into one
    reused buffer; a new 16 MB block per read cost a first run ~15 k page faults, about half of this
    digest's time)."""
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha1").hexdigest()


def _stamp(path: Path) -> list[int] | None:
    """(device, inode, size, modification and change times in ns) of a file, or None while its last
    change is under :data:`_SETTLED_NS` old. Any write to a file moves its change time, which no
    user call can set back, so an equal stamp means unchanged bytes; a change within the file
    system's clock tick of the stamp could keep it, hence no stamp of a file that changed just now
    (git's "racily clean" rule)."""
    st = path.stat()
    if time.time_ns() - st.st_ctime_ns < _SETTLED_NS:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _memo(file: Path, key: str, stamps: list, compute: Callable[[], str]) -> str:
    """``compute()``, or the value ``file`` holds for ``key`` if it was stored with these ``stamps``
    (a JSON object key -> [stamps, value]); the value is stored when every stamp is known. An
    unreadable or unwritable memo only costs the computation."""
    try:
        memo = json.loads(file.read_text(encoding="utf-8"))
        memo = memo if isinstance(memo, dict) else {}
    except (OSError, ValueError):
        memo = {}
    entry = memo.get(key)
    if None not in stamps and isinstance(entry, list) and len(entry) == 2 and entry[0] == stamps \
            and isinstance(entry[1], str):
        return entry[1]
    value = compute()
    if None not in stamps:
        memo[key] = [stamps, value]
        # atomic, no temporary file left behind on a failure
        with contextlib.suppress(FormatError):
            write_text_atomic(file, json.dumps(memo), "paraphrase index memo")
    return value


def _checksum(path: Path) -> str:
    """CRC-32 of a file's bytes: catches a damaged or edited index file (checked once per state of
    the files)."""
    crc = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            crc = ZLIB.crc32(block, crc)
    return f"{crc:08x}"


def _saved_checksum(path: Path, array: NDArray) -> str:
    """``np.save`` the array to ``path``; :func:`_checksum` of the file, taken from the array in
    memory and the file's header (the file is not read back: the index's arrays are large)."""
    array = np.asarray(array, order="C")        # (np.ascontiguousarray would make a 0-d array 1-d)
    np.save(path, array)
    with open(path, "rb") as fh:
        header = fh.read(path.stat().st_size - array.nbytes)
    return f"{ZLIB.crc32(array.reshape(-1).view(np.uint8), ZLIB.crc32(header)):08x}"


def _strings(text: NDArray[np.uint8], start: NDArray[np.int64],
             length: NDArray[np.int64]) -> NDArray[np.uint8]:
    """The strings ``text[start:start + length]`` end to end: one gather of their bytes instead of a
    slice each."""
    return text[concat_ranges(start, length)]


def _ordered_strings(text: NDArray[np.uint8], start: NDArray[np.int64],
                     length: NDArray[np.int64]) -> NDArray[np.uint8]:
    """:func:`_strings` of strings that lie in ``text`` in order without overlapping (a block's
    phrases in file order): a byte mask of alternating runs (the gap before each string, the string;
    then the tail), one masked copy (no index per byte; ``np.repeat`` of the runs is faster than a
    running sum of +1 / -1 edges); any other strings go to :func:`_strings`."""
    some = length > 0
    first, end = start[some], start[some] + length[some]
    if len(first) > 1 and (first[1:] < end[:-1]).any():
        return _strings(text, start, length)
    # 0, first[0], end[0], first[1], ..., len(text)
    bounds = np.empty(2 * len(first) + 2, dtype=np.int64)
    bounds[0], bounds[-1] = 0, len(text)
    bounds[1:-1:2], bounds[2:-1:2] = first, end
    inside = np.zeros(len(bounds) - 1, dtype=bool)
    inside[1::2] = True
    return text[np.repeat(inside, np.diff(bounds))]


def _concatenate(parts: list[NDArray], dtype: type) -> NDArray:
    """The parts end to end, each part freed from the list as soon as it is copied: the peak stays
    about one copy."""
    out: NDArray = np.empty(sum(map(len, parts)), dtype=dtype)
    at = 0
    for k in range(len(parts)):
        out[at:at + len(parts[k])] = parts[k]
        at += len(parts[k])
        parts[k] = out[:0]                  # (a slice of the part would keep it alive)
    return out


def _ascending(indices: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    """``np.sort`` of distinct indices below ``n``, by marking them (one pass over n instead of a
    sort)."""
    marked = np.zeros(n, dtype=bool)
    marked[indices] = True
    return np.flatnonzero(marked)


def _block_distinct(raw: bytes, newline: NDArray[np.int64], multipliers: tuple[int, int],
                    among: _Grams | None = None) -> tuple[NDArray[np.int32], tuple[NDArray, ...]]:
    """One block of whole entries: each phrase's number among the block's distinct phrases (numbered
    in the order they first lie in the block), and those distinct phrases' (hash, check, text end to
    end, length, always kept, words). With ``among``, only the entries one of whose phrases it may
    hold (:meth:`_Grams.entries_touching`)."""
    block, start, length = block_phrases(raw, newline)
    chunks = Chunks(block)
    if among is not None:
        kept = np.repeat(
            among.entries_touching(_tested_hashes(chunks, start, length, among.multiplier)),
            2,
        )
        start, length = start[kept], length[kept]
    hashes, checks = string_hashes(chunks, start, length, multipliers)
    # a block repeats its phrases 2.4 times: keep each once
    first, number = _distinct(hashes, checks)
    first = _ascending(first, len(hashes))        # renumbered in the order they lie in the block
    renumber = np.empty(len(first), dtype=np.int32)
    renumber[number[first]] = np.arange(len(first), dtype=np.int32)
    start, length = start[first], length[first]
    spaces, high = string_shapes(chunks, start, length)      # of the distinct phrases only
    return renumber[number], (hashes[first], checks[first], _ordered_strings(block, start, length),
                              length.astype(np.int32), high | (length == 0),
                              np.where(length > 0, spaces + 1, 0).astype(np.int16))


@dataclass(frozen=True)
class _Grams:
    """The n-grams of some lines, up to ``max_n`` words, as sorted distinct :func:`string_hashes`
    under ``multiplier``, with a bitmap of their top bits: the membership test of a whole table's
    phrases (a gather from an 8 MiB bitmap first; the sorted search only for the few that pass)."""

    hashes: NDArray[np.uint64]
    bitmap: NDArray[np.uint8]
    multiplier: int
    max_n: int

    BITS = 26

    @classmethod
    def of(cls, lines: Sequence[Sequence[str]], max_n: int, multiplier: int,
           part: int = 8192) -> _Grams:
        """The n-grams of ``lines`` (lowercased, split into words): :func:`lines_ngram_hashes`."""
        hashes = lines_ngram_hashes(lines, max_n, multiplier, part)
        top = (hashes >> np.uint64(64 - cls.BITS)).astype(np.intp)
        bitmap = np.zeros(1 << (cls.BITS - 3), dtype=np.uint8)
        np.bitwise_or.at(bitmap, top >> 3, np.left_shift(1, top & 7).astype(np.uint8))
        return cls(hashes, bitmap, multiplier, max_n)

    def holds(self, hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """Whether each hash is one of these n-grams'."""
        top = (hashes >> np.uint64(64 - self.BITS)).astype(np.intp)
        maybe = np.flatnonzero((self.bitmap[top >> 3] >> (top & 7).astype(np.uint8)) & 1)
        at = np.minimum(np.searchsorted(self.hashes, hashes[maybe]), len(self.hashes) - 1)
        out = np.zeros(len(hashes), dtype=bool)
        if len(self.hashes):
            out[maybe[self.hashes[at] == hashes[maybe]]] = True
        return out

    def entries_touching(self, hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """Per entry (phrases ``2k``, ``2k + 1`` of a block, their :func:`_tested_hashes`), whether
        either phrase may occur in the lines: its hash is an n-gram's, or 0 (untested)."""
        present = self.holds(hashes) | (hashes == 0)
        return present[0::2] | present[1::2]


def _tested_hashes(chunks: Chunks, start: NDArray[np.int64], length: NDArray[np.int64],
                   multiplier: int) -> NDArray[np.uint64]:
    """What the sub-table's test reads of a block's phrases (``chunks``: the block's
    :class:`Chunks`): each phrase's hash under ``multiplier``, or 0 for a phrase that n-grams of up
    to :data:`_AMONG_MAX_N` words cannot rule out: an empty one, one with a byte >= 128 (the index
    keeps both always) or one of more words (a phrase whose hash is 0 is then kept too: the test may
    keep too much, never too little)."""
    hashes, spaces, high = hashes_and_shapes(chunks, start, length, multiplier)
    hashes[(length == 0) | high | (spaces >= _AMONG_MAX_N)] = 0
    return hashes


def _mapped_ahead(function: Callable[[Any], Any], items: Iterator[Any],
                  workers: int = 2) -> Iterator[Any]:
    """``map(function, items)`` in ``workers`` threads, in order, at most ``workers`` items ahead of
    the caller (the blocks' numpy work releases the GIL, so two blocks take the two cores; the bound
    keeps the memory flat)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque[Any] = deque()
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


class _Collision(Exception):
    """Two different phrases share a hash but not the other (the parse starts again with other
    multipliers)."""


_Parsed = TypeVar("_Parsed")


def _first_without_collision(table: Path, attempt: Callable[[tuple[int, int]], _Parsed]) -> _Parsed:
    """``attempt(multipliers)`` with each (hash, check) pair of :data:`_MULTIPLIERS` in turn, until
    one parses the table without a :class:`_Collision`; ValueError where every pair collides."""
    for multipliers in _MULTIPLIERS:
        try:
            return attempt(multipliers)
        except _Collision:
            continue
    raise ValueError(f"{table}: phrases whose hashes collide under every multiplier")


def _distinct(hashes: NDArray[np.uint64], checks: NDArray[np.uint64],
              where: NDArray[np.int64] | None = None,
              chunk: int = 1 << 19) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """The distinct values of ``hashes``: (the first index of each, in ascending order of value;
    each value's number in that order). Strings are told apart by two independent 64-bit hashes:
    :class:`_Collision` where equal ``hashes`` come with different checks (two different strings
    agreeing on both has odds of 2**-64 a pair); the check of ``hashes[i]`` is ``checks[i]``, or
    ``checks[where[i]]`` when ``hashes`` were taken at ``where``. The checks are compared in chunks,
    so the temporaries stay small."""
    # stable: each run of equal values starts at its first index
    order = stable_argsort(hashes)
    sorted_hashes = hashes[order]
    new = (
        np.r_[True, sorted_hashes[1:] != sorted_hashes[:-1]]
        if len(order)
        else np.zeros(0, dtype=bool)
    )
    del sorted_hashes
    group = np.cumsum(new, dtype=np.int32) - 1
    first = order[new]
    at = (lambda i: i) if where is None else (lambda i: where[i])
    for x in range(0, len(order), chunk):
        if not np.array_equal(checks[at(order[x:x + chunk])],
                              checks[at(first[group[x:x + chunk]])]):
            raise _Collision
    number = np.empty(len(order), dtype=np.int32)
    number[order] = group
    return first, number


def _distinct_ranges(hashes: NDArray[np.uint64], checks: NDArray[np.uint64], bits: int = 2
                     ) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """:func:`_distinct` of each of the ``2**bits`` ranges of hash values (by their top bits), two
    at a time in two threads (their sorts release the GIL): a value lies in one range, so the
    ranges' distinct values, the lowest range's first, are the whole's. A quarter's temporaries at a
    time per thread: the halves at once were ~250 MB, the build's peak."""
    def distinct_range(top: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32]]:
        where = np.flatnonzero((hashes >> np.uint64(64 - bits)) == np.uint64(top))
        return (where, *_distinct(hashes[where], checks, where))

    number = np.empty(len(hashes), dtype=np.int32)
    firsts: list[NDArray[np.int64]] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for where, first, local in pool.map(distinct_range, range(1 << bits)):
            number[where] = local + sum(map(len, firsts))
            firsts.append(where[first])
    return np.concatenate(firsts), number


def _table_numbers(numbers: list[NDArray[np.int32]], global_number: NDArray[np.int32]
                   ) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """Each entry's (first, second) phrase as the table's phrase numbers, from each block's numbers
    (its phrases' places among the block's distinct phrases) and every block-distinct phrase's table
    number, the blocks end to end; each block's numbers are freed from the list once read."""
    n_entries = sum(map(len, numbers)) // 2
    entry_first, entry_second = np.empty(n_entries, dtype=np.int32), np.empty(n_entries,
                                                                              dtype=np.int32)
    at, put = 0, 0
    for k in range(len(numbers)):
        n, numbers[k] = numbers[k], entry_first[:0]
        entry_first[put:put + len(n) // 2] = global_number[at + n[0::2]]
        entry_second[put:put + len(n) // 2] = global_number[at + n[1::2]]
        at, put = at + (int(n.max()) + 1 if len(n) else 0), put + len(n) // 2
    return entry_first, entry_second


def _kept_text(texts: list[NDArray[np.uint8]], counts: list[int], chosen: NDArray[np.bool_],
               length: NDArray[np.int32]) -> NDArray[np.uint8]:
    """The chosen strings end to end, in the order they lie in ``texts`` (parts of ``counts``
    strings, whose lengths are ``length``, end to end): each part's byte mask in turn, each part
    freed from the list once read (the whole text and its byte mask were 220 MB at once)."""
    out: NDArray[np.uint8] = np.empty(int(length[chosen].sum(dtype=np.int64)), dtype=np.uint8)
    at, put = 0, 0
    for k in range(len(texts)):
        part, texts[k] = texts[k], out[:0]
        n = counts[k]
        kept = part[np.repeat(chosen[at:at + n], length[at:at + n])]
        out[put:put + len(kept)] = kept
        at, put = at + n, put + len(kept)
    return out


def _kept_spans(chosen: NDArray[np.bool_], first: NDArray[np.int64], length: NDArray[np.int32]
                ) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """(start, end) in the joined chosen strings (:func:`_kept_text`) of the strings ``first``: by
    each one's place among the chosen (a running count), not by an argsort of ``first``."""
    kept = length[chosen]
    place = np.cumsum(chosen, dtype=np.int32) - 1
    start = (np.cumsum(kept, dtype=np.int64) - kept)[place[first]]
    return start.astype(np.int32), (start + length[first]).astype(np.int32)


@dataclass(frozen=True)
class ParaphraseIndex:
    """The paraphrase table as arrays: distinct phrases (text, hash, always-kept flag) and the
    entries as (first phrase, second phrase) in file order."""

    phrase_text: NDArray[np.uint8]        # distinct phrases, concatenated
    phrase_start: NDArray[np.int32]       # (phrases,) where each phrase's text starts and ends
    phrase_end: NDArray[np.int32]
    phrase_hash: NDArray[np.uint64]       # (phrases,) ascending: phrases are numbered in hash order
    phrase_always: NDArray[np.bool_]      # (phrases,) non-ASCII or empty: never dropped
    entry_first: NDArray[np.int32]        # (entries,)
    entry_second: NDArray[np.int32]       # (entries,)
    multipliers: NDArray[np.uint64]       # (2,) the phrases' hash's and check's multipliers
    max_words: NDArray[np.int64]          # () the longest phrase's number of words
    # the cache folder it was read from ("" for a parsed index)
    folder: str = ""

    # -- building and caching ----------------------------------------------------------------------
    @classmethod
    def parse(cls, table: Path, block_bytes: int = 1 << 21) -> ParaphraseIndex:
        """Parse ``paraphrase-en.gz``: blocks of three lines (probability, which the jar ignores;
        phrase; paraphrase). Raises ValueError on anything the jar would read differently from this
        parser.

        The table (272 MB of text, 10.5 M phrases, 2.6 M distinct) is streamed in blocks of about
        ``block_bytes`` of whole entries and never split into Python objects: each block's phrases
        are hashed at once (:func:`string_hashes`), each block keeps the text of its distinct
        phrases, and the distinct phrases of the table are found by one sort of those hashes."""
        return _first_without_collision(table, lambda multipliers: cls._parse(Path(table),
                                                                              block_bytes,
                                                                              multipliers))

    @classmethod
    def parse_among(cls, table: Path, lines: Sequence[Sequence[str]], block_bytes: int = 1 << 21
                    ) -> tuple[ParaphraseIndex, NDArray[np.uint64]]:
        """:meth:`parse` of only the entries one of whose phrases may occur in ``lines``
        (lowercased, split into words): the sub-table of the entries METEOR can match against these
        lines as references, in file order (a match needs one phrase in the hypothesis and the other
        in a reference). Also the lines' n-gram hashes (up to :data:`_AMONG_MAX_N` words; sorted
        distinct), which :meth:`phrases_in` of this index reads."""
        def attempt(multipliers: tuple[int, int]) -> tuple[ParaphraseIndex, NDArray[np.uint64]]:
            grams = _Grams.of(lines, _AMONG_MAX_N, multipliers[0])
            return cls._parse(Path(table), block_bytes, multipliers, grams), grams.hashes

        return _first_without_collision(table, attempt)

    @classmethod
    def _parse(cls, table: Path, block_bytes: int, multipliers: tuple[int, int],
               among: _Grams | None = None ) -> ParaphraseIndex:
        # every phrase's number among its block's distinct phrases
        numbers: list[NDArray[np.int32]] = []
        # each block's distinct phrases: hash, check,
        # text, length, always kept, words
        fields: tuple[list[NDArray], ...] = ([], [], [], [], [], [])
        blocks = entry_blocks(table, block_bytes)
        for number, parts in _mapped_ahead(lambda block: _block_distinct(block[0], block[1],
                                                                         multipliers, among),
                                           blocks):
            numbers.append(number)
            for out, part in zip(fields, parts):
                out.append(part)
        # texts kept in parts: only the chosen bytes are joined
        texts, counts = fields[2], list(map(len, fields[0]))
        hashes, checks, length, always, words = (_concatenate(f, dtype) for f, dtype in
                                                 zip(fields[:2] + fields[3:],
                                                     (np.uint64, np.uint64, np.int32, bool,
                                                                               np.int16)))
        # distinct across blocks, numbered in hash order
        first, global_number = _distinct_ranges(hashes, checks)
        del checks
        # the first copy of each, in text order
        chosen = np.zeros(len(length), dtype=bool)
        chosen[first] = True
        # two independent halves on the two cores
        with ThreadPoolExecutor(max_workers=1) as pool:
            spans = pool.submit(_kept_spans, chosen, first, length)
            entries = pool.submit(_table_numbers, numbers, global_number)
            phrase_text = _kept_text(texts, counts, chosen, length)
            (start, end), (entry_first, entry_second) = spans.result(), entries.result()
        del numbers, global_number, chosen
        if len(phrase_text) >= 1 << 31:
            raise ValueError(f"{table}: over 2 GB of distinct phrases")
        return cls(phrase_text, start, end, hashes[first], always[first], entry_first, entry_second,
                   np.asarray(multipliers, dtype=np.uint64),
                   np.asarray(int(words.max(initial=0)), dtype=np.int64))

    @staticmethod
    def cache_path(table: Path, cache_dir: Path | None = None) -> Path:
        """The folder holding the index of ``table``, keyed by the table's content: every
        installation with the same data shares one index (a size / time key made each virtual
        environment rebuild it)."""
        root, table = (cache_dir or java.cache_dir()) / "meteor", Path(table).absolute()
        # the digest of the 62 MB table is remembered by the file's stamp, not taken at every run
        digest = _memo(root / "table-digests.json", str(table), [_stamp(table)],
                       lambda: _digest_file(table))
        return root / f"paraphrase-v{FORMAT}-{digest[:20]}"

    @classmethod
    def load(cls, table: Path, cache_dir: Path | None = None) -> ParaphraseIndex:
        """The cached index of ``table`` (memory-mapped ``.npy`` files), built and cached on first
        use (then read back mapped too); an unwritable cache directory only costs the rebuild. What
        is read is checked against the checksums written with it (a damaged or edited index would
        silently change METEOR): a mismatch rebuilds it."""
        return cls._cached(cls.cache_path(table, cache_dir), lambda: cls.parse(table))

    @classmethod
    def whole_for(cls, table: Path, n_lines: int,
                  cache_dir: Path | None = None) -> ParaphraseIndex | None:
        """The whole table's index where references of ``n_lines`` lines use it: fewer than
        :data:`SUBTABLE_MIN_LINES` always (:meth:`load`, built once per machine), more only where it
        is cached already; None where they get their own sub-table (:meth:`for_references`)."""
        if n_lines < SUBTABLE_MIN_LINES or cls.cache_path(table, cache_dir).is_dir():
            return cls.load(table, cache_dir)
        return None

    @classmethod
    def for_references(cls, table: Path, lines: Sequence[str], cache_dir: Path | None = None,
                       split: Callable[[str], list[str]] = str.split
                       ) -> tuple[ParaphraseIndex, NDArray[np.int64] | None]:
        """The index METEOR needs against these reference lines (lowercased; ``split`` into words as
        the jar does): the whole table's where it is cached or the lines are fewer than
        :data:`SUBTABLE_MIN_LINES` (built once per machine), else the lines' own :meth:`parse_among`
        sub-table, cached by their content (a whole split's first run reads 12% of the entries
        instead of building the whole index). With a sub-table built just now, also the numbers of
        its phrases found in the lines (their n-grams were hashed to build it); else None."""
        whole = cls.whole_for(table, len(lines), cache_dir)
        if whole is not None:
            return whole, None
        import hashlib

        digest = hashlib.sha1("\n".join(lines).encode("utf-8", errors="surrogatepass")).hexdigest()
        grams: list[NDArray[np.uint64]] = []

        def build() -> ParaphraseIndex:
            index, found = cls.parse_among(table, [split(line) for line in lines])
            grams.append(found)
            return index

        folder = cls.cache_path(table, cache_dir)
        index = cls._cached(folder.with_name(f"{folder.name}-references-{digest[:20]}"), build)
        return index, (index.phrases_in(grams[0]).astype(np.int64) if grams else None)

    @classmethod
    def _cached(cls, path: Path, build: Callable[[], ParaphraseIndex]) -> ParaphraseIndex:
        """The index cached in ``path``; else ``build()`` saved there and read back
        memory-mapped."""
        if path.is_dir():
            try:
                return cls._read(path)
            except (OSError, ValueError, KeyError):
                shutil.rmtree(path, ignore_errors=True)   # damaged: rebuild it
        index = build()
        try:
            index._save(path)
            # memory-mapped: the run goes on without the parsed arrays in memory; the checksums were
            # just taken from the saved files, so they are not read again here (see settle)
            return cls._read(path, check=False)
        except (OSError, ValueError, KeyError):
            return index

    @property
    def key(self) -> str:
        """The cache folder's name (format and table digest): what identifies this index's phrase
        numbers ("" for an index that was not read from a cache folder)."""
        return Path(self.folder).name if self.folder else ""

    def settle(self) -> None:
        """Remember that this index's files passed their check, once they have settled
        (:func:`_stamp`): the next run then skips it. For an index built by this process (its files
        too fresh to stamp when it read them back), called when the run is done; a no-op for an
        index whose check is remembered already."""
        if self.folder:
            with contextlib.suppress(OSError, ValueError):
                # else nothing could be remembered
                if None not in map(_stamp, self._files(Path(self.folder))):
                    self._check(Path(self.folder))

    @staticmethod
    def _files(path: Path) -> list[Path]:
        """The files of the index in ``path``: the checksums' manifest and one ``.npy`` per
        array."""
        return [path / "digests.json", *(path / f"{name}.npy" for name in _ARRAYS)]

    @classmethod
    def _check(cls, path: Path) -> None:
        """The files of the index in ``path`` checked against their checksums, once per state of the
        files: a check that passed is remembered by their stamps (140 MB of CRC-32 at every run
        otherwise; any write to a file changes its stamp and brings the check back). ValueError on a
        mismatch."""
        _memo(path / "verified.json", "checksums", [_stamp(f) for f in cls._files(path)],
              lambda: cls._verify(path))

    @classmethod
    def _read(cls, path: Path, check: bool = True) -> ParaphraseIndex:
        """The cached index in ``path``, memory-mapped, after :meth:`_check` unless ``check`` is
        False."""
        if check:
            cls._check(path)
        arrays = {
            name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            for name in _ARRAYS
        }
        if not (
            len(arrays["entry_first"]) == len(arrays["entry_second"])
            and len(arrays["phrase_hash"])
            == len(arrays["phrase_start"])
            == len(arrays["phrase_end"])
            == len(arrays["phrase_always"])
            and arrays["multipliers"].shape == (2,)
        ):
            raise ValueError(f"inconsistent paraphrase index in {path}")
        return cls(**arrays, folder=str(path))

    @staticmethod
    def _verify(path: Path) -> str:
        """"ok" when every array file of the index in ``path`` has the checksum written with it;
        ValueError if not."""
        manifest = json.loads((path / "digests.json").read_text(encoding="utf-8"))
        for name in _ARRAYS:
            if _checksum(path / f"{name}.npy") != manifest.get(name):
                raise ValueError(f"{name}.npy of the paraphrase index in {path} does not match its "
                                 "checksum")
        return "ok"

    def _save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=".building-"))
        try:
            digests = {
                name: _saved_checksum(tmp / f"{name}.npy", getattr(self, name)) for name in _ARRAYS
            }
            (tmp / "digests.json").write_text(json.dumps(digests), encoding="utf-8")
            # atomic; a concurrent builder that won keeps its copy
            os.rename(tmp, path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        # other indexes are left alone: they may belong to other installations (another jar, another
        # vlbench)

    # -- reducing ----------------------------------------------------------------------------------
    def kept_entries(self, corpus: Sequence[str]) -> NDArray[np.int64] | None:
        """Entries (in file order) whose two phrases both occur in ``corpus`` (normalised lines as
        the jar sees them before lowercasing), or None when the reduction cannot be trusted for
        it."""
        if any("\u0130" in line for line in corpus):
            # Java may lowercase it to ASCII 'i', Python does not
            return None
        return self.kept_entries_for_words(
            [[w for w in _JAVA_SPACE.split(line.lower()) if w] for line in corpus]
        )

    def kept_entries_for_words(self, lines: Sequence[Sequence[str]]) -> NDArray[np.int64]:
        """:meth:`kept_entries` for lines already lowercased and split into words."""
        return self.kept_entries_for_grams(self.ngram_hashes(lines))

    def ngram_hashes(self, lines: Sequence[Sequence[str]], part: int = 8192) -> NDArray[np.uint64]:
        """Sorted distinct hashes of the n-grams (up to the longest phrase) of lines split into
        words, as this index hashes its phrases: what :meth:`kept_entries_for_grams` looks up
        (:func:`lines_ngram_hashes`)."""
        return lines_ngram_hashes(lines, int(self.max_words), int(self.multipliers[0]), part)

    def kept_entries_for_grams(self, *grams: NDArray[np.uint64]) -> NDArray[np.int64]:
        """:meth:`kept_entries` for the lines whose :meth:`ngram_hashes` are ``grams`` (one set per
        part of the lines: n-grams never cross a line, so the parts' union is the whole
        corpus's)."""
        return self._kept(grams[0] if len(grams) == 1 else sorted_distinct(np.concatenate(grams)))

    def _kept(self, grams: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Entries whose two phrases are always kept or among ``grams`` (sorted)."""
        return self.entries_among(self.phrases_in(grams))

    def phrases_in(self, grams: NDArray[np.uint64]) -> NDArray[np.int64]:
        """The numbers (ascending) of the phrases whose hash is among ``grams`` (sorted distinct
        :meth:`ngram_hashes`): a phrase's number is its hash's place among the table's sorted
        hashes."""
        at = np.searchsorted(self.phrase_hash, grams)
        inside = at < len(self.phrase_hash)
        at = at[inside]
        return at[self.phrase_hash[at] == grams[inside]]

    def entries_among(self, phrases: NDArray[np.int64], block: int = 1 << 20) -> NDArray[np.int64]:
        """Entries (in file order) whose two phrases are always kept or among ``phrases`` (numbers,
        any order, repeats allowed); the (memory-mapped) entry arrays a block at a time, so the
        temporaries stay a few MB."""
        present = np.array(self.phrase_always, dtype=bool)
        present[phrases] = True
        kept = [
            x
            + np.flatnonzero(
                present[self.entry_first[x : x + block]] & present[self.entry_second[x : x + block]]
            )
            for x in range(0, len(self.entry_first), block)
        ]
        return np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)

    def vocabulary(self) -> set[str]:
        """Every word of the table's phrases (slow: for tests and tools)."""
        text = bytes(self.phrase_text)
        return {w for a, b in zip(self.phrase_start.tolist(), self.phrase_end.tolist())
                for w in text[a:b].decode("utf-8").split(" ") if w}

    def phrase_words(self, phrase: int) -> list[str]:
        """The words of phrase number ``phrase`` (as the jar's StringTokenizer splits them)."""
        return self.phrases_words(np.asarray([phrase]))[0]

    def phrases_words(self, phrases: NDArray[np.int64]) -> list[list[str]]:
        """The words of each of these phrases: one gather of their bytes instead of a slice each."""
        start, end = (
            self.phrase_start[phrases].astype(np.int64),
            self.phrase_end[phrases].astype(np.int64),
        )
        count = end - start
        at = np.arange(int(count.sum())) + np.repeat(start - (np.cumsum(count) - count), count)
        text = np.asarray(self.phrase_text[at]).tobytes()
        cut = np.r_[0, np.cumsum(count)].tolist()
        return [text[x:y].decode("utf-8").split(" ") for x, y in zip(cut[:-1], cut[1:])]

    def write(self, entries: NDArray[np.int64], path: Path) -> None:
        """A paraphrase file for ``-a`` holding these entries in order (probability line "1")."""
        text, start, end = self.phrase_text, self.phrase_start, self.phrase_end

        def phrase(i: int) -> bytes:
            return text[start[i]:end[i]].tobytes()

        body = b"".join(b"1\n" + phrase(a) + b"\n" + phrase(b) + b"\n"
                        for a, b in zip(self.entry_first[entries].tolist(),
                                        self.entry_second[entries].tolist()))
        Path(path).write_bytes(gzip.compress(body, compresslevel=1))

