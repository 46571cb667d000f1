"""Ref-L4's convention check: the file's ``pred_bbox`` numbers read as the official scorer reads
them (each entry's ``format``), and as the other common conventions of grounding models (xyxy or
xywh pixels; xyxy as fractions of the image, on a 0-1000 grid, or y first on a 0-1000 grid, which
need the references' image sizes). Each reading's Acc@0.5 is estimated the same way (float64 IoU >
0.5 of every row, a missing or unreadable box a miss), so the readings compare with each other; the
official number stays the scorer's."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.geometry import BOX_READINGS, iou_aligned_xyxy, read_boxes_as, xywh_to_xyxy
from ..protocol.conventions import AS_WRITTEN
from .records import RefL4References

__all__ = ["key", "readings", "fix", "READINGS"]

#: the metric compared
key = "Acc50"

#: the readings compared: every common one (a Ref-L4 entry declares its format, so both pixel forms
#: are readings)
READINGS = tuple(BOX_READINGS)

_FIX = {
    "xyxy pixels": 'write "format": "xyxy" in each entry (or convert the boxes to [x, y, w, h] '
    'with "format": "xywh")',
    "xywh pixels": 'write "format": "xywh" in each entry (or convert the boxes to '
                   "[x1, y1, x2, y2])",
    "xyxy 0-1 of the image": "multiply x by the image width and y by its height (vlbench predict / "
                             "import: --box-format normalized)",
    "xywh 0-1 of the image": "multiply x and w by the image width, y and h by its height, with "
    '"format": "xywh"',
    "xyxy 0-1000 of the image": "divide by 1000 and multiply x by the image width, y by its height "
                                "(--box-format grid-1000, the Qwen-VL and InternVL convention)",
    "yxyx 0-1000 of the image": "swap to x first, then as the 0-1000 grid (--box-format "
    "grid-1000-yx, Gemini's box_2d)",
}


def _acc50(refs: RefL4References, boxes_xyxy: NDArray[np.float64]) -> float:
    """100 * share of rows whose box has IoU > 0.5 with the GT (NaN boxes: misses)."""
    with np.errstate(invalid="ignore"):
        iou = iou_aligned_xyxy(xywh_to_xyxy(refs.bbox_xywh), boxes_xyxy, dtype=np.float64)
    return float(np.mean(np.nan_to_num(iou, nan=0.0) > 0.5) * 100) if len(refs) else 0.0


def readings(refs: RefL4References, predictions: Any,
             options: Any = None) -> dict[str, float | None]:
    """Acc@0.5 as written, then under each reading of :data:`READINGS`; the entries aligned with the
    rows as the scorer aligns them (:func:`.scorer.parse_predictions`, a missing row a miss)."""
    from .scorer import parse_predictions

    preds = parse_predictions(predictions, refs, missing="miss")
    raw = preds.numbers if preds.numbers is not None else np.full((len(refs), 4), np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        out: dict[str, float | None] = {AS_WRITTEN: _acc50(refs, np.where(preds.present[:, None],
                                                                          preds.boxes_xyxy,
                                                                          np.nan))}
        for reading in READINGS:
            boxes = read_boxes_as(raw, reading, refs.image_size)
            out[reading] = None if boxes is None else _acc50(refs, boxes)
    return out


def fix(reading: str) -> str:
    """How to write a file that is in convention ``reading`` so that it is read right."""
    return _FIX.get(reading, "convert the boxes to the official format")
