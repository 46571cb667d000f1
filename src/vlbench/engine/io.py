"""Reading and writing user files: JSON / JSON.gz with a size bound, regular files only,
destinations checked before the work and written atomically; Arrow columns as numpy arrays."""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import FormatError

__all__ = ["read_json", "json_values_bound", "require_file", "check_output", "write_text_atomic",
           "process_alive",
           "arrow_to_numpy", "arrow_codes", "MAX_JSON_BYTES", "new_file_mode",
           "write_parquet_atomic"]

#: Upper bound on the (decompressed) size of a JSON file we agree to parse.
MAX_JSON_BYTES = 2 * 1024**3


def json_values_bound(chunk: bytes) -> int:
    """An upper bound on the JSON values (numbers, strings, literals, arrays, objects) that start in
    ``chunk``: each one but the first follows a ',', '[' or '{' (counting those inside strings too
    only raises the bound)."""
    return chunk.count(b",") + chunk.count(b"[") + chunk.count(b"{")


def _too_large(path: Path, max_bytes: int) -> FormatError:
    return FormatError(f"the file is larger than {max_bytes:,} bytes (decompressed)",
                       file=str(path), fix="split it, or raise the limit with max_bytes=")


def _read_bytes(path: Path, max_bytes: int, max_values: int | None = None) -> bytes:
    """The file's (decompressed) bytes, read in chunks so that a limit stops the reading, not the
    parsing. A plain file without a value limit is sized first and read in one call (no list of
    chunks joined: one copy of the file less)."""
    if path.suffix != ".gz" and max_values is None:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > max_bytes:
                raise _too_large(path, max_bytes)
            data = fh.read()
        if len(data) > max_bytes:          # it grew while being read
            raise _too_large(path, max_bytes)
        return data
    parts, size, values = [], 0, 1
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh:
        while chunk := fh.read(min(1 << 22, max_bytes + 1 - size)):
            parts.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(path, max_bytes)
            values += json_values_bound(chunk) if max_values is not None else 0
            if max_values is not None and values > max_values:
                raise FormatError(f"the file holds more than {max_values:,} JSON values (numbers, "
                                  "strings, lists, objects)", file=str(path),
                                  fix="keep fewer predictions (e.g. the best 100 boxes per image), "
                                      "or score it with vlbench on your own machine")
    return b"".join(parts)


def require_file(path: str | os.PathLike, what: str = "file") -> Path:
    """``path`` as a Path if it is an existing regular file (a FIFO or device would hang or never
    end)."""
    p = Path(path)
    if not p.exists():
        raise FormatError(f"the {what} does not exist", file=str(p), fix="check the path")
    if p.is_dir():
        raise FormatError(f"expected a {what} but found a folder", file=str(p),
                          fix="pass the file inside it")
    if not p.is_file():
        raise FormatError(f"the {what} is not a regular file (a pipe, socket or device)",
                          file=str(p), fix="save the data to a file and pass that")
    return p


#: names a new folder is not given (each names a file of the kind this project writes)
_FILE_SUFFIXES = frozenset({".csv", ".json", ".jsonl", ".md", ".parquet", ".txt", ".yaml", ".yml"})


def check_output(path: str | os.PathLike, what: str = "output", *, folder: bool = False) -> Path:
    """Check before the work that ``path`` (a file, or a folder with ``folder``) can be written: no
    regular file on its way, not a folder where a file is meant, a writable existing ancestor.
    Creates nothing."""
    p = Path(path)
    if not folder and p.is_dir():
        raise FormatError(f"the {what} path is a folder", file=str(p),
                          fix="name a file, e.g. result.json")
    if folder and p.exists() and not p.is_dir():
        raise FormatError(f"the {what} is a file", file=str(p), fix="name a folder")
    if folder and not p.exists() and p.suffix.lower() in _FILE_SUFFIXES:
        # `--csv tables.csv` would make a folder named tables.csv holding a file per table
        raise FormatError(f"the {what} is a folder, and {p.name} names a file", file=str(p),
                          fix=f"name a folder, e.g. {p.with_suffix('')}")
    ancestor = p.parent if not folder or not p.exists() else p
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise FormatError(f"cannot write the {what}: {ancestor} is a file, not a folder",
                          file=str(p), fix="choose a path whose folders are folders")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise FormatError(f"cannot write the {what}: no write permission in {ancestor}",
                          file=str(p), fix="choose a writable folder")
    return p


def new_file_mode() -> int:
    """The mode a new file gets here: 0o666 less the process umask (read from /proc, else swapped in
    and out)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0 asks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:         # another user's process
        return True
    return True


def _replace_atomically(path: str | os.PathLike, write: Callable[[str], None], what: str) -> Path:
    """``write(temporary path)`` next to ``path``, then rename it over ``path`` (never half a file).
    The file keeps the mode of the file it replaces, or gets the mode of any new file (the temporary
    file's 0600 would make results unreadable to the user's group)."""
    import stat
    import tempfile

    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(p.stat().st_mode) if p.is_file() else new_file_mode()
        # left by a writer killed before its rename
        for stale in p.parent.glob(f".{p.name}.*.tmp"):
            pid = stale.name[len(p.name) + 2:].split(".")[0]
            if pid.isdigit() and not process_alive(int(pid)):
                stale.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
        os.close(fd)
        try:
            write(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise FormatError(f"cannot write the {what} ({exc.strerror or exc})", file=str(p),
                          fix="free disk space or choose another path") from None
    return p


def write_text_atomic(path: str | os.PathLike, text: str, what: str = "output") -> Path:
    """Write ``text`` (UTF-8) to ``path`` as :func:`_replace_atomically` does."""
    def write(tmp: str) -> None:
        Path(tmp).write_text(text, encoding="utf-8")
    return _replace_atomically(path, write, what)


def read_json(path: str | os.PathLike, *, max_bytes: int = MAX_JSON_BYTES,
              max_values: int | None = None, what: str = "file", typed: Any = None) -> Any:
    """Parse a ``.json`` or ``.json.gz`` file; any failure is a :class:`FormatError` naming the
    file. The limits (decompressed bytes, JSON values as bounded by :func:`json_values_bound`) are
    checked while reading.

    ``typed``: a msgspec type (say ``list[SomeStruct]``) the file is expected to match. When it
    does, the value comes back decoded as that type, with no dict per object (msgspec's typed
    decoding: half the whole-process time of orjson's dicts on a 200,000-detection results file,
    ``bench/json_decoders.py``); when it does not (a missing key, another type, NaN), the file is
    parsed as without ``typed``, so that the caller's checks name the entry at fault. A caller tells
    the two apart by the type of what it gets."""
    p = require_file(path, what)
    try:
        data = _read_bytes(p, max_bytes, max_values)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise FormatError(f"cannot read the {what} ({exc})", file=str(p)) from None
    # the cyclic GC would rescan the growing object graph again and again (its gain:
    # bench/MACHINERY.md)
    with _gc_paused():
        if typed is not None:
            import msgspec

            try:
                return msgspec.json.decode(data, type=typed)
            except (msgspec.ValidationError, msgspec.DecodeError):
                # not the expected shape: read it the general way
                pass
        try:
            import orjson  # faster than json on million-entry prediction files

            return orjson.loads(data)
        except ImportError:
            pass
        except orjson.JSONDecodeError:
            # NaN / Infinity (valid for Python's json) or a real error: let json decide and explain
            pass
        return _stdlib_loads(data, p, what)


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic GC while parsing, in the main thread only: the switch is process-wide, and
    worker threads (a Space serving two requests) would turn it on and off under each other."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _stdlib_loads(data: bytes, p: Path, what: str) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        raise FormatError(f"the {what} nests arrays or objects too deeply to be read", file=str(p),
                          fix="no benchmark file nests more than a few levels: check how it was "
                              "written") from None
    except UnicodeDecodeError:
        raise FormatError(
            f"the {what} is not UTF-8 text", file=str(p), fix="save it as UTF-8 JSON"
        ) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"the {what} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                          f"{exc.msg})",
                          file=str(p), fix="write it with json.dump") from None


def arrow_to_numpy(column: Any, dtype: str) -> Any:
    """A numeric Arrow column (or the values of a list column, flattened) as a numpy array.

    Reads the Arrow buffer directly: pyarrow's own ``to_numpy`` imports pandas, which the CLI's
    start-up would pay. Raises ValueError on nulls or a non-numeric type.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if (
        pa.types.is_list(array.type)
        or pa.types.is_large_list(array.type)
        or pa.types.is_fixed_size_list(array.type)
    ):
        if array.null_count:
            raise ValueError("null list")
        array = array.flatten()
    if array.null_count:
        raise ValueError("null value")
    target = pa.from_numpy_dtype(np.dtype(dtype))
    if array.type != target:
        array = pc.cast(array, target)
    data = array.buffers()[1]
    return (
        np.frombuffer(data, dtype=dtype, count=len(array) + array.offset)[array.offset :]
        if data is not None
        else np.zeros(0, dtype=dtype)
    )


def arrow_codes(column: Any) -> Any:
    """Integer codes (first-appearance order) of an Arrow column's values (no nulls)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return arrow_to_numpy(pc.dictionary_encode(array).indices, "int64")


def write_parquet_atomic(path: str | os.PathLike, rows: list[dict[str, Any]],
                         what: str = "output") -> Path:
    """Rows (dicts of one shape) as a Parquet file, written as :func:`_replace_atomically` does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise FormatError(f"this {what} is not a table of rows, so it cannot be written as Parquet",
                          file=str(path), fix="name the output .json")
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise FormatError(f"the rows cannot form a Parquet table ({exc})", file=str(path),
                          fix="name the output .json") from None
    return _replace_atomically(path, lambda tmp: pq.write_table(table, tmp), what)
