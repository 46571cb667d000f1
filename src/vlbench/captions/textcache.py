"""A disk cache for the work done on a split's reference texts, keyed by their content (#32).

A caption benchmark scores every model against the same references, and the references' share of a run
(PTB tokenization of 45,000 texts, METEOR's normalisation and word data) is the same each time. Each result
is stored once per (kind, code, texts) under ``<cache dir>/texts/`` and read back on the next run:

- the key is a SHA-256 of the kind, :data:`FORMAT`, a digest of the code that computed the value (its source
  files and data files: an edit or an upgrade never reads an older result) and the texts themselves;
- a file holds a header (format, key, CRC-32 and length of the payload) and the value as JSON: a damaged or
  foreign file is recomputed, never trusted;
- writes are atomic (a temporary file renamed); at most :data:`KEEP` results per kind are kept, the least
  recently used go; an unwritable cache only costs the computation.

Only the library's own files under the cache directory are ever written or deleted.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

from . import java

__all__ = ["FORMAT", "KEEP", "MIN_TEXTS", "cached", "code_digest", "folder"]

#: The file layout; part of every key.
FORMAT = 1
#: Results kept per kind (each a few MB for a whole split).
KEEP = 8
#: Fewer texts than this are computed, not cached (quick anyway; keeps small runs from filling the cache).
MIN_TEXTS = 1000

T = TypeVar("T")


def code_digest(paths: Iterable[str | os.PathLike[str]]) -> str:
    """SHA-1 over the files' paths, sizes and contents of small files (sources) or sizes and modification
    times of large ones (jars): what the cached values were computed by."""
    h = hashlib.sha1()
    for p in map(Path, paths):
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0".encode())
        h.update(p.read_bytes() if st.st_size < 1 << 20 else str(st.st_mtime_ns).encode())
    return h.hexdigest()


def folder() -> Path:
    """Where the results are kept: ``texts/`` in the caption backends' cache directory (``$VLBENCH_CACHE_DIR``)."""
    return java.cache_dir() / "texts"


def _key(kind: str, code: str, texts: Sequence[str]) -> str:
    h = hashlib.sha256(f"{kind}\0{FORMAT}\0{code}\0".encode())
    h.update(orjson.dumps(list(texts)))        # JSON: no separator a text could forge
    return h.hexdigest()


def _read(path: Path, key: str) -> Any:
    """The value stored under ``key`` in ``path``; ValueError when the file is not exactly that."""
    data = path.read_bytes()
    header, _, payload = data.partition(b"\n")
    fields = header.decode("ascii", errors="replace").split()
    if fields[:3] != ["vlbench-textcache", str(FORMAT), key] or len(fields) != 5:
        raise ValueError("foreign header")
    if int(fields[4]) != len(payload) or f"{zlib.crc32(payload):08x}" != fields[3]:
        raise ValueError("damaged payload")
    return orjson.loads(payload)


def _write(where: Path, name: str, key: str, value: Any) -> None:
    payload = orjson.dumps(value)
    where.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".writing-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(f"vlbench-textcache {FORMAT} {key} {zlib.crc32(payload):08x} {len(payload)}\n".encode("ascii"))
            f.write(payload)
        os.replace(tmp, where / name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _evict(where: Path, kind: str) -> None:
    """Keep the :data:`KEEP` most recently used results of ``kind``."""
    files = sorted(where.glob(f"{kind}-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[KEEP:]:
        old.unlink(missing_ok=True)


def cached(kind: str, code: str, texts: Sequence[str], compute: Callable[[], T],
           valid: Callable[[Any], bool]) -> T:
    """``compute()``, or the value a previous run stored for the same ``kind``, ``code`` and ``texts``.

    ``valid`` checks a stored value's shape before it is used (a value that fails is recomputed); values are
    JSON (lists, strings, numbers), as ``compute`` must return them."""
    if len(texts) < MIN_TEXTS:
        return compute()
    key = _key(kind, code, texts)
    where = folder()
    path = where / f"{kind}-{key[:40]}.json"
    try:
        value = _read(path, key)
        if valid(value):
            os.utime(path)                  # recently used
            return value
    except (OSError, ValueError, UnicodeDecodeError, orjson.JSONDecodeError):
        pass
    value = compute()
    try:
        _write(where, path.name, key, value)
        _evict(where, kind)
    except OSError:
        pass
    return value
