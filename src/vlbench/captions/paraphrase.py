"""METEOR's English paraphrase table, reduced to the entries a given corpus can use.

``meteor-1.5.jar`` loads ``data/paraphrase-en.gz`` (5.3 M entries, ~6 s of every run) into a transducer
and, for a hypothesis/reference pair, matches an entry when its first phrase occurs (as consecutive
tokens) in one sentence and its second phrase in the other (``ParaphraseMatcher``). An entry whose
phrases do not both occur somewhere in the normalised, lowercased corpus can therefore never match;
dropping it, and keeping the others in file order (the order in which the jar lists candidate
matches), leaves every statistic unchanged. What is kept here is a superset of those entries:

- a phrase counts as present when its word sequence occurs in a corpus line (64-bit hashes of
  word-id sequences; a hash collision can only keep an entry too many, never drop one);
- a phrase with non-ASCII bytes always counts as present: the jar lowercases with Java's ``toLowerCase``,
  which Python's ``str.lower`` equals on everything that lowercases to ASCII, but not necessarily
  beyond (locale and Unicode-version differences); ``U+0130`` in the corpus disables the reduction.

The table is parsed once into an index in the user cache directory (~10 s and ~500 MB at the peak, without a
Python object per phrase; ~150 MB on disk), shared by every installation on the machine (keyed by the table's
content); every call then takes a fraction of a second to write the reduced table (tens of thousands of entries).
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..cocoeval import concat_ranges
from . import java

__all__ = ["HASH_MULTIPLIER", "ParaphraseIndex", "phrase_hashes"]

#: Bump when the index layout changes: older files are then rebuilt.
FORMAT = 6
#: Multiplier of the polynomial hash over word ids (odd, so every power is invertible mod 2**64).
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: A second, independent multiplier: words are told apart by two hashes of their bytes (then checked byte by byte).
_SECOND_MULTIPLIER = np.uint64(0xC2B2AE3D27D4EB4F)
#: Java's StringTokenizer delimiters, which the jar uses to split phrases and sentences into words.
_JAVA_SPACE = re.compile(r"[ \t\n\r\f]+")
#: The index's arrays, one ``.npy`` file each in its cache folder.
_ARRAYS = ("phrase_text", "phrase_start", "phrase_end", "phrase_hash", "phrase_always", "entry_first", "entry_second")


def phrase_hashes(ids: NDArray[np.integer], ptr: NDArray[np.int64], chunk: int = 1 << 18) -> NDArray[np.uint64]:
    """Hash of every word-id sequence ``ids[ptr[i]:ptr[i+1]]``: sum of (id+1) * P**(n-1-k), mod 2**64."""
    lengths = np.diff(ptr)
    out = np.zeros(len(lengths), dtype=np.uint64)
    for x in range(0, len(lengths), chunk):     # chunks of phrases: the temporaries stay a few MB
        part, first = out[x:x + chunk], ptr[x:x + chunk]
        for k in range(int(lengths[x:x + chunk].max(initial=0))):
            has = np.flatnonzero(lengths[x:x + chunk] > k)
            part[has] = part[has] * HASH_MULTIPLIER + (ids[first[has] + k].astype(np.uint64) + np.uint64(1))
    return out


def _ngram_hashes(lines: Sequence[Sequence[int]], max_n: int) -> NDArray[np.uint64]:
    """Sorted hashes of every n-gram (n <= max_n) of every line, in the hash of ``phrase_hashes``;
    words outside the table's vocabulary (id -1) end every n-gram that would contain them."""
    # one separator (-1) after each line, so windows never cross lines
    ids = np.fromiter(chain.from_iterable(chain(line, (-1,)) for line in lines), dtype=np.int64)
    return _ngram_hashes_flat(ids, max_n)


def _ngram_hashes_flat(ids: NDArray[np.int64], max_n: int) -> NDArray[np.uint64]:
    """:func:`_ngram_hashes` of lines given as one id array, each line followed by a -1."""
    valid = ids >= 0
    codes = ids.astype(np.uint64) + np.uint64(1)
    found, h, ok = [], np.zeros(len(ids), dtype=np.uint64), np.ones(len(ids), dtype=bool)
    for n in range(1, max_n + 1):
        m = len(ids) - n + 1
        if m <= 0:
            break
        h = h[:m] * HASH_MULTIPLIER + codes[n - 1:]
        ok = ok[:m] & valid[n - 1:]
        found.append(_sorted_distinct(h[ok]))  # distinct per order: far fewer than windows (peak memory)
    return np.sort(np.concatenate(found)) if found else np.zeros(0, dtype=np.uint64)


def _release(array: NDArray) -> None:
    """Let the kernel take back the pages of a memory-mapped array just read through (they stay in the page
    cache, but leave this process's resident memory; ~60 MB of the index per METEOR run)."""
    mapped = getattr(array, "_mmap", None)
    if mapped is not None:
        try:
            mapped.madvise(mmap.MADV_DONTNEED)
        except (AttributeError, OSError, ValueError):   # no madvise on this platform, or a closed map
            pass


def _sorted_distinct(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """``np.unique(values)`` by a sort (numpy 2's hash-based unique is several times slower on these)."""
    out = np.sort(values)
    return out[np.r_[True, out[1:] != out[:-1]]] if len(out) else out


def _digest_file(path: Path) -> str:
    """BLAKE2b of a file's bytes, read in 16 MB blocks (~1 GB/s)."""
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            h.update(block)
    return h.hexdigest()


def _entry_blocks(table: Path, block_bytes: int) -> Iterator[NDArray[np.uint8]]:
    """The gzip'd table decompressed as a stream, in blocks of about ``block_bytes`` of whole three-line entries
    (each block ends with a newline; a last line without one gets it)."""
    inflate = zlib.decompressobj(wbits=31)          # gzip framing
    pending = b""
    with open(table, "rb") as fh:
        while True:
            chunk = fh.read(1 << 22)
            piece = inflate.decompress(chunk) if chunk else inflate.flush()
            if b"\r" in piece:
                raise ValueError("carriage return in the paraphrase table (Java would split lines there)")
            pending += piece
            if chunk and len(pending) < block_bytes:
                continue
            if not chunk:                           # the end: a last line without its newline is a line too
                if pending and not pending.endswith(b"\n"):
                    pending += b"\n"
                if pending.count(b"\n") % 3:
                    raise ValueError("the paraphrase table is not made of three-line entries")
                if pending:
                    yield np.frombuffer(pending, dtype=np.uint8)
                return
            entry_ends = np.flatnonzero(np.frombuffer(pending, dtype=np.uint8) == 10)[2::3] + 1
            # a decompressed piece holds several blocks: cut at the entry ends nearest each multiple of block_bytes
            wanted = np.arange(block_bytes, len(pending) + block_bytes, block_bytes)
            cuts = np.unique(entry_ends[np.minimum(np.searchsorted(entry_ends, wanted), len(entry_ends) - 1)]) \
                if len(entry_ends) else entry_ends
            for lo, hi in zip(np.r_[0, cuts[:-1]].tolist(), cuts.tolist()):
                yield np.frombuffer(pending, dtype=np.uint8, count=hi - lo, offset=lo)
            pending = pending[int(cuts[-1]):] if len(cuts) else pending


def _byte_hashes(text: NDArray[np.uint8], start: NDArray[np.int64], length: NDArray[np.int64]
                 ) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """Two independent polynomial hashes of each byte string ``text[start:start + length]``: one step per byte
    position for all strings at once (the loop over strings replaced by one over positions), the strings taken
    longest first so that those still going are a prefix."""
    by_length = np.argsort(-length.astype(np.int32), kind="stable")
    first, size = start[by_length], length[by_length]
    h1 = np.zeros(len(start), dtype=np.uint64)
    h2 = np.zeros(len(start), dtype=np.uint64)
    still = len(size) - np.searchsorted(size[::-1], np.arange(int(size.max(initial=0))), side="right")  # length > k
    for k, n in enumerate(still.tolist()):
        byte = text[first[:n] + k].astype(np.uint64) + np.uint64(1)
        h1[:n] = h1[:n] * HASH_MULTIPLIER + byte
        h2[:n] = h2[:n] * _SECOND_MULTIPLIER + byte
    out1, out2 = np.empty_like(h1), np.empty_like(h2)
    out1[by_length], out2[by_length] = h1, h2
    return out1, out2


class _Vocabulary:
    """The table's words numbered in order of first appearance. A block's words are told apart in numpy by their
    length and two independent 64-bit hashes of their bytes (two different words would have to agree in all three);
    only each block's distinct words become Python objects (thousands, not the table's 30 million words)."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}

    def number(self, text: NDArray[np.uint8], start: NDArray[np.int64], end: NDArray[np.int64]) -> NDArray[np.int32]:
        """The word id of every word ``text[start:end]`` (in order), new words numbered as they first appear."""
        length = end - start
        h1, h2 = _byte_hashes(text, start, length)
        order = np.lexsort((length, h2, h1))
        new = np.r_[True, (np.diff(h1[order]) != 0) | (np.diff(h2[order]) != 0) | (np.diff(length[order]) != 0)] \
            if len(order) else np.zeros(0, dtype=bool)
        group = np.empty(len(order), dtype=np.int64)
        group[order] = np.cumsum(new) - 1
        first = np.sort(order[new])                   # a stable sort: each word's earliest occurrence, in order
        raw, ids = text.tobytes(), self.ids
        numbered = np.fromiter((ids.setdefault(raw[s:e], len(ids)) for s, e in zip(start[first].tolist(),
                                                                                   end[first].tolist())),
                               dtype=np.int32, count=len(first))
        word_of_group = np.empty(len(first), dtype=np.int32)
        word_of_group[group[first]] = numbered
        return word_of_group[group]


def _block_phrases(block: NDArray[np.uint8], vocabulary: _Vocabulary) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """A block's phrases in file order (each entry's first, then its second) as word ids, split at Java's
    StringTokenizer delimiters (space, tab, form feed; newlines end lines): (ids, words per phrase)."""
    newline = block == 10
    line = np.cumsum(newline, dtype=np.int32) - newline                  # the line of every byte
    in_phrase = (line % 3 != 0) & ~newline                               # line 0 of an entry: its probability
    is_word = in_phrase & (block != 32) & (block != 9) & (block != 12)
    edges = np.diff(is_word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    start, end = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    ids = vocabulary.number(block, start, end)
    n_lines = int(newline.sum())
    phrase_line = np.flatnonzero(np.arange(n_lines) % 3 != 0)
    words = np.bincount(line[start], minlength=n_lines)[phrase_line]
    return ids, words.astype(np.int32)


def _trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``): the blocks' many mid-sized numpy
    temporaries leave the heap fragmented, which held ~150 MB of freed memory in the process through the build.
    Nothing happens where the C library has no such call."""
    import ctypes

    try:        # the process's own symbols (libc among them): ctypes.util.find_library would start ldconfig
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


class _WideVocabulary(Exception):
    """More distinct words than the packing's bits per word can number."""


def _pack_phrases(ids: NDArray[np.int32], counts: NDArray[np.int32], bits: int) -> list[NDArray[np.uint64]]:
    """Each phrase's word ids packed into uint64 columns (id + 1 in ``bits`` bits per word, 0 past the phrase's
    end): equal columns <=> equal word sequences, exactly (no hash)."""
    per_col = 64 // bits
    keys = [np.zeros(len(counts), dtype=np.uint64) for _ in range(max(1, -(-int(counts.max(initial=0)) // per_col)))]
    ptr = np.cumsum(counts, dtype=np.int64) - counts
    for j in range(int(counts.max(initial=0))):
        has = np.flatnonzero(counts > j)
        col, shift = divmod(j, per_col)
        keys[col][has] |= (ids[ptr[has] + j].astype(np.uint64) + np.uint64(1)) << np.uint64(shift * bits)
    return keys


def _unpack_phrases(keys: list[NDArray[np.uint64]], counts: NDArray[np.integer], bits: int
                    ) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
    """:func:`_pack_phrases` undone: (word ids, pointer) of the phrases."""
    per_col, mask = 64 // bits, np.uint64((1 << bits) - 1)
    ptr = np.r_[0, np.cumsum(counts, dtype=np.int64)]
    ids = np.zeros(int(ptr[-1]), dtype=np.int32)
    for j in range(int(counts.max(initial=0))):
        has = np.flatnonzero(counts > j)
        col, shift = divmod(j, per_col)
        ids[ptr[has] + j] = ((keys[col][has] >> np.uint64(shift * bits)) & mask).astype(np.int32) - 1
    return ids, ptr


def _columns(blocks: list[list[NDArray[np.uint64]]]) -> list[NDArray[np.uint64]]:
    """The blocks' packed phrases as whole columns (blocks with fewer columns padded with zeros), each block's
    part freed as it is copied."""
    n_cols = max((len(b) for b in blocks), default=1)
    sizes = [len(b[0]) for b in blocks]
    out = []
    for c in range(n_cols):
        parts = []
        for b, size in zip(blocks, sizes):
            parts.append(b[c] if c < len(b) else np.zeros(size, dtype=np.uint64))
            if c < len(b):
                b[c] = np.zeros(0, dtype=np.uint64)          # a slice would keep the block's array alive
        out.append(np.concatenate([np.zeros(0, np.uint64), *parts]))
    return out


def _distinct(keys: list[NDArray[np.uint64]]) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """(first occurrence of each distinct key, in order of appearance; each occurrence's distinct number)."""
    order = np.lexsort(keys[::-1])
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for col in keys:                                            # one sorted column at a time (memory)
        sorted_col = col[order]
        same &= sorted_col[1:] == sorted_col[:-1]
        del sorted_col
    new = np.r_[True, ~same] if len(order) else np.zeros(0, dtype=bool)
    del same
    first = order[new]                                          # a stable sort: the earliest occurrence
    group = np.cumsum(new, dtype=np.int32) - 1                  # in sorted order
    del new
    by_appearance = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int32)
    rank[by_appearance] = np.arange(len(first), dtype=np.int32)
    number = np.empty(len(order), dtype=np.int32)
    number[order] = rank[group]
    return first[by_appearance], number


def _joined_words(words: list[bytes], ids: NDArray[np.int32], ptr: NDArray[np.int64], chunk: int = 1 << 16
                  ) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Each phrase's text (its words one space apart), concatenated, and the phrases' offsets into it. Chunks of
    phrases: no array of the text's size but the text itself."""
    word_len = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    word_text = np.frombuffer(b"".join(words), dtype=np.uint8)
    word_start = np.cumsum(word_len) - word_len
    counts = np.diff(ptr)
    phrase_bytes = np.zeros(len(counts), dtype=np.int64)
    for x in range(0, len(counts), chunk):           # bytes per phrase: its words and the spaces between them
        lo, hi = int(ptr[x]), int(ptr[min(x + chunk, len(counts))])
        c = counts[x:x + chunk]
        within = np.repeat(np.arange(len(c)), c)
        phrase_bytes[x:x + chunk] = np.bincount(within, weights=word_len[ids[lo:hi]], minlength=len(c)) \
            + np.maximum(c - 1, 0)
    offsets = np.r_[0, np.cumsum(phrase_bytes)]
    text = np.full(int(offsets[-1]), 32, dtype=np.uint8)
    for x in range(0, len(counts), chunk):           # each word's bytes copied to its place
        lo, hi = int(ptr[x]), int(ptr[min(x + chunk, len(counts))])
        c, w = counts[x:x + chunk], ids[lo:hi]
        phrase = np.repeat(np.arange(len(c)), c)
        rank = np.arange(len(w)) - (np.cumsum(c) - c)[phrase]               # the word's place in its phrase
        before = np.cumsum(word_len[w]) - word_len[w]                        # word bytes before it in the chunk
        first_word = (np.cumsum(c) - c)[phrase]
        out = offsets[x + phrase] + (before - before[first_word] if len(w) else before) + rank
        text[concat_ranges(out, word_len[w])] = word_text[concat_ranges(word_start[w], word_len[w])]
    return text, offsets


@dataclass(frozen=True)
class ParaphraseIndex:
    """The paraphrase table as arrays: words, distinct phrases (text, hash, always-kept flag) and the
    entries as (first phrase, second phrase) in file order."""

    words: dict[str, int]
    phrase_text: NDArray[np.uint8]        # distinct phrases, concatenated
    phrase_start: NDArray[np.int32]       # (phrases,) where each phrase's text starts and ends
    phrase_end: NDArray[np.int32]
    phrase_hash: NDArray[np.uint64]       # (phrases,) ascending: phrases are numbered in hash order
    phrase_always: NDArray[np.bool_]      # (phrases,) non-ASCII: never dropped
    entry_first: NDArray[np.int32]        # (entries,)
    entry_second: NDArray[np.int32]       # (entries,)
    max_words: int

    # -- building and caching ------------------------------------------------------------------------
    @classmethod
    def parse(cls, table: Path, block_bytes: int = 1 << 20) -> ParaphraseIndex:
        """Parse ``paraphrase-en.gz``: blocks of three lines (probability, which the jar ignores; phrase;
        paraphrase). Raises ValueError on anything the jar would read differently from this parser.

        The table (272 MB of text, 10.5 M phrases, 2.6 M distinct) is streamed in blocks of about ``block_bytes``
        of whole entries, and its phrases never become Python objects: words are found and hashed in numpy (only
        each block's distinct words are looked up in a dict), phrases are their word ids packed into uint64
        columns (16 bits a word; 32 for a vocabulary beyond 65,535 words), distinct by one sort."""
        for bits in (16, 32):
            try:
                return cls._parse_packed(Path(table), block_bytes, bits)
            except _WideVocabulary:
                continue
        raise ValueError("the paraphrase table has more than 2^32 distinct words")

    @classmethod
    def _parse_packed(cls, table: Path, block_bytes: int, bits: int) -> ParaphraseIndex:
        vocabulary = _Vocabulary()
        key_blocks, count_blocks, number_blocks = [], [], []
        for block in _entry_blocks(table, block_bytes):
            ids, counts = _block_phrases(block, vocabulary)
            if len(vocabulary.ids) >= 1 << bits:
                raise _WideVocabulary
            keys = _pack_phrases(ids, counts, bits)
            first, number = _distinct(keys)         # a block repeats its phrases 2.4 times: keep each once
            key_blocks.append([k[first] for k in keys])
            count_blocks.append(counts[first].astype(np.uint16 if counts.max(initial=0) < 1 << 16 else np.int32))
            number_blocks.append(number)
        counts = np.concatenate([np.zeros(0, np.uint16), *count_blocks])
        del count_blocks
        keys = _columns(key_blocks)
        del key_blocks
        _trim_heap()
        first, number = _distinct(keys)             # the blocks' phrases, distinct across blocks
        ids, ptr = _unpack_phrases([k[first] for k in keys], counts[first], bits)
        del keys, counts
        _trim_heap()
        offsets = np.cumsum([0] + [int(n.max(initial=-1)) + 1 for n in number_blocks])
        phrase_of = np.concatenate([np.zeros(0, np.int32), *(number[at + n] for at, n in zip(offsets.tolist(),
                                                                                            number_blocks))])
        del number_blocks, number
        return cls._from_phrases(list(vocabulary.ids), ids, ptr, phrase_of[0::2], phrase_of[1::2])

    @classmethod
    def _from_phrases(cls, words: list[bytes], ids: NDArray[np.int32], ptr: NDArray[np.int64],
                      first: NDArray[np.int32], second: NDArray[np.int32]) -> ParaphraseIndex:
        """The index of the distinct phrases (word ids ``ids[ptr[k]:ptr[k+1]]``, in order of appearance) and the
        entries' phrase numbers: phrases hashed over their word ids and renumbered in hash order."""
        counts = np.diff(ptr)
        non_ascii = np.fromiter(map(bytes.isascii, words), dtype=bool, count=len(words)) == 0
        always = (counts == 0)
        always[counts > 0] |= np.logical_or.reduceat(non_ascii[ids], ptr[:-1][counts > 0]) if len(ids) else False
        hashes = phrase_hashes(ids, ptr)
        order = np.argsort(hashes, kind="stable")  # renumber phrases in hash order (a fast sorted lookup)
        hashes, always = hashes[order], always[order]
        text, offsets = _joined_words(words, ids, ptr)
        del ids, ptr
        starts, ends = offsets[:-1][order].astype(np.int32), offsets[1:][order].astype(np.int32)
        del offsets
        renumber = np.empty(len(order), dtype=np.int32)
        renumber[order] = np.arange(len(order), dtype=np.int32)
        return cls({w.decode("utf-8"): i for i, w in enumerate(words)}, text, starts, ends, hashes, always,
                   renumber[first], renumber[second], int(counts.max(initial=0)))

    @staticmethod
    def cache_path(table: Path, cache_dir: Path | None = None) -> Path:
        """The folder holding the index of ``table``, keyed by the table's content: every installation with the
        same data shares one index (a size / time key made each virtual environment rebuild it)."""
        return (cache_dir or java.cache_dir()) / "meteor" / f"paraphrase-v{FORMAT}-{_digest_file(Path(table))[:20]}"

    @classmethod
    def load(cls, table: Path, cache_dir: Path | None = None) -> ParaphraseIndex:
        """The cached index of ``table`` (memory-mapped ``.npy`` files), built and cached on first use; an
        unwritable cache directory only costs the rebuild. What is read is checked against the digests written
        with it (a damaged or edited index would silently change METEOR): a mismatch rebuilds it."""
        path = cls.cache_path(table, cache_dir)
        if path.is_dir():
            try:
                return cls._read(path)
            except (OSError, ValueError, KeyError):
                shutil.rmtree(path, ignore_errors=True)   # damaged: rebuild it
        index = cls.parse(table)
        try:
            index._save(path)
        except OSError:
            pass
        return index

    @classmethod
    def _read(cls, path: Path) -> ParaphraseIndex:
        manifest = json.loads((path / "digests.json").read_text(encoding="utf-8"))
        for name in (*_ARRAYS, "words", "max_words"):
            if _digest_file(path / f"{name}.npy") != manifest.get(name):
                raise ValueError(f"{name}.npy of the paraphrase index in {path} does not match its digest")
        arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS}
        if not (len(arrays["entry_first"]) == len(arrays["entry_second"])
                and len(arrays["phrase_hash"]) == len(arrays["phrase_start"]) == len(arrays["phrase_end"])
                == len(arrays["phrase_always"])):
            raise ValueError(f"inconsistent paraphrase index in {path}")
        words = bytes(np.load(path / "words.npy", allow_pickle=False)).decode("utf-8").split("\n")
        return cls({w: i for i, w in enumerate(words)}, **arrays,
                   max_words=int(np.load(path / "max_words.npy", allow_pickle=False)))

    def _save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=".building-"))
        try:
            for name in _ARRAYS:
                np.save(tmp / f"{name}.npy", getattr(self, name))
            np.save(tmp / "words.npy", np.frombuffer("\n".join(self.words).encode("utf-8"), dtype=np.uint8))
            np.save(tmp / "max_words.npy", np.int64(self.max_words))
            digests = {name: _digest_file(tmp / f"{name}.npy") for name in (*_ARRAYS, "words", "max_words")}
            (tmp / "digests.json").write_text(json.dumps(digests), encoding="utf-8")
            os.rename(tmp, path)                          # atomic; a concurrent builder that won keeps its copy
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        # other indexes are left alone: they may belong to other installations (another jar, another vlbench)

    # -- reducing --------------------------------------------------------------------------------------
    def kept_entries(self, corpus: Sequence[str]) -> NDArray[np.int64] | None:
        """Entries (in file order) whose two phrases both occur in ``corpus`` (normalised lines as the
        jar sees them before lowercasing), or None when the reduction cannot be trusted for it."""
        if any("\u0130" in line for line in corpus):
            return None                               # Java may lowercase it to ASCII 'i', Python does not
        lookup = self.words.get
        lines = [[lookup(w, -1) for w in _JAVA_SPACE.split(line.lower()) if w] for line in corpus]
        return self._kept(_ngram_hashes(lines, self.max_words))

    def kept_entries_for_ids(self, ids: NDArray[np.int64], ptr: NDArray[np.int64]) -> NDArray[np.int64]:
        """:meth:`kept_entries` for lines already lowercased and split: word ids of this table's vocabulary
        (-1 outside it), line k being ``ids[ptr[k]:ptr[k+1]]``."""
        line_of = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        flat = np.full(len(ids) + len(ptr) - 1, -1, dtype=np.int64)
        flat[np.arange(len(ids)) + line_of] = ids     # a -1 after every line
        return self._kept(_ngram_hashes_flat(flat, self.max_words))

    def _kept(self, grams: NDArray[np.uint64], block: int = 1 << 20) -> NDArray[np.int64]:
        """Entries whose two phrases are always kept or among ``grams`` (sorted). Blocks of the (memory-
        mapped) arrays at a time, so the temporaries stay a few MB."""
        present = np.array(self.phrase_always, dtype=bool)
        if len(grams):  # both sides sorted: one cache-friendly merge
            for x in range(0, len(present), block):
                hashes = self.phrase_hash[x:x + block]
                at = np.minimum(np.searchsorted(grams, hashes), len(grams) - 1)
                present[x:x + block] |= grams[at] == hashes
        kept = [x + np.flatnonzero(present[self.entry_first[x:x + block]] & present[self.entry_second[x:x + block]])
                for x in range(0, len(self.entry_first), block)]
        for mapped in (self.phrase_hash, self.phrase_always, self.entry_first, self.entry_second):
            _release(mapped)
        return np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)

    def phrase_words(self, phrase: int) -> list[str]:
        """The words of phrase number ``phrase`` (as the jar's StringTokenizer splits them)."""
        return self.phrases_words(np.asarray([phrase]))[0]

    def phrases_words(self, phrases: NDArray[np.int64]) -> list[list[str]]:
        """The words of each of these phrases: one gather of their bytes instead of a slice each."""
        start, end = self.phrase_start[phrases].astype(np.int64), self.phrase_end[phrases].astype(np.int64)
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
                        for a, b in zip(self.entry_first[entries].tolist(), self.entry_second[entries].tolist()))
        Path(path).write_bytes(gzip.compress(body, compresslevel=1))

