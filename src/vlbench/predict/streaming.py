"""Items whose images are read when a batch needs them: memory flat in the split's size.

A built dataset holds each image as encoded bytes in its Parquet shards (memory-mapped Arrow).
Iterating it the default way decodes every image into a PIL object; keeping those for every item of
a split is 1.2 MB per 640x480 image (56 GB for a split of 45,341 referring expressions, one item
each). Here the rows are iterated without their image columns, each item gets a :class:`LazyImage`
(the dataset, the row, the column: a few bytes), ``--limit`` and the shards of several processes are
cut from the items before any image is read, and a batch's images are decoded just before its
forward pass (:func:`batches`). The image bytes are sliced from the Arrow columns ``datasets``
memory-maps (:class:`ImageCells`).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..benchmarks.protocol.predicting import PredictItem
from ..engine.images import UNREADABLE

__all__ = ["ImageCells", "LazyImage", "LazyRows", "Unreadable", "loaded", "grouped", "batches",
           "undecodable", "what_is_wrong"]


def _file_of(cell: dict[str, Any]) -> Any:
    """An encoded image cell (``{"bytes", "path"}``) as a file to read: its bytes, else its path."""
    return io.BytesIO(cell["bytes"]) if cell.get("bytes") else cell["path"]


class ImageCells:
    """The image columns of a ``datasets.Dataset`` as encoded cells (``{"bytes", "path"}``), one
    read at a time.

    A cell is read from the Arrow column ``datasets`` holds (memory-mapped for a dataset on disk),
    so no row is decoded or copied before its batch. A dataset seen through an indices mapping
    (``select``, ``shuffle``) is read through ``datasets`` row by row.
    """

    def __init__(self, dataset: Any, columns: list[str]) -> None:
        self.direct = getattr(dataset, "_indices", None) is None
        self.columns = {c: dataset.data.column(c) for c in columns} if self.direct else {}
        if not self.direct and columns:
            from datasets import Image

            cells = dataset.select_columns(columns)
            for name in columns:
                cells = cells.cast_column(name, Image(decode=False))
            self.rows: Any = cells

    def open(self, index: int, column: str) -> Any:
        """Row ``index``'s encoded image in ``column``, as a file to read (its bytes in a
        ``BytesIO``), or its path. Not an Arrow reader over the bytes: PIL tries each registered
        format's reader in turn, and some call ``readline``, which Arrow's readers refuse with an
        error PIL does not expect (it then fails on a JPEG when all its plugins are registered
        before the common ones, as importing some libraries does)."""
        return _file_of(
            self.columns[column][index].as_py() if self.direct else self.rows[index][column]
        )


class LazyImage:
    """One image cell of a dataset, opened when used: ``size`` reads the header only; ``convert``
    and :meth:`load` decode it. ``cells`` is an :class:`ImageCells` (or any sequence of rows holding
    the cell); ``declared`` the (width, height) its row states, if it states one (only to group
    alike items: boxes are always read in the decoded image's own size)."""

    __slots__ = ("cells", "index", "column", "declared")

    def __init__(self, cells: Any, index: int, column: str,
                 declared: tuple[int, int] | None = None) -> None:
        self.cells, self.index, self.column, self.declared = cells, index, column, declared

    def _open(self) -> Any:
        from PIL import Image

        if isinstance(self.cells, ImageCells):
            return Image.open(self.cells.open(self.index, self.column))
        return Image.open(_file_of(self.cells[self.index][self.column]))

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), from the header."""
        with self._open() as image:
            return image.size

    def encoded(self) -> tuple[bytes, str | None]:
        """The cell's encoded bytes as the dataset holds them, and their format from the header
        (PIL's name: "JPEG", "PNG", ...); nothing is decoded."""
        from PIL import Image

        cell = self.cells.open(self.index, self.column) if isinstance(self.cells, ImageCells) \
            else _file_of(self.cells[self.index][self.column])
        data = cell.getvalue() if isinstance(cell, io.BytesIO) else Path(cell).read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            return data, image.format

    def convert(self, mode: str) -> Any:
        """The decoded image in ``mode``: the decoded image itself when it is in that mode already
        (PIL's ``convert`` would copy it, and the model's processor converts once more)."""
        image = self.load()
        return image if image.mode == mode else image.convert(mode)

    def load(self) -> Any:
        """The decoded image."""
        image = self._open()
        image.load()
        return image


class LazyRows:
    """A ``datasets.Dataset`` iterated as rows whose image columns are :class:`LazyImage` (None
    where the row has no image), without decoding or copying any image."""

    def __init__(self, dataset: Any) -> None:
        from datasets import Image

        self.columns = [name for name, f in dataset.features.items() if isinstance(f, Image)]
        self.meta = dataset.remove_columns(self.columns) if self.columns else dataset
        self.length = len(dataset)          # a dataset left with no column has no rows either
        self.cells = ImageCells(dataset, self.columns)
        # which rows have an image: Arrow's null mask, no bytes read
        self.present = {
            name: ~np.asarray(dataset.data.column(name).is_null()) for name in self.columns
        }

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[dict[str, Any]]:
        rows = _rows(self.meta) if self.meta.column_names else ({} for _ in range(self.length))
        for i, row in enumerate(rows):
            declared = _declared_size(row)
            yield {
                **row,
                **{
                    c: LazyImage(self.cells, i, c, declared) if self.present[c][i] else None
                    for c in self.columns
                },
            }


def _rows(dataset: Any, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
    """The dataset's rows as dicts, read a batch of columns at a time (``datasets`` formats a row at
    a time about twenty times slower; the values are the same)."""
    for batch in dataset.iter(batch_size=batch_size):
        for values in zip(*batch.values()):
            yield dict(zip(batch, values))


def _declared_size(row: dict[str, Any]) -> tuple[int, int] | None:
    """The (width, height) a row states for its image (the ``width`` and ``height`` columns three of
    the four releases carry), or None."""
    width, height = row.get("width"), row.get("height")
    return (width, height) if isinstance(width, int) and isinstance(height, int) else None


def what_is_wrong(item: PredictItem, exc: Exception) -> str:
    """Where an image that does not decode lies (the dataset's row and column) and what PIL said of
    it."""
    where = (
        f" (row {item.image.index}, column {item.image.column!r})"
        if isinstance(item.image, LazyImage)
        else ""
    )
    return (f"the image of item {item.key}{where} does not decode "
            f"({type(exc).__name__}: {str(exc)[:200]})")


def undecodable(item: PredictItem, exc: Exception) -> Exception:
    """A FormatError naming the item whose image does not decode, its row and column."""
    from ..engine.errors import FormatError

    return FormatError(what_is_wrong(item, exc),
                       fix="pass --skip-bad-images to answer the other items (each such item is "
                           "counted), rebuild the dataset (vlbench build ... --skip-bad-images "
                           "leaves such images out), or pass --limit")


@dataclasses.dataclass(frozen=True)
class Unreadable:
    """The image of an item that did not decode, left out of its batch with ``skip_bad``: what was
    wrong."""

    reason: str


def loaded(batch: list[PredictItem], skip_bad: bool = False) -> list[PredictItem]:
    """The batch with its images decoded (items whose image is already an image are kept as they
    are); an image that does not decode is a :class:`~vlbench.engine.errors.FormatError` naming its
    item, or with ``skip_bad`` an :class:`Unreadable` in its place (the caller counts those items
    and answers the others)."""
    out = []
    for it in batch:
        if isinstance(it.image, LazyImage):
            try:
                it = dataclasses.replace(it, image=it.image.load())
            except UNREADABLE as exc:
                if not skip_bad:
                    raise undecodable(it, exc) from None
                it = dataclasses.replace(it, image=Unreadable(what_is_wrong(it, exc)))
        out.append(it)
    return out


#: batches whose items are grouped together (a window of the item order, so that a run keeps moving
#: through the split)
GROUP_WINDOW = 16


def shape_key(item: PredictItem) -> tuple[int, int, int, int]:
    """What makes the items of one batch cost alike: the query count (a detector's passes, the
    length of a detection answer), the text to read (a prompt's length), the image's size (the
    processors pad a batch to its largest image; the size its row states, else read from the
    header). An image whose header does not read sorts as 0 x 0: its decoding (:func:`loaded`) says
    what is wrong."""
    try:
        width, height = getattr(item.image, "declared", None) or (
            item.image.size if item.image is not None else (0, 0)
        )
    except UNREADABLE:
        width, height = 0, 0
    return len(item.queries), sum(map(len, item.queries)), width, height


def grouped(items: list[PredictItem], size: int, window: int = GROUP_WINDOW) -> list[PredictItem]:
    """``items`` reordered so that the items of each batch of ``size`` are alike
    (:func:`shape_key`): sorted within each run of ``window`` batches, so a batch no longer
    generates until the longest answer of a random mix, nor pads its images to the largest of one.
    The order of the written files is the split's, whatever this order."""
    step, out = size * window, []
    for start in range(0, len(items), step):
        out.extend(sorted(items[start:start + step], key=shape_key))
    return out


def batches(items: list[PredictItem], size: int,
            skip_bad: bool = False) -> Iterable[list[PredictItem]]:
    """``items`` in batches of ``size``, each with its images decoded (:func:`loaded`, ``skip_bad``
    passed on) when its turn comes (decoding the next batch in a background thread saved nothing of
    a run: bench/MACHINERY.md)."""
    for start in range(0, len(items), size):
        yield loaded(items[start:start + size], skip_bad)
