"""A disk cache for the work done on a split's reference texts, keyed by their content (#32).

A caption benchmark scores every model against the same references, and the references' share of a
run (PTB tokenization of 45,000 texts, METEOR's normalisation and word data) is the same each time.
Each result is stored once per (kind, code, texts) under ``<cache dir>/texts/`` and read back on the
next run:

- the key is a SHA-256 of the kind, :data:`FORMAT`, a digest of the code that computed the value
  (its source files and data files: an edit or an upgrade never reads an older result) and the texts
  themselves;
- a file holds a header (format, key, CRC-32 and length of the payload), the value as JSON and numpy
  arrays as raw bytes (a dtype whitelist: nothing is unpickled): a damaged or foreign file is
  recomputed, never trusted;
- writes are atomic (a temporary file renamed); at most :data:`KEEP` results per kind are kept, the
  least recently used go; an unwritable cache only costs the computation.

Only the library's own files under the cache directory are ever written or deleted.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from numpy.typing import NDArray

from . import java

__all__ = ["FORMAT", "KEEP", "MIN_TEXTS", "Entry", "cached", "code_digest", "folder"]

#: The file layout; part of every key.
FORMAT = 1
#: Results kept per kind (each a few MB for a whole split).
KEEP = 8
#: Fewer texts than this are computed, not cached (quick anyway; keeps small runs from filling the
#: cache).
MIN_TEXTS = 1000

#: A stored result: a JSON value and numpy arrays.
Entry = tuple[Any, tuple[NDArray[Any], ...]]
#: The array types an entry may hold (never object arrays: nothing in a cache file is unpickled).
_DTYPES = frozenset({"<u8", "<i8", "<u4", "<i4", "<f8", "|u1", "|b1"})


def code_digest(paths: Iterable[str | os.PathLike[str]]) -> str:
    """SHA-1 over the files' paths, sizes and contents of small files (sources) or sizes and
    modification times of large ones (jars): what the cached values were computed by."""
    h = hashlib.sha1()
    for p in map(Path, paths):
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0".encode())
        h.update(p.read_bytes() if st.st_size < 1 << 20 else str(st.st_mtime_ns).encode())
    return h.hexdigest()


def folder() -> Path:
    """Where the results are kept: ``texts/`` in the caption backends' cache directory
    (``$VLBENCH_CACHE_DIR``)."""
    return java.cache_dir() / "texts"


def _key(kind: str, code: str, texts: Sequence[str]) -> str:
    h = hashlib.sha256(f"{kind}\0{FORMAT}\0{code}\0".encode())
    h.update(orjson.dumps(list(texts)))        # JSON: no separator a text could forge
    return h.hexdigest()


def _encode(entry: Entry) -> list[memoryview | bytes]:
    """The payload's parts: a JSON line (the value, each array's dtype and shape), then the arrays'
    bytes (kept apart: no joined copy of many MB)."""
    value, arrays = entry
    arrays = tuple(np.ascontiguousarray(a) for a in arrays)
    if any(a.dtype.str not in _DTYPES for a in arrays):
        raise TypeError(f"a cached array must have one of the types {sorted(_DTYPES)}")
    head = orjson.dumps({"value": value, "arrays": [[a.dtype.str, list(a.shape)] for a in arrays]})
    return [head, b"\n", *(a.data.cast("B") for a in arrays)]      # JSON holds no raw newline


def _decode(mapped: mmap.mmap, start: int) -> Entry:
    """The entry whose payload starts at ``start``; its arrays are read-only views of the file (no
    copy)."""
    cut = mapped.find(b"\n", start)
    if cut < 0:
        raise ValueError("no JSON line")
    payload = memoryview(mapped)
    meta = orjson.loads(payload[start:cut])
    arrays, at = [], cut + 1
    for dtype, shape in meta["arrays"]:
        if dtype not in _DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ValueError("unexpected array")
        count = int(np.prod(shape, dtype=np.int64))
        # ValueError past the end
        arrays.append(np.frombuffer(payload, dtype, count, at).reshape(shape))
        at += count * np.dtype(dtype).itemsize
    if at != len(payload):
        raise ValueError("trailing bytes")
    return meta["value"], tuple(arrays)


def _read(path: Path, key: str) -> Entry:
    """The entry stored under ``key`` in ``path``; ValueError when the file is not exactly that. The
    file is memory-mapped: no transient copy of it on the heap (a freed block of many MB raises
    glibc's mmap threshold, and the heap then keeps more of the run's later arrays)."""
    with path.open("rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)    # ValueError for an empty file
    end = mapped.find(b"\n")
    fields = mapped[:max(end, 0)].decode("ascii", errors="replace").split()
    if end < 0 or fields[:3] != ["vlbench-textcache", str(FORMAT), key] or len(fields) != 5:
        raise ValueError("foreign header")
    size = len(mapped) - end - 1
    if int(fields[4]) != size or f"{zlib.crc32(memoryview(mapped)[end + 1:]):08x}" != fields[3]:
        raise ValueError("damaged payload")
    return _decode(mapped, end + 1)


def _write(where: Path, name: str, key: str, entry: Entry) -> None:
    parts = _encode(entry)
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    where.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".writing-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(
                f"vlbench-textcache {FORMAT} {key} {crc:08x} {sum(map(len, parts))}\n".encode(
                    "ascii"
                )
            )
            f.writelines(parts)
        os.replace(tmp, where / name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _evict(where: Path, kind: str) -> None:
    """Keep the :data:`KEEP` most recently used results of ``kind``."""
    files = sorted(where.glob(f"{kind}-*.bin"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[KEEP:]:
        old.unlink(missing_ok=True)


def cached(kind: str, code: str, texts: Sequence[str], compute: Callable[[], Entry],
           valid: Callable[[Any, tuple[NDArray[Any], ...]], bool]) -> Entry:
    """``compute()``, or the entry a previous run stored for the same ``kind``, ``code`` and
    ``texts``.

    An entry is a JSON value (lists, strings, numbers) and numpy arrays of plain numbers (bulk
    numbers without a JSON list each); ``valid(value, arrays)`` checks a stored entry's shape before
    it is used (one that fails is recomputed)."""
    if len(texts) < MIN_TEXTS:
        return compute()
    key = _key(kind, code, texts)
    where = folder()
    path = where / f"{kind}-{key[:40]}.bin"
    try:
        entry = _read(path, key)
        if valid(*entry):
            os.utime(path)                  # recently used
            return entry
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        pass
    entry = compute()
    try:
        _write(where, path.name, key, entry)
        _evict(where, kind)
    except OSError:
        pass
    return entry
