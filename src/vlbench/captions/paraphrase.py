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

The table is parsed once into an index in the user cache directory (~20 s, ~150 MB); every call
then takes a fraction of a second to write the reduced table (tens of thousands of entries).
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, count
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from . import java

__all__ = ["HASH_MULTIPLIER", "ParaphraseIndex", "phrase_hashes"]

#: Bump when the index layout changes: older files are then rebuilt.
FORMAT = 5
#: Multiplier of the polynomial hash over word ids (odd, so every power is invertible mod 2**64).
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: Java's StringTokenizer delimiters, which the jar uses to split phrases and sentences into words.
_JAVA_SPACE = re.compile(r"[ \t\n\r\f]+")
#: The index's arrays, one ``.npy`` file each in its cache folder.
_ARRAYS = ("phrase_text", "phrase_start", "phrase_end", "phrase_hash", "phrase_always", "entry_first", "entry_second")


def phrase_hashes(ids: NDArray[np.int64], ptr: NDArray[np.int64]) -> NDArray[np.uint64]:
    """Hash of every word-id sequence ``ids[ptr[i]:ptr[i+1]]``: sum of (id+1) * P**(n-1-k), mod 2**64."""
    lengths = np.diff(ptr)
    out = np.zeros(len(lengths), dtype=np.uint64)
    codes = ids.astype(np.uint64) + np.uint64(1)
    for k in range(int(lengths.max(initial=0))):
        has = lengths > k
        out[has] = out[has] * HASH_MULTIPLIER + codes[ptr[:-1][has] + k]
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


def _entry_blocks(table: Path, block_bytes: int) -> Iterator[tuple[list[bytes], bool]]:
    """The gzip'd table's lines, decompressed as a stream, in blocks of whole three-line entries, each with whether
    its phrases need reading word by word (:func:`_needs_canonical`, checked on the text before it is split)."""
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
            canonical = _needs_canonical(pending)     # the carried part may make a clean block slow, never wrong
            lines = pending.split(b"\n")
            if not chunk:                           # the end: a last line without its newline is a line too
                if lines and lines[-1] == b"":
                    lines.pop()
                if len(lines) % 3:
                    raise ValueError("the paraphrase table is not made of three-line entries")
                if lines:
                    yield lines, canonical
                return
            whole = (len(lines) - 1) // 3 * 3       # the last element is an unfinished line
            pending = b"\n".join(lines[whole:])
            if whole:
                yield lines[:whole], canonical


def _dense(tickets: Iterable[int], n: int) -> NDArray[np.int32]:
    """ticket -> its rank among ``tickets`` (given in insertion order): dense numbers 0..n-1 in that order."""
    issued = np.fromiter(tickets, dtype=np.int64, count=n)
    out = np.zeros(int(issued.max(initial=-1)) + 1, dtype=np.int32)
    out[issued] = np.arange(n, dtype=np.int32)
    return out


def _phrase_columns(lines: list[bytes], canonical: bool) -> tuple[list[bytes], list[bytes]]:
    """A block's first phrases and second phrases, each as the jar reads its words (one space apart)."""
    if canonical:
        return [_canonical_words(s) for s in lines[1::3]], [_canonical_words(s) for s in lines[2::3]]
    return lines[1::3], lines[2::3]


def _needs_canonical(text: bytes) -> bool:
    """Whether some line of ``text`` is written with other separators than single spaces (tabs, form feeds,
    doubled, leading or trailing spaces); a probability line that does only makes its block take the slow path."""
    return text.startswith(b" ") or text.endswith(b" ") or any(sep in text for sep in (b"\t", b"\f", b"  ", b"\n ",
                                                                                         b" \n"))


def _canonical_words(s: bytes) -> bytes:
    """A phrase's words as Java's StringTokenizer splits them, one space apart."""
    return b" ".join(w for w in re.split(rb"[ \t\f]+", s) if w)


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
    def parse(cls, table: Path, block_bytes: int = 1 << 22) -> ParaphraseIndex:
        """Parse ``paraphrase-en.gz``: blocks of three lines (probability, which the jar ignores; phrase;
        paraphrase). Raises ValueError on anything the jar would read differently from this parser.

        The table (272 MB of text in 16 M lines) is streamed in blocks of about ``block_bytes`` of whole entries:
        memory holds one block and the 2.6 M distinct phrases, not the whole text and a list of its lines (2 GB)."""
        distinct: dict[bytes, int] = {}
        tickets = count()       # a new phrase keeps the ticket it was offered: unique, not dense (renumbered below)
        firsts, seconds = [np.zeros(0, np.int32)], [np.zeros(0, np.int32)]
        for lines, canonical in _entry_blocks(Path(table), block_bytes):
            for column, out in zip(_phrase_columns(lines, canonical), (firsts, seconds)):
                # map, not a generator: no Python frame per phrase (10.5 M of them)
                out.append(np.fromiter(map(distinct.setdefault, column, tickets), dtype=np.int32, count=len(column)))
        dense = _dense(distinct.values(), len(distinct))
        phrases = list(distinct)
        del distinct
        first = dense[np.concatenate(firsts)]
        del firsts
        second = dense[np.concatenate(seconds)]
        del seconds, dense
        return cls._from_phrases(phrases, first, second)

    @classmethod
    def _from_phrases(cls, phrases: list[bytes], first: NDArray[np.int32], second: NDArray[np.int32]
                      ) -> ParaphraseIndex:
        """The index of distinct ``phrases`` and the entries' phrase numbers: words numbered, phrases hashed over
        their word ids and renumbered in hash order. ``phrases`` is emptied on the way (its bytes are the largest
        thing held)."""
        words: dict[bytes, int] = {}
        tokens = chain.from_iterable(p.split(b" ") if p else () for p in phrases)
        tickets = np.fromiter(map(words.setdefault, tokens, count()), dtype=np.int64)
        ids = _dense(words.values(), len(words))[tickets].astype(np.int64)
        del tickets
        words = dict(zip(words, range(len(words))))     # ids in first-appearance order (the cache stores that order)
        counts = np.fromiter((p.count(b" ") + 1 if p else 0 for p in phrases), dtype=np.int64, count=len(phrases))
        ptr = np.concatenate([[0], np.cumsum(counts)])
        lengths = np.fromiter(map(len, phrases), dtype=np.int64, count=len(phrases))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        always = np.fromiter((not p.isascii() or not p for p in phrases), dtype=bool, count=len(phrases))
        text = np.frombuffer(b"".join(phrases), dtype=np.uint8)
        phrases.clear()
        hashes = phrase_hashes(ids, ptr)
        del ids
        order = np.argsort(hashes, kind="stable")  # renumber phrases in hash order (a fast sorted lookup)
        renumber = np.empty(len(order), dtype=np.int32)
        renumber[order] = np.arange(len(order), dtype=np.int32)
        starts, ends = offsets[:-1][order].astype(np.int32), offsets[1:][order].astype(np.int32)
        return cls({w.decode("utf-8"): i for w, i in words.items()}, text, starts, ends, hashes[order],
                   always[order], renumber[first], renumber[second],
                   int(counts.max(initial=0)))

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

