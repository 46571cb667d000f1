"""OVDEval scorer: NMS-AP (the official ``eval.py``) and plain COCO AP on the shared engine.

Official behaviour reproduced (OFFICIAL-SCORERS.md, section 2): per image and for every GT box
(any category, crowd included), the predictions of *any* label with IoU > 0.5 (strict, float64 on
xywh) are candidates; the highest-scoring one is kept and the others are marked; a prediction is
removed when marked and never kept ("keep wins"). Then stock pycocotools bbox AP (the file's
``area`` for the size ranges). Among equal top scores the official order is numpy's unstable sort;
vlbench uses the order numpy 2.4 showed, the later prediction of the image wins, and counts how
many decisions such a tie made.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine import cocoeval, sorting
from ...engine.error_analysis import TYPES as ERROR_TYPES
from ...engine.errors import InputError, PredictionError
from ...engine.geometry import xywh_to_xyxy
from ...engine.result import Result
from ...engine.uncertainty import merge
from .. import expect_prediction_list
from ..benchmark import Scorer, check_examples
from ..validation import (
    Scores,
    TypedCocoResult,
    aligned_lists,
    coded_ids,
    degenerate_box_warning,
    describe,
    integral_ids,
    read_boxes,
    read_scores,
    tie_bounds,
    typed_coco_columns,
    unusual_warning,
)
from . import reader, schema
from .records import OVDEvalReferences, OVDEvalSubset, PredictionFolder
from .schema import OVDEvalOptions

__all__ = ["OVDEvalScorer", "parse_predictions", "suppress", "score", "score_many",
           "score_references", "Predictions"]



class Predictions:
    """Validated predictions of one sub-dataset, file order, unknown images already dropped.
    ``scores`` keeps what the official arrays make of each score (integers, text; see
    :class:`vlbench.benchmarks.validation.Scores`)."""

    def __init__(self, image_id, category_id, box_xywh, scores, counts, warnings, score_text=None):
        self.image_id, self.category_id, self.box_xywh, self.scores = (
            image_id,
            category_id,
            box_xywh,
            scores,
        )
        self.score, self.counts, self.warnings, self.score_text = (
            scores.value,
            counts,
            warnings,
            score_text,
        )

    def as_dict(self, keep: NDArray[np.bool_] | None = None) -> dict[str, NDArray]:
        """The predictions (those in ``keep``) as the COCO engine's column dict."""
        sel = slice(None) if keep is None else keep
        out = {"image_id": self.image_id[sel], "category_id": self.category_id[sel],
               "bbox": self.box_xywh[sel], "score": self.score[sel]}
        if self.scores.exact is not None:
            out.update(score_exact=self.scores.exact[sel], score_is_int=self.scores.is_int[sel])
        return out


#: the category id given to labels written as text under the official protocol: no category has it,
#: so such predictions take part in the suppression and are never scored, as in ``eval.py``
NAME_AS_ID = np.iinfo(np.int64).min

#: how the official code treats each kind of unusual value kept under the official protocol
_HOW = {
    "non-finite": "the suppression's reversed argsort ranks a NaN score above every other and its "
                  "IoU test (> 0.5) fails on a NaN coordinate; COCOeval ranks a NaN score below "
                  "every other, and a NaN coordinate gives pycocotools' IoU the value its "
                  "fmin/fmax leave (a NaN IoU is never below the threshold, so it matches)",
    "boolean": "numpy reads true / false as 1 / 0",
    "integer beyond 2^53": "ordered exactly where the official arrays are int64 (the image's or "
                           "ranking's scores all integers), as float64 elsewhere",
    "text": "the image's scores are compared as text in the suppression; COCOeval never sees them "
            "(their category has no ground truth)",
}


def _fail(message: str, source: str, index: int, fix: str | None = None) -> None:
    raise PredictionError(message, file=source, entry=f"entry {index}", fix=fix)


def _resolve_labels(values: list[Any], gt: OVDEvalSubset, source: str, protocol: str
                    ) -> tuple[NDArray[np.int64], list[int]]:
    """Category ids, and the entries whose label is text. Officially a text label equals no category
    id, so it is never scored (:data:`NAME_AS_ID`); ``corrected`` resolves it through the category
    names when unambiguous. Where the categories' ids are text, a label is their code when it equals
    one of them, else no category."""
    if gt.category_table is not None:
        codes, known = coded_ids(values, gt.category_table, source, "category_id")
        return np.where(known, codes, NAME_AS_ID), []
    if set(map(type, values)) <= {int, float}:   # loadRes accepts 3.0 as category 3
        return integral_ids(values, source, "category_id"), []
    by_name: dict[str, list[int]] = {}
    for cid, name in gt.category_names.items():
        by_name.setdefault(name, []).append(cid)
    out = np.empty(len(values), dtype=np.int64)
    unknown, ambiguous, text = set(), set(), []
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = integral_ids([v], source, "category_id", start=i)[0]
        elif isinstance(v, str) and protocol == "official":
            out[i] = NAME_AS_ID
            text.append(i)
        elif isinstance(v, str):
            ids = by_name.get(v) or by_name.get(v.strip())
            if not ids:
                unknown.add(v)
            elif len(ids) > 1:
                ambiguous.add(v)
            else:
                out[i] = ids[0]
        else:
            _fail(f"'category_id' must be an integer id (or a category name), got {v!r}", source, i)
    if unknown or ambiguous:
        parts = []
        if unknown:
            parts.append(f"not a category name of {gt.name}: {sorted(unknown)[:5]}")
        if ambiguous:
            parts.append(f"names shared by several category ids: {sorted(ambiguous)[:5]}")
        raise PredictionError("labels given as text cannot be resolved (" + "; ".join(parts) + ")",
                              file=source,
                              fix="use the integer category ids of the sub-dataset's 'categories'")
    return out, text


def _name_warning(values: list[Any], rows: list[int], gt: OVDEvalSubset) -> str:
    """The loud warning for labels written as text under the official protocol."""
    names = list(dict.fromkeys(str(values[i]) for i in rows))
    resolvable = sum(n in gt.category_names.values() for n in names)
    return (f"official protocol: {len(rows)} prediction(s) give 'category_id' as text (entries "
            f"{describe(rows)}; labels {describe(names)}): the official scorer compares ids, so "
            "they take part in "
            f"the suppression but are NEVER scored, which lowers AP. {resolvable} of the "
            f"{len(names)} label(s) are "
            "category names of " + gt.name + ": write the integer category ids, or score with "
                                             "--protocol corrected, which resolves names to ids")


def _diagnose(entries: list[Any], source: str) -> None:
    """Name the first entry without the four keys (called only when the fast path failed)."""
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or any(k not in e for k in ("image_id", "category_id", "bbox",
                                                               "score")):
            _fail("each entry needs 'image_id', 'category_id', 'bbox' and 'score'", source, i)


def _typed_columns(entries: list[TypedCocoResult], gt: OVDEvalSubset, source: str, protocol: str
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64],
                              NDArray[np.float64]]:
    """(image, category, box, score) of typed records (integer ids), the ids coded where the
    references' are text: an integer equals no text id, so such an image is unknown and such a
    category none."""
    image, category, box, score_value = typed_coco_columns(entries)
    if gt.id_table is not None:
        image = coded_ids(image.tolist(), gt.id_table, source, "image_id")[0]
    if gt.category_table is not None:
        category = _resolve_labels(category.tolist(), gt, source, protocol)[0]
    return image, category, box, score_value


def parse_predictions(entries: Any, gt: OVDEvalSubset, *, source: str = "predictions",
                      protocol: str = "official") -> Predictions:
    """Official COCO-results predictions -> arrays; unknown images dropped (counted). Under
    ``official`` every value ``eval.py`` scores is kept (NaN, booleans, huge integers, text scores
    and labels), with a warning per kind."""
    expect_prediction_list(entries, "ovdeval", source, schema.PREDICTION_FORM)
    warnings: list[str] = []
    if entries and isinstance(entries[0], TypedCocoResult):
        image, category, box, score_value = _typed_columns(entries, gt, source, protocol)
        score = Scores.of_typed(score_value)
        odd_boxes: dict[str, list[int]] = {}
        # the raw values are read only for text scores, which typed ones never are
        scores: list[Any] = []
        text_labels: list[int] = []
    else:
        try:
            images = [e["image_id"] for e in entries]
            boxes = [e["bbox"] for e in entries]
            scores = [e["score"] for e in entries]
            labels = [e["category_id"] for e in entries]
        except (KeyError, TypeError):
            _diagnose(entries, source)
            raise PredictionError(
                "malformed prediction file", file=source
            ) from None  # pragma: no cover
        image = coded_ids(images, gt.id_table, source, "image_id")[0]
        box, odd_boxes = read_boxes(boxes, source, protocol=protocol)
        score = read_scores(scores, source, protocol=protocol)
        category, text_labels = _resolve_labels(labels, gt, source, protocol)
        if text_labels:
            warnings.append(_name_warning(labels, text_labels, gt))
    known = np.isin(image, gt.image_ids)
    evaluated = known & np.isin(category, gt.category_ids)
    if score.text[evaluated].any():
        i = int(np.flatnonzero(score.text & evaluated)[0])
        _fail(f"'score' {scores[i]!r} is text, and this prediction's category has ground truth: "
              "the official scorer stops there (COCOeval negates each score: TypeError)", source, i,
              "write scores as numbers")
    warnings += unusual_warning("prediction box", odd_boxes, _HOW) + unusual_warning(
        "score", score.unusual, _HOW
    )
    warnings += degenerate_box_warning(box[known, 2], box[known, 3], np.flatnonzero(known),
                                       "IoU 0 with every GT box, so false positives")
    # predictions of a category without ground truth (hard negatives, mostly) affect the
    # suppression, not AP; the same count whatever the references are. Ids outside the category list
    # are only knowable from a file that lists the categories (Hub rows carry only the categories of
    # their boxes): None otherwise.
    counts = {
        "predictions": len(entries),
        "dropped_unknown_image": int((~known).sum()),
        "category_without_gt": int((~np.isin(category[known], gt.ann_category)).sum()),
        "unknown_category": int((~np.isin(category[known], gt.category_ids)).sum())
        if gt.categories_listed
        else None,
        "category_as_text": len(text_labels),
    }
    if (~known).any():
        warnings.append(f"{int((~known).sum())} prediction(s) for image ids not in {gt.name} were "
                        "dropped (the official script crashes on them), e.g. "
                        f"{np.unique(image[~known])[:5].tolist()}")
    if counts["unknown_category"] and counts["unknown_category"] > len(text_labels):
        warnings.append(f"{counts['unknown_category'] - len(text_labels)} prediction(s) have a "
                        f"category id that is not a category of {gt.name}: they take part in the "
                        "suppression but not in AP, as in the official script")
    if not entries:
        warnings.append("the prediction list is empty: every category with ground truth scores 0 "
                        "(the official script crashes here)")
    kept = Scores(score.value[known], score.is_int[known],
                  None if score.exact is None else score.exact[known], score.text[known],
                  score.unusual)
    text = [str(v) for v, k in zip(scores, known) if k] if score.text.any() else None
    return Predictions(image[known], category[known], box[known], kept, counts, warnings, text)


def _nms_key(preds: Predictions) -> NDArray[np.integer]:
    """Per prediction, a key that orders and equates it as its image's official ``np.array`` of
    scores does: float64 (NaN above every number, NaNs equal), int64 where the image's scores are
    all integers, text where one of them is text. Keys are compared only within an image."""
    if preds.scores.exact is None and preds.score_text is None:
        # float64's order and equalities, with no sort
        return sorting.sortable_bits(preds.score)

    def ascending(values) -> NDArray[np.int64]:
        return np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(-1)

    key = ascending(preds.score)
    images, image_index = np.unique(preds.image_id, return_inverse=True)
    if preds.scores.exact is not None:
        all_int = np.bincount(image_index, weights=~preds.scores.is_int, minlength=len(images)) == 0
        key = np.where(all_int[image_index], ascending(preds.scores.exact), key)
    if preds.score_text is not None:
        has_text = np.bincount(image_index, weights=preds.scores.text, minlength=len(images)) > 0
        key = np.where(has_text[image_index], ascending(np.asarray(preds.score_text)), key)
    return key


def _corners(box_xywh: NDArray[np.float64]) -> NDArray[np.float64]:
    """(5, N) columns x1, y1, x1 + w, y1 + h, w * h: the sums and the area ``calculate_iou`` forms
    for every pair, formed once per box (the same float64 operations, so the same bits)."""
    return np.vstack([xywh_to_xyxy(box_xywh).T, box_xywh[:, 2] * box_xywh[:, 3]])


def _iou_official(pred: NDArray[np.float64], gt: NDArray[np.float64]) -> NDArray[np.float64]:
    """``eval.py``'s ``calculate_iou`` on aligned rows given as :func:`_corners` columns: float64, 0
    where the union is 0. In place on the intersection, its only temporary."""
    px1, py1, px2, py2, p_area = pred
    gx1, gy1, gx2, gy2, g_area = gt
    inter = np.minimum(gx2, px2)
    inter -= np.maximum(gx1, px1)
    np.maximum(inter, 0, out=inter)
    height = np.minimum(gy2, py2)
    height -= np.maximum(gy1, py1)
    np.maximum(height, 0, out=height)
    inter *= height
    union = g_area + p_area
    union -= inter
    with np.errstate(divide="ignore", invalid="ignore"):
        inter /= union
    inter[union == 0] = 0.0
    return inter


#: (prediction, GT) combinations whose IoU is computed at once: their temporaries stay in the cache
_IOU_BLOCK = 65_536


def _candidates(gt: OVDEvalSubset, preds: Predictions, iou_threshold: float
                ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(prediction, GT) of every combination of a prediction and a GT box of its image with IoU
    above the threshold, by prediction, then by GT in (image, file) order."""
    g_order, first, count = sorting.key_runs(preds.image_id, gt.ann_image)
    p_corners, g_corners = _corners(preds.box_xywh), _corners(gt.ann_box)[:, g_order]
    # blocks of whole predictions holding about _IOU_BLOCK combinations each
    ends = np.searchsorted(np.cumsum(count), np.arange(_IOU_BLOCK, int(count.sum()), _IOU_BLOCK),
                           side="right")
    c_pred, c_gt = [], []
    for lo, hi in zip(np.r_[0, ends], np.r_[ends, len(count)]):
        gts = sorting.concat_ranges(first[lo:hi], count[lo:hi])
        iou = _iou_official(np.repeat(p_corners[:, lo:hi], count[lo:hi], axis=1), g_corners[:, gts])
        cand = np.flatnonzero(iou > iou_threshold)
        c_pred.append(np.repeat(np.arange(lo, hi), count[lo:hi])[cand])
        c_gt.append(gts[cand])
    return np.concatenate(c_pred), g_order[np.concatenate(c_gt)]


def suppress(gt: OVDEvalSubset, preds: Predictions,
             iou_threshold: float = 0.5) -> tuple[NDArray[np.bool_], dict[str, Any]]:
    """The official GT-guided, class-ignored suppression, for all images at once: the boolean keep
    mask."""
    n = len(preds.score)
    c_pred, c_gt = _candidates(gt, preds, iou_threshold)
    # Per GT: the top candidate by score; ties to the later prediction (what numpy 2.4's sort gave).
    # Two stable sorts, by score then by GT, of candidates in prediction order: a lexsort on (GT,
    # score, prediction).
    key = _nms_key(preds)
    order = sorting.stable_argsort(key[c_pred])
    order = order[sorting.stable_argsort(c_gt[order])]
    c_pred, c_gt = c_pred[order], c_gt[order]
    last = (
        np.r_[np.flatnonzero(np.diff(c_gt)), len(c_gt) - 1] if len(c_gt) else np.zeros(0, np.int64)
    )
    top = c_pred[last]
    kept_as_top = np.zeros(n, dtype=bool)
    kept_as_top[top] = True
    candidate = np.zeros(n, dtype=bool)
    candidate[c_pred] = True
    removed = candidate & ~kept_as_top
    # A decision made by a tie: the runner-up of that GT has the same score as the top.
    has_second = np.r_[False, c_gt[1:] == c_gt[:-1]][last] if len(c_gt) else np.zeros(0, bool)
    second = np.where(has_second, c_pred[np.maximum(last - 1, 0)], -1)
    ties = int((has_second & (key[np.maximum(second, 0)] == key[top])).sum())
    per_image = np.unique(preds.image_id[removed], return_counts=True)
    return ~removed, {"before": n, "after": int(n - removed.sum()), "removed": int(removed.sum()),
                      "tie_decisions": ties,
                      "removed_per_image": {"image_id": per_image[0], "removed": per_image[1]}}


def _stats(gt: OVDEvalSubset, dets: dict[str, NDArray], protocol: str,
           keep_gt_at: float | None = None, tie_bounds: bool = False) -> cocoeval.CocoEvalResult:
    """The official COCO evaluation of one prediction list. Only the accumulation steps that the 12
    stats read are computed: the per-category APs and the PR curve read the same step as AP (all
    areas, 100 detections). Matched in one thread: :func:`score` keeps the second core busy with the
    other evaluation."""
    return cocoeval.evaluate_bbox(gt.image_ids, gt.category_ids, gt.gt_dict(), dets,
                                  id0_quirk=protocol == "official",
                                  keep_gt_at=keep_gt_at, tie_bounds=tie_bounds, stats_only=True)


def _percent(stats: dict[str, float], prefix: str = "") -> dict[str, float | None]:
    return {prefix + k: (None if v == -1 else float(v) * 100) for k,
            v in zip(schema.STAT_KEYS, stats.values())}


def _per_category(gt: OVDEvalSubset, res: cocoeval.CocoEvalResult) -> dict[str, list[Any]]:
    params = cocoeval.Params()
    ap = [cocoeval.summary_value(res.precision[:, :, [k]], res.recall[:, [k]], params, ap=True)
          for k in range(len(res.category_ids))]
    return {"category_id": [gt.category_id(c) for c in res.category_ids],
            "name": [gt.category_names[int(c)] for c in res.category_ids],
            "num_gt": res.npig[:, 0].tolist(), "AP": [None if v == -1 else v * 100 for v in ap]}


def _id0_warning(gt: OVDEvalSubset, preds: Predictions, keep: NDArray[np.bool_],
                 metrics: dict[str, float | None]) -> list[str]:
    """Say what the official id-0 quirk did, only when it changed NMS-AP, with the corrected value
    beside."""
    fixed = _percent(_stats(gt, preds.as_dict(keep), "corrected").stats, "NMS_")["NMS_AP"]
    if fixed == metrics["NMS_AP"]:
        return []
    shown = lambda v: "null" if v is None else f"{v:.2f}"  # noqa: E731
    return ["official protocol: a prediction that matches the ground-truth box whose annotation id "
            "is 0 counts as a false positive in the official scorer (a pycocotools bug); it lowers "
            f"NMS-AP here to {shown(metrics['NMS_AP'])} from {shown(fixed)} (--protocol corrected "
            "scores that box like the others)"]


def score(gt: OVDEvalSubset, predictions: Any, *, protocol: str = "official",
          source: str = "predictions", split: str | None = None, analysis: bool = False) -> Result:
    """NMS-AP and AP (24 numbers) of one sub-dataset; with ``analysis`` the error analysis too."""
    from .analysis import KEEP_GT_AT, analyze

    preds = parse_predictions(predictions, gt, source=source, protocol=protocol)
    # plain AP needs no suppression: the second core scores it
    with ThreadPoolExecutor(max_workers=1) as pool:
        plain_job = pool.submit(_stats, gt, preds.as_dict(), protocol, tie_bounds=True)
        keep, sup = suppress(gt, preds)
        nms = _stats(gt, preds.as_dict(keep), protocol, KEEP_GT_AT if analysis else None,
                     tie_bounds=True)
        plain = plain_job.result()
    metrics = {**_percent(nms.stats, "NMS_"), **_percent(plain.stats)}
    warnings = list(gt.notes) + preds.warnings
    if nms.skipped_gt:
        warnings.append(f"{nms.skipped_gt} ground-truth annotation(s) belong to images that are "
                        "not in 'images' and were ignored, as pycocotools does")
    if sup["tie_decisions"]:
        warnings.append(f"{sup['tie_decisions']} suppression decision(s) were between predictions "
                        "with exactly equal scores: the official order is platform-dependent "
                        "there; vlbench keeps the later prediction. Another file order suppresses "
                        "other boxes, so NMS-AP has no tie bounds; its likely range over random "
                        "file orders is in breakdowns 'tie_orders'")
    if protocol == "official" and nms.matches.id0_matches:
        warnings.extend(_id0_warning(gt, preds, keep, metrics))
    breakdowns = {
        "suppression": sup,
        "inflation": None
        if metrics["AP"] is None or metrics["NMS_AP"] is None
        else metrics["AP"] - metrics["NMS_AP"],
        "per_category": {"NMS": _per_category(gt, nms), "plain": _per_category(gt, plain)},
        "pr_curve": {
            "recall": cocoeval.Params().rec_thrs.tolist(),
            "NMS_iou50": _mean_curve(nms.precision, 0),
            "iou50": _mean_curve(plain.precision, 0),
        },
    }
    counts = {"images": len(gt.image_ids), "categories": len(gt.category_ids),
              "gt_boxes": len(gt.ann_id),
              **preds.counts, "kept_after_suppression": sup["after"],
              "skipped_unknown_category": nms.skipped_detections}
    analyzed, analysis_replicator = analyze(gt, nms, sup["removed"]) if analysis else (None, None)
    # scores that do not rank the boxes: the answer-set view too
    if cocoeval.has_ties(plain.matches):
        breakdowns["threshold_metrics"] = threshold_metrics(gt, preds, keep, nms)
        breakdowns["tie_bounds"], tie_warning = _tie_bounds(nms, plain, metrics,
                                                            suppression_ties=sup["tie_decisions"])
        warnings += tie_warning
    return Result(benchmark="ovdeval", protocol=protocol, metrics=metrics, breakdowns=breakdowns,
                  counts=counts,
                  warnings=warnings,
                  options={"sub_dataset": gt.name, **({"split": split} if split else {})},
                  resampler=lambda: merge(OVDEvalReplicator(nms, plain),
                                          analysis_replicator() if analysis_replicator else None),
                  analysis=analyzed)


#: what the threshold metrics are, carried in the result beside them
THRESHOLD_NOTE = ("not official: every box the GT-guided suppression keeps counts as predicted (no "
                  "score threshold, the top 100 per image and label), matched at IoU 0.5 as "
                  "COCOeval matches; a hard-negative box names one of its image's neg_text labels "
                  "and overlaps a ground-truth box of the image at IoU >= 0.5")


def threshold_metrics(gt: OVDEvalSubset, preds: Predictions, keep: NDArray[np.bool_],
                      nms: cocoeval.CocoEvalResult) -> dict[str, Any]:
    """Precision, recall and F1 at IoU 0.5 (percent) of the boxes kept by the suppression, and the
    boxes that name a hard negative (``neg_text``) while lying on an object: the answer-set view of
    a model without confidences."""
    tp, fp, n_gt = cocoeval.threshold_counts(nms.matches)
    image, category, box = preds.image_id[keep], preds.category_id[keep], preds.box_xywh[keep]
    negative = gt.is_negative(image, category)
    on = cocoeval.on_objects(image[negative], box[negative], gt.ann_image, gt.ann_box)
    return {"note": THRESHOLD_NOTE, "iou": 0.5, **cocoeval.precision_recall_f1(tp, fp, n_gt),
            "true_positives": tp, "false_positives": fp, "gt_boxes": n_gt, "boxes": int(keep.sum()),
            "hard_negative_boxes": int(on.sum()),
            "hard_negative_share": 100.0 * int(on.sum()) / int(keep.sum()) if keep.any() else None}


def _sum_threshold_metrics(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The threshold metrics of several sub-datasets pooled: their counts summed (micro
    averages)."""
    total = {k: sum(p[k] for p in parts) for k in ("true_positives", "false_positives", "gt_boxes",
                                                   "boxes", "hard_negative_boxes")}
    return {
        "note": THRESHOLD_NOTE,
        "iou": 0.5,
        **cocoeval.precision_recall_f1(
            total["true_positives"], total["false_positives"], total["gt_boxes"]
        ),
        **total,
        "hard_negative_share": 100.0 * total["hard_negative_boxes"] / total["boxes"]
        if total["boxes"]
        else None,
    }


class OVDEvalReplicator:
    """The 24 numbers of one sub-dataset under image weights (:mod:`vlbench.engine.uncertainty`):
    the GT-guided suppression is per image, so it is done once; both COCO accumulations are re-run
    weighted."""

    unit = "image"

    def __init__(self, nms: cocoeval.CocoEvalResult, plain: cocoeval.CocoEvalResult):
        self.nms, self.plain = cocoeval.summary_rankings(nms), cocoeval.summary_rankings(plain)
        self.strata = (len(nms.matches.has_result) // max(len(nms.category_ids), 1),)

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        out = {}
        for prefix, rankings in (("NMS_", self.nms), ("", self.plain)):
            stats = cocoeval.summary_replicates(rankings, weights)
            out.update({prefix + key: stats[name] * 100 for key,
                        name in zip(schema.STAT_KEYS, cocoeval.STAT_NAMES)})
        return out


def _tie_bounds(nms: cocoeval.CocoEvalResult, plain: cocoeval.CocoEvalResult,
                metrics: dict[str, float | None],
                suppression_ties: int = 0) -> tuple[dict[str, Any], list[str]]:
    """Per AP key, AP's (and NMS-AP's) lowest and highest value over every order of the tied
    detections (the matching kept as the official order makes it), and the warning when they are far
    apart. NMS-AP's bounds are given only where no suppression decision was a tie: there the
    suppression keeps one of two tied candidates by file order, so another order suppresses other
    boxes, which bounds taken over this order's kept boxes do not cover (a reordered file can score
    outside them). ``breakdowns["tie_orders"]`` gives NMS-AP's likely range over random orders."""
    low: dict[str, float | None] = {}
    high: dict[str, float | None] = {}
    key_of = dict(zip(cocoeval.STAT_NAMES, schema.STAT_KEYS))
    for prefix, res in (("NMS_", nms), ("", plain)):
        if prefix and suppression_ties:
            continue
        for name, (lo, hi) in cocoeval.tie_bounds_bbox(res).items():
            low[prefix + key_of[name]] = None if lo == -1 else lo * 100
            high[prefix + key_of[name]] = None if hi == -1 else hi * 100
    return tie_bounds(metrics, low, high, cocoeval.tied_detections(plain.matches))


def _replicator(result: Result) -> Any:
    """The replicator of one sub-dataset's result (every one :func:`score_subset` returns has a
    resampler)."""
    if result.resampler is None:
        raise InputError("a sub-dataset's result has no resampler: intervals need the results of "
                         "this run")
    return result.resampler()


def _combine_sub_datasets(names: list[str]):
    """Per resample: NMS_AP / AP per sub-dataset and their Total Average (mean over the defined
    ones)."""
    def combine(parts: list[dict[str, NDArray[np.float64]]]) -> dict[str, NDArray[np.float64]]:
        out = {}
        for name, part in zip(names, parts):
            out[f"NMS_AP_{name}"], out[f"AP_{name}"] = part["NMS_AP"], part["AP"]
        for key in ["NMS_AP",
                    # the Total Average's form
                    *(k for k in parts[0] if k.startswith("analysis:"))]:
            stacked = np.stack([p[key] for p in parts])
            with np.errstate(invalid="ignore"):
                defined = np.isfinite(stacked)
                out["Total_Average" if key == "NMS_AP" else key] = np.where(
                    defined, stacked, 0
                ).sum(axis=0) / defined.sum(axis=0)
        return out
    return combine


def _mean_curve(precision: NDArray[np.float64], t: int) -> list[float] | None:
    """Precision at each recall point (area all, 100 dets), averaged over categories with GT."""
    p = precision[t, :, :, 0, -1]
    valid = (p > -1).all(axis=0)
    return p[:, valid].mean(axis=1).tolist() if valid.any() else None


def _mean_of_defined(values: Any) -> float | None:
    """The mean of the values that are not None (None when none is): Table 3's averages."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def score_many(results: dict[str, Result], protocol: str = "official") -> Result:
    """Several sub-datasets at once: the paper's Table 3 (NMS-AP / AP per sub-dataset, aspects,
    Total Average)."""
    order = [s for s in schema.SUBSETS if s in results] + sorted(
        s for s in results if s not in schema.SUBSETS
    )
    table = [{"sub_dataset": s, "aspect": schema.aspect_of(s),
              "NMS_AP": results[s].metrics["NMS_AP"], "AP": results[s].metrics["AP"],
              "inflation": results[s].breakdowns["inflation"]} for s in order]
    aspects = {
        a: {
            "NMS_AP": _mean_of_defined(
                results[s].metrics["NMS_AP"] for s in members if s in results
            ),
            "AP": _mean_of_defined(results[s].metrics["AP"] for s in members if s in results),
            "sub_datasets": [s for s in members if s in results],
        }
        for a, members in schema.ASPECTS.items()
        if any(s in results for s in members)
    }
    total = _mean_of_defined(results[s].metrics["NMS_AP"] for s in order)
    metrics: dict[str, float | None] = {}
    for s in order:
        metrics[f"NMS_AP_{s}"] = results[s].metrics["NMS_AP"]
        metrics[f"AP_{s}"] = results[s].metrics["AP"]
    metrics["Total_Average"] = total
    warnings = [f"{s}: {w}" for s in order for w in results[s].warnings]
    missing = [s for s in schema.SUBSETS if s not in results]
    if missing:
        warnings.append(f"Total Average over {len(order)} sub-dataset(s); not scored: "
                        f"{', '.join(missing)}")
    breakdowns: dict[str, Any] = {
        "table": table,
        "aspects": aspects,
        "Total_Average": total,
        "Total_Average_AP": _mean_of_defined(r["AP"] for r in table),
        "sub_datasets": {
            s: {"metrics": results[s].metrics, "counts": results[s].counts} for s in order
        },
    }
    if any("tie_bounds" in results[s].breakdowns for s in order):
        breakdowns["tie_bounds"] = _table3_tie_bounds(results, order)
    parts = [
        results[s].breakdowns["threshold_metrics"]
        for s in order
        if "threshold_metrics" in results[s].breakdowns
    ]
    if parts:
        breakdowns["threshold_metrics"] = {**_sum_threshold_metrics(parts), "sub_datasets": {
            s: {k: v for k, v in p.items() if k != "note"} for s, p in zip(order, parts)}}
    counts = {"sub_datasets": len(order),
              **{f"predictions_{s}": results[s].counts["predictions"] for s in order}}
    from ...engine.uncertainty import stack

    return Result(
        benchmark="ovdeval",
        protocol=protocol,
        metrics=metrics,
        breakdowns=breakdowns,
        counts=counts,
        warnings=warnings,
        options={"sub_datasets": order},
        resampler=lambda: stack(
            [_replicator(results[s]) for s in order], _combine_sub_datasets(order)
        ),
        analysis=_table3_analysis(results, order)
        if results[order[0]].analysis is not None
        else None,
    )


def _table3_analysis(results: dict[str, Result], order: list[str]) -> dict[str, Any]:
    """The sub-datasets' analyses pooled: counts summed, ΔTotal_Average50 the mean of their
    ΔNMS-AP50 (the Total Average is the mean of the sub-datasets' NMS-AP, and each fix stays inside
    its sub-dataset), the counts per sub-dataset and per aspect as slices, each sub-dataset's own
    analysis kept."""
    parts = {s: results[s].analysis or {} for s in order}
    errors: dict[str, dict[str, Any]] = {}
    for name in next(iter(parts.values()))["errors"]:
        rows = [p["errors"][name] for p in parts.values()]
        errors[name] = {
            "count": sum(r["count"] for r in rows),
            "definition": rows[0]["definition"],
            "delta_Total_Average50": _mean_of_defined(r["delta_NMS_AP50"] for r in rows),
        }
    slices: dict[str, dict[str, dict[str, int]]] = {"sub_dataset": {}, "aspect": {}}
    for s, p in parts.items():
        counts = {t: e["count"] for t, e in p["errors"].items() if t in ERROR_TYPES and e["count"]}
        slices["sub_dataset"][s] = counts
        aspect = slices["aspect"].setdefault(schema.aspect_of(s) or "other", {})
        for t, n in counts.items():
            aspect[t] = aspect.get(t, 0) + n
    for name in ("size", "shape"):
        merged: dict[str, dict[str, int]] = {}
        for p in parts.values():
            for value, row in p["slices"].get(name, {}).items():
                for t, n in row.items():
                    merged.setdefault(value, {})[t] = merged.setdefault(value, {}).get(t, 0) + n
        slices[name] = merged
    return {
        "delta_key": "Total_Average50",
        "as_scored": _mean_of_defined(p["as_scored"] for p in parts.values()),
        "errors": errors,
        "slices": slices,
        "examples": {
            t: [
                {**e, "sub_dataset": s} for s, p in parts.items() for e in p["examples"].get(t, [])
            ][:5]
            for t in next(iter(parts.values()))["examples"]
        },
        "suppressed": sum(p.get("suppressed", 0) for p in parts.values()),
        "sub_datasets": parts,
        "note": next(iter(parts.values()))["note"].replace("NMS_AP50", "Total_Average50"),
    }



def _table3_tie_bounds(results: dict[str, Result],
                       order: list[str]) -> dict[str, dict[str, float | None]]:
    """Each sub-dataset's NMS-AP and AP bounds under Table 3's keys, and the Total Average's (a mean
    of NMS-APs: its bounds are the means of theirs; a sub-dataset without ties contributes its
    number to both)."""
    out: dict[str, dict[str, float | None]] = {}
    for s in order:
        own = results[s].breakdowns.get("tie_bounds")
        for key in ("NMS_AP", "AP"):
            value = results[s].metrics[key]
            # a key with ties but no honest bound (_tie_bounds) is left out
            if own is None or key in own:
                out[f"{key}_{s}"] = own[key] if own is not None else {"low": value, "high": value}
    if all(f"NMS_AP_{s}" in out for s in order):
        out["Total_Average"] = {side: _mean_of_defined(out[f"NMS_AP_{s}"][side] for s in order)
                                for side in ("low", "high")}
    return out


def score_references(refs: OVDEvalReferences, predictions: Any, *, protocol: str = "official",
                     sub_dataset: str | None = None, source: str = "predictions",
                     analysis: bool = False) -> Result:
    """One sub-dataset and one prediction list, or several sub-datasets and a
    :class:`PredictionFolder` (or a dict name -> entries) scored together in the Table 3 layout.
    ``sub_dataset`` picks one of ``refs``."""
    subsets = refs.subsets
    if sub_dataset is not None:
        if sub_dataset not in subsets:
            raise InputError(f"no sub-dataset {sub_dataset!r} in the references", file=refs.source,
                             fix=f"choose one of {', '.join(subsets)}")
        subsets = {sub_dataset: subsets[sub_dataset]}
    if isinstance(predictions, PredictionFolder):
        entries, files, where = predictions.entries, predictions.files, predictions.folder
    elif isinstance(predictions, dict):
        # not name -> list
        if not predictions or not all(isinstance(v, list) for v in predictions.values()):
            expect_prediction_list(predictions, "ovdeval", source, schema.PREDICTION_FORM)
        entries, files, where = predictions, {n: f"{source} [{n}]" for n in predictions}, source
    else:
        if len(subsets) != 1:
            raise InputError(f"the references hold {len(subsets)} sub-datasets but one prediction "
                             "list was given",
                             file=source,
                             fix="pass a folder of prediction files (<name>.json), or "
                                 "--sub-dataset NAME")
        (gt,) = subsets.values()
        return score(gt, predictions, protocol=protocol, source=source, analysis=analysis)
    results = {}
    for name in (name for name in subsets if name in entries):
        results[name] = score(subsets[name], entries[name], protocol=protocol, source=files[name],
                              analysis=analysis)
    if not results:
        given = ", ".join(map(repr, list(entries)[:5])) + (", ..." if len(entries) > 5 else "")
        raise InputError(f"no prediction list for any of {', '.join(subsets)} (the predictions "
                         f"name {given})",
                         file=where,
                         fix="name them <sub-dataset>.json or <sub-dataset>_results.json")
    result = score_many(results, protocol)
    missing = [name for name in subsets if name not in entries]
    unknown = [name for name in entries if name not in refs.subsets]
    if unknown:
        result.warnings.append(f"{len(unknown)} prediction file(s) name no sub-dataset of the "
                               f"references and were ignored: {', '.join(unknown)}")
    if missing:
        result.warnings.append(f"no prediction file for {', '.join(missing)} (expected <name>.json "
                               "or <name>_results.json): not scored")
    return result


class OVDEvalScorer(Scorer[OVDEvalOptions]):
    """NMS-AP and AP of one sub-dataset, or Table 3 of several."""

    options_type = OVDEvalOptions
    prediction_keys = schema.PREDICTION_KEYS
    prediction_form = schema.PREDICTION_FORM

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """A sub-dataset JSON, the release folder or a Hub folder -> every sub-dataset's records."""
        return reader.load_references(source, split)

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of a Hub config (``image_id``, ``boxes``) -> records, one sub-dataset per
        ``sub_dataset`` value (the default config ``all`` holds them all; each numbers its images
        and categories on its own)."""
        groups = _by_sub_dataset(rows)
        subsets = {name: reader.references_from_rows(group, name=name,
                                                     source=f"references [{name}]")
                   for name, group in groups.items()}
        return OVDEvalReferences(subsets=subsets, source="references")

    def read_predictions(self, source: str | os.PathLike, *, max_bytes: int | None = None,
                         max_values: int | None = None, typed: bool = False) -> Any:
        """A COCO results file, or a folder of them (``<sub-dataset>.json``) scored together; with
        ``typed``, files of the usual shape as
        :class:`~vlbench.benchmarks.validation.TypedCocoResult` records (a third of the reading
        time), others as dicts."""
        return reader.read_predictions(source, max_bytes=max_bytes, max_values=max_values,
                                       typed=typed)

    def entries_from_examples(self, references: list[dict[str, Any]],
                              predictions: list[Any]) -> Any:
        """``{"boxes", "scores", "labels"}`` per image -> COCO results (a list, or one per
        sub-dataset)."""
        check_examples(references, predictions)
        entries: dict[str, list] = {}
        for n, (ref, pred) in enumerate(zip(references, predictions)):
            entries.setdefault(_sub_dataset_of(ref), []).extend(
                {"image_id": ref["image_id"], "category_id": label, "bbox": box, "score": s}
                for box, s, label in aligned_lists(pred, ("boxes", "scores", "labels"), n))
        # rows of several sub-datasets: one prediction list each, scored as Table 3
        if len(entries) > 1:
            return PredictionFolder(entries=entries, files={k: "predictions" for k in entries},
                                    folder="predictions")
        return next(iter(entries.values()), [])

    def score(self, references: Any, predictions: Any, options: OVDEvalOptions,
              source: str = "predictions") -> Any:
        """NMS-AP and AP of one sub-dataset, or Table 3 of several."""
        return score_references(references, predictions, protocol=options.protocol,
                                sub_dataset=options.sub_dataset, source=source,
                                analysis=options.analysis)


def _sub_dataset_of(row: Any) -> str:
    """The sub-dataset a reference row belongs to (rows of one config without the column:
    "references")."""
    name = row.get("sub_dataset") if isinstance(row, dict) else None
    return str(name) if name else "references"


def _by_sub_dataset(rows: list[Any]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for row in rows:
        groups.setdefault(_sub_dataset_of(row), []).append(row)
    return groups or {"references": []}
