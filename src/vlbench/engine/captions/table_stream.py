"""METEOR's paraphrase table (``paraphrase-en.gz``) streamed: inflated in pieces, cut into blocks of
whole three-line entries (probability, phrase, paraphrase), each block's phrases found as (start,
length) in its bytes with their words one space apart, as the jar's tokenizer splits them.
"""

from __future__ import annotations

import contextlib
import re
import types
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["ZLIB", "inflated", "entry_blocks", "block_phrases"]

#: Java's StringTokenizer separators within a line (the jar splits phrases into words with it)
_JAVA_SPACE_BYTES = re.compile(rb"[ \t\f]+")
#: zlib, or ISA-L's drop-in module where its wheel is installed: the same inflate and CRC-32
#: results, faster (a large part of the index build's CPU with zlib)
ZLIB: types.ModuleType = zlib
with contextlib.suppress(ImportError):
    from isal import isal_zlib as ZLIB


def inflated(table: Path, read_bytes: int = 1 << 20) -> Iterator[bytes]:
    """The gzip'd table decompressed as a stream of pieces (of ``read_bytes`` of the file each)."""
    inflate = ZLIB.decompressobj(wbits=31)         # gzip framing
    with open(table, "rb") as fh:
        while chunk := fh.read(read_bytes):
            yield inflate.decompress(chunk)
    yield inflate.flush()


def entry_blocks(table: Path, block_bytes: int) -> Iterator[tuple[bytes, NDArray[np.int64]]]:
    """The gzip'd table decompressed as a stream, in blocks of at least ``block_bytes`` (but the
    last) of whole three-line entries, each with the positions of its newlines (it ends with one; a
    last line without one gets it)."""
    pieces: list[bytes] = []
    size = 0
    for piece in inflated(table, max(1, block_bytes // 4)):
        if b"\r" in piece:
            raise ValueError("carriage return in the paraphrase table (Java would split lines "
                             "there)")
        pieces.append(piece)
        size += len(piece)
        if size < block_bytes:
            continue
        # the pieces joined once (adding each to the pending bytes copied them again and again)
        pending = b"".join(pieces)
        newline = np.flatnonzero(np.frombuffer(pending, dtype=np.uint8) == 10)
        whole = len(newline) - len(newline) % 3                  # lines of whole entries
        cut = int(newline[whole - 1]) + 1 if whole else 0
        if whole:
            yield pending[:cut], newline[:whole]
        pieces, size = [pending[cut:]], len(pending) - cut
    # the end: a last line without its newline is a line too
    pending = b"".join(pieces)
    if pending and not pending.endswith(b"\n"):
        pending += b"\n"
    newline = np.flatnonzero(np.frombuffer(pending, dtype=np.uint8) == 10)
    if len(newline) % 3:
        raise ValueError("the paraphrase table is not made of three-line entries")
    if pending:
        yield pending, newline


def canonical(raw: bytes) -> bytes:
    """A block's lines with their words one space apart, as Java's StringTokenizer splits them
    (space, tab, form feed): what the jar compares. Only blocks holding another separator, a doubled
    or an edge space come here."""
    return b"\n".join(
        b" ".join(w for w in _JAVA_SPACE_BYTES.split(line) if w) for line in raw.split(b"\n")
    )



def block_phrases(raw: bytes, newline: NDArray[np.int64]) -> tuple[NDArray[np.uint8],
                                                                   NDArray[np.int64],
                                                                   NDArray[np.int64]]:
    """A block of whole entries (line 0 of each: the probability, which the jar ignores; lines 1 and
    2: the phrases) and its newlines' positions; its words made one space apart: its bytes, and each
    phrase's start and length in file order (each entry's first, then its second)."""
    block = np.frombuffer(raw, dtype=np.uint8)
    starts = np.r_[0, newline[:-1] + 1]
    # (numpy's pairwise test: bytes' `b"  " in raw` is slower on these spaced texts)
    space = block == 32
    # a space after a space or at a line's start or end is not one word separator
    if (
        b"\t" in raw
        or b"\x0c" in raw
        or (space[1:] & space[:-1]).any()
        or space[starts[starts < newline]].any()
        or space[newline[newline > starts] - 1].any()
    ):
        raw = canonical(raw)
        return block_phrases(raw, np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10))
    # lines 1 and 2
    first, end = starts.reshape(-1, 3)[:, 1:].ravel(), newline.reshape(-1, 3)[:, 1:].ravel()
    return block, first, end - first
