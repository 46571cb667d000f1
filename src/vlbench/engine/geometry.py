"""Box geometry on numpy arrays: format conversion and IoU.

Boxes are ``(..., 4)`` arrays in pixels. ``xywh`` is ``[x, y, w, h]`` (COCO), ``xyxy`` is
``[x1, y1, x2, y2]``. No function uses the old "+1 pixel" convention; none of the official scorers
do.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["xywh_to_xyxy", "xyxy_to_xywh", "box_area", "iou_aligned_xyxy", "coco_iou_xywh",
           "iou_matrix_xywh", "BOX_READINGS", "read_boxes_as"]


def xywh_to_xyxy(boxes_xywh: ArrayLike) -> NDArray[np.float64]:
    """``[x, y, w, h] -> [x, y, x + w, y + h]``, the sums in float64 (as Python floats would be)."""
    b = np.asarray(boxes_xywh, dtype=np.float64)
    out = b.copy()
    out[..., 2] = b[..., 0] + b[..., 2]
    out[..., 3] = b[..., 1] + b[..., 3]
    return out


def xyxy_to_xywh(boxes_xyxy: ArrayLike) -> NDArray[np.float64]:
    """``[x1, y1, x2, y2] -> [x1, y1, x2 - x1, y2 - y1]`` in float64."""
    b = np.asarray(boxes_xyxy, dtype=np.float64)
    out = b.copy()
    out[..., 2] = b[..., 2] - b[..., 0]
    out[..., 3] = b[..., 3] - b[..., 1]
    return out


def box_area(boxes_xyxy: NDArray) -> NDArray:
    """``(x2 - x1) * (y2 - y1)`` in the input dtype (negative for inverted boxes, as mmdet computes
    it)."""
    return (boxes_xyxy[..., 2] - boxes_xyxy[..., 0]) * (boxes_xyxy[..., 3] - boxes_xyxy[..., 1])


def iou_aligned_xyxy(boxes_a_xyxy: ArrayLike, boxes_b_xyxy: ArrayLike, *, dtype: type = np.float32,
                     eps: float = 1e-6, exact_area_b: bool = False) -> NDArray:
    """IoU of row i of ``a`` with row i of ``b``, every operation rounded to ``dtype``.

    Reproduces mmdetection's ``bbox_overlaps(mode="iou", is_aligned=True)`` (as used on float32
    tensors by scorers built on mmdetection): ``union = max(area_a + area_b - overlap, eps)``, so an
    inverted or empty box gets IoU 0 rather than a division by zero. ``exact_area_b``: ``b`` holds
    integers and was an int64 tensor, so its area is the exact integer product, rounded to ``dtype``
    only where it is added.
    """
    a: NDArray[np.floating] = np.asarray(boxes_a_xyxy).astype(dtype, copy=False)
    b_exact = np.asarray(boxes_b_xyxy)
    # NaN / inf boxes propagate as in torch: IoU NaN or 0
    with np.errstate(invalid="ignore", over="ignore"):
        b: NDArray[np.floating] = b_exact.astype(dtype, copy=False)
        if a.shape != b.shape or a.shape[-1:] != (4,):
            raise ValueError(f"aligned IoU needs two (N, 4) arrays of equal shape, got {a.shape} "
                             f"and {b.shape}")
        area_a = box_area(a)
        area_b = box_area(b_exact.astype(np.int64)).astype(dtype) if exact_area_b else box_area(b)
        lt = np.maximum(a[..., :2], b[..., :2])
        rb = np.minimum(a[..., 2:], b[..., 2:])
        wh = np.maximum(rb - lt, dtype(0))
        overlap = wh[..., 0] * wh[..., 1]
        union = np.maximum((area_a + area_b) - overlap, dtype(eps))
        return overlap / union


def coco_iou_xywh(dt_cols: NDArray[np.float64], gt_cols: NDArray[np.float64],
                  gt_iscrowd: ArrayLike) -> NDArray[np.float64]:
    """pycocotools ``bbIou`` on xywh boxes given as coordinate columns ``(4, ...)`` that broadcast
    against each other (aligned rows, or ``[:, :, None]`` against ``[:, None, :]`` for a matrix).

    Intersection 0 unless neither its width nor its height is <= 0; for a crowd ground truth the
    denominator is the detection's own area. Same operations as the C code, so bit-identical, NaN
    and infinity included: ``fmin`` / ``fmax`` skip a NaN operand, and a NaN width is not ``<= 0``.
    """
    dx, dy, dw, dh = dt_cols
    gx, gy, gw, gh = gt_cols
    with np.errstate(invalid="ignore", over="ignore"):
        iw = np.fmin(dw + dx, gw + gx) - np.fmax(dx, gx)
        ih = np.fmin(dh + dy, gh + gy) - np.fmax(dy, gy)
        positive = ~(iw <= 0) & ~(ih <= 0)
        inter = np.where(positive, iw * ih, 0.0)
        area_d = dw * dh
        union = np.where(gt_iscrowd, area_d, area_d + gw * gh - inter)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(positive, inter / union, 0.0)


def iou_matrix_xywh(dt_xywh: ArrayLike, gt_xywh: ArrayLike,
                    gt_iscrowd: ArrayLike | None = None) -> NDArray[np.float64]:
    """IoU of every detection with every ground-truth box, ``(D, G)`` in float64 (pycocotools
    ``maskUtils.iou``)."""
    d = np.asarray(dt_xywh, dtype=np.float64).reshape(-1, 4)
    g = np.asarray(gt_xywh, dtype=np.float64).reshape(-1, 4)
    crowd = (np.zeros(len(g), dtype=bool) if gt_iscrowd is None
             else np.asarray(gt_iscrowd, dtype=bool).reshape(-1))
    return coco_iou_xywh(d.T[:, :, None], g.T[:, None, :], crowd[None, :])


#: the common ways a box's four numbers are meant: reading -> (x first, the grid the numbers are on
#: per image side (None: pixels), xywh). A wrong one is the first cause of near-zero grounding
#: scores (the convention check).
BOX_READINGS: dict[str, tuple[bool, float | None, bool]] = {
    "xyxy pixels": (True, None, False),
    "xywh pixels": (True, None, True),
    "xyxy 0-1 of the image": (True, 1.0, False),
    "xywh 0-1 of the image": (True, 1.0, True),
    "xyxy 0-1000 of the image": (True, 1000.0, False),
    "yxyx 0-1000 of the image": (False, 1000.0, False),
}


def read_boxes_as(numbers: NDArray[np.float64], reading: str,
                  size_wh: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
    """``(N, 4)`` numbers as written -> xyxy pixels under ``reading`` (:data:`BOX_READINGS`);
    ``size_wh`` ``(N, 2)`` is each box's image (width, height), needed by the grid readings (None
    without it)."""
    x_first, grid, is_xywh = BOX_READINGS[reading]
    boxes = numbers if x_first else numbers[:, [1, 0, 3, 2]]
    if is_xywh:
        boxes = xywh_to_xyxy(boxes)
    if grid is None:
        return np.asarray(boxes, dtype=np.float64)
    if size_wh is None:
        return None
    return boxes * (
        np.column_stack([size_wh[:, 0], size_wh[:, 1], size_wh[:, 0], size_wh[:, 1]]) / grid
    )
