"""The built dataset a prediction run reads: its rows through ``datasets`` (reloaded where the
folder changed after ``datasets`` cached it) and a digest of its files, recorded with a run's
settings."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..benchmarks.protocol.predicting import PredictData
from ..engine.errors import InputError

__all__ = ["load_data", "data_version"]


def load_data(benchmark: str, data: str | os.PathLike, *, split: str | None = None,
              config: str | None = None) -> tuple[PredictData, str | None]:
    """(the rows of ``config`` / ``split`` of a built dataset folder or Hub id, the split). The
    rows' images are :class:`.streaming.LazyImage`: read when a batch needs them."""
    bench = get_benchmark(benchmark)
    folder = Path(data) if Path(data).is_dir() else None
    try:
        rows, split = _load_rows(str(data), bench.default_split, config, split)
        # changed in place since datasets cached it
        if folder is not None and _cache_is_older(rows, folder):
            rows, split = _load_rows(str(data), bench.default_split, config, split,
                                     download_mode="force_redownload")
    # datasets and Arrow raise many types for a missing or corrupt folder / shard
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        root: BaseException = exc
        # datasets wraps Arrow's own words
        while (inner := root.__cause__ or root.__context__) is not None:
            root = inner
        if isinstance(root, OSError) and root.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            import datasets.config

            raise InputError(f"the datasets cache cannot be written ({root.strerror}: "
                             f"{root.filename or ''})",
                             file=str(datasets.config.HF_DATASETS_CACHE),
                             fix="set HF_DATASETS_CACHE (or HF_HOME) to a folder you can write; "
                                 "the dataset folder itself is fine") from None
        first = (str(root).splitlines() or [type(root).__name__])[0][:300]
        what = f"split {split!r} of the dataset" if split else "the dataset"
        raise InputError(f"cannot load {what} ({type(root).__name__}: {first})",
                         file=str(data),
                         fix=f"pass a folder written by 'vlbench build {bench.id}' (or its Hub id) "
                             "and one of its "
                             "splits / configs; rebuild it if a shard is damaged") from None
    from .streaming import LazyRows

    return PredictData(rows=LazyRows(rows), folder=folder, config=config), split


def _load_rows(data: str, default_split: str | None, config: str | None, split: str | None,
               **options: Any) -> tuple[Any, str | None]:
    """(the rows, the split) through ``datasets.load_dataset``: ``split``, else the benchmark's
    default split, or every split when that is not one of the Hub's (e.g. a merged "all": every Hub
    split, in the card's order)."""
    from datasets import concatenate_datasets, load_dataset

    if split is not None:
        return load_dataset(data, config, split=split, **options), split
    every = load_dataset(data, config, **options)
    return (
        every[default_split]
        if default_split in every
        else concatenate_datasets([every[s] for s in every]),
        default_split,
    )


def _folder_files(folder: Path) -> list[Path]:
    """The files of a dataset folder (its card and shards; hidden folders such as ``.git`` and
    ``.cache`` left out)."""
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _cache_is_older(rows: Any, folder: Path) -> bool:
    """Whether a file of ``folder`` changed after ``datasets`` wrote the Arrow cache ``rows`` are
    read from. ``datasets`` keys its cache of a local folder by the files' modification times, which
    a copy, a rebuild within the same tick or ``os.utime`` can leave as they were; a file's change
    time (ctime) moves on any write and cannot be set back, so a cache written before it is
    stale."""
    cached = [Path(f["filename"]) for f in rows.cache_files]
    if not cached:
        return False
    written = min(p.stat().st_mtime_ns for p in cached)
    return any(p.stat().st_ctime_ns > written for p in _folder_files(folder))


def data_version(folder: Path | None) -> str | None:
    """A short digest of a dataset folder's files (name, size, modification and change times):
    recorded with a run's settings, so a partial run is never continued over a dataset rewritten
    since (None for a Hub id)."""
    import hashlib

    if folder is None:
        return None
    digest = hashlib.sha1()
    for p in _folder_files(folder):
        st = p.stat()
        digest.update(f"{p.relative_to(folder).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\n".encode())
    return digest.hexdigest()[:16]
