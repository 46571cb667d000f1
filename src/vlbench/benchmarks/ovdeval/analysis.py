"""OVDEval's error analysis (:mod:`vlbench.engine.error_analysis`): the boxes the GT-guided
suppression keeps, as NMS-AP scores them, with each image's ``neg_text`` as its negative labels;
ΔNMS-AP50 per error type (the mean over categories of AP at IoU 0.5, as NMS_AP50). What the
suppression removed is counted apart (``suppressed``): those boxes never reach NMS-AP (the plain
AP's surplus is the result's ``inflation``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine import error_analysis as ea
from ...engine.cocoeval import CocoEvalResult, Params
from .records import OVDEvalSubset

__all__ = ["analyze", "KEEP_GT_AT"]

#: the IoU threshold whose matches the analysis reads (``evaluate_bbox(...,
#: keep_gt_at=KEEP_GT_AT)``)
KEEP_GT_AT = ea.FOREGROUND_IOU


def _mean_ap(ap: NDArray[np.float64]) -> float | None:
    """NMS_AP50's form: the mean over the categories that have GT."""
    defined = ap[ap >= 0]
    return float(defined.mean()) if len(defined) else None


def _mean_ap_rows(ap: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`_mean_ap` per resample: (R, K) APs, NaN undefined -> (R,) means of the defined (NaN if
    none)."""
    defined = np.isfinite(ap)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined, ap, 0.0).sum(axis=1) / defined.sum(axis=1)


def analyze(gt: OVDEvalSubset, nms: CocoEvalResult, suppressed: int,
            params: Params = ea.DEFAULT_PARAMS) -> tuple[dict[str, Any],
                                                         Callable[[], ea.AnalysisReplicator]]:
    """The analysis of one sub-dataset from its NMS-AP evaluation (run with
    ``keep_gt_at=KEEP_GT_AT``), and what builds its bootstrap replicator (for ``vlbench
    compare``)."""
    m, truth, dets = nms.matches, nms.truth, nms.detections
    assert truth is not None and dets is not None and m.gt_taken is not None, (
        "evaluate_bbox(..., keep_gt_at=0.5)"
    )
    cats, images = nms.category_ids, np.unique(gt.image_ids)
    K = max(len(cats), 1)
    rank_key = np.empty(len(m.score), dtype=np.int64)
    # the ranking's tie order
    rank_key[np.argsort(-m.score, kind="stable")] = np.arange(len(m.score))
    t = int(np.flatnonzero(params.iou_thrs == KEEP_GT_AT)[0])
    box = dets.box_xywh[m.det_index]
    det = ea.RankedDetections(pair=m.pair, image=m.pair // K, group=m.pair % K, box_xywh=box,
                              rank_key=rank_key,
                        state=m.state[0, t], gt_taken=m.gt_taken,
                        negative=gt.is_negative(images[m.pair // K], cats[m.pair % K]))
    outside = (truth.area < params.area_rngs[0][0]) | (truth.area > params.area_rngs[0][1])
    truths = ea.Truth(pair=truth.pair, image=truth.pair // K, group=truth.pair % K,
                      box_xywh=truth.box_xywh, ignored=truth.iscrowd | outside)
    classified = ea.classify(det, truths)

    def describe(kind: str, i: int) -> dict[str, Any]:
        pair, xywh = (det.pair[i], box[i]) if kind == "det" else (truths.pair[i],
                                                                  truths.box_xywh[i])
        out = {"image_id": int(images[pair // K]),
               "label": gt.category_names.get(int(cats[pair % K]), ""),
               "bbox": [float(v) for v in xywh]}
        return {**out, "score": float(m.score[i])} if kind == "det" else out

    slices = {"size": (ea.size_of(box), ea.size_of(truths.box_xywh), ea.SIZES),
              "shape": (ea.shape_of(box), ea.shape_of(truths.box_xywh), ea.SHAPES)}
    out = ea.summary(det, truths, classified, len(cats), _mean_ap, delta_key="NMS_AP50",
                     slices=slices, describe=describe, params=params)
    out["suppressed"] = suppressed
    pairs = np.arange(len(images) * K)
    return out, lambda: ea.AnalysisReplicator(det, truths, classified, pair_group=pairs % K,
                                              unit_of_pair=pairs // K,
                                              n_units=len(images), headline_rows=_mean_ap_rows)
