"""Ref-L4 scorer: Acc@0.5/0.75/0.9, mAcc, per size and per class, number for number with the
official ``RefL4Evaluator`` (``JierunChen/Ref-L4``, ``ref_l4/evaluation.py``) under
``protocol="official"``.

What the official code does and this module reproduces (OFFICIAL-SCORERS.md, section 3):
boxes to xyxy with float64 sums, IoU in float32 (mmdet ``bbox_overlaps``, union floored at 1e-6),
a hit is ``iou > float32(t)`` (strict), every mean is :func:`statistics.mean` (exact rational mean),
the class key goes through the RefCOCO -> Objects365 table with its ten off-by-one entries.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.cocoeval import precision_recall_f1
from ...engine.errors import CoverageError, FormatError, InputError, PredictionError
from ...engine.geometry import iou_aligned_xyxy, xywh_to_xyxy
from ...engine.result import Result
from ...engine.uncertainty import merge
from .. import expect_prediction_list
from ..benchmark import Scorer, check_examples
from ..validation import degenerate_box_warning, describe as _describe
from . import reader, schema
from .analysis import CauseReplicator, analyze
from .records import RefL4References
from .schema import RefL4Options

__all__ = ["RefL4Scorer", "RefL4References", "Predictions", "parse_predictions", "score",
           "ACC_THRESHOLDS", "MACC_THRESHOLDS"]

#: Thresholds of Acc50/75/90 and of mAcc, as the official code writes them (Python floats).
ACC_THRESHOLDS = (0.5, 0.75, 0.9)
MACC_THRESHOLDS = tuple(i / 100 for i in range(50, 100, 5))


@dataclass(frozen=True)
class Predictions:
    """Predictions aligned with the references: one xyxy float64 box per row, ``present`` False
    where missing."""

    boxes_xyxy: NDArray[np.float64]
    present: NDArray[np.bool_]
    counts: dict[str, Any]
    warnings: list[str]
    #: every box was a list of JSON integers: officially an int64 tensor, whose areas are exact
    integer_boxes: bool = False
    #: per row, its prediction's four numbers as written (NaN where missing) and whether they read
    #: as xywh
    numbers: NDArray[np.float64] | None = None
    as_xywh: NDArray[np.bool_] | None = None


def _prediction_index(entries: list[Any], source: str) -> dict[Any, int]:
    """id -> entry index, the official ``{pred['id']: pred}``: ids are joined by Python equality and
    hash, of whatever type they are read (``17``, ``17.0`` and ``True`` are one key, ``"17"``
    another); repeated keys raise, as the official length check does, and an unhashable id is named
    (the official dict raises TypeError)."""
    index: dict[Any, int] = {}
    repeated: list[Any] = []
    for i, entry in enumerate(entries):
        value = entry["id"]
        try:
            if index.setdefault(value, i) != i:
                repeated.append(value)
        except TypeError:
            raise PredictionError(f"'id' is a {type(value).__name__} ({value!r}), which cannot be "
                                  "an id", file=source,
                                  entry=f"entry {i}", fix="ids are the 'id' column of the Ref-L4 "
                                                          "rows") from None
    if repeated:
        distinct = list(dict.fromkeys(repeated))
        raise PredictionError(f"{len(distinct)} id(s) occur more than once: {_describe(distinct)}",
                              file=source, fix="keep exactly one prediction per id")
    return index


def _box_numbers(box: Any, as_xywh: bool) -> list[Any] | None:
    """The four numbers the official code puts in its tensor, or None where it fails: an ``xywh``
    box's first four values become ``[x, y, x + w, y + h]`` (further values are never read), any
    other box must be four values; booleans are numbers there (torch makes them 1 and 0), text, null
    and nested lists are not."""
    if not isinstance(box, (list, tuple)) or len(box) < 4 or (len(box) > 4 and not as_xywh):
        return None
    numbers = list(box[:4])
    if not all(isinstance(v, (int, float)) for v in numbers):
        return None
    return numbers


def _prediction_boxes(entries: list[Any], used: NDArray[np.intp], is_xywh: NDArray[np.bool_],
                      source: str,
                      protocol: str = "official") -> tuple[NDArray[np.float64], bool, list[str]]:
    """The boxes of the entries ``used`` (those the official loop reads: one per scored row) as
    written, float64, (n, 4); whether every value was an integer or a boolean (the official int64
    tensor, whose areas are exact); warnings for what the official code takes that a user may not
    mean (booleans, values past the fourth of an xywh box; NaN and infinite coordinates, refused
    under ``corrected``)."""
    numbers: list[list[Any]] = []
    # entries, in order
    odd: dict[str, list[int]] = {"has more than four values": [], "holds booleans": []}
    for i in used.tolist():
        box = entries[i]["pred_bbox"]
        four = _box_numbers(box, bool(is_xywh[i]))
        if four is None:
            raise PredictionError(f"'pred_bbox' must be a list of four numbers, got {box!r}",
                                  file=source, entry=f"entry {i} (id {entries[i]['id']!r})",
                                  fix='write [x1, y1, x2, y2] with "format": "xyxy" or [x, y, w, '
                                      'h] with "format": "xywh"')
        if len(box) > 4:
            odd["has more than four values"].append(i)
        if any(type(v) is bool for v in four):
            odd["holds booleans"].append(i)
        numbers.append(four)
    integer = all(type(v) is not float for four in numbers for v in four)
    arr = np.asarray(numbers, dtype=np.float64).reshape(-1, 4)
    bad = ~np.isfinite(arr).all(axis=1)
    odd = {"is not four finite numbers": used[bad].tolist(), **odd}
    extra, booleans = len(odd["has more than four values"]), len(odd["holds booleans"])
    warnings = []
    if protocol != "official" and any(odd.values()):
        what, (i, *_) = next((what, rows) for what, rows in odd.items() if rows)
        raise PredictionError(f"'pred_bbox' {entries[i]['pred_bbox']!r} {what}", file=source,
                              entry=f"entry {i} (id {entries[i]['id']!r})",
                              fix="write four finite numbers (--protocol official scores such "
                                  "boxes as the official scorer does)")
    if bad.any():
        warnings.append(f"official protocol: {int(bad.sum())} predicted box(es) hold NaN or "
                        "infinite coordinates (ids "
                        f"{_describe(entries[i]['id'] for i in used[bad].tolist())}): the official "
                        "IoU is NaN or 0 there (torch propagates NaN, an infinite area makes the "
                        "union infinite), so each is a miss; --protocol corrected refuses them")
    if extra:
        warnings.append(f"official protocol: {extra} xywh box(es) have more than four values: the "
                        "official conversion reads the first four and ignores the rest; --protocol "
                        "corrected refuses them")
    if booleans:
        warnings.append(f"official protocol: {booleans} box(es) hold true/false values, which the "
                        "official tensor reads as 1 and 0; --protocol corrected refuses them")
    return arr, integer, warnings


def _formats_as_xywh(entries: list[Any], protocol: str, source: str) -> tuple[NDArray[np.bool_],
                                                                              dict[str, int],
                                                                              list[str]]:
    formats = [e["format"] for e in entries]
    try:
        tally = {f if isinstance(f, str) else repr(f): n for f, n in Counter(formats).items()}
    except TypeError:  # an unhashable value (a list, an object)
        tally = dict(Counter(f if isinstance(f, str) else repr(f) for f in formats))
    warnings: list[str] = []
    if protocol == "official":
        # Official: only the exact string "xywh" means xywh; anything else is read as xyxy.
        is_xywh = np.asarray([f == "xywh" for f in formats], dtype=bool)
        odd = {k: n for k, n in tally.items() if k not in ("xywh", "xyxy")}
        if odd:
            warnings.append(
                "official protocol: 'format' values other than exactly \"xywh\" are read as xyxy, "
                f"as the official scorer does: {', '.join(f'{k!r} x{n}' for k, n in odd.items())}. "
                "Use --protocol corrected to read them case-insensitively (unknown values then "
                "raise an error).")
        return is_xywh, tally, warnings
    lowered = [f.strip().lower() if isinstance(f, str) else None for f in formats]
    for index, f in enumerate(lowered):
        if f not in ("xywh", "xyxy"):
            raise PredictionError(f"'format' is {formats[index]!r}", file=source,
                                  entry=f"entry {index}",
                                  fix="use \"xyxy\" ([x1, y1, x2, y2]) or \"xywh\" ([x, y, w, h])")
    return np.asarray([f == "xywh" for f in lowered], dtype=bool), tally, warnings


def _raise_malformed_entry(entries: list[Any], source: str) -> None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise PredictionError(f"expected an object, got {type(entry).__name__}", file=source,
                                  entry=f"entry {index}")
        for key in ("id", "pred_bbox", "format"):
            if key not in entry:
                raise PredictionError(
                    f"missing key {key!r}",
                    file=source,
                    entry=f"entry {index}" + (f" (id {entry['id']!r})" if "id" in entry else ""),
                    fix='each entry needs "id", "pred_bbox" and "format"',
                )


def parse_predictions(entries: Any, refs: RefL4References, *, protocol: str = "official",
                      missing: str = "error", source: str = "predictions") -> Predictions:
    """Validate official-format predictions and align them with ``refs`` (bad input ->
    InputError)."""
    expect_prediction_list(entries, "ref_l4", source, schema.PREDICTION_FORM)
    if not entries:
        raise FormatError("the prediction list is empty (the official scorer returns {} here)",
                          file=source,
                          fix="write one {\"id\", \"pred_bbox\", \"format\"} entry per row of the "
                              "split")
    if not all(
        isinstance(e, dict) and "id" in e and "pred_bbox" in e and "format" in e for e in entries
    ):
        _raise_malformed_entry(entries, source)
    index = _prediction_index(entries, source)
    row_ids = refs.ids.tolist()
    pred_index = np.fromiter((index.get(r, -1) for r in row_ids), dtype=np.intp, count=len(row_ids))
    present = pred_index >= 0
    is_xywh, format_tally, warnings = _formats_as_xywh(entries, protocol, source)
    n_missing = int((~present).sum())
    if n_missing and missing != "miss":
        raise CoverageError(
            f"{n_missing} of the {len(refs)} rows have no prediction, e.g. ids "
            f"{_describe(np.asarray(row_ids, dtype=object)[~present].tolist())}"
            + _id_type_hint(row_ids, list(index)),
            file=source,
            fix="predict every row of the split, choose the right --split, or pass --missing miss "
            "(missing_as_miss=True) to count them as misses",
        )
    used = pred_index[present]
    boxes, integer_boxes, box_warnings = _prediction_boxes(entries, used, is_xywh, source, protocol)
    warnings = box_warnings + warnings
    n_other_split, unknown, unusable = _foreign_ids(list(index), refs)
    if unusable:
        warnings.append(f"{len(unusable)} prediction(s) have ids of a type no row id has (text "
                        "where the rows' ids are numbers, or numbers where they are text) and were "
                        "ignored, as the official scorer never looks them up: "
                        f"{_describe(unusable)}")
    if unknown:
        warnings.append(f"{len(unknown)} prediction(s) have ids that are not rows of the "
                        f"references and were ignored, e.g. {_describe(unknown)}")
    aligned = np.zeros((len(refs), 4), dtype=np.float64)
    aligned[present] = np.where(is_xywh[used][:, None], xywh_to_xyxy(boxes), boxes)
    used_xyxy = aligned[present]
    # inf - inf of a non-finite box: NaN (warned about on its own)
    with np.errstate(invalid="ignore"):
        sides = used_xyxy[:, 2] - used_xyxy[:, 0], used_xyxy[:, 3] - used_xyxy[:, 1]
    warnings += degenerate_box_warning(*sides, used, "IoU 0, so misses")
    numbers = np.full((len(refs), 4), np.nan)
    numbers[present] = boxes
    if n_missing:
        warnings.append(f"{n_missing} row(s) without a prediction were counted as misses (IoU 0)")
    counts_out = {"predictions": len(entries), "predictions_used": int(present.sum()),
                  "other_split_ids_ignored": n_other_split, "unknown_ids_ignored": len(unknown),
                  "unusable_ids_ignored": len(unusable),
                  "missing_counted_as_miss": n_missing,
                  "formats": format_tally}
    return Predictions(aligned, present, counts_out, warnings, integer_boxes, numbers,
                       np.where(present, is_xywh[np.maximum(pred_index, 0)], False))


def _kind(value: Any) -> str:
    """``text`` or ``number``: ids of different kinds never compare equal (``"5" != 5``)."""
    return (
        "text"
        if isinstance(value, str)
        else "number"
        if isinstance(value, (int, float))
        else type(value).__name__
    )


def _id_type_hint(row_ids: list[Any], pred_ids: list[Any]) -> str:
    """Where rows lack a prediction because the ids are written as another type: say so, with the
    fix."""
    row_kinds = {_kind(r) for r in row_ids}
    odd = [p for p in pred_ids if _kind(p) not in row_kinds]
    if not odd:
        return ""
    how = (
        "write them without quotes"
        if row_kinds == {"number"}
        else "write them exactly as the rows' ids, in quotes"
        if row_kinds == {"text"}
        else "write the rows' ids"
    )
    return (f"; {len(odd)} prediction id(s) are of another type than the rows' ids, e.g. "
            f"{odd[0]!r}, and equal no "
            f"row id (the official scorer compares ids by type too): {how}")


def _foreign_ids(pred_ids: list[Any], refs: RefL4References) -> tuple[int, list[Any], list[Any]]:
    """Prediction ids that are no row of ``refs``: (how many are rows of the other split, the other
    ones of a kind some row id has, the ones of a kind no row id has)."""
    rows = set(refs.ids.tolist())
    other_split = set() if refs.other_split_ids is None else set(refs.other_split_ids.tolist())
    extra = [p for p in pred_ids if p not in rows]
    row_kinds = {_kind(r) for r in rows}
    foreign = [p for p in extra if p not in other_split]
    return (len(extra) - len(foreign), [p for p in foreign if _kind(p) in row_kinds],
            [p for p in foreign if _kind(p) not in row_kinds])


def iou_official(refs: RefL4References, preds: Predictions) -> NDArray[np.float32]:
    """Per-row IoU in float32 as the official scorer computes it (GT ``x + w`` summed in float64
    first)."""
    iou = iou_aligned_xyxy(xywh_to_xyxy(refs.bbox_xywh), preds.boxes_xyxy, dtype=np.float32,
                           exact_area_b=preds.integer_boxes)
    return np.where(preds.present, iou, np.float32(0.0))


def _hits(iou: NDArray[np.float32], thresholds: Sequence[float]) -> NDArray[np.bool_]:
    """``iou > t`` compared in float32 (numpy >= 2 casts the Python float t to the array's
    float32)."""
    return iou[:, None] > np.asarray(thresholds, dtype=np.float32)[None, :]


def _mean(values: Sequence[float]) -> float:
    """The official mean: :func:`statistics.mean`, the exactly rounded rational mean."""
    return float(statistics.mean([float(v) for v in values]))


def _acc_block(hits_acc: NDArray[np.bool_],
               hits_macc: NDArray[np.bool_]) -> dict[str, float | None]:
    """Annotation-level Acc@t = hits/N*100 and mAcc = mean_t(hits_t/N)*100 (official operation
    order)."""
    n = hits_acc.shape[0]
    if n == 0:
        return {"Acc50": None, "Acc75": None, "Acc90": None, "mAcc": None}
    acc = [int(c) / n * 100 for c in hits_acc.sum(axis=0)]
    macc = _mean([int(c) / n for c in hits_macc.sum(axis=0)]) * 100
    return {"Acc50": acc[0], "Acc75": acc[1], "Acc90": acc[2], "mAcc": macc}


def _bucket_block(hits_macc: NDArray[np.bool_]) -> tuple[float | None, float | None]:
    """Size level: Acc@0.5 = hits/n*100, mAcc = mean_t(hits_t/n*100); empty -> None (official
    crashes)."""
    n = hits_macc.shape[0]
    if n == 0:
        return None, None
    per_t = [int(c) / n * 100 for c in hits_macc.sum(axis=0)]
    return per_t[0], _mean(per_t)


def _text_first(value: Any) -> tuple[bool, str]:
    """A sort key for class values as read: text in its own order, then anything else (a null) by
    its repr."""
    return (not isinstance(value, str), value if isinstance(value, str) else repr(value))


def _factorize(values: Sequence[Any]) -> tuple[list[str], NDArray[np.intp]]:
    """Distinct values in first-appearance order and each value's index into them."""
    codes: dict[Any, int] = {}
    inverse = [codes.setdefault(v, len(codes)) for v in values]
    return list(codes), np.asarray(inverse, dtype=np.intp)


def _class_codes(categories: list[Any], table: dict[int, int]) -> tuple[list[Any],
                                                                        NDArray[np.intp]]:
    """Classes through ``table`` and the class of each distinct ``ori_category_id`` (mapped once,
    not per row)."""
    return _factorize([schema.class_key(c, table) for c in categories])


def _class_table(hits_macc: NDArray[np.bool_], n_classes: int,
                 inverse: NDArray[np.intp]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per class: its count and acc_c(t) = hits_c(t)/n_c*100 for each mAcc threshold."""
    n_c = np.bincount(inverse, minlength=n_classes)
    hits_c = np.stack([np.bincount(inverse, weights=hits_macc[:, j], minlength=n_classes)
                       for j in range(hits_macc.shape[1])], axis=1)
    return n_c, hits_c / n_c[:, None] * 100  # float64, same rounding as Python's count / n * 100


def _class_metrics(acc_c: NDArray[np.float64]) -> tuple[float, float]:
    """class_Acc50 = mean_c acc_c(0.5); class_mAcc = mean_t mean_c acc_c(t) (unweighted classes)."""
    per_t = [_mean(acc_c[:, j].tolist()) for j in range(acc_c.shape[1])]
    return per_t[0], _mean(per_t)


def score(refs: RefL4References, predictions: Any, *, protocol: str = "official",
          missing: str = "error",
          split: str = "all", source: str = "predictions", with_samples: bool = True,
          analysis: bool = False) -> Result:
    """Score official-format Ref-L4 predictions against ``refs`` (module docstring); ``analysis``:
    also why."""
    if missing not in ("error", "miss"):
        raise InputError(f"unknown value {missing!r} for missing", fix="use 'error' or 'miss'")
    if len(refs) == 0:
        raise InputError(f"the references hold no row of split {split!r}", file=refs.source,
                         fix="choose --split val, test or all")
    preds = parse_predictions(predictions, refs, protocol=protocol, missing=missing, source=source)
    iou = iou_official(refs, preds)
    hits_macc = _hits(iou, MACC_THRESHOLDS)
    hits_acc = _hits(iou, ACC_THRESHOLDS)
    metrics: dict[str, float | None] = dict(_acc_block(hits_acc, hits_macc))

    size_of_row = schema.size_buckets(refs.bbox_xywh[:, 2], refs.bbox_xywh[:, 3])
    size_masks = {name: size_of_row == k for k, name in enumerate(schema.SIZE_NAMES)}
    warnings = list(refs.notes) + list(preds.warnings)
    per_size = {}
    for name, mask in size_masks.items():
        acc50, macc = _bucket_block(hits_macc[mask])
        metrics[f"{name}_Acc50"], metrics[f"{name}_mAcc"] = acc50, macc
        per_size[name] = {"n": int(mask.sum()), "Acc50": acc50, "mAcc": macc}
        if acc50 is None:
            warnings.append(f"no {name} ground-truth box in this split: {name}_Acc50 and "
                            f"{name}_mAcc are null (the official scorer raises ZeroDivisionError "
                            "here)")

    categories, category_inverse = _factorize(refs.ori_category_id)
    classes, class_of_category = _class_codes(categories, schema.refcoco_to_o365(protocol))
    n_c, acc_c = _class_table(hits_macc, len(classes), class_of_category[category_inverse])
    metrics["class_Acc50"], metrics["class_mAcc"] = _class_metrics(acc_c)
    if protocol == "official":
        warnings.extend(_mapping_warning(categories, category_inverse, hits_macc, metrics))

    members: dict[str, list[str]] = {c: [] for c in classes}
    for category, code in zip(categories, class_of_category):
        members[classes[code]].append(category)
    per_class = [{"class": c, "name": schema.category_name(c), "n": int(n), "Acc50": float(a[0]),
                  "mAcc": _mean(a.tolist()), "members": sorted(members[c], key=_text_first)}
                 for n, c,
                 a in sorted(zip(n_c.tolist(), classes, acc_c),
                             key=lambda t: (-t[0], _text_first(t[1])))]

    breakdowns: dict[str, Any] = {
        "per_size": per_size,
        "per_source": _per_source(categories, category_inverse, hits_acc, hits_macc),
        "per_class": per_class,
        "acc_by_threshold": {"thresholds": list(MACC_THRESHOLDS),
                             "acc": [int(c) / len(refs) * 100 for c in hits_macc.sum(axis=0)]},
    }
    breakdowns["threshold_metrics"] = threshold_metrics(int(preds.present.sum()),
                                                        int(hits_macc[:, 0].sum()), len(refs))
    if with_samples:
        # arrays: serialised fast
        breakdowns["samples"] = {"id": refs.ids, "iou": iou.astype(np.float64)}
    counts = {"rows": len(refs), "classes": len(classes), **preds.counts}
    unit_of_row, unit = (refs.image, "image") if refs.image is not None else (np.arange(len(refs)),
                                                                              "expression")
    analyzed, cause = (
        analyze(refs, preds.boxes_xyxy, preds.present, iou, hits_macc[:, 0])
        if analysis
        else (None, None)
    )
    class_of_row = class_of_category[category_inverse]
    return Result(
        benchmark="ref_l4",
        protocol=protocol,
        metrics=metrics,
        breakdowns=breakdowns,
        counts=counts,
        warnings=warnings,
        options={"split": split, "missing": missing},
        analysis=analyzed,
        resampler=lambda: merge(
            RefL4Replicator.build(
                hits_acc, hits_macc, size_of_row, class_of_row, len(classes), unit_of_row, unit
            ),
            None if cause is None else CauseReplicator(cause, unit_of_row, unit),
        ),
    )


def threshold_metrics(answered: int, hits50: int, rows: int) -> dict[str, Any]:
    """Precision, recall and F1 at IoU 0.5 (not official): one box per expression, precision over
    the expressions answered, recall over all of them (Acc@0.5)."""
    return {"note": "not official: one box per expression; precision over the expressions "
                    "answered, recall over all (recall is Acc@0.5)", "iou": 0.5,
            **precision_recall_f1(hits50, answered - hits50, rows),
            "true_positives": hits50, "false_positives": answered - hits50, "gt_boxes": rows,
            "boxes": answered}


# n, hits at Acc thresholds, hits at mAcc thresholds
_SIZE_COLS = 1 + len(ACC_THRESHOLDS) + len(MACC_THRESHOLDS)
# the sizes, and none (a box of negative area)
_SIZES = len(schema.SIZE_NAMES) + 1
_CLASS_COLS = 1 + len(MACC_THRESHOLDS)


@dataclass(frozen=True)
class RefL4Replicator:
    """Every Ref-L4 metric under image weights, from per-image hit counts per size bucket and class
    (:mod:`vlbench.engine.uncertainty`); the expressions of one image move together."""

    # scipy CSR (units, _SIZES * _SIZE_COLS + classes * _CLASS_COLS): counts per unit
    features: Any
    n_classes: int
    strata: tuple[int, ...]
    unit: str

    @classmethod
    def build(cls, hits_acc: NDArray[np.bool_], hits_macc: NDArray[np.bool_],
              size_of_row: NDArray[np.intp],
              class_of_row: NDArray[np.intp], n_classes: int, unit_of_row: NDArray[np.int64],
              unit: str) -> RefL4Replicator:
        """Per-unit sparse counts of hits per size bucket and class."""
        from scipy import sparse

        n = len(unit_of_row)
        ones = np.ones((n, 1))
        size_vals = np.hstack([ones, hits_acc, hits_macc])                      # (n, _SIZE_COLS)
        class_vals = np.hstack([ones, hits_macc])                               # (n, _CLASS_COLS)
        size_cols = size_of_row[:, None] * _SIZE_COLS + np.arange(_SIZE_COLS)[None, :]
        class_cols = (
            _SIZES * _SIZE_COLS
            + class_of_row[:, None] * _CLASS_COLS
            + np.arange(_CLASS_COLS)[None, :]
        )
        _, units = np.unique(unit_of_row, return_inverse=True)
        n_units = int(units.max()) + 1 if n else 0
        rows = np.repeat(units, _SIZE_COLS + _CLASS_COLS)
        cols = np.hstack([size_cols, class_cols]).ravel()
        vals = np.hstack([size_vals, class_vals]).ravel().astype(np.float64)
        features = sparse.csr_matrix((vals, (rows, cols)),
                                     shape=(n_units, _SIZES * _SIZE_COLS + n_classes * _CLASS_COLS))
        return cls(features, n_classes, (n_units,), unit)

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        # (R, F) weighted counts
        sums = np.asarray((self.features.T @ weights.T).T)
        size = sums[:, :_SIZES * _SIZE_COLS].reshape(len(weights), _SIZES, _SIZE_COLS)
        k = len(ACC_THRESHOLDS)
        total = size.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            n = total[:, 0]
            out = {name: total[:, 1 + j] / n * 100 for j,
                   name in enumerate(("Acc50", "Acc75", "Acc90"))}
            out["mAcc"] = (total[:, 1 + k:] / n[:, None]).mean(axis=1) * 100
            for s, name in enumerate(schema.SIZE_NAMES):
                per_t = size[:, s, 1 + k:] / size[:, s, :1] * 100
                out[f"{name}_Acc50"], out[f"{name}_mAcc"] = per_t[:, 0], per_t.mean(axis=1)
            cls_ = sums[:, _SIZES * _SIZE_COLS:].reshape(len(weights), self.n_classes, _CLASS_COLS)
            present = cls_[:, :, 0] > 0
            # (R, C, T)
            acc_c = np.where(present[:, :, None], cls_[:, :, 1:] / cls_[:, :, :1] * 100, 0.0)
            per_t = acc_c.sum(axis=1) / present.sum(axis=1)[:, None]
            out["class_Acc50"], out["class_mAcc"] = per_t[:, 0], per_t.mean(axis=1)
        return out


def _mapping_warning(categories: list[str], category_inverse: NDArray[np.intp],
                     hits_macc: NDArray[np.bool_], metrics: dict[str, float | None]) -> list[str]:
    """Name the official table's off-by-one entries when they change class_Acc50 / class_mAcc."""
    classes, class_of_category = _class_codes(categories, schema.refcoco_to_o365("corrected"))
    acc50_fixed, macc_fixed = _class_metrics(
        _class_table(hits_macc, len(classes), class_of_category[category_inverse])[1]
    )
    if acc50_fixed == metrics["class_Acc50"] and macc_fixed == metrics["class_mAcc"]:
        return []
    present = sorted(c for c in schema.OFF_BY_ONE_COCO_IDS if f"refcoco_{c}" in set(categories))
    named = "; ".join(
        f"{schema.COCO_NAMES[c]} (refcoco_{c}) -> o365_{schema.OFFICIAL_REFCOCO_TO_O365[c]} "
        f"{schema.category_name(f'o365_{schema.OFFICIAL_REFCOCO_TO_O365[c]}')}" for c in present)
    return ["official protocol: the official RefCOCO -> Objects365 class table has off-by-one "
            f"entries that change class_Acc50 / class_mAcc here ({named}); with the corrected "
            f"table they would be {acc50_fixed:.4f} / {macc_fixed:.4f} (--protocol corrected)"]


def _per_source(categories: list[str], category_inverse: NDArray[np.intp],
                hits_acc: NDArray[np.bool_], hits_macc: NDArray[np.bool_]) -> dict[str, Any]:
    """The paper's Fig. 6 subsets: COCO-derived rows; Objects365 rows of classes COCO has; the
    rest."""
    coco_in_o365 = {f"o365_{o}" for o in schema.refcoco_to_o365("corrected").values()}
    is_coco = np.asarray([str(c).startswith("refcoco_") for c in categories], dtype=bool)[
        category_inverse
    ]
    shared = np.asarray([c in coco_in_o365 for c in categories], dtype=bool)[category_inverse]
    groups = {"coco": is_coco, "objects365_coco_classes": ~is_coco & shared,
              "objects365_other_classes": ~is_coco & ~shared}
    return {name: {"n": int(mask.sum()), **_acc_block(hits_acc[mask], hits_macc[mask])} for name,
            mask in groups.items()}


class RefL4Scorer(Scorer[RefL4Options]):
    """Acc@0.5/0.75/0.9, mAcc, per size and per class."""

    options_type = RefL4Options
    prediction_keys = schema.PREDICTION_KEYS
    prediction_form = schema.PREDICTION_FORM

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """The release folder (``ref-l4-{val,test}.parquet``) or a Hub folder -> records of
        ``split``."""
        return reader.load_references(source, split or "all")

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of the Hub dataset -> records."""
        return reader.references_from_rows(rows, source="references")

    def entries_from_examples(self, references: list[dict[str, Any]],
                              predictions: list[Any]) -> list[Any]:
        """``{"pred_bbox", "format"}`` per row -> official entries carrying the row's ``id``."""
        check_examples(references, predictions)
        for n, p in enumerate(predictions):
            if not isinstance(p, dict) or "pred_bbox" not in p or "format" not in p:
                raise PredictionError("each prediction is {\"pred_bbox\": [4 numbers], \"format\": "
                                      "\"xyxy\" | \"xywh\"}",
                                      file="predictions", entry=f"example {n}")
        # "integer" (set by the evaluate module): the box was written in integers, the official
        # int64 path
        entries = [
            {
                "id": int(r["id"]),
                "format": p["format"],
                "pred_bbox": [int(v) for v in p["pred_bbox"]]
                if p.get("integer")
                else p["pred_bbox"],
            }
            for r, p in zip(references, predictions)
        ]
        return _one_entry_per_id(entries)

    def score(self, references: Any, predictions: Any, options: RefL4Options,
              source: str = "predictions") -> Any:
        """The accuracies of the paper's tables."""
        return score(references, predictions, protocol=options.protocol, missing=options.missing,
                     split=options.split or "given", source=source, with_samples=options.details,
                     analysis=options.analysis)


def _one_entry_per_id(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The official file's one prediction per id from one prediction per row: rows that share an id
    (the official evaluator and the build keep them all, each scored with the id's one prediction)
    must have been given the same box; the module cannot say which of two different boxes an
    official file would hold."""
    from ...engine.errors import PredictionError

    first: dict[int, int] = {}
    kept = []
    for n, entry in enumerate(entries):
        seen = first.setdefault(entry["id"], n)
        if seen == n:
            kept.append(entry)
        elif (entries[seen]["pred_bbox"], entries[seen]["format"]) != (entry["pred_bbox"],
                                                                       entry["format"]):
            raise PredictionError(f"rows {seen} and {n} share id {entry['id']} but were given "
                                  "different boxes",
                                  file="predictions", entry=f"example {n}",
                                  fix="give every row of one id the same prediction (the official "
                                      "file holds one prediction per id, scored against each of "
                                      "its rows)")
    return kept
