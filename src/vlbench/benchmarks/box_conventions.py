"""The convention check for COCO-results detection files (``bbox`` = ``[x, y, w, h]`` pixels): the
file's box numbers read as written and as the other common conventions (xyxy pixels; xyxy as
fractions of the image, on a 0-1000 grid, or y first on a 0-1000 grid, which need image sizes), each
scored by the same cheap, ranking-free quantity: the share of GT boxes that some box of the same
image and label covers at IoU >= 0.5, whatever its score
(:func:`vlbench.engine.cocoeval.recall_any_score`). A wrong convention puts nearly every box off its
object; the right one covers what the model found. Only the first :data:`SAMPLE_IMAGES` images with
GT are read (sorted by id), so the check costs the same on a full split as on a small one; the
official number is never touched."""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.cocoeval import recall_any_score
from ..engine.geometry import read_boxes_as, xywh_to_xyxy
from .protocol.conventions import AS_WRITTEN

__all__ = ["KEY", "READINGS", "SAMPLE_IMAGES", "sample_images", "entries_of_images", "readings",
           "fix"]

#: the quantity compared between readings
KEY = "R50 (any score)"

#: the readings other than the official ``[x, y, w, h]`` pixels
READINGS = ("xyxy pixels", "xyxy 0-1 of the image", "xywh 0-1 of the image",
            "xyxy 0-1000 of the image", "yxyx 0-1000 of the image")

#: images (with GT, lowest ids first) whose boxes the check reads
SAMPLE_IMAGES = 200

_FIX = {
    "xyxy pixels": "write each bbox as [x, y, width, height] (x2 - x1, y2 - y1): the COCO results "
                   "format",
    "xyxy 0-1 of the image": "multiply x by the image width and y by its height, then write [x, y, "
                             "w, h] (vlbench predict / import: --box-format normalized)",
    "xywh 0-1 of the image": "multiply x and w by the image width, y and h by its height: [x, y, "
                             "w, h] pixels",
    "xyxy 0-1000 of the image": "divide by 1000, multiply x by the image width and y by its "
                                "height, then write [x, y, w, h] (--box-format grid-1000, the "
                                "Qwen-VL and InternVL convention)",
    "yxyx 0-1000 of the image": "swap to x first, then as the 0-1000 grid (--box-format "
                                "grid-1000-yx, Gemini's box_2d)",
}


def sample_images(gt_images: NDArray[np.int64], limit: int = SAMPLE_IMAGES) -> set[int]:
    """The ids of the first ``limit`` images that hold GT (sorted), as Python ints (for filtering
    entries)."""
    return set(np.unique(gt_images)[:limit].tolist())


def readings(g_key: NDArray[np.int64], g_box_xywh: NDArray[np.float64], d_key: NDArray[np.int64],
             d_numbers: NDArray[np.float64],
             d_size_wh: NDArray[np.float64] | None) -> dict[str, float | None]:
    """:data:`KEY` for the numbers as written (xywh pixels), then under each of :data:`READINGS`
    (None where a reading needs image sizes that are not given). ``g_key`` / ``d_key`` number
    (image, label) alike."""
    g_xyxy = xywh_to_xyxy(g_box_xywh)
    with np.errstate(invalid="ignore", over="ignore"):
        out = {AS_WRITTEN: recall_any_score(g_key, g_xyxy, d_key, xywh_to_xyxy(d_numbers))}
        for reading in READINGS:
            boxes = read_boxes_as(d_numbers, reading, d_size_wh)
            out[reading] = None if boxes is None else recall_any_score(g_key, g_xyxy, d_key, boxes)
    return out


def fix(reading: str) -> str:
    """How to write a file that is in convention ``reading`` as COCO results."""
    return _FIX.get(reading, "write each bbox as [x, y, width, height] pixels")


def entries_of_images(entries: Any, images: set[int]) -> list[Any]:
    """The entries (official dicts, or a scorer's typed records) of the given images, in file
    order."""
    typed = bool(entries) and isinstance(entries, list) and not isinstance(entries[0], dict)
    image_id = operator.attrgetter("image_id") if typed else operator.itemgetter("image_id")
    # entries the scorer has read: a hashable image_id each (a pass in C, not a Python loop)
    try:
        return list(itertools.compress(entries, map(images.__contains__, map(image_id, entries))))
    except (TypeError, KeyError, AttributeError):
        pass

    def wanted(entry: Any) -> bool:
        image = entry.get("image_id") if isinstance(entry, dict) else None
        return isinstance(image, (int, float)) and not isinstance(image, bool) and image in images

    return [e for e in entries if wanted(e)]
