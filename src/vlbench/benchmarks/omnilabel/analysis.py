"""OmniLabel's error analysis (:mod:`vlbench.engine.error_analysis`): the detections as the official
evaluation matches them per (image, description), ranked in two pooled groups (categories, free-form
descriptions) as AP_categ and AP_descr rank them, with the negative descriptions of each image as
its negative labels; ΔAP50 per error type is on the harmonic mean of AP50_categ and AP50_descr (the
headline AP's form at IoU 0.5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine import error_analysis as ea
from ...engine.cocoeval import Matches, PairDetections, Params
from . import schema
from .records import OmniLabelReferences

__all__ = ["analyze", "KEEP_GT_AT"]

#: the IoU threshold whose matches the analysis reads (``match(..., keep_gt_at=KEEP_GT_AT)``)
KEEP_GT_AT = ea.FOREGROUND_IOU

#: the two ranking groups of the headline, in the order of the AP array
_GROUPS = ("categ", "descr")


def _headline(ap: NDArray[np.float64]) -> float | None:
    """The harmonic mean of the two groups' AP50 (omnilabeltools' formula), None when either has no
    GT."""
    from .scorer import harmonic_mean_ap

    return None if (ap < 0).any() else float(harmonic_mean_ap(ap[0], ap[1]))


def _description_kind(gt: OmniLabelReferences) -> NDArray[np.str_]:
    """Per pair: category, positive description or negative description (refers to nothing in the
    image)."""
    return np.where(gt.pair_type == schema.TYPE_C, "category",
                    np.where(gt.pair_type == schema.TYPE_DN, "negative description",
                             "positive description"))


def _length(gt: OmniLabelReferences) -> NDArray[np.str_]:
    """Per pair: the description's length bucket of AP_descr_S / M / L (categories apart)."""
    words = gt.pair_words
    return np.where(gt.pair_type == schema.TYPE_C, "category",
                    np.where(words <= 3, "short (<= 3 words)",
                             np.where(words <= 8, "medium (4-8)", "long (>= 9)")))


def _headline_rows(ap: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`_headline` per resample: (R, 2) APs, NaN undefined -> (R,) harmonic means (NaN if
    either is)."""
    from .scorer import harmonic_mean_ap

    return harmonic_mean_ap(ap[:, 0], ap[:, 1])


def analyze(gt: OmniLabelReferences, dets: PairDetections, matches: Matches, params: Params,
            max_det: int) -> tuple[dict[str, Any], Callable[[], ea.AnalysisReplicator]]:
    """The analysis from the official matching (run with ``keep_gt_at=KEEP_GT_AT``; ``max_det``
    indexes the max-dets setting of the headline, 100), and what builds its bootstrap replicator
    (for ``vlbench compare``)."""
    m = matches
    assert m.gt_taken is not None, "match(..., keep_gt_at=0.5)"
    pair_group = np.where(gt.pair_type == schema.TYPE_C, 0, 1)
    rank_key = np.empty(len(m.score), dtype=np.int64)
    # the pooled ranking's tie order
    rank_key[np.argsort(-m.score, kind="stable")] = np.arange(len(m.score))
    t = int(np.flatnonzero(params.iou_thrs == KEEP_GT_AT)[0])
    box = dets.box_xywh[m.det_index]
    det = ea.RankedDetections(pair=m.pair, image=gt.pair_image[m.pair], group=pair_group[m.pair],
                              box_xywh=box,
                        rank_key=rank_key, state=m.state[0, t], gt_taken=m.gt_taken,
                        negative=gt.pair_type[m.pair] == schema.TYPE_DN)
    truth = ea.Truth(pair=gt.gt_pair, image=gt.pair_image[gt.gt_pair], group=pair_group[gt.gt_pair],
                     box_xywh=gt.gt_box, ignored=gt.gt_ignore)
    classified = ea.classify(det, truth)
    per_pair = {"description": ea.categories(_description_kind(gt)),
                "length": ea.categories(_length(gt)),
                "source": ea.categories(np.asarray(gt.image_source, dtype=object)[gt.pair_image]
                                        if len(gt.pair_image) else np.zeros(0, object))}

    def describe(what: str, i: int) -> dict[str, Any]:
        pair, xywh = (det.pair[i], box[i]) if what == "det" else (truth.pair[i], truth.box_xywh[i])
        out = {"image_id": gt.image_id(gt.pair_image[pair]),
               "label": gt.descr_text[int(gt.pair_descr[pair])], "bbox": [float(v) for v in xywh]}
        return {**out, "score": float(m.score[i])} if what == "det" else out

    slices = {"size": (ea.size_of(box), ea.size_of(truth.box_xywh), ea.SIZES),
              "shape": (ea.shape_of(box), ea.shape_of(truth.box_xywh), ea.SHAPES),
              **{name: (codes[det.pair], codes[truth.pair], names) for name,
                 (codes, names) in per_pair.items()}}
    out = ea.summary(det, truth, classified, len(_GROUPS), _headline, delta_key="AP50",
                     slices=slices, describe=describe, params=params)
    return out, lambda: ea.AnalysisReplicator(det, truth, classified, pair_group=pair_group,
                                              unit_of_pair=gt.pair_image, n_units=len(gt.image_ids),
                                              headline_rows=_headline_rows)
