"""The dataset capability: the official release -> a Hub dataset folder, and back."""

from __future__ import annotations

import os
from typing import Any, Protocol

__all__ = ["DatasetBuilder"]


class DatasetBuilder(Protocol):
    """Build the Hub folder (``README.md`` card with ``configs``, Parquet shards) from the official
    release and export the official data back. A benchmark's ``reader`` module usually is one (a
    module with these two functions satisfies the protocol)."""

    def build(self, raw: Any, out: str | os.PathLike, *, images: str | os.PathLike | None = None,
              allow_missing_images: bool = False, skip_bad_images: bool = False,
              max_shard_bytes: int | None = None) -> Any:
        """Release -> Hub folder ``out``; returns a
        :class:`~vlbench.benchmarks.validation.BuildReport`. ``images``: where the images are when
        the release keeps them apart; a build without them is refused unless
        ``allow_missing_images``; ``skip_bad_images`` leaves out (and counts) files that are not
        readable images."""
        ...

    def export(self, folder: str | os.PathLike, split: str, /) -> Any:
        """Hub folder -> the official annotation data of ``split`` (JSON-serialisable rows or
        object)."""
        ...
