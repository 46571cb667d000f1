"""OmniLabel scorer: the 13 numbers of the official ``OmniLabelEval`` (``omnilabeltools``), per
source too.

Official behaviour reproduced (OFFICIAL-SCORERS.md, section 1): COCO matching per (image,
description) pair with crowd boxes ignored, IoU >= t, 100 detections per pair, areas max(0, w*h);
then AP **pooled** per description group (one ranking over all pairs of a group), 101-point
interpolation, -1 (here ``None``) for groups without GT, and the harmonic mean
``2 * AP_categ * AP_descr / (AP_categ + AP_descr + 1e-5)`` on fractions.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from ...engine import cocoeval
from ...engine.errors import InputError, PredictionError
from ...engine.lookup import find_ids
from ...engine.result import Result
from ...engine.uncertainty import merge
from .. import expect_prediction_list
from ..benchmark import Options, Scorer, check_examples
from ..validation import (
    Scores,
    TypedId,
    TypedNumber,
    aligned_lists,
    degenerate_box_warning,
    looked_up_ids,
    read_boxes,
    read_scores,
    tie_bounds,
    typed_boxes,
    typed_column,
    unusual_warning,
)
from . import reader, schema
from .records import OmniLabelReferences

__all__ = ["OmniLabelScorer", "parse_predictions", "score", "PARAMS", "TypedPrediction"]

#: Only area "all" is ever reported by the official summary, so only that range is matched.
PARAMS = cocoeval.Params(area_rngs=((0.0, 1e10),), area_labels=("all",))
_MAX_DET_100 = 2


def _fail(message: str, source: str, index: int, fix: str | None = None) -> None:
    raise PredictionError(message, file=source, entry=f"entry {index}", fix=fix)


class TypedPrediction(msgspec.Struct, gc=False):
    """An entry of a prediction file of the usual shape, decoded without a dict
    (``read_predictions(typed=True)``): integer ids, four exact numbers, and lists of ids and exact
    scores. Any other file is read as dicts."""

    image_id: TypedId
    bbox: tuple[TypedNumber, TypedNumber, TypedNumber, TypedNumber]
    description_ids: list[TypedId]
    scores: list[TypedNumber]


#: how omnilabeltools treats each kind of unusual value kept under the official protocol
_HOW = {
    "non-finite": "COCOeval's sorts rank a NaN score below every other; a NaN coordinate gives "
                  "pycocotools' IoU the value its fmin/fmax leave (a NaN IoU is never below the "
                  "threshold, so it matches), and the box area max(0, w*h) is 0 for a NaN",
    "boolean": "numpy reads true / false as 1 / 0",
    "integer beyond 2^53": "ordered exactly where the official arrays are int64 (a pair's or a "
                           "group's scores all integers), as float64 elsewhere",
    "text": "never compared: they name descriptions outside the image's label space, which are not "
            "evaluated",
}


def _diagnose(entries: list[Any], source: str) -> None:
    """Find the first malformed entry (called only when the fast path failed). Ids of any type are
    read as the official look-ups read them
    (:func:`~vlbench.benchmarks.validation.looked_up_ids`)."""
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            _fail(f"expected an object, got {type(e).__name__}", source, i)
        for key in ("image_id", "bbox", "description_ids", "scores"):
            if key not in e:
                _fail(f"missing key {key!r}", source, i,
                      "each entry is {\"image_id\", \"bbox\": [x, y, w, h], \"description_ids\": "
                      "[...], \"scores\": [...]}")
        if not isinstance(e["description_ids"], list) or not isinstance(e["scores"], list):
            _fail("'description_ids' and 'scores' must be lists", source, i)
        if len(e["description_ids"]) != len(e["scores"]):
            _unequal_lengths(len(e["description_ids"]), len(e["scores"]), source, i)


def _unequal_lengths(n_ids: int, n_scores: int, source: str, index: int) -> None:
    _fail(f"'description_ids' has {n_ids} entries but 'scores' has {n_scores}", source, index,
          "give one score per description id")


def _typed_columns(entries: list[TypedPrediction], source: str
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64],
                              NDArray[np.int64], Scores]:
    """(image ids, boxes, description ids, list lengths, scores) of typed records: their types are
    already checked (ids within int64, finite numbers exact in float64), so each column is one pass
    with no per-value test."""
    n = len(entries)
    dids = [e.description_ids for e in entries]
    scs = [e.scores for e in entries]
    lens = np.fromiter(map(len, dids), dtype=np.int64, count=n)
    n_scores = np.fromiter(map(len, scs), dtype=np.int64, count=n)
    if not np.array_equal(lens, n_scores):
        i = int(np.flatnonzero(lens != n_scores)[0])
        _unequal_lengths(int(lens[i]), int(n_scores[i]), source, i)
    total = int(lens.sum())
    score = np.fromiter(itertools.chain.from_iterable(scs), dtype=np.float64, count=total)
    return (typed_column(entries, "image_id", np.int64), typed_boxes(entries),
            np.fromiter(itertools.chain.from_iterable(dids), dtype=np.int64, count=total), lens,
            Scores.of_typed(score))


def _dict_columns(entries: list[Any], source: str, protocol: str
                  ) -> tuple[list[Any], NDArray[np.float64], dict[str, list[int]], list[Any],
                             NDArray[np.int64], Scores]:
    """(image ids and description ids as written, boxes, their unusual values, list lengths, scores)
    of parsed JSON entries, every value checked; the first malformed entry is named."""
    n = len(entries)
    try:
        img_list = [e["image_id"] for e in entries]
        box_lists = [e["bbox"] for e in entries]
        dids = [e["description_ids"] for e in entries]
        scs = [e["scores"] for e in entries]
        lens = np.fromiter(map(len, dids), dtype=np.int64, count=n)
        ok = np.array_equal(lens, np.fromiter(map(len, scs), dtype=np.int64, count=n))
        d_list = list(itertools.chain.from_iterable(dids))
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        _diagnose(entries, source)
    boxes, odd_boxes = read_boxes(box_lists, source, protocol=protocol,
                                  fix="boxes are [x, y, w, h] in pixels")
    scores = read_scores(list(itertools.chain.from_iterable(scs)), source, protocol=protocol,
                         entry_of=np.repeat(np.arange(n), lens), key="scores")
    return img_list, boxes, odd_boxes, d_list, lens, scores


def parse_predictions(entries: Any, gt: OmniLabelReferences, *, source: str = "predictions",
                      protocol: str = "official") -> tuple[cocoeval.PairDetections, dict[str, int],
                                                           list[str]]:
    """Official-format predictions (parsed JSON, or :class:`TypedPrediction` records) -> one
    detection per (box, description, score), filed under its pair. Under ``official`` every value
    omnilabeltools scores is kept (NaN, booleans, huge integers, text scores it never compares),
    with a warning per kind; ``corrected`` refuses them."""
    expect_prediction_list(entries, "omnilabel", source, schema.PREDICTION_FORM)
    warnings: list[str] = []
    n = len(entries)
    if n and isinstance(entries[0], TypedPrediction):
        img_ids, boxes, descr_ids, lens, scores = _typed_columns(entries, source)
        odd_boxes: dict[str, list[int]] = {}
        img_written: list[Any] | NDArray[np.int64] = (
            img_ids.tolist() if gt.id_table is not None else img_ids
        )
        descr_written: list[Any] | NDArray[np.int64] = descr_ids
    else:
        img_written, boxes, odd_boxes, descr_written, lens, scores = _dict_columns(entries, source,
                                                                                   protocol)
    entry_of = np.repeat(np.arange(n), lens)
    img, img_equal, img_bool = _looked_up(img_written, gt.id_table, source, "image_id")
    d_flat, d_equal, d_bool = _looked_up(descr_written, None, source, "description_ids",
                                         lambda i: f"entry {entry_of[i]}")
    # Official: a box with zero or negative width or height is scored, with IoU 0 against every GT
    # box and area max(0, w*h), so each of its detections is a false positive.
    warnings += degenerate_box_warning(boxes[:, 2], boxes[:, 3], np.arange(len(boxes)),
                                       "IoU 0, so false positives")

    img_idx, known_img = find_ids(gt.image_ids, img)
    known_img &= img_equal
    det_img = img_idx[entry_of]
    det_known = known_img[entry_of]
    pair = np.where(det_known & d_equal, gt.pair_of(np.where(det_known, det_img, 0), d_flat), -1)
    if scores.text[pair >= 0].any():
        i = int(entry_of[np.flatnonzero(scores.text & (pair >= 0))[0]])
        _fail(f"'scores' {entries[i]['scores']!r} holds text for a description of the image's "
              "label space: the official evaluator stops there (COCOeval negates each score: "
              "TypeError)", source, i,
              "write scores as numbers")
    warnings += (unusual_warning("prediction box", odd_boxes, _HOW)
                 + unusual_warning("score", scores.unusual, _HOW, entry_of))
    counts, dropped = _dropped(img, known_img, det_known, d_equal, pair, entries,
                               gt.id_table is not None)
    warnings += dropped + _unequal_description_ids(descr_written, d_equal, det_known)
    warnings += _boolean_ids((img_bool, known_img), (d_bool, d_equal & det_known))
    keep = pair >= 0
    kept_boxes = boxes[entry_of[keep]]
    with np.errstate(invalid="ignore", over="ignore"):
        area = kept_boxes[:, 2] * kept_boxes[:, 3]
    dets = cocoeval.PairDetections(pair=pair[keep], box_xywh=kept_boxes, score=scores.value[keep],
                               area=np.where(area > 0, area,
                                             0.0),      # Python's max(0, w*h): a NaN area is 0
                               exact=None if scores.exact is None else scores.exact[keep],
                               is_int=None if scores.exact is None else scores.is_int[keep])
    return dets, counts, warnings


def _looked_up(values: list[Any] | NDArray[np.int64], table: dict[Any, int] | None, source: str,
               key: str, entry: Callable[[int], str] = "entry {}".format
               ) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_] | None]:
    """:func:`looked_up_ids` of written ids, and which were written as true / false (None where none
    was); typed integers against integer ids are themselves, all equal to one."""
    if isinstance(values, np.ndarray):
        return values, np.ones(len(values), dtype=bool), None
    kinds = set(map(type, values))
    codes, equal = looked_up_ids(values, table, source, key, entry=entry, kinds=kinds)
    booleans = (
        np.fromiter((type(v) is bool for v in values), dtype=bool, count=len(values))
        if bool in kinds
        else None
    )
    return codes, equal, booleans


def _unequal_description_ids(written: list[Any] | NDArray[np.int64], equal: NDArray[np.bool_],
                             det_known: NDArray[np.bool_]) -> list[str]:
    """A note on the detections (of known images) whose description id equals no description's id,
    e.g. the text "5" where the references write 5: the official evaluator files them under a key it
    never looks up."""
    odd = np.flatnonzero(~equal & det_known)
    if not len(odd):
        return []
    shown = list(dict.fromkeys(repr(written[i]) for i in odd[:200].tolist()))[:5]
    return [f"{len(odd)} (box, description) detection(s) name a description id equal to no "
            f"reference description's id (e.g. {', '.join(shown)}; description ids are integers) "
            "and were dropped (the official evaluator never looks them up)"]


def _boolean_ids(*written_used: tuple[NDArray[np.bool_] | None, NDArray[np.bool_]]) -> list[str]:
    """A warning when ids written as true / false (:func:`_looked_up`) were looked up as 1 / 0
    (Python's ``True == 1``): per kind of id, (which were booleans, which were used)."""
    n = sum(int((booleans & used).sum()) for booleans, used in written_used if booleans is not None)
    return [f"{n} id(s) written as true / false were looked up as the ids 1 / 0, as the official "
            "evaluator's dict look-ups read them (Python's True == 1)"] if n else []


def _written_image_id(entry: Any) -> Any:
    """A prediction's image id as the file writes it (a typed record or a dict)."""
    return entry.image_id if isinstance(entry, TypedPrediction) else entry["image_id"]


def _dropped(img: NDArray[np.int64], known_img: NDArray[np.bool_], det_known: NDArray[np.bool_],
             descr_equal: NDArray[np.bool_], pair: NDArray[np.int64], entries: Any, text_ids: bool
             ) -> tuple[dict[str, int], list[str]]:
    """Counts of the entries and detections, and a warning for each kind the official evaluator
    drops silently (entries of unknown images, detections of descriptions outside the image's label
    space; those whose description id equals no description's are counted apart,
    :func:`_unequal_description_ids` warns of them)."""
    outside = det_known & descr_equal & (pair < 0)
    counts = {"predictions": len(img), "detections": len(pair),
              "detections_kept": int((pair >= 0).sum()),
              "dropped_unknown_image": int((~det_known).sum()),
              "dropped_outside_labelspace": int(outside.sum())}
    # only where it happened: the usual result reads as before
    if not descr_equal[det_known].all():
        counts["dropped_unequal_description_id"] = int((det_known & ~descr_equal).sum())
    warnings = []
    if (~known_img).any():
        written = [_written_image_id(entries[i]) for i in np.flatnonzero(~known_img).tolist()]
        unknown = list(dict.fromkeys(written))
        warnings.append(f"{int((~known_img).sum())} prediction(s) for {len(unknown)} image id(s) "
                        "not in the references were dropped (the official evaluator drops them "
                        f"silently), e.g. {unknown[:5]}"
                        + ("; the references write image ids as text, which no number equals"
                           if text_ids and any(not isinstance(v, str) for v in unknown) else "")
                        + ("; the references write image ids as integers, which no text equals"
                           if not text_ids and any(isinstance(v, str) for v in unknown) else ""))
    if outside.any():
        warnings.append(f"{int(outside.sum())} (box, description) detection(s) name a description "
                        "outside the image's label space and were dropped (the official evaluator "
                        "ignores them silently)")
    if len(img) == 0:
        warnings.append("the prediction list is empty: every group with ground truth scores 0")
    return counts, warnings


def _groups(gt: OmniLabelReferences) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                              list[tuple[str, str]]]:
    """Memberships (pair, group) for the six official groups, overall and per image source."""
    pairs: list[NDArray[np.int64]] = []
    groups: list[NDArray[np.int64]] = []
    names: list[tuple[str, str]] = []
    in_group = [
        np.isin(gt.pair_type, g.types)
        & (gt.pair_words >= g.words[0])
        & (gt.pair_words <= g.words[1])
        & (gt.pair_ref_boxes >= g.boxes[0])
        & (gt.pair_ref_boxes <= g.boxes[1])
        for g in schema.GROUPS
    ]
    # sources as codes: not an object array of every pair's source string compared once per source
    image_source = np.fromiter(map(schema.SOURCES.index, gt.image_source), dtype=np.int8,
                               count=len(gt.image_source))
    pair_source = image_source[gt.pair_image]
    scopes: list[tuple[str, NDArray[np.bool_] | None]] = [("all", None)]
    present = set(gt.image_source)
    scopes += [(s, pair_source == i) for i, s in enumerate(schema.SOURCES) if s in present]
    for scope, in_scope in scopes:
        for g, mask in zip(schema.GROUPS, in_group):
            idx = np.flatnonzero(mask if in_scope is None else mask & in_scope)
            pairs.append(idx)
            groups.append(np.full(len(idx), len(names)))
            names.append((scope, g.key))
    return np.concatenate(pairs), np.concatenate(groups), names


def _per_description(gt: OmniLabelReferences, matches: cocoeval.Matches) -> dict[str, list[Any]]:
    """AP and AP50 of each description pooled over its images, worst first, as columns (diagnosis;
    the summation order may differ from a pycocotools run restricted to that description by
    ~1e-16)."""
    uniq, group = np.unique(gt.pair_descr, return_inverse=True)
    pairs = np.arange(len(gt.pair_descr))
    ap, ap50 = cocoeval.mean_ap_per_group(matches, pairs, group, len(uniq), PARAMS,
                                          max_det=_MAX_DET_100)
    npig = cocoeval.group_npig(matches, pairs, group, len(uniq))[:, 0]
    is_category = np.zeros(len(uniq), dtype=bool)
    is_category[group[gt.pair_type == schema.TYPE_C]] = True
    order = np.lexsort((uniq, np.where(ap < 0, np.inf, ap)))
    pct = lambda v: np.where(v[order] < 0, np.nan, v[order] * 100)  # noqa: E731  (NaN -> null in JSON)
    return {"id": uniq[order], "text": [gt.descr_text[int(d)] for d in uniq[order]],
            "type": np.where(is_category[order], "category", "description").tolist(),
            "images": np.bincount(group, minlength=len(uniq))[order], "num_gt": npig[order],
            "AP": pct(ap), "AP50": pct(ap50)}


def _summary(precision: NDArray, recall: NDArray, npig: NDArray, g: int) -> dict[str, float]:
    """The official ``_summarize`` values of group ``g`` (fractions, -1 undefined) and its
    num-gt."""
    sl = [g]
    def ap(iou: float | None = None) -> float:
        s = precision[:, :, sl]
        if iou is not None:
            s = s[np.where(iou == PARAMS.iou_thrs)[0]]
        return cocoeval.mean_of_valid(s[:, :, :, [0], [_MAX_DET_100]])
    ar = cocoeval.mean_of_valid(recall[:, sl][:, :, [0], [_MAX_DET_100]])
    return {"AP": ap(), "AP50": ap(0.5), "AP75": ap(0.75), "AR": ar, "num_gt": int(npig[g, 0])}


def harmonic_mean_ap(ap_categ: Any, ap_descr: Any) -> Any:
    """OmniLabel's AP: ``2 * AP_categ * AP_descr / (AP_categ + AP_descr + 1e-5)`` on fractions
    (omnilabeltools' formula, the 1e-5 included: perfect predictions give 0.999995); floats or
    arrays of resamples."""
    return 2 * ap_categ * ap_descr / (ap_categ + ap_descr + 1e-5)


def _thirteen(summ: dict[str, dict[str, float]]) -> dict[str, float]:
    """The official 13 values (fractions) from the per-group summaries, hm last-step rules
    included."""
    categ, descr = summ["categ"], summ["descr"]
    if categ["num_gt"] > 0 and descr["num_gt"] > 0:
        hm = harmonic_mean_ap(categ["AP"], descr["AP"])
    else:
        hm = -1.0
    return {"AP": hm, "AP_categ": categ["AP"], "AP_descr": descr["AP"],
            "AP_descr_pos": summ["descr_pos"]["AP"],
            "AP_descr_S": summ["descr_S"]["AP"], "AP_descr_M": summ["descr_M"]["AP"],
            "AP_descr_L": summ["descr_L"]["AP"],
            "AP50_descr": descr["AP50"], "AP75_descr": descr["AP75"], "AP50_categ": categ["AP50"],
            "AP75_categ": categ["AP75"], "AR_descr": descr["AR"], "AR_categ": categ["AR"]}


def _percent(values: dict[str, float]) -> dict[str, float | None]:
    """Fractions -> percent points as the very last step; the official -1 -> None."""
    return {k: (None if v == -1 else float(v) * 100) for k, v in values.items()}


#: the tie orders accumulated beside the official one when scores tie (the tie bounds' lowest and
#: highest AP)
_BOUND_ORDERS = ("worst", "best")


def _match(gt: OmniLabelReferences, dets: cocoeval.PairDetections, protocol: str,
           keep_gt_at: float | None = None) -> cocoeval.Matches:
    """The official matching of every (image, description) pair."""
    truth = cocoeval.GroundTruth(pair=gt.gt_pair, box_xywh=gt.gt_box,
                                 area=np.maximum(0.0, gt.gt_box[:, 2] * gt.gt_box[:, 3]),
                                 iscrowd=gt.gt_iscrowd, ann_id=gt.gt_id, ignore=gt.gt_ignore)
    return cocoeval.match(truth, dets, len(gt.pair_image), PARAMS, id0_quirk=protocol == "official",
                          keep_gt_at=keep_gt_at)


def _accumulate(gt: OmniLabelReferences, matches: cocoeval.Matches, tie_bounds: bool = False):
    """Every group accumulated: (group names, order -> (precision, recall, npig), memberships). With
    ``tie_bounds`` the bounds' orders too, in the same pass (one ranking, one gather of the match
    states; half the cost of a second accumulation)."""
    member_pair, member_group, names = _groups(gt)
    orders = ("official",) + (_BOUND_ORDERS if tie_bounds else ())
    curves = cocoeval.accumulate_orders(matches, member_pair, member_group, len(names), PARAMS,
                                        areas=(0,), max_dets=(_MAX_DET_100,), orders=orders)
    return names, curves, member_pair, member_group


def _id0_warning(gt: OmniLabelReferences, dets: cocoeval.PairDetections,
                 official: dict[str, float]) -> list[str]:
    """Say what the official id-0 quirk changed (pycocotools counts a match to annotation id 0 as a
    false positive), with the corrected AP beside; nothing when it changed no number."""
    names, curves, _, _ = _accumulate(gt, _match(gt, dets, "corrected"))
    precision, recall, npig = curves["official"]
    index = {name: i for i, name in enumerate(names)}
    fixed = _thirteen(
        {g.key: _summary(precision, recall, npig, index[("all", g.key)]) for g in schema.GROUPS}
    )
    changed = [k for k in official if official[k] != fixed[k]]
    if not changed:
        return []
    return ["official protocol: a ground-truth box with annotation id 0 was matched, and "
            "pycocotools counts such a "
            "match as a false positive; this changed " + ", ".join(changed)
            + f" (AP would be {_percent(fixed)['AP']:.4f}; --protocol corrected)"]


def score(gt: OmniLabelReferences, predictions: Any, *, protocol: str = "official",
          split: str | None = None,
          source: str = "predictions", with_per_description: bool = True,
          analysis: bool = False) -> Result:
    """Score official-format OmniLabel predictions against ``gt``; with ``analysis`` the error
    analysis too."""
    from .analysis import KEEP_GT_AT, analyze

    if not gt.has_annotations:
        raise InputError("these references have no boxes (the OmniLabel test split): there is "
                         "nothing to score against",
                         file=gt.source,
                         fix="score the validation split; the official OmniLabel test server never "
                             "launched, so test predictions cannot be scored anywhere")
    dets, counts, warnings = parse_predictions(predictions, gt, source=source, protocol=protocol)
    warnings = list(gt.notes) + warnings
    matches = _match(gt, dets, protocol, KEEP_GT_AT if analysis else None)
    ties = cocoeval.has_ties(matches)
    names, curves, member_pair, member_group = _accumulate(gt, matches, tie_bounds=ties)
    precision, recall, npig = curves["official"]
    index = {name: i for i, name in enumerate(names)}
    summaries = {
        scope: {
            g.key: _summary(precision, recall, npig, index[(scope, g.key)]) for g in schema.GROUPS
        }
        for scope in ["all"] + [s for s in schema.SOURCES if (s, "categ") in index]
    }
    official = _thirteen(summaries["all"])
    metrics = _percent(official)
    if protocol == "official" and matches.id0_matches:
        warnings += _id0_warning(gt, dets, official)
    side_views = {}
    if with_per_description:
        side_views["per_description"] = _per_description(gt, matches)
    if ties:
        side_views["threshold_metrics"] = threshold_metrics(gt, dets, matches)

    rec = PARAMS.rec_thrs.tolist()
    def curve(g: int) -> dict[str, Any]:
        p = precision[:, :, g, 0, _MAX_DET_100]
        if (p < 0).all():
            return {"iou50": None, "iou75": None, "mean": None}
        return {"iou50": p[0].tolist(), "iou75": p[5].tolist(), "mean": p.mean(axis=0).tolist()}
    breakdowns: dict[str, Any] = {
        "per_source": {s: _percent(_thirteen(v)) for s, v in summaries.items() if s != "all"},
        "num_gt": {g.key: summaries["all"][g.key]["num_gt"] for g in schema.GROUPS},
        "pr_curves": {"recall": rec, "categ": curve(index[("all", "categ")]),
                      "descr": curve(index[("all", "descr")])},
    }
    breakdowns.update(side_views)
    counts = {**gt.counts, **counts}
    overall = np.isin(member_group, [index[("all", g.key)] for g in schema.GROUPS])
    analyzed, analysis_replicator = (
        analyze(gt, dets, matches, PARAMS, _MAX_DET_100) if analysis else (None, None)
    )
    # scores that do not rank the boxes: the answer-set view too (threshold metrics) and the bounds
    if ties:
        breakdowns["tie_bounds"], tie_warning = _tie_bounds(matches, curves, index, metrics)
        warnings += tie_warning
    return Result(benchmark="omnilabel", protocol=protocol, metrics=metrics, breakdowns=breakdowns,
                  counts=counts, warnings=warnings, options={"split": split or "validation"},
                  resampler=lambda: merge(OmniLabelReplicator(cocoeval.WeightedRanking.build(
                      matches, member_pair[overall], member_group[overall], len(names),
                      gt.pair_image, len(gt.image_ids), PARAMS, area=0, max_det=_MAX_DET_100),
                      {g.key: index[("all", g.key)] for g in schema.GROUPS}, (len(gt.image_ids),)),
                      analysis_replicator() if analysis_replicator else None),
                  analysis=analyzed)


#: what the threshold metrics are, carried in the result beside them
THRESHOLD_NOTE = ("not official: every box counts as predicted (no score threshold, the top 100 "
                  "per image and description), matched at IoU 0.5 as the official matching does, "
                  "per (image, description) as OmniLabel evaluates; a negative-description box "
                  "answers a description that refers to nothing in its image while overlapping a "
                  "ground-truth box of the image at IoU >= 0.5")


def threshold_metrics(gt: OmniLabelReferences, dets: cocoeval.PairDetections,
                      matches: cocoeval.Matches ) -> dict[str, Any]:
    """Precision, recall and F1 at IoU 0.5 (percent), overall and for categories / free-form
    descriptions, and the boxes that answer a negative description while lying on an object: the
    answer-set view of a model without confidences."""
    out: dict[str, Any] = {"note": THRESHOLD_NOTE, "iou": 0.5}
    for name, types in (("all", None), ("categ", (schema.TYPE_C,)),
                        ("descr", (schema.TYPE_DP, schema.TYPE_DN))):
        pairs = None if types is None else np.isin(gt.pair_type, types)
        tp, fp, n_gt = cocoeval.threshold_counts(matches, PARAMS, max_det=_MAX_DET_100, pairs=pairs)
        part = {**cocoeval.precision_recall_f1(tp, fp, n_gt), "true_positives": tp,
                "false_positives": fp, "gt_boxes": n_gt}
        out.update(part) if name == "all" else out.setdefault("by_type", {}).update({name: part})
    kept = matches.det_index[matches.rank < PARAMS.max_dets[_MAX_DET_100]]
    negative = kept[gt.pair_type[dets.pair[kept]] == schema.TYPE_DN]
    on = cocoeval.on_objects(gt.pair_image[dets.pair[negative]], dets.box_xywh[negative],
                             gt.pair_image[gt.gt_pair], gt.gt_box)
    out.update(boxes=len(kept), negative_description_boxes=int(on.sum()),
               negative_description_share=100.0 * int(on.sum()) / len(kept) if len(kept) else None)
    return out


def _tie_bounds(matches: cocoeval.Matches, curves: dict[str, tuple[NDArray, NDArray, NDArray]],
                index: dict[tuple[str, str], int],
                metrics: dict[str, float | None]) -> tuple[dict[str, Any], list[str]]:
    """Each AP key's lowest and highest value over every order of the tied detections (their
    matching kept as the official order makes it): every group's ranking with each tie block's true
    positives last, then first (``curves["worst"]``, ``curves["best"]``). AP, the harmonic mean,
    grows with both of its parts, so its bounds are those of the parts'; AR does not depend on
    order."""
    ends = [
        _percent(
            _thirteen({g.key: _summary(*curves[o], index[("all", g.key)]) for g in schema.GROUPS})
        )
        for o in _BOUND_ORDERS
    ]
    low, high = ({k: v for k, v in end.items() if not k.startswith("AR")} for end in ends)
    return tie_bounds(metrics, low, high, cocoeval.tied_detections(matches))


class OmniLabelReplicator:
    """The 13 official numbers under image weights (:mod:`vlbench.engine.uncertainty`): each group's
    pooled ranking re-accumulated with every detection and GT box counted with its image's
    weight."""

    unit = "image"

    def __init__(self, ranking: cocoeval.WeightedRanking, group_index: dict[str, int],
                 strata: tuple[int, ...]):
        self.ranking, self.group_index, self.strata = ranking, group_index, strata

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        # (R, T, K), NaN where undefined
        ap, recall, _ = self.ranking(weights)
        t50, t75 = (int(np.flatnonzero(PARAMS.iou_thrs == v)[0]) for v in (0.5, 0.75))
        summ = {key: {"AP": ap[:, :, k].mean(axis=1), "AP50": ap[:, t50, k], "AP75": ap[:, t75, k],
                      "AR": recall[:, :, k].mean(axis=1)} for key, k in self.group_index.items()}
        categ, descr = summ["categ"], summ["descr"]
        values = {"AP": harmonic_mean_ap(categ["AP"], descr["AP"]),
                  "AP_categ": categ["AP"], "AP_descr": descr["AP"],
                  "AP_descr_pos": summ["descr_pos"]["AP"],
                  "AP_descr_S": summ["descr_S"]["AP"], "AP_descr_M": summ["descr_M"]["AP"],
                  "AP_descr_L": summ["descr_L"]["AP"], "AP50_descr": descr["AP50"],
                  "AP75_descr": descr["AP75"],
                  "AP50_categ": categ["AP50"], "AP75_categ": categ["AP75"], "AR_descr": descr["AR"],
                  "AR_categ": categ["AR"]}
        return {k: v * 100 for k, v in values.items()}


class OmniLabelScorer(Scorer[Options]):
    """The 13 official numbers."""

    options_type = Options
    prediction_keys = schema.PREDICTION_KEYS
    prediction_form = schema.PREDICTION_FORM

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """The official ``dataset_*.json`` or a Hub folder -> records."""
        return reader.load_references(source, split)

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of the Hub dataset -> records."""
        return reader.references_from_rows(rows, source="references")

    def read_predictions(self, source: str | os.PathLike, *, max_bytes: int | None = None,
                         max_values: int | None = None, typed: bool = False) -> Any:
        """The prediction file's entries; with ``typed``, a file of the usual shape as
        :class:`~.scorer.TypedPrediction` records (half the reading time and memory of dicts),
        others as dicts."""
        from ...engine.io import MAX_JSON_BYTES, read_json

        return read_json(source, what="prediction file", max_bytes=max_bytes or MAX_JSON_BYTES,
                         max_values=max_values, typed=list[TypedPrediction] if typed else None)

    def entries_from_examples(self, references: list[dict[str, Any]],
                              predictions: list[Any]) -> list[Any]:
        """``{"boxes", "scores", "description_ids"}`` per image -> one official entry per box."""
        check_examples(references, predictions)
        return [{"image_id": ref["image_id"], "bbox": box, "description_ids": ids, "scores": scores}
                for n, (ref, pred) in enumerate(zip(references, predictions))
                for box, scores,
                ids in aligned_lists(pred, ("boxes", "scores", "description_ids"), n)]

    def score(self, references: Any, predictions: Any, options: Options,
              source: str = "predictions") -> Any:
        """AP, AP_categ, AP_descr and the rest, as OmniLabelEval computes them."""
        return score(references, predictions, protocol=options.protocol, split=options.split,
                     source=source, with_per_description=options.details, analysis=options.analysis)
