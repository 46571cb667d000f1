"""Ref-L4 records: the ground-truth rows of the scored split as arrays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["RefL4References"]


@dataclass(frozen=True)
class RefL4References:
    """The GT rows of one split, in dataset order (val before test for ``all``)."""

    #: the rows' ids: int64, or an object array of the values as read where they are not all
    #: integers (text ids)
    ids: NDArray[Any]
    bbox_xywh: NDArray[np.float64]
    #: as read: text, or None for a null (a class of its own, as the official dict keeps it)
    ori_category_id: list[Any]
    source: str = "references"
    #: ids of the source's rows in the splits not scored: predictions for them are ignored quietly
    other_split_ids: NDArray[Any] | None = None
    #: per row, an integer naming its image (bootstrap unit); None when the source has no image
    #: column
    image: NDArray[np.int64] | None = None
    #: the distinct image keys (file names, else image ids as text) that ``image`` indexes
    image_names: list[str] | None = None
    #: per row, the referring expression (``caption``), for showing samples; None when the source
    #: has none
    expressions: list[str] | None = None
    #: per row, the image's (width, height) in pixels, for the convention check; None when the
    #: source has none
    image_size: NDArray[np.float64] | None = None
    #: what reading found worth a warning (kept as the official scorer would take it)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def row_id(self, row: int) -> Any:
        """Row ``row``'s id as a plain Python value (an int, or the text as read), for messages and
        JSON."""
        value = self.ids[row]
        return value.item() if isinstance(value, np.generic) else value
