"""Ref-L4's convention check: the file's ``pred_bbox`` numbers read as the official scorer reads them (each entry's
``format``), and as the other common conventions of grounding models (xyxy or xywh pixels; xyxy as fractions of
the image, on a 0-1000 grid, or y first on a 0-1000 grid, which need the references' image sizes). Each reading's
Acc@0.5 is estimated the same way (float64 IoU > 0.5 of every row, a missing or unreadable box a miss), so the
readings compare with each other; the official number stays the scorer's."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...geometry import iou_aligned_xyxy, xywh_to_xyxy
from ...protocol.conventions import AS_WRITTEN
from .records import RefL4References

__all__ = ["key", "readings", "fix", "READINGS"]

#: the metric compared
key = "Acc50"

#: reading -> (x first?, scale: None for pixels, else the grid the numbers are on, per image side; xywh?)
READINGS: dict[str, tuple[bool, float | None, bool]] = {
    "xyxy pixels": (True, None, False),
    "xywh pixels": (True, None, True),
    "xyxy 0-1 of the image": (True, 1.0, False),
    "xyxy 0-1000 of the image": (True, 1000.0, False),
    "yxyx 0-1000 of the image": (False, 1000.0, False),
}

_FIX = {
    "xyxy pixels": 'write "format": "xyxy" in each entry (or convert the boxes to [x, y, w, h] with "format": "xywh")',
    "xywh pixels": 'write "format": "xywh" in each entry (or convert the boxes to [x1, y1, x2, y2])',
    "xyxy 0-1 of the image": "multiply x by the image width and y by its height (vlbench predict / import: "
                             "--box-format normalized)",
    "xyxy 0-1000 of the image": "divide by 1000 and multiply x by the image width, y by its height (--box-format "
                                "grid-1000, the Qwen-VL and InternVL convention)",
    "yxyx 0-1000 of the image": "swap to x first, then as the 0-1000 grid (--box-format grid-1000-yx, Gemini's box_2d)",
}


def _aligned(refs: RefL4References, predictions: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Per reference row, its prediction's four numbers (NaN when there is none or they are not four numbers; the
    first entry of an id) and whether the entry declares "xywh". Replaces a dict lookup per row."""
    raw = np.full((len(refs), 4), np.nan)
    xywh = np.zeros(len(refs), dtype=bool)
    kept = predictions if isinstance(predictions, list) else []
    try:        # a file the scorer accepted: one array at once
        with np.errstate(over="ignore", invalid="ignore"):
            boxes = np.array([e["pred_bbox"] for e in kept], dtype=np.float64).reshape(len(kept), 4)
    except (KeyError, TypeError, ValueError):       # odd entries (kept under the official protocol): filtered
        kept = [e for e in kept if isinstance(e, dict) and isinstance(e.get("pred_bbox"), list)
                and len(e["pred_bbox"]) == 4 and all(type(v) in (int, float) for v in e["pred_bbox"])]
        boxes = np.array([e["pred_bbox"] for e in kept], dtype=np.float64).reshape(len(kept), 4)
    if not kept or not len(refs):
        return raw, xywh
    table = np.column_stack([boxes, [e.get("format") == "xywh" for e in kept]])   # x, y, a, b, declared xywh
    ids = np.array([e.get("id") if type(e.get("id")) is int else None for e in kept], dtype=object)
    small = np.array([i is not None and abs(i) < 2**63 for i in ids.tolist()], dtype=bool)   # an int64 id
    ids_i = ids[small].astype(np.int64)
    uniq, first = np.unique(ids_i, return_index=True)                 # the first entry of each id
    at = np.minimum(np.searchsorted(uniq, refs.ids), len(uniq) - 1)
    found = uniq[at] == refs.ids
    rows = np.flatnonzero(small)[first[at[found]]]
    raw[found] = table[rows, :4]
    xywh[found] = table[rows, 4] > 0
    return raw, xywh


def _acc50(refs: RefL4References, boxes_xyxy: NDArray[np.float64]) -> float:
    """100 * share of rows whose box has IoU > 0.5 with the GT (NaN boxes: misses)."""
    with np.errstate(invalid="ignore"):
        iou = iou_aligned_xyxy(xywh_to_xyxy(refs.bbox_xywh), boxes_xyxy, dtype=np.float64)
    return float(np.mean(np.nan_to_num(iou, nan=0.0) > 0.5) * 100) if len(refs) else 0.0


def _read(raw: NDArray[np.float64], reading: str, size: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
    """The four numbers of every row as xyxy pixels under ``reading`` (None when it needs image sizes)."""
    x_first, grid, is_xywh = READINGS[reading]
    boxes = raw if x_first else raw[:, [1, 0, 3, 2]]
    if is_xywh:
        boxes = xywh_to_xyxy(boxes)
    if grid is None:
        return boxes
    if size is None:
        return None
    scale = np.column_stack([size[:, 0], size[:, 1], size[:, 0], size[:, 1]]) / grid
    return boxes * scale


def readings(refs: RefL4References, predictions: Any) -> dict[str, float | None]:
    """Acc@0.5 as written, then under each reading of :data:`READINGS`."""
    raw, declared_xywh = _aligned(refs, predictions)
    with np.errstate(invalid="ignore", over="ignore"):
        out: dict[str, float | None] = {AS_WRITTEN: _acc50(refs, np.where(declared_xywh[:, None], xywh_to_xyxy(raw), raw))}
        for reading in READINGS:
            boxes = _read(raw, reading, refs.image_size)
            out[reading] = None if boxes is None else _acc50(refs, boxes)
    return out


def fix(reading: str) -> str:
    """How to write a file that is in convention ``reading`` so that it is read right."""
    return _FIX.get(reading, "convert the boxes to the official format")
