"""Ref-L4's error analysis: accuracy by expression length (the benchmark's long-expression focus)
and object size, the IoU histogram, and every miss (IoU <= 0.5, as Acc@0.5 counts it) given one
cause, tested in this order:

- ``no_prediction``: the row has no prediction (``missing="miss"``);
- ``out_of_image``: less than half of the box lies inside the image (needs the references' width /
  height);
- ``same_class_object``: the box lies on another annotated object of the same category (IoU > 0.5),
  the referring-expression error proper: the right kind of object, not the one described;
- ``other_class_object``: it lies on an annotated object of another category (IoU > 0.5);
- ``localisation``: it overlaps its own object, poorly (0.1 <= IoU <= 0.5);
- ``background``: anything else.

Each cause's ``delta_Acc50`` is what Acc@0.5 gains when its misses are fixed (count / rows * 100):
one box per row, so, unlike the detection benchmarks', these parts add up to 100 - Acc@0.5. Other
objects are the other boxes of the same image in the scored references (only annotated objects are
known)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.geometry import iou_aligned_xyxy, xywh_to_xyxy
from ...engine.sorting import same_key_combinations
from . import schema
from .records import RefL4References

__all__ = ["analyze", "CAUSES", "LENGTHS", "IOU_BINS"]

CAUSES = ("no_prediction", "out_of_image", "same_class_object", "other_class_object",
          "localisation", "background")

DEFINITIONS = {
    "no_prediction": "the row has no prediction",
    "out_of_image": "less than half of the predicted box lies inside the image",
    "same_class_object": "the box lies on another object of the same category (IoU > 0.5)",
    "other_class_object": "the box lies on an object of another category (IoU > 0.5)",
    "localisation": "the box overlaps its own object, poorly (0.1 <= IoU <= 0.5)",
    "background": "any other miss",
}

#: expression length buckets (words, inclusive)
LENGTHS = ((1, 10), (11, 20), (21, 30), (31, 50), (51, 10**9))

#: the IoU histogram's bin edges
IOU_BINS = tuple(i / 10 for i in range(11))

EXAMPLES = 5


def _inside_share(boxes_xyxy: NDArray[np.float64],
                  size_wh: NDArray[np.float64]) -> NDArray[np.float64]:
    """The share of each box's area inside its image (NaN where the box or the size is unknown)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.clip(np.minimum(boxes_xyxy[:, 2], size_wh[:, 0]) - np.maximum(boxes_xyxy[:, 0], 0),
                    0, None)
        h = np.clip(np.minimum(boxes_xyxy[:, 3], size_wh[:, 1]) - np.maximum(boxes_xyxy[:, 1], 0),
                    0, None)
        area = (boxes_xyxy[:, 2] - boxes_xyxy[:, 0]) * (boxes_xyxy[:, 3] - boxes_xyxy[:, 1])
        return np.where(area > 0, w * h / area, 0.0)


def _on_other_objects(refs: RefL4References, boxes_xyxy: NDArray[np.float64],
                      rows: NDArray[np.int64] ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """For each row of ``rows``: does its box lie (IoU > 0.5) on another object of its image of the
    same category, and on one of another category (other objects: the image's other distinct GT
    boxes)."""
    same = np.zeros(len(rows), dtype=bool)
    other = np.zeros(len(rows), dtype=bool)
    if refs.image is None or not len(rows):
        return same, other
    c_row, c_other = same_key_combinations(refs.image[rows], refs.image)
    distinct = np.any(refs.bbox_xywh[rows[c_row]] != refs.bbox_xywh[c_other], axis=1)
    c_row, c_other = c_row[distinct], c_other[distinct]
    with np.errstate(invalid="ignore", over="ignore"):
        iou = iou_aligned_xyxy(boxes_xyxy[rows[c_row]], xywh_to_xyxy(refs.bbox_xywh[c_other]),
                               dtype=np.float64)
    on = np.nan_to_num(iou, nan=0.0) > 0.5
    category = np.asarray(refs.ori_category_id, dtype=object)
    same_category = category[rows[c_row]] == category[c_other]
    same[c_row[on & same_category]] = True
    other[c_row[on & ~same_category]] = True
    return same, other


def miss_causes(refs: RefL4References, boxes_xyxy: NDArray[np.float64], present: NDArray[np.bool_],
                iou: NDArray[np.float32], hit: NDArray[np.bool_]) -> NDArray[np.int8]:
    """Per row: the index into CAUSES of its miss, -1 for a hit."""
    cause = np.full(len(iou), -1, dtype=np.int8)
    miss = np.flatnonzero(~hit)
    same, other = _on_other_objects(refs, boxes_xyxy, miss)
    inside = (_inside_share(boxes_xyxy[miss], refs.image_size[miss]) if refs.image_size is not None
              else np.full(len(miss), np.nan))
    tests = [("no_prediction", ~present[miss]), ("out_of_image", inside < 0.5),
             ("same_class_object", same), ("other_class_object", other),
             ("localisation", iou[miss] >= 0.1), ("background", np.ones(len(miss), dtype=bool))]
    for name, test in tests:
        new = (cause[miss] < 0) & test
        cause[miss[new]] = CAUSES.index(name)
    return cause


def _accuracy_by(labels: NDArray[Any], hit: NDArray[np.bool_],
                 order: list[str]) -> dict[str, dict[str, Any]]:
    """Per label value (in ``order``): rows and Acc@0.5."""
    out = {}
    for value in order:
        mask = labels == value
        n = int(mask.sum())
        out[value] = {"n": n, "Acc50": float(hit[mask].mean() * 100) if n else None}
    return out


class CauseReplicator:
    """Each cause's cost (its share of the rows, percent) under unit weights
    (:mod:`vlbench.engine.uncertainty`): per unit, its rows of each cause (keys
    ``analysis:<cause>``, as the detection benchmarks' costs)."""

    def __init__(self, cause: NDArray[np.int8], unit_of_row: NDArray[np.int64], unit: str) -> None:
        _, units = np.unique(unit_of_row, return_inverse=True)
        n_units = int(units.max()) + 1 if len(units) else 0
        self.strata, self.unit = (n_units,), unit
        self.rows = np.bincount(units, minlength=n_units).astype(np.float64)
        self.per_cause = (
            np.stack(
                [np.bincount(units[cause == c], minlength=n_units) for c in range(len(CAUSES))]
            ).astype(np.float64)
            if len(CAUSES)
            else np.zeros((0, n_units))
        )

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """``weights`` (R, units) -> ``analysis:<cause>`` -> (R,) percent of the weighted rows."""
        with np.errstate(divide="ignore", invalid="ignore"):
            share = (self.per_cause @ weights.T) / (self.rows @ weights.T) * 100       # (causes, R)
        return {f"analysis:{c}": share[i] for i, c in enumerate(CAUSES)}


def analyze(refs: RefL4References, boxes_xyxy: NDArray[np.float64], present: NDArray[np.bool_],
            iou: NDArray[np.float32], hit: NDArray[np.bool_]) -> tuple[dict[str, Any],
                                                                       NDArray[np.int8]]:
    """The analysis of one scored split (``iou`` and ``hit``, IoU > 0.5, as the scorer computed
    them), and each row's cause (index into CAUSES, -1 for a hit: what :class:`CauseReplicator`
    resamples)."""
    cause = miss_causes(refs, boxes_xyxy, present, iou, hit)
    n = len(iou)
    counts = np.bincount(cause[cause >= 0], minlength=len(CAUSES))
    errors = {c: {"count": int(counts[i]),
                  "delta_Acc50": 100.0 * float(counts[i]) / n if n else None,
                  "definition": DEFINITIONS[c]} for i, c in enumerate(CAUSES)}
    length_names = [f"{lo}-{hi}" if hi < 10**9 else f">{lo - 1}" for lo, hi in LENGTHS]
    slices: dict[str, Any] = {}
    if refs.expressions is not None:
        words = np.asarray([len(e.split()) for e in refs.expressions])
        label = np.full(n, "", dtype=object)
        for name, (lo, hi) in zip(length_names, LENGTHS):
            label[(words >= lo) & (words <= hi)] = name
        slices["length"] = _accuracy_by(label, hit, length_names)
    # none: a GT box of negative area
    names = np.asarray((*schema.SIZE_NAMES, "none"), dtype=object)
    size = names[schema.size_buckets(refs.bbox_xywh[:, 2], refs.bbox_xywh[:, 3])]
    slices["size"] = _accuracy_by(size, hit, list(schema.SIZE_NAMES))
    histogram = np.histogram(
        np.clip(np.nan_to_num(iou.astype(np.float64), nan=0.0), 0, 1), bins=IOU_BINS
    )[0]
    examples = {}
    for i, c in enumerate(CAUSES):
        rows = np.flatnonzero(cause == i)[:EXAMPLES]
        examples[c] = [
            {
                "id": refs.row_id(r),
                "iou": float(iou[r]),
                **({"expression": refs.expressions[r]} if refs.expressions is not None else {}),
            }
            for r in rows.tolist()
        ]
    return {"delta_key": "Acc50", "as_scored": float(hit.mean() * 100) if n else None,
            "errors": errors,
            "slices": slices,
            "iou_histogram": {"edges": list(IOU_BINS), "counts": histogram.tolist()},
            "examples": examples, "note": "not official: every miss at IoU 0.5 given one cause "
                                          "(vlbench.benchmarks.ref_l4.analysis); the parts add up "
                                          "to 100 - Acc50"}, cause
