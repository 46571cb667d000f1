"""Ref-L4 scorer: Acc@0.5/0.75/0.9, mAcc, per size and per class, number for number with the
official ``RefL4Evaluator`` (``JierunChen/Ref-L4``, ``ref_l4/evaluation.py``) under ``protocol="official"``.

What the official code does and this module reproduces (OFFICIAL-SCORERS.md, section 3):
boxes to xyxy with float64 sums, IoU in float32 (mmdet ``bbox_overlaps``, union floored at 1e-6),
a hit is ``iou > float32(t)`` (strict), every mean is :func:`statistics.mean` (exact rational mean),
the class key goes through the RefCOCO -> Objects365 table with its ten off-by-one entries.
"""

from __future__ import annotations

import itertools
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
from ...engine.lookup import find_ids
from ...engine.result import Result
from ...engine.uncertainty import merge
from .. import expect_prediction_list
from ..validation import describe as _describe
from . import schema
from .analysis import CauseReplicator, analyze
from .records import RefL4References

__all__ = ["RefL4References", "Predictions", "parse_predictions", "score", "ACC_THRESHOLDS", "MACC_THRESHOLDS"]

#: Thresholds of Acc50/75/90 and of mAcc, as the official code writes them (Python floats).
ACC_THRESHOLDS = (0.5, 0.75, 0.9)
MACC_THRESHOLDS = tuple(i / 100 for i in range(50, 100, 5))


@dataclass(frozen=True)
class Predictions:
    """Predictions aligned with the references: one xyxy float64 box per row, ``present`` False where missing."""

    boxes_xyxy: NDArray[np.float64]
    present: NDArray[np.bool_]
    counts: dict[str, Any]
    warnings: list[str]
    #: every box was a list of JSON integers: officially an int64 tensor, whose areas are exact
    integer_boxes: bool = False
    #: per row, its prediction's four numbers as written (NaN where missing) and whether they read as xywh
    numbers: NDArray[np.float64] | None = None
    as_xywh: NDArray[np.bool_] | None = None


def _prediction_ids(entries: list[Any], source: str) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Ids as int64 and which entries can name a row, with the official dict semantics: 17, 17.0 and True == 1
    name rows; strings, non-integral floats and ints beyond int64 are keys no row id equals (ignored, counted);
    an unhashable id crashes the official scorer (an error here)."""
    raw = [e["id"] for e in entries]
    if set(map(type, raw)) <= {int}:
        try:
            return np.asarray(raw, dtype=np.int64), np.ones(len(raw), dtype=bool)
        except OverflowError:
            pass
    ids = np.zeros(len(raw), dtype=np.int64)
    usable = np.zeros(len(raw), dtype=bool)
    for index, value in enumerate(raw):
        try:
            hash(value)
        except TypeError:
            raise PredictionError(f"'id' is a {type(value).__name__} ({value!r}), which cannot be an id", file=source,
                                  entry=f"entry {index}", fix="ids are the integer 'id' column of the Ref-L4 rows") from None
        number = isinstance(value, (int, float)) and (not isinstance(value, float) or value.is_integer())
        if number and -2**63 <= value < 2**63:
            ids[index], usable[index] = int(value), True
    return ids, usable


def _prediction_boxes(entries: list[Any], ids: NDArray[np.int64], source: str, protocol: str = "official"
                      ) -> tuple[NDArray[np.float64], bool, list[str]]:
    """Boxes as float64, whether every coordinate was a JSON integer (the official int64 tensor), and a warning
    for NaN / infinite coordinates, kept under the official protocol (the official IoU is then NaN or 0: a miss)
    and refused under ``corrected``."""
    boxes = [e["pred_bbox"] for e in entries]
    try:
        arr = np.asarray(boxes)
        ok = arr.ndim == 2 and arr.shape[1] == 4 and arr.dtype.kind in "iuf"
        # numpy turns a stray true/false into 1/0 silently; JSON booleans are not coordinates.
        ok = ok and bool not in set(map(type, itertools.chain.from_iterable(boxes)))
    except (ValueError, TypeError):
        ok = False
    if not ok:
        for index, box in enumerate(boxes):
            if (not isinstance(box, (list, tuple)) or len(box) != 4
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
                raise PredictionError(f"'pred_bbox' must be a list of four numbers, got {box!r}", file=source,
                                      entry=f"entry {index} (id {ids[index]})",
                                      fix='write [x1, y1, x2, y2] with "format": "xyxy" or [x, y, w, h] with '
                                          '"format": "xywh"')
        raise PredictionError("'pred_bbox' values are not all numbers", file=source)  # pragma: no cover
    integer = arr.dtype.kind in "iu"
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    warnings = []
    if bad.any() and protocol != "official":
        index = int(np.flatnonzero(bad)[0])
        raise PredictionError(f"'pred_bbox' {boxes[index]!r} is not four finite numbers ({int(bad.sum())} such boxes)",
                              file=source, entry=f"entry {index} (id {ids[index]})",
                              fix="replace NaN/inf coordinates by a real box (--protocol official scores them as the "
                                  "official scorer does: misses)")
    if bad.any():
        warnings.append(f"official protocol: {int(bad.sum())} predicted box(es) hold NaN or infinite coordinates "
                        f"(ids {_describe(ids[bad].tolist())}): the official IoU is NaN or 0 there (torch propagates "
                        "NaN, an infinite area makes the union infinite), so each is a miss; --protocol corrected "
                        "refuses them")
    return arr, integer, warnings


def _formats_as_xywh(entries: list[Any], protocol: str, source: str) -> tuple[NDArray[np.bool_], dict[str, int], list[str]]:
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
                "official protocol: 'format' values other than exactly \"xywh\" are read as xyxy, as the official "
                f"scorer does: {', '.join(f'{k!r} x{n}' for k, n in odd.items())}. "
                "Use --protocol corrected to read them case-insensitively (unknown values then raise an error).")
        return is_xywh, tally, warnings
    lowered = [f.strip().lower() if isinstance(f, str) else None for f in formats]
    for index, f in enumerate(lowered):
        if f not in ("xywh", "xyxy"):
            raise PredictionError(f"'format' is {formats[index]!r}", file=source, entry=f"entry {index}",
                                  fix="use \"xyxy\" ([x1, y1, x2, y2]) or \"xywh\" ([x, y, w, h])")
    return np.asarray([f == "xywh" for f in lowered], dtype=bool), tally, warnings


def _raise_malformed_entry(entries: list[Any], source: str) -> None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise PredictionError(f"expected an object, got {type(entry).__name__}", file=source, entry=f"entry {index}")
        for key in ("id", "pred_bbox", "format"):
            if key not in entry:
                raise PredictionError(f"missing key {key!r}", file=source,
                                      entry=f"entry {index}" + (f" (id {entry['id']!r})" if "id" in entry else ""),
                                      fix="each entry needs \"id\", \"pred_bbox\" and \"format\"")


def parse_predictions(entries: Any, refs: RefL4References, *, protocol: str = "official",
                      missing: str = "error", source: str = "predictions") -> Predictions:
    """Validate official-format predictions and align them with ``refs`` (bad input -> InputError)."""
    expect_prediction_list(entries, "ref_l4", source, schema.PREDICTION_FORM)
    if not entries:
        raise FormatError("the prediction list is empty (the official scorer returns {} here)", file=source,
                          fix="write one {\"id\", \"pred_bbox\", \"format\"} entry per row of the split")
    if not all(isinstance(e, dict) and "id" in e and "pred_bbox" in e and "format" in e for e in entries):
        _raise_malformed_entry(entries, source)
    ids, usable = _prediction_ids(entries, source)
    boxes, integer_boxes, box_warnings = _prediction_boxes(entries, ids, source, protocol)
    is_xywh, format_tally, warnings = _formats_as_xywh(entries, protocol, source)
    warnings = box_warnings + warnings

    other = [entries[i]["id"] for i in np.flatnonzero(~usable)]
    uniq, first, counts = np.unique(ids[usable], return_index=True, return_counts=True)
    first = np.flatnonzero(usable)[first]
    if (counts > 1).any() or len(set(other)) != len(other):   # the official scorer raises on duplicate ids
        dup = uniq[counts > 1].tolist() + [v for v in set(other) if other.count(v) > 1]
        raise PredictionError(f"{len(dup)} id(s) occur more than once: {_describe(dup)}", file=source,
                              fix="keep exactly one prediction per id")
    if other:
        warnings.append(f"{len(other)} prediction(s) have ids that no row id can equal (strings, non-integral "
                        f"numbers) and were ignored, as the official scorer never looks them up: {_describe(other)}")

    boxes_xyxy = np.where(is_xywh[:, None], xywh_to_xyxy(boxes), boxes)
    # Align: for each reference row, the index of its prediction (or -1).
    pos, present = find_ids(uniq, refs.ids)
    pred_index = np.where(present, first[pos] if len(uniq) else -1, -1)
    n_missing = int((~present).sum())
    if n_missing and missing != "miss":
        strings = [v for v in other if isinstance(v, str)]
        hint = (f"; {len(strings)} prediction id(s) are strings, e.g. {strings[0]!r}, which equal no row id: write "
                "them without quotes" if strings else "")
        raise CoverageError(
            f"{n_missing} of the {len(refs)} rows have no prediction, e.g. ids {_describe(refs.ids[~present].tolist())}"
            + hint, file=source, fix="predict every row of the split, choose the right --split, or pass --missing miss "
                                     "(missing_as_miss=True) to count them as misses")
    n_other_split, unknown = _foreign_ids(ids[usable], refs)
    if len(unknown):
        warnings.append(f"{len(unknown)} prediction(s) have ids that are not rows of the references and were "
                        f"ignored, e.g. {_describe(unknown.tolist())}")
    aligned = np.zeros((len(refs), 4), dtype=np.float64)
    aligned[present] = boxes_xyxy[pred_index[present]]
    numbers = np.full((len(refs), 4), np.nan)
    numbers[present] = boxes[pred_index[present]]
    if n_missing:
        warnings.append(f"{n_missing} row(s) without a prediction were counted as misses (IoU 0)")
    counts_out = {"predictions": len(entries), "predictions_used": int(present.sum()),
                  "other_split_ids_ignored": n_other_split, "unknown_ids_ignored": int(len(unknown)),
                  "unusable_ids_ignored": len(other),
                  "missing_counted_as_miss": n_missing,
                  "formats": format_tally}
    # the official tensor holds only the boxes of the scored rows: int64 when all of those are JSON integers
    used = pred_index[present]
    integer_boxes = integer_boxes or all(all(type(v) is int for v in entries[i]["pred_bbox"]) for i in used.tolist())
    return Predictions(aligned, present, counts_out, warnings, integer_boxes, numbers,
                       np.where(present, is_xywh[np.maximum(pred_index, 0)], False))


def _foreign_ids(ids: NDArray[np.int64], refs: RefL4References) -> tuple[int, NDArray[np.int64]]:
    """Prediction ids that are no row of ``refs``: (how many are rows of the other split, the unknown ones)."""
    extra = ids[~find_ids(np.unique(refs.ids), ids)[1]]
    other_split = (np.isin(extra, refs.other_split_ids) if refs.other_split_ids is not None
                   else np.zeros(len(extra), dtype=bool))
    return int(other_split.sum()), extra[~other_split]


def iou_official(refs: RefL4References, preds: Predictions) -> NDArray[np.float32]:
    """Per-row IoU in float32 as the official scorer computes it (GT ``x + w`` summed in float64 first)."""
    iou = iou_aligned_xyxy(xywh_to_xyxy(refs.bbox_xywh), preds.boxes_xyxy, dtype=np.float32,
                           exact_area_b=preds.integer_boxes)
    return np.where(preds.present, iou, np.float32(0.0))


def _hits(iou: NDArray[np.float32], thresholds: Sequence[float]) -> NDArray[np.bool_]:
    """``iou > t`` compared in float32 (numpy >= 2 casts the Python float t to the array's float32)."""
    return iou[:, None] > np.asarray(thresholds, dtype=np.float32)[None, :]


def _mean(values: Sequence[float]) -> float:
    """The official mean: :func:`statistics.mean`, the exactly rounded rational mean."""
    return float(statistics.mean([float(v) for v in values]))


def _acc_block(hits_acc: NDArray[np.bool_], hits_macc: NDArray[np.bool_]) -> dict[str, float | None]:
    """Annotation-level Acc@t = hits/N*100 and mAcc = mean_t(hits_t/N)*100 (official operation order)."""
    n = hits_acc.shape[0]
    if n == 0:
        return {"Acc50": None, "Acc75": None, "Acc90": None, "mAcc": None}
    acc = [int(c) / n * 100 for c in hits_acc.sum(axis=0)]
    macc = _mean([int(c) / n for c in hits_macc.sum(axis=0)]) * 100
    return {"Acc50": acc[0], "Acc75": acc[1], "Acc90": acc[2], "mAcc": macc}


def _bucket_block(hits_macc: NDArray[np.bool_]) -> tuple[float | None, float | None]:
    """Size level: Acc@0.5 = hits/n*100, mAcc = mean_t(hits_t/n*100); empty -> None (official crashes)."""
    n = hits_macc.shape[0]
    if n == 0:
        return None, None
    per_t = [int(c) / n * 100 for c in hits_macc.sum(axis=0)]
    return per_t[0], _mean(per_t)


def _factorize(values: Sequence[str]) -> tuple[list[str], NDArray[np.intp]]:
    """Distinct values in first-appearance order and each value's index into them."""
    codes: dict[str, int] = {}
    inverse = [codes.setdefault(v, len(codes)) for v in values]
    return list(codes), np.asarray(inverse, dtype=np.intp)


def _class_codes(categories: list[str], table: dict[int, int]) -> tuple[list[str], NDArray[np.intp]]:
    """Classes through ``table`` and the class of each distinct ``ori_category_id`` (mapped once, not per row)."""
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


def score(refs: RefL4References, predictions: Any, *, protocol: str = "official", missing: str = "error",
          split: str = "all", source: str = "predictions", with_samples: bool = True, analysis: bool = False) -> Result:
    """Score official-format Ref-L4 predictions against ``refs`` (module docstring); ``analysis``: also why."""
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
            warnings.append(f"no {name} ground-truth box in this split: {name}_Acc50 and {name}_mAcc are null "
                            "(the official scorer raises ZeroDivisionError here)")

    categories, category_inverse = _factorize(refs.ori_category_id)
    classes, class_of_category = _class_codes(categories, schema.refcoco_to_o365(protocol))
    n_c, acc_c = _class_table(hits_macc, len(classes), class_of_category[category_inverse])
    metrics["class_Acc50"], metrics["class_mAcc"] = _class_metrics(acc_c)
    if protocol == "official":
        warnings.extend(_mapping_warning(categories, category_inverse, hits_macc, metrics))

    members: dict[str, list[str]] = {c: [] for c in classes}
    for category, code in zip(categories, class_of_category):
        members[classes[code]].append(category)
    per_class = [{"class": c, "name": schema.category_name(c), "n": int(n), "Acc50": float(a[0]), "mAcc": _mean(a.tolist()),
                  "members": sorted(members[c])}
                 for n, c, a in sorted(zip(n_c.tolist(), classes, acc_c), key=lambda t: (-t[0], t[1]))]

    breakdowns: dict[str, Any] = {
        "per_size": per_size,
        "per_source": _per_source(categories, category_inverse, hits_acc, hits_macc),
        "per_class": per_class,
        "acc_by_threshold": {"thresholds": list(MACC_THRESHOLDS),
                             "acc": [int(c) / len(refs) * 100 for c in hits_macc.sum(axis=0)]},
    }
    breakdowns["threshold_metrics"] = threshold_metrics(int(preds.present.sum()), int(hits_macc[:, 0].sum()), len(refs))
    if with_samples:
        breakdowns["samples"] = {"id": refs.ids, "iou": iou.astype(np.float64)}  # arrays: serialised fast
    counts = {"rows": len(refs), "classes": len(classes), **preds.counts}
    unit_of_row, unit = (refs.image, "image") if refs.image is not None else (np.arange(len(refs)), "expression")
    analyzed, cause = analyze(refs, preds.boxes_xyxy, preds.present, iou, hits_macc[:, 0]) if analysis else (None, None)
    class_of_row = class_of_category[category_inverse]
    return Result(benchmark="ref_l4", protocol=protocol, metrics=metrics, breakdowns=breakdowns,
                  counts=counts, warnings=warnings, options={"split": split, "missing": missing},
                  analysis=analyzed,
                  resampler=lambda: merge(RefL4Replicator.build(hits_acc, hits_macc, size_of_row, class_of_row,
                                                                len(classes), unit_of_row, unit),
                                          None if cause is None else CauseReplicator(cause, unit_of_row, unit)))


def threshold_metrics(answered: int, hits50: int, rows: int) -> dict[str, Any]:
    """Precision, recall and F1 at IoU 0.5 (not official): one box per expression, precision over the expressions
    answered, recall over all of them (Acc@0.5)."""
    return {"note": "not official: one box per expression; precision over the expressions answered, recall over all "
                    "(recall is Acc@0.5)", "iou": 0.5, **precision_recall_f1(hits50, answered - hits50, rows),
            "true_positives": hits50, "false_positives": answered - hits50, "gt_boxes": rows, "boxes": answered}


_SIZE_COLS = 1 + len(ACC_THRESHOLDS) + len(MACC_THRESHOLDS)   # n, hits at Acc thresholds, hits at mAcc thresholds
_SIZES = len(schema.SIZE_NAMES) + 1                           # the sizes, and none (a box of negative area)
_CLASS_COLS = 1 + len(MACC_THRESHOLDS)


@dataclass(frozen=True)
class RefL4Replicator:
    """Every Ref-L4 metric under image weights, from per-image hit counts per size bucket and class
    (:mod:`vlbench.engine.uncertainty`); the expressions of one image move together."""

    features: Any            # scipy CSR (units, _SIZES * _SIZE_COLS + classes * _CLASS_COLS): counts per unit
    n_classes: int
    strata: tuple[int, ...]
    unit: str

    @classmethod
    def build(cls, hits_acc: NDArray[np.bool_], hits_macc: NDArray[np.bool_], size_of_row: NDArray[np.intp],
              class_of_row: NDArray[np.intp], n_classes: int, unit_of_row: NDArray[np.int64], unit: str) -> RefL4Replicator:
        """Per-unit sparse counts of hits per size bucket and class."""
        from scipy import sparse

        n = len(unit_of_row)
        ones = np.ones((n, 1))
        size_vals = np.hstack([ones, hits_acc, hits_macc])                      # (n, _SIZE_COLS)
        class_vals = np.hstack([ones, hits_macc])                               # (n, _CLASS_COLS)
        size_cols = size_of_row[:, None] * _SIZE_COLS + np.arange(_SIZE_COLS)[None, :]
        class_cols = _SIZES * _SIZE_COLS + class_of_row[:, None] * _CLASS_COLS + np.arange(_CLASS_COLS)[None, :]
        _, units = np.unique(unit_of_row, return_inverse=True)
        n_units = int(units.max()) + 1 if n else 0
        rows = np.repeat(units, _SIZE_COLS + _CLASS_COLS)
        cols = np.hstack([size_cols, class_cols]).ravel()
        vals = np.hstack([size_vals, class_vals]).ravel().astype(np.float64)
        features = sparse.csr_matrix((vals, (rows, cols)), shape=(n_units, _SIZES * _SIZE_COLS + n_classes * _CLASS_COLS))
        return cls(features, n_classes, (n_units,), unit)

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        sums = np.asarray((self.features.T @ weights.T).T)                    # (R, F) weighted counts
        size = sums[:, :_SIZES * _SIZE_COLS].reshape(len(weights), _SIZES, _SIZE_COLS)
        k = len(ACC_THRESHOLDS)
        total = size.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            n = total[:, 0]
            out = {name: total[:, 1 + j] / n * 100 for j, name in enumerate(("Acc50", "Acc75", "Acc90"))}
            out["mAcc"] = (total[:, 1 + k:] / n[:, None]).mean(axis=1) * 100
            for s, name in enumerate(schema.SIZE_NAMES):
                per_t = size[:, s, 1 + k:] / size[:, s, :1] * 100
                out[f"{name}_Acc50"], out[f"{name}_mAcc"] = per_t[:, 0], per_t.mean(axis=1)
            cls_ = sums[:, _SIZES * _SIZE_COLS:].reshape(len(weights), self.n_classes, _CLASS_COLS)
            present = cls_[:, :, 0] > 0
            acc_c = np.where(present[:, :, None], cls_[:, :, 1:] / cls_[:, :, :1] * 100, 0.0)   # (R, C, T)
            per_t = acc_c.sum(axis=1) / present.sum(axis=1)[:, None]
            out["class_Acc50"], out["class_mAcc"] = per_t[:, 0], per_t.mean(axis=1)
        return out


def _mapping_warning(categories: list[str], category_inverse: NDArray[np.intp], hits_macc: NDArray[np.bool_],
                     metrics: dict[str, float | None]) -> list[str]:
    """Name the official table's off-by-one entries when they change class_Acc50 / class_mAcc."""
    classes, class_of_category = _class_codes(categories, schema.refcoco_to_o365("corrected"))
    acc50_fixed, macc_fixed = _class_metrics(_class_table(hits_macc, len(classes), class_of_category[category_inverse])[1])
    if acc50_fixed == metrics["class_Acc50"] and macc_fixed == metrics["class_mAcc"]:
        return []
    present = sorted(c for c in schema.OFF_BY_ONE_COCO_IDS if f"refcoco_{c}" in set(categories))
    named = "; ".join(
        f"{schema.COCO_NAMES[c]} (refcoco_{c}) -> o365_{schema.OFFICIAL_REFCOCO_TO_O365[c]} "
        f"{schema.category_name(f'o365_{schema.OFFICIAL_REFCOCO_TO_O365[c]}')}" for c in present)
    return [f"official protocol: the official RefCOCO -> Objects365 class table has off-by-one entries that change "
            f"class_Acc50 / class_mAcc here ({named}); with the corrected table they would be "
            f"{acc50_fixed:.4f} / {macc_fixed:.4f} (--protocol corrected)"]


def _per_source(categories: list[str], category_inverse: NDArray[np.intp], hits_acc: NDArray[np.bool_],
                hits_macc: NDArray[np.bool_]) -> dict[str, Any]:
    """The paper's Fig. 6 subsets: COCO-derived rows; Objects365 rows of classes COCO has; the rest."""
    coco_in_o365 = {f"o365_{o}" for o in schema.refcoco_to_o365("corrected").values()}
    is_coco = np.asarray([c.startswith("refcoco_") for c in categories], dtype=bool)[category_inverse]
    shared = np.asarray([c in coco_in_o365 for c in categories], dtype=bool)[category_inverse]
    groups = {"coco": is_coco, "objects365_coco_classes": ~is_coco & shared,
              "objects365_other_classes": ~is_coco & ~shared}
    return {name: {"n": int(mask.sum()), **_acc_block(hits_acc[mask], hits_macc[mask])} for name, mask in groups.items()}
