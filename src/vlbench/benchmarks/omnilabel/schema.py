"""OmniLabel schema: the Hub dataset's features and the official description groups.

Boxes everywhere: ``bbox`` = ``[x, y, w, h]`` in pixels.
"""

from __future__ import annotations

__all__ = ["SOURCES", "source_of", "image_features", "description_features", "GROUPS", "Group",
           "TYPE_C", "TYPE_DP", "TYPE_DN", "METRIC_KEYS", "SPLITS"]

#: a prediction entry, for messages; keys every entry has (how a file of another benchmark is
#: recognised)
PREDICTION_FORM = '{"image_id", "bbox", "description_ids", "scores"}'
PREDICTION_KEYS = frozenset({"description_ids", "scores"})

SPLITS = ("validation", "test")
SOURCES = ("coco", "objects365", "openimages", "other")

#: Pair types of the official evaluator: plain category, positive / negative free-form description.
TYPE_C, TYPE_DP, TYPE_DN = 0, 1, 2


def source_of(file_name: str) -> str:
    """The image's source dataset from its path (``coco/...``, ``object365/...``,
    ``openimagesv5/...``)."""
    head = file_name.replace("\\", "/").lstrip("./").split("/", 1)[0].lower()
    if head.startswith("coco"):
        return "coco"
    if head.startswith(("object365", "objects365", "o365")):
        return "objects365"
    if head.startswith("openimages"):
        return "openimages"
    return "other"


#: ``max_len`` of the official ``Params.descrGroups``: the upper bound of every word-count and
#: box-count range
MAX_LEN = 1e5


class Group:
    """One official description group: its pair types, and the inclusive ranges of the description's
    word count and of its number of referring GT boxes (``descrIdToNumRefBoxes``) it holds."""

    def __init__(self, name: str, key: str, types: tuple[int, ...], words: tuple[float, float],
                 boxes: tuple[float, float] = (0, MAX_LEN)) -> None:
        self.name, self.key, self.types, self.words, self.boxes = name, key, types, words, boxes


#: The groups of ``omnilabeltools`` ``Params.descrGroups`` (current version), with the project's
#: metric keys.
GROUPS = (
    Group("categ", "categ", (TYPE_C,), (0, MAX_LEN)),
    Group("descr", "descr", (TYPE_DP, TYPE_DN), (0, MAX_LEN)),
    Group("descr-pos", "descr_pos", (TYPE_DP,), (0, MAX_LEN)),
    Group("descr-s", "descr_S", (TYPE_DP, TYPE_DN), (0, 3)),
    Group("descr-m", "descr_M", (TYPE_DP, TYPE_DN), (4, 8)),
    Group("descr-l", "descr_L", (TYPE_DP, TYPE_DN), (9, MAX_LEN)),
)

#: The 13 official summary values, in their order, under the contract's keys.
METRIC_KEYS = ("AP", "AP_categ", "AP_descr", "AP_descr_pos", "AP_descr_S", "AP_descr_M",
               "AP_descr_L",
               "AP50_descr", "AP75_descr", "AP50_categ", "AP75_categ", "AR_descr", "AR_categ")


def image_features():
    """Features of the image rows (configs ``all``, ``coco``, ``objects365``, ``openimages``)."""
    from datasets import ClassLabel, Features, Image, List, Value

    return Features({
        "image": Image(),
        "image_id": Value("int64"),
        "file_name": Value("string"),
        "source": ClassLabel(names=list(SOURCES)),
        "labelspace": List({
            "id": Value("int64"),
            "text": Value("string"),
            "type": ClassLabel(names=["category", "description"]),
            "positive": Value("bool"),
            "num_words": Value("int32"),
        }),
        "boxes": List({
            "id": Value("int64"),
            "bbox": List(Value("float64"), length=4),
            "description_ids": List(Value("int64")),
            "iscrowd": Value("int64"),
            "area": Value("float64"),
            "category_id": Value("int64"),
            "isfake": Value("int64"),
            "isreflected": Value("int64"),
            "position": Value("int64"),
            "extra": Value("string"),
        }),
        "position": Value("int64"),
        "extra": Value("string"),
    })


def description_features():
    """Features of the ``descriptions`` config: the official ``descriptions`` array, one row
    each."""
    from datasets import Features, List, Value

    return Features({
        "id": Value("int64"),
        "text": Value("string"),
        "type": Value("string"),
        "orig_id": Value("int64"),
        "llm_generated": Value("bool"),
        "image_ids": List(Value("int64")),
        "extra": Value("string"),
    })


FIELD_DESCRIPTIONS = {
    "image": "the image, embedded",
    "image_id": "official image id",
    "file_name": "path of the image under the images root (coco/..., object365/..., "
                 "openimagesv5/...)",
    "source": "source dataset of the image, from its path",
    "labelspace": "the image's label space in official order: description id, text, type (category "
                  "or free-form description), positive (some box of this image refers to it), "
                  "number of words (whitespace split, as the official groups count them)",
    "boxes": "ground-truth boxes: id, bbox [x, y, w, h] in pixels, description_ids, iscrowd, and "
             "the other official fields (area, category_id, isfake, isreflected; extra = any "
             "further keys as JSON); position = index in the official annotations array. Empty on "
             "the test split",
    "position": "index of the image in the official images array",
    "extra": "further keys of the official image entry, as JSON",
}
