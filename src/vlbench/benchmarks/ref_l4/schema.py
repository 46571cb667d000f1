"""Ref-L4 schema: the official columns, the Hub dataset's features, and the class tables.

Box format everywhere in Ref-L4's references: ``bbox`` = ``[x, y, w, h]`` in pixels (float64).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..benchmark import Options, option

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "RefL4Options",
    "METRIC_KEYS",
    "OFFICIAL_COLUMNS", "SPLITS", "SIZE_NAMES", "SOURCE_NAMES", "FIELD_DESCRIPTIONS",
    "features", "size_bucket", "source_of", "class_key", "category_name",
    "COCO_NAMES", "OFFICIAL_REFCOCO_TO_O365", "OFF_BY_ONE_COCO_IDS", "refcoco_to_o365",
    "SMALL_MAX", "LARGE_MIN", "written_in_integers",
]

#: a prediction entry, for messages; keys every entry has (how a file of another benchmark is
#: recognised)
PREDICTION_FORM = '{"id", "pred_bbox", "format"}'
PREDICTION_KEYS = frozenset({"pred_bbox"})

#: The columns of ``ref-l4-{val,test}.parquet`` in the official release, in their order.
OFFICIAL_COLUMNS = ("id", "caption", "bbox", "bbox_area", "bbox_id", "ori_category_id", "image_id",
                    "height", "width", "file_name", "is_rewrite", "split")
SPLITS = ("val", "test")
SIZE_NAMES = ("small", "medium", "large")
SOURCE_NAMES = ("coco", "objects365")

#: Size rule of the official scorer: s = sqrt(w*h) of the GT box; small < 128 <= medium <= 256 <
#: large. The contract's metric keys, in order.
METRIC_KEYS = ("Acc50", "Acc75", "Acc90", "mAcc", "small_Acc50", "small_mAcc", "medium_Acc50",
               "medium_mAcc", "large_Acc50", "large_mAcc", "class_Acc50", "class_mAcc")
SMALL_MAX = 128.0
LARGE_MIN = 256.0

FIELD_DESCRIPTIONS = {
    "image": "the image, embedded (JPEG/PNG bytes as in the release)",
    "id": "annotation id (int64, unique over val+test; predictions refer to it)",
    "caption": "the referring expression",
    "bbox": "ground-truth box [x, y, w, h] in pixels (float64; x, y = top-left corner)",
    "bbox_area": "area of the ground-truth box in square pixels, as released",
    "bbox_id": "id of the box in its source dataset",
    "ori_category_id": "source class id: 'refcoco_<COCO id>' or 'o365_<Objects365 id>'",
    "image_id": "id of the image in its source dataset",
    "height": "image height in pixels",
    "width": "image width in pixels",
    "file_name": "image file name inside images.tar.gz",
    "is_rewrite": "whether the expression was rewritten by the annotators",
    "split": "'val' or 'test'",
    "category": "class name (COCO name for refcoco_*, Objects365 name for o365_*) [derived]",
    "source": "image/annotation source: coco (RefCOCO/+/g) or objects365 [derived]",
    "size": "small / medium / large by sqrt(w*h) of bbox: < 128, 128..256, > 256 [derived]",
}


def features():
    """The Hub dataset's :class:`datasets.Features` (imported lazily: ``datasets`` is heavy)."""
    from datasets import ClassLabel, Features, Image, List, Value

    return Features({
        "image": Image(),
        "id": Value("int64"),
        "caption": Value("string"),
        "bbox": List(Value("float64"), length=4),
        "bbox_area": Value("float64"),
        "bbox_id": Value("string"),
        "ori_category_id": Value("string"),
        "image_id": Value("string"),
        "height": Value("int64"),
        "width": Value("int64"),
        "file_name": Value("string"),
        "is_rewrite": Value("bool"),
        "split": Value("string"),
        "category": Value("string"),
        "source": ClassLabel(names=list(SOURCE_NAMES)),
        "size": ClassLabel(names=list(SIZE_NAMES)),
    })


def size_buckets(w: ArrayLike, h: ArrayLike) -> NDArray[np.intp]:
    """The official size rule on GT boxes: ``sqrt(w*h)`` in float64, small (0) < 128 <= medium (1)
    <= 256 < large (2) (an index into SIZE_NAMES); a box of negative area has no size (3: counted in
    no size's accuracy)."""
    # here, not at the top: listing the benchmarks imports this module and needs no numpy
    import numpy as np

    with np.errstate(invalid="ignore"):
        side = np.sqrt(np.asarray(w, dtype=np.float64) * np.asarray(h, dtype=np.float64))
    return np.select([side < SMALL_MAX, side <= LARGE_MIN, side > LARGE_MIN], [0, 1, 2],
                     len(SIZE_NAMES))


def size_bucket(w: float, h: float) -> str:
    """The size name of one GT box (:func:`size_buckets`; a box without a size raises a ValueError,
    as the release has none)."""
    bucket = int(size_buckets(w, h))
    if bucket == len(SIZE_NAMES):
        raise ValueError(f"a box of negative area ({w} x {h}) has no size")
    return SIZE_NAMES[bucket]


def source_of(ori_category_id: str) -> str:
    """``refcoco_*`` rows come from RefCOCO/+/g (COCO images), ``o365_*`` rows from Objects365."""
    if ori_category_id.startswith("refcoco_"):
        return "coco"
    if ori_category_id.startswith("o365_"):
        return "objects365"
    raise ValueError(f"ori_category_id {ori_category_id!r} is neither refcoco_<N> nor o365_<N>")


COCO_NAMES: dict[int, str] = {
    1: "person", 2: "bicycle", 3: "car", 4: "motorcycle", 5: "airplane", 6: "bus", 7: "train",
    8: "truck", 9: "boat", 10: "traffic light", 11: "fire hydrant", 13: "stop sign",
    14: "parking meter", 15: "bench", 16: "bird", 17: "cat", 18: "dog", 19: "horse", 20: "sheep",
    21: "cow", 22: "elephant", 23: "bear", 24: "zebra", 25: "giraffe", 27: "backpack",
    28: "umbrella", 31: "handbag", 32: "tie", 33: "suitcase", 34: "frisbee", 35: "skis",
    36: "snowboard", 37: "sports ball", 38: "kite", 39: "baseball bat", 40: "baseball glove",
    41: "skateboard", 42: "surfboard", 43: "tennis racket", 44: "bottle", 46: "wine glass",
    47: "cup", 48: "fork", 49: "knife", 50: "spoon", 51: "bowl", 52: "banana", 53: "apple",
    54: "sandwich", 55: "orange", 56: "broccoli", 57: "carrot", 58: "hot dog", 59: "pizza",
    60: "donut", 61: "cake", 62: "chair", 63: "couch", 64: "potted plant", 65: "bed",
    67: "dining table", 70: "toilet", 72: "tv", 73: "laptop", 74: "mouse", 75: "remote",
    76: "keyboard", 77: "cell phone", 78: "microwave", 79: "oven", 80: "toaster", 81: "sink",
    82: "refrigerator", 84: "book", 85: "clock", 86: "vase", 87: "scissors", 88: "teddy bear",
    89: "hair drier", 90: "toothbrush",
}

#: The official scorer's RefCOCO (COCO id) -> Objects365 id table (``ref_l4/evaluation.py``),
#: ten wrong entries included (see OFF_BY_ONE_COCO_IDS). 37 (sports ball) -> placeholder 100000.
OFFICIAL_REFCOCO_TO_O365: dict[int, int] = {
    1: 1, 2: 47, 3: 6, 4: 59, 5: 115, 6: 56, 7: 117, 8: 66, 9: 22, 10: 41, 11: 177, 13: 128,
    14: 250, 15: 25, 16: 56, 17: 140, 18: 93, 19: 79, 20: 100, 21: 97, 22: 145, 23: 296,
    24: 179, 25: 181, 27: 39, 28: 40, 31: 13, 32: 44, 33: 194, 34: 220, 35: 119, 36: 174,
    37: 100000, 38: 155, 39: 138, 40: 114, 41: 146, 42: 147, 43: 205, 44: 9, 46: 36, 47: 11,
    48: 89, 49: 85, 50: 94, 51: 26, 52: 113, 53: 83, 54: 266, 55: 104, 56: 142, 57: 153,
    58: 235, 59: 144, 60: 151, 61: 98, 62: 3, 63: 51, 64: 26, 65: 76, 67: 98, 70: 154, 72: 37,
    73: 74, 74: 116, 75: 133, 76: 107, 77: 62, 78: 164, 79: 135, 80: 278, 81: 82, 82: 134,
    84: 19, 85: 95, 86: 31, 87: 170, 88: 70, 89: 328, 90: 227,
}

#: COCO ids whose official entry points one Objects365 id too low (bird -> Bus, ...).
OFF_BY_ONE_COCO_IDS = frozenset({16, 31, 33, 35, 51, 55, 67, 72, 88, 89})


def refcoco_to_o365(protocol: str) -> dict[int, int]:
    """The class table: ``official`` as shipped, ``corrected`` with the ten entries moved up by
    one."""
    if protocol == "official":
        return dict(OFFICIAL_REFCOCO_TO_O365)
    return {c: o + 1 if c in OFF_BY_ONE_COCO_IDS else o for c,
            o in OFFICIAL_REFCOCO_TO_O365.items()}


def class_key(ori_category_id: Any, table: dict[int, int]) -> Any:
    """The official class bucket: an exact look-up of the string ``refcoco_<N>`` in the table (so
    ``refcoco_016`` or non-ASCII digits are classes of their own, as in the official dict), else the
    id unchanged."""
    for n, o365 in table.items():   # 80 entries; called once per distinct id
        if ori_category_id == f"refcoco_{n}":
            return f"o365_{o365}"
    return ori_category_id


@lru_cache(maxsize=1)
def _o365_names() -> dict[int, str]:
    text = (
        resources.files("vlbench")
        .joinpath("data/objects365_names.json")
        .read_text(encoding="utf-8")
    )
    return {int(k): v for k, v in json.loads(text).items()}


def category_name(key: Any) -> str:
    """Human name of ``refcoco_N`` / ``o365_N`` (the id itself when the number is unknown, ``null``
    for a null)."""
    if not isinstance(key, str):
        return "null" if key is None else repr(key)
    prefix, _, tail = key.rpartition("_")
    if tail.isascii() and tail.isdigit():   # "refcoco_\u00b9" is no number: int() would raise
        if prefix == "refcoco" and int(tail) in COCO_NAMES:
            return COCO_NAMES[int(tail)]
        if prefix == "o365" and int(tail) in _o365_names():
            return _o365_names()[int(tail)]
    return key


def written_in_integers(box: Any) -> bool:
    """Whether a predicted box is a list of integers (booleans and numpy integers too): the official
    evaluator's int64 tensor, whose areas are exact (the evaluate module notes it before its float64
    feature sees the box)."""
    import numpy as np

    return isinstance(box, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in box)


@dataclass(frozen=True)
class RefL4Options(Options):
    """Ref-L4 options: what a row without a prediction is."""

    missing: str = option("error", "rows without a prediction: 'error', or 'miss' to count them as "
                                   "misses",
                          ("error", "miss"))
