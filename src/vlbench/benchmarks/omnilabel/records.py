"""OmniLabel records: ground truth as (image, description) pairs in the official evaluation
order."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.lookup import find_ids

__all__ = ["OmniLabelReferences"]


@dataclass(frozen=True)
class OmniLabelReferences:
    """Ground truth arranged as (image, description) *pairs*, in the official evaluation order.

    Pairs are ordered by image id, then by the image's label-space order (the order of the
    ``descriptions`` array), which is the concatenation order of the official pooled ranking.
    """

    image_ids: NDArray[np.int64]              # sorted
    image_source: list[str]                   # per image
    image_file: list[str]                     # per image: file_name
    descr_ids: NDArray[np.int64]              # sorted unique description ids
    descr_text: dict[int, str]
    pair_image: NDArray[np.int64]             # index into image_ids
    pair_descr: NDArray[np.int64]             # description id
    pair_type: NDArray[np.int8]               # TYPE_C / TYPE_DP / TYPE_DN
    pair_words: NDArray[np.int64]             # words of the description (str.split)
    # GT boxes (of known images) whose description_ids list it
    pair_ref_boxes: NDArray[np.int64]
    gt_pair: NDArray[np.int64]                # one row per (box, description in its label space)
    gt_box: NDArray[np.float64]
    gt_iscrowd: NDArray[np.bool_]             # int(iscrowd): crowd IoU and matching
    # truthiness of iscrowd: ignored (differs for strings such as "0")
    gt_ignore: NDArray[np.bool_]
    gt_id: NDArray[np.int64]
    has_annotations: bool
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    source: str = "references"
    #: where the images' ids are text: id as written -> code; ``image_ids`` then holds the codes,
    #: numbered in the order ``sorted()`` gives the ids (the official evaluation order: "10" before
    #: "9"). None: integer ids.
    id_table: dict[Any, int] | None = None

    def image_id(self, i: int) -> Any:
        """The id of image ``i`` (an index into ``image_ids``) as the file writes it."""
        return (
            int(self.image_ids[i])
            if self.id_table is None
            else self._written_ids[int(self.image_ids[i])]
        )

    def description_code(self, written: Any) -> int | None:
        """A description id as a file writes it, by equality as a dict look-up finds it (``5.0`` and
        ``True`` are ``5`` and ``1``); None where it equals no description's id (the text "5", a
        list)."""
        try:
            return int(written) if written in self.descr_text else None
        except TypeError:                          # an unhashable value equals no id
            return None

    @functools.cached_property
    def _written_ids(self) -> list[Any]:
        return list(self.id_table or {})          # the table lists the ids in code order

    def pair_of(self, image_index: NDArray[np.int64],
                descr_id: NDArray[np.int64]) -> NDArray[np.int64]:
        """Pair index of (image index, description id), or -1 where the description is not in that
        label space."""
        keys = self._pair_keys()
        if not len(keys[0]):
            return np.full(len(descr_id), -1, dtype=np.int64)
        d, known = find_ids(self.descr_ids, descr_id)
        pos, hit = find_ids(keys[0], image_index * len(self.descr_ids) + d)
        return np.where(known & hit, keys[1][pos], -1)

    def _pair_keys(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        d = find_ids(self.descr_ids, self.pair_descr)[0]
        q = self.pair_image * len(self.descr_ids) + d
        order = np.argsort(q, kind="stable")
        return q[order], order
