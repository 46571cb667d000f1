"""Items whose images are read when a batch needs them: memory flat in the split's size.

A built dataset holds each image as encoded bytes in its Parquet shards (memory-mapped Arrow). Iterating it the
default way decodes every image into a PIL object; keeping those for every item of a split is 1.2 MB per 640x480
image (56 GB for a split of 45,341 referring expressions, one item each). Here the rows are iterated without their
image columns, each item gets a :class:`LazyImage` (the dataset, the row, the column: a few bytes), ``--limit`` and
the shards of several processes are cut from the items before any image is read, and a batch's images are decoded
just before its forward pass (:func:`batches`: the next batch's in a background thread while the model runs on
this one).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..protocol.predicting import PredictItem

__all__ = ["LazyImage", "LazyRows", "loaded", "batches"]


class LazyImage:
    """One image cell of a dataset, opened when used: ``size`` reads the header only; ``convert`` and
    :meth:`load` decode it."""

    __slots__ = ("cells", "index", "column")

    def __init__(self, cells: Any, index: int, column: str) -> None:
        self.cells, self.index, self.column = cells, index, column

    def _open(self) -> Any:
        from PIL import Image

        cell = self.cells[self.index][self.column]
        source = io.BytesIO(cell["bytes"]) if cell.get("bytes") else cell["path"]
        return Image.open(source)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), from the header."""
        with self._open() as image:
            return image.size

    def convert(self, mode: str) -> Any:
        """The decoded image in ``mode``."""
        with self._open() as image:
            return image.convert(mode)

    def load(self) -> Any:
        """The decoded image."""
        image = self._open()
        image.load()
        return image


class LazyRows:
    """A ``datasets.Dataset`` iterated as rows whose image columns are :class:`LazyImage` (None where the row has
    no image), without decoding or copying any image."""

    def __init__(self, dataset: Any) -> None:
        from datasets import Image

        self.columns = [name for name, f in dataset.features.items() if isinstance(f, Image)]
        self.meta = dataset.remove_columns(self.columns) if self.columns else dataset
        cells: Any = dataset.select_columns(self.columns) if self.columns else None
        for name in self.columns:
            cells = cells.cast_column(name, Image(decode=False))
        self.cells = cells
        # which rows have an image: Arrow's null mask, no bytes read
        self.present = {name: ~np.asarray(dataset.data.column(name).is_null()) for name in self.columns}

    def __len__(self) -> int:
        return len(self.meta)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i, row in enumerate(self.meta):
            yield {**row, **{c: LazyImage(self.cells, i, c) if self.present[c][i] else None for c in self.columns}}


def loaded(batch: list[PredictItem]) -> list[PredictItem]:
    """The batch with its images decoded (items whose image is already an image are kept as they are); an image
    that does not decode is a :class:`~vlbench.errors.FormatError` naming its item (PIL's own errors are OSErrors,
    which the loop would take for a failed write)."""
    out = []
    for it in batch:
        if isinstance(it.image, LazyImage):
            try:
                it = dataclasses.replace(it, image=it.image.load())
            except (OSError, ValueError, SyntaxError) as exc:      # what PIL raises on damaged bytes
                from ..errors import FormatError

                raise FormatError(f"the image of item {it.key} does not decode ({type(exc).__name__}: {exc})",
                                  fix="rebuild the dataset (vlbench build ... --skip-bad-images leaves such images "
                                      "out), or pass --limit to stop before it") from None
        out.append(it)
    return out


def batches(items: list[PredictItem], size: int) -> Iterable[list[PredictItem]]:
    """``items`` in batches of ``size``, each with its images decoded; the next batch is decoded in a background
    thread while the caller works on the current one (PIL releases the GIL while it decodes)."""
    starts = list(range(0, len(items), size))
    if not starts:
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(loaded, items[:size])
        for following in [*starts[1:], None]:
            batch = pending.result()
            if following is not None:
                pending = pool.submit(loaded, items[following:following + size])
            yield batch
