"""OVDEval records: each sub-dataset's ground truth as arrays, and the set of sub-datasets scored
together."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.lookup import find_ids

__all__ = ["OVDEvalSubset", "OVDEvalReferences", "PredictionFolder"]


def _rank_or_past(distinct: NDArray[np.int64], values: NDArray[np.int64]) -> NDArray[np.int64]:
    """Each value's index in the sorted ``distinct``, or ``len(distinct)`` for a value not among
    them."""
    at, known = find_ids(distinct, values)
    return np.where(known, at, len(distinct))


@dataclass(frozen=True)
class OVDEvalSubset:
    """One sub-dataset's ground truth as arrays, annotations in file order."""

    name: str
    image_ids: NDArray[np.int64]
    category_ids: NDArray[np.int64]
    category_names: dict[int, str]
    ann_image: NDArray[np.int64]
    ann_category: NDArray[np.int64]
    ann_box: NDArray[np.float64]
    ann_area: NDArray[np.float64]
    ann_iscrowd: NDArray[np.bool_]
    ann_id: NDArray[np.int64]
    notes: list[str] = field(default_factory=list)
    source: str = "references"
    #: image id -> file name (for drawing samples)
    image_file: dict[int, str] = field(default_factory=dict)
    #: the source lists every category (a sub-dataset JSON); Hub rows name only the categories of
    #: their boxes
    categories_listed: bool = True
    #: image id -> its hard-negative labels (``neg_text``), for the threshold metrics (not used by
    #: the official scorer)
    image_negatives: dict[int, frozenset[str]] = field(default_factory=dict)
    #: (width, height) of each image of ``image_ids`` (NaN where not given), for the convention
    #: check; None if none
    image_wh: NDArray[np.float64] | None = None
    #: image id as written -> its code in ``image_ids`` etc., where the ids are not plain integers
    #: (text ids, coded in the order pycocotools sorts them); None where the integer ids are their
    #: own codes
    id_table: dict[Any, int] | None = None
    #: the same for category ids: category id as written -> its code in ``category_ids``,
    #: ``category_names`` and ``ann_category`` (text ids coded in pycocotools' sorted order); None
    #: for integer ids
    category_table: dict[Any, int] | None = None

    def category_id(self, code: int) -> Any:
        """The id of category ``code`` as the file writes it."""
        return int(code) if self.category_table is None else self._written_categories[int(code)]

    @functools.cached_property
    def _written_categories(self) -> list[Any]:
        return list(self.category_table or {})          # the table lists the ids in code order

    def is_negative(self, image_ids: NDArray[np.int64],
                    category_ids: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each (image id, category id) names one of the image's hard negatives
        (``neg_text``)."""
        by_name: dict[str, list[int]] = {}
        for cid, name in self.category_names.items():
            by_name.setdefault(name, []).append(int(cid))
        pairs = [(image, cid) for image, names in self.image_negatives.items() for n in names
                 for cid in by_name.get(n, ())]
        if not pairs or not len(image_ids):
            return np.zeros(len(image_ids), dtype=bool)
        # each pair as one integer (image rank, category rank) among the pairs' own ids, an id they
        # lack ranked past them (no pair can match it): a vectorised membership test replaces a set
        # lookup per prediction
        pair = np.asarray(pairs, dtype=np.int64)
        images, categories = np.unique(pair[:, 0]), np.unique(pair[:, 1])

        def key(image: NDArray[np.int64], category: NDArray[np.int64]) -> NDArray[np.int64]:
            return _rank_or_past(images, image) * (len(categories) + 1) + _rank_or_past(categories,
                                                                                        category)

        return np.isin(key(np.asarray(image_ids, dtype=np.int64),
                           np.asarray(category_ids, dtype=np.int64)),
                       key(pair[:, 0], pair[:, 1]))

    def gt_dict(self) -> dict[str, NDArray]:
        """The annotations as the COCO engine's column dict."""
        return {"image_id": self.ann_image, "category_id": self.ann_category, "bbox": self.ann_box,
                "area": self.ann_area, "iscrowd": self.ann_iscrowd, "id": self.ann_id}


@dataclass(frozen=True)
class OVDEvalReferences:
    """The sub-datasets read from one reference source, by name (one for a sub-dataset JSON)."""

    subsets: dict[str, OVDEvalSubset]
    source: str = "references"


@dataclass(frozen=True)
class PredictionFolder:
    """A folder of prediction files, one per sub-dataset: entries and file path by sub-dataset
    name."""

    entries: dict[str, list]
    files: dict[str, str]
    folder: str
