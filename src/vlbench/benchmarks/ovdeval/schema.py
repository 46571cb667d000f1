"""OVDEval schema: the nine sub-datasets, the paper's aspects, and the Hub dataset's features.

Boxes everywhere: ``bbox`` = ``[x, y, w, h]`` in pixels (COCO).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from ..benchmark import Options, option

__all__ = ["OVDEvalOptions", "SUBSETS", "ASPECTS", "aspect_of", "image_features", "category_listed",
           "METRIC_KEYS", "STAT_KEYS"]

#: a prediction entry, for messages; keys every entry has (how a file of another benchmark is
#: recognised)
PREDICTION_FORM = 'COCO results {"image_id", "category_id", "bbox", "score"}'
PREDICTION_KEYS = frozenset({"category_id", "score", "bbox"})

SUBSETS = ("coco", "celebrity", "color", "landmark", "logo", "material", "negation", "position",
           "relationship")

#: The paper's Table 3 grouping of the sub-datasets.
ASPECTS = {
    "Object": ("coco",),
    "Proper noun": ("logo", "landmark", "celebrity"),
    "Attribute": ("color", "material"),
    "Position": ("position",),
    "Relationship": ("relationship",),
    "Negation": ("negation",),
}


def aspect_of(subset: str) -> str | None:
    """The paper's aspect of a sub-dataset, or None for an unknown one."""
    return next((a for a, members in ASPECTS.items() if subset in members), None)


#: The 12 COCOeval stats under the contract's names; NMS_ prefix after the suppression.
STAT_KEYS = ("AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large",
             "AR1", "AR10", "AR100", "AR_small", "AR_medium", "AR_large")
METRIC_KEYS = tuple(f"NMS_{k}" for k in STAT_KEYS) + STAT_KEYS


def category_feature(categories: list[dict[str, Any]]):
    """``category_id`` as a ClassLabel of the category names when ids are 0..K-1 (the published
    format)."""
    from datasets import ClassLabel, Value

    ids = [c["id"] for c in categories]
    if ids == list(range(len(ids))):
        return ClassLabel(names=[str(c["name"]) for c in categories])
    return Value("int64")


def image_features(categories: list[dict[str, Any]] | None):
    """Features of one sub-dataset's image rows (split ``test``); ``None``: those of the default
    config ``all``, whose rows come from every sub-dataset (``category_id`` as a plain id: each
    sub-dataset numbers its own)."""
    from datasets import Features, Image, List, Value

    return Features({
        "sub_dataset": Value("string"),
        "image": Image(),
        "image_id": Value("int64"),
        "file_name": Value("string"),
        "height": Value("int64"),
        "width": Value("int64"),
        "text": List(Value("string")),
        "neg_text": List(Value("string")),
        "boxes": List({
            "id": Value("int64"),
            "bbox": List(Value("float64"), length=4),
            "category_id": Value("int64") if categories is None else category_feature(categories),
            "label": Value("string"),
            "area": Value("float64"),
            "iscrowd": Value("int64"),
            "position": Value("int64"),
            "extra": Value("string"),
        }),
        "position": Value("int64"),
        "extra": Value("string"),
    })


def category_listed(box: dict[str, Any]) -> bool:
    """Whether a Hub row's box lies under a category its file lists: a box under an unlisted one has
    a null ``label`` (``listed`` False once the evaluate module has slimmed it); as in the official
    code, it guides the suppression and is never evaluated."""
    return bool(box.get("listed", True)) and not ("label" in box and box["label"] is None)


#: the default config: every sub-dataset's rows, told apart by ``sub_dataset``
ALL_CONFIG = "all"

FIELD_DESCRIPTIONS = {
    "sub_dataset": "the sub-dataset (config) the row belongs to",
    "image": "the image, embedded",
    "image_id": "official image id",
    "file_name": "image file name in the sub-dataset's image archive",
    "height": "image height in pixels", "width": "image width in pixels",
    "text": "positive labels of the image (what is in it)",
    "neg_text": "hard-negative labels of the image (close to a positive label, but not in it)",
    "boxes": "ground-truth boxes: id, bbox [x, y, w, h] in pixels, category_id (a class label: the "
             "category names), label (the category name), area (the file's value: it decides "
             "small/medium/large), iscrowd; position = index in the official annotations array, "
             "extra = further keys as JSON",
    "position": "index of the image in the official images array",
    "extra": "further keys of the official image entry, as JSON",
}


@dataclass(frozen=True)
class OVDEvalOptions(Options):
    """OVDEval options: which sub-dataset of a multi-sub-dataset reference source to score."""

    sub_dataset: str | None = option(None, "score only this sub-dataset of a release or Hub folder")

    @classmethod
    def parse(cls, kwargs: dict[str, Any], *, owner: str, default_split: str | None) -> Self:
        """As :meth:`Options.parse`, and a sub-dataset name given as ``split`` means ``sub_dataset``
        (the Hub split is test)."""
        split = kwargs.get("split")
        if split not in (None, "test", "all") and kwargs.get("sub_dataset") is None:
            kwargs = {**kwargs, "split": "test", "sub_dataset": split}
        return super().parse(kwargs, owner=owner, default_split=default_split)
