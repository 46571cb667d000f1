"""Writing a folder with exactly the Hub dataset repo layout: ``README.md`` (YAML ``configs`` and
``dataset_info``) and Parquet shards under ``data/``. ``load_dataset(folder)`` reads it as the Hub
would; publishing uploads the folder as it is.

Shards hold row groups of about 100 rows (the Hub's dataset viewer pages image datasets by row
group) and roll over at ``max_shard_bytes``; rows are written as they come, so memory stays flat.

A shard's name ends with a digest of its bytes and the card lists each split's files by name:
``datasets`` keys its cache of a folder by the card (the configs' ``data_files`` and
``dataset_info``), not by the files' content, so a rebuilt folder, or another folder of the same
name, with the same card would be served the cached rows of the first. Content-named files make the
card, and so the cache key, change whenever a row does.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ShardedParquetWriter", "SplitSummary", "ConfigSpec", "file_digest", "size_category",
           "card_yaml", "write_card"]

ROWS_PER_GROUP = 100
MAX_SHARD_BYTES = 300 * 1024**2


@dataclass
class SplitSummary:
    """One split's shards: rows, bytes and repo-relative file paths."""

    name: str
    num_examples: int = 0
    num_bytes: int = 0
    files: list[str] = field(default_factory=list)


class ShardedParquetWriter:
    """Stream encoded rows into ``<subdir>/<prefix>-0000i-of-0000n-<digest>.parquet`` (prefix: the
    split by default; digest: the first 16 hex digits of the shard's SHA-256)."""

    def __init__(self, out_dir: str | os.PathLike, split: str, features: Any, *,
                 subdir: str = "data",
                 prefix: str | None = None, rows_per_group: int = ROWS_PER_GROUP,
                 max_shard_bytes: int = MAX_SHARD_BYTES, source: str | None = None) -> None:
        self.root = Path(out_dir)
        self.source = source        # the file the rows come from, named in errors
        self.dir = self.root / subdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.split = split
        self.prefix = prefix or split
        self.features = features
        self.schema = features.arrow_schema  # carries the features as "huggingface" metadata
        self.rows_per_group = rows_per_group
        self.max_shard_bytes = max_shard_bytes
        self._buffer: list[dict[str, Any]] = []
        self._writer = None
        self._shard_paths: list[Path] = []
        self._shard_bytes = 0
        self.summary = SplitSummary(split)

    def write(self, row: dict[str, Any]) -> None:
        """Check, encode and buffer one row; a full row group is written out."""
        found = _mistyped(row, self.features)
        if found is not None:
            raise self._mistyped_error(row, *found)
        encoded = self.features.encode_example(row)
        for key, value in row.items():
            # datasets' Image feature keeps only the path when that path exists relative to the
            # working directory (e.g. a build run inside the image folder); the bytes are what the
            # Hub needs
            if (
                isinstance(value, dict)
                and value.get("bytes") is not None
                and isinstance(encoded.get(key), dict)
            ):
                encoded[key] = {"bytes": value["bytes"], "path": value.get("path")}
        self._buffer.append(encoded)
        if len(self._buffer) >= self.rows_per_group:
            self._flush()

    def write_all(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write every row of an iterable."""
        for row in rows:
            self.write(row)

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffer:
            return
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        self._buffer = []
        if self._writer is None or self._shard_bytes >= self.max_shard_bytes:
            self._close_shard()
            path = self.dir / f".{self.prefix}-{len(self._shard_paths):05d}.parquet.tmp"
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
            self._shard_paths.append(path)
            self._shard_bytes = 0
        writer: Any = self._writer
        writer.write_table(table, row_group_size=self.rows_per_group)
        self._shard_bytes += table.nbytes
        self.summary.num_examples += table.num_rows
        self.summary.num_bytes += table.nbytes

    def _mistyped_error(self, row: dict[str, Any], where: str, value: Any,
                        column: str) -> Exception:
        """The project's error naming a value its typed column would change or refuse, by the row's
        ids and the field's path."""
        from .errors import FormatError

        ids = ", ".join(
            f"{k} {row[k]!r}"
            for k in row
            if k.endswith("id") and not isinstance(row[k], (dict, list))
        )
        return FormatError(f"{where} is {value!r}, which the Hub dataset's {column} column cannot "
                           "hold as it is",
                           file=self.source, entry=f"the {self.split} row of {ids or 'this file'}",
                           fix="write the value as the column's type in the file (e.g. iscrowd 0 "
                               "or 1), or score the file itself with 'vlbench score', which reads "
                               "it as the official scorer does")

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close(self) -> SplitSummary:
        """Flush, close and give the shards their final ``-of-`` names, each with its content
        digest."""
        self._flush()
        self._close_shard()
        n = len(self._shard_paths)
        for stale in self.dir.glob(f"{self.prefix}-*-of-*.parquet"):
            stale.unlink()
        for i, tmp in enumerate(self._shard_paths):
            final = self.dir / f"{self.prefix}-{i:05d}-of-{n:05d}-{file_digest(tmp)[:16]}.parquet"
            tmp.rename(final)
            self.summary.files.append(final.relative_to(self.root).as_posix())
        return self.summary


def _mistyped(row: dict[str, Any], features: Any) -> tuple[str, Any, str] | None:
    """(the field's path, its value, the column's type) of the first value of ``row`` that its
    ``datasets`` feature would change or refuse, or None: a boolean or text where numbers go, a
    fraction in an integer column, a number where text goes. ``datasets``' encoder turns "0" into 0
    and 0.5 into 0 without a word, which would change what an official file says (``iscrowd`` "0" is
    truthy there). Class labels take their names or ids."""
    import datasets
    import numpy as np

    def wrong(value: Any, dtype: str) -> bool:
        if dtype == "bool":
            return not isinstance(value, (bool, np.bool_))
        if isinstance(value, (bool, np.bool_, str, bytes)):
            return dtype.startswith(("int", "uint", "float"))
        if dtype.startswith(("int", "uint")):
            return not (isinstance(value, (int, np.integer))
                        or isinstance(value, (float, np.floating)) and float(value).is_integer())
        if dtype.startswith("float"):
            return not isinstance(value, (int, float, np.integer, np.floating))
        return dtype in ("string", "large_string") and not isinstance(value, str)

    def walk(value: Any, feature: Any, where: str) -> tuple[str, Any, str] | None:
        if value is None:
            return None
        if isinstance(feature, dict):
            if not isinstance(value, dict):
                return None
            return next(
                (
                    hit
                    for k, sub in feature.items()
                    if (hit := walk(value.get(k), sub, f"{where}.{k}"))
                ),
                None,
            )
        if isinstance(feature, (datasets.List, datasets.Sequence, list)):
            inner = feature[0] if isinstance(feature, list) else feature.feature
            if not isinstance(value, (list, tuple)):
                return None
            return next(
                (hit for i, v in enumerate(value) if (hit := walk(v, inner, f"{where}[{i}]"))), None
            )
        if isinstance(feature, datasets.Value):
            return (where, value, feature.dtype) if wrong(value, feature.dtype) else None
        return None  # class labels (names or ids), images

    return next(
        (hit for name, feature in features.items() if (hit := walk(row.get(name), feature, name))),
        None,
    )


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, in hex (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "n>1M"


@dataclass
class ConfigSpec:
    """One ``configs`` entry of a dataset card: its features and splits; each split's data files are
    its summary's ``files`` (listed by name, so that the card changes with the content)."""

    name: str
    features: Any
    splits: list[SplitSummary]
    default: bool = False


def card_yaml(*, features: Any = None, splits: list[SplitSummary] | None = None,
              config_name: str = "default", extra: dict[str, Any] | None = None,
              configs: list[ConfigSpec] | None = None) -> dict[str, Any]:
    """The YAML header of a dataset card: metadata, ``configs`` with ``data_files`` and
    ``dataset_info``.

    Either one config (``features`` + ``splits``) or several ``configs``.
    """
    if configs is None:
        configs = [ConfigSpec(config_name, features, list(splits or []))]
    meta: dict[str, Any] = dict(extra or {})
    total = max(sum(s.num_examples for s in c.splits) for c in configs)
    meta.setdefault("size_categories", [size_category(total)])
    meta["configs"] = []
    for c in configs:
        entry: dict[str, Any] = {
            "config_name": c.name,
            "data_files": [{"split": s.name, "path": sorted(s.files)} for s in c.splits],
        }
        if c.default:
            entry["default"] = True
        meta["configs"].append(entry)
    infos = [{
        "config_name": c.name,
        "features": c.features._to_yaml_list(),
        "splits": [{"name": s.name, "num_bytes": int(s.num_bytes),
                    "num_examples": int(s.num_examples)}
                   for s in c.splits],
        "dataset_size": int(sum(s.num_bytes for s in c.splits)),
    } for c in configs]
    meta["dataset_info"] = infos[0] if len(infos) == 1 else infos
    return meta


#: the card's note on loading a rebuilt folder (why the shards' names carry digests, and what an
#: older build needs)
REBUILD_NOTE = """## Loading a rebuilt folder

Each shard's name ends with a digest of its bytes and the `configs` above list the shards by name,
so `datasets.load_dataset` caches every build apart: a folder rebuilt in place, or another folder of
the same name, loads its own rows. A folder whose card lists its shards by pattern (`data/val-*`,
written by an older vlbench) can be served an earlier build's rows from the `datasets` cache:
rebuild it, or load it with `download_mode="force_redownload"`."""


def write_card(out_dir: str | os.PathLike, meta: dict[str, Any], body: str) -> Path:
    """Write ``README.md`` through ``huggingface_hub``'s card API: the YAML ``meta``, then the prose
    ``body`` and :data:`REBUILD_NOTE`."""
    import yaml
    from huggingface_hub import DatasetCard

    path = Path(out_dir) / "README.md"
    header = yaml.safe_dump(json.loads(json.dumps(meta)), sort_keys=False, allow_unicode=True)
    DatasetCard(f"---\n{header}---\n\n{body.strip()}\n\n{REBUILD_NOTE}\n").save(path)
    return path
