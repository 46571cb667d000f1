"""Writing a folder with exactly the Hub dataset repo layout: ``README.md`` (YAML ``configs`` and
``dataset_info``) and Parquet shards under ``data/``. ``load_dataset(folder)`` reads it as the Hub
would; publishing uploads the folder as it is.

Shards hold row groups of about 100 rows (the Hub's dataset viewer pages image datasets by row
group) and roll over at ``max_shard_bytes``; rows are written as they come, so memory stays flat.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ShardedParquetWriter", "SplitSummary", "ConfigSpec", "size_category", "card_yaml", "write_card"]

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
    """Stream encoded rows into ``<subdir>/<prefix>-0000i-of-0000n.parquet`` (prefix: the split by default)."""

    def __init__(self, out_dir: str | os.PathLike, split: str, features: Any, *, subdir: str = "data",
                 prefix: str | None = None, rows_per_group: int = ROWS_PER_GROUP,
                 max_shard_bytes: int = MAX_SHARD_BYTES) -> None:
        self.root = Path(out_dir)
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
        """Encode one row and buffer it; a full row group is written out."""
        encoded = self.features.encode_example(row)
        for key, value in row.items():
            # datasets' Image feature keeps only the path when that path exists relative to the working
            # directory (e.g. a build run inside the image folder); the bytes are what the Hub needs
            if isinstance(value, dict) and value.get("bytes") is not None and isinstance(encoded.get(key), dict):
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

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close(self) -> SplitSummary:
        """Flush, close and give the shards their final ``-of-`` names."""
        self._flush()
        self._close_shard()
        n = len(self._shard_paths)
        for stale in self.dir.glob(f"{self.prefix}-*-of-*.parquet"):
            stale.unlink()
        for i, tmp in enumerate(self._shard_paths):
            final = self.dir / f"{self.prefix}-{i:05d}-of-{n:05d}.parquet"
            tmp.rename(final)
            self.summary.files.append(final.relative_to(self.root).as_posix())
        return self.summary


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "n>1M"


@dataclass
class ConfigSpec:
    """One ``configs`` entry of a dataset card: its data files per split and its features."""

    name: str
    features: Any
    splits: list[SplitSummary]
    paths: dict[str, str]            # split -> glob, relative to the repo root
    default: bool = False


def card_yaml(*, features: Any = None, splits: list[SplitSummary] | None = None, config_name: str = "default",
              data_dir: str = "data", extra: dict[str, Any] | None = None,
              configs: list[ConfigSpec] | None = None) -> dict[str, Any]:
    """The YAML header of a dataset card: metadata, ``configs`` with ``data_files`` and ``dataset_info``.

    Either one config (``features`` + ``splits`` under ``data_dir``) or several ``configs``.
    """
    if configs is None:
        configs = [ConfigSpec(config_name, features, list(splits or []),
                              {s.name: f"{data_dir}/{s.name}-*" for s in splits or []})]
    meta: dict[str, Any] = dict(extra or {})
    total = max(sum(s.num_examples for s in c.splits) for c in configs)
    meta.setdefault("size_categories", [size_category(total)])
    meta["configs"] = []
    for c in configs:
        entry: dict[str, Any] = {"config_name": c.name,
                                 "data_files": [{"split": s.name, "path": c.paths[s.name]} for s in c.splits]}
        if c.default:
            entry["default"] = True
        meta["configs"].append(entry)
    infos = [{
        "config_name": c.name,
        "features": c.features._to_yaml_list(),
        "splits": [{"name": s.name, "num_bytes": int(s.num_bytes), "num_examples": int(s.num_examples)}
                   for s in c.splits],
        "dataset_size": int(sum(s.num_bytes for s in c.splits)),
    } for c in configs]
    meta["dataset_info"] = infos[0] if len(infos) == 1 else infos
    return meta


def write_card(out_dir: str | os.PathLike, meta: dict[str, Any], body: str) -> Path:
    """Write ``README.md`` through ``huggingface_hub``'s card API: the YAML ``meta``, then the prose ``body``."""
    import yaml
    from huggingface_hub import DatasetCard

    path = Path(out_dir) / "README.md"
    header = yaml.safe_dump(json.loads(json.dumps(meta)), sort_keys=False, allow_unicode=True)
    DatasetCard(f"---\n{header}---\n\n{body.strip()}\n").save(path)
    return path
