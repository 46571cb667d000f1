"""Why a detector loses AP: a TIDE-style decomposition (Bolya et al., ECCV 2020) that knows negative
labels.

Every false positive at IoU 0.5 (within the max-dets cut, not ignored) gets one error type, tested
in this order (TIDE's, with duplicates tested before the label errors because one box may carry
several labels; the boundaries are TIDE 1.0.1's, ``tidecv/quantify.py``, both inclusive):

- ``localisation``: its own label's best GT overlaps it with 0.1 <= IoU <= 0.5 (TIDE "Loc"; IoU
  exactly 0.5 is a false positive only where that GT was taken, and TIDE calls it Loc, not Dupe);
- ``duplicate``: its own label's GT overlaps it with IoU > 0.5 but a higher-ranked detection took it
  ("Dupe");
- ``hard_negative``: a GT of another label overlaps it with IoU >= 0.5 and its label is a negative
  of the image (it refers to nothing there: a hard negative, a negative description; the benchmark
  says which): the confusion these benchmarks are built to measure (TIDE "Cls", split in two);
- ``wrong_positive``: the same with a label that is a positive of the image (another object's label)
  ("Cls");
- ``background``: no GT of the image overlaps it with IoU > 0.1 ("Bkg"; exactly 0.1 with another
  label's GT is background, as in TIDE);
- ``both``: anything else: wrong label and poorly placed ("Both");

and every non-ignored GT that no detection took and that no localisation or label error points at is
``missed`` ("Miss"). Each type's cost is ΔAP50: the headline AP at IoU 0.5 with that type fixed
alone, minus the AP as scored, fixed as TIDE fixes it: a localisation or label error becomes a true
positive of the GT it points at (label corrected, box moved), only the highest-ranked error of each
GT and only if no detection took that GT (the others are removed); duplicates, background and both
errors are removed; missed GT leave the GT count. Two more rows as in TIDE: ``false_positives``
(every false positive removed: perfect precision) and ``false_negatives`` (every GT that stays
unmatched removed: perfect recall). As in TIDE the parts do not add up to 100 - AP: each is fixed
alone, and fixing one type changes what others cost (TIDE's paper, section 3). Unlike TIDE, a
negative ΔAP is reported as it is, not clamped to 0.

The costs are COCO's AP at IoU 0.5 (101 recall points, a category without GT left out), so ΔAP is on
the scale of the official number. Stock TIDE's own AP differs from COCO's: its recall grid and a
class without GT counted as 0 move it by up to 23 points on small sets, so compare TIDE's ΔAP rows,
not its AP, with these (with TIDE's AP computed the COCO way, every type's ΔAP here equals TIDE's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .cocoeval import FP, IGNORED, TP, Params, average_precision_at
from .geometry import iou_aligned_xyxy, xywh_to_xyxy
from .sorting import same_key_combinations

__all__ = ["TYPES", "DEFINITIONS", "FOREGROUND_IOU", "BACKGROUND_IOU", "RankedDetections", "Truth",
           "Classified",
           "classify", "delta_ap", "count_by", "categories", "size_of", "shape_of", "SIZES",
           "SHAPES", "summary", "EXAMPLES", "FIXES", "Fixed", "fixed", "AnalysisReplicator"]

#: examples kept per error type (the highest-ranked false positives; the largest missed GT)
EXAMPLES = 5

FOREGROUND_IOU, BACKGROUND_IOU = 0.5, 0.1

#: COCO's parameters (the 101 recall thresholds; IoU 0.5 is one of its thresholds)
DEFAULT_PARAMS = Params()

#: the error types, in the order the tests run (missed last: a GT, not a detection)
TYPES = ("localisation", "duplicate", "hard_negative", "wrong_positive", "background", "both",
         "missed")

#: one line per type: what it is (for tables and the metric cards)
DEFINITIONS = {
    "localisation": "right label, placed poorly: 0.1 <= IoU <= 0.5 with a GT of its label",
    "duplicate": "right label and place (IoU > 0.5), but that GT was taken by a higher-ranked box",
    "hard_negative": "a box on an object (IoU >= 0.5) named with a negative label of the image",
    "wrong_positive": "a box on an object (IoU >= 0.5) named with another object's label",
    "background": "a box on nothing (IoU <= 0.1 with every GT of the image)",
    "both": "wrong label and poorly placed (any other false positive)",
    "missed": "a GT no box took and no localisation or label error points at",
    "false_positives": "every false positive removed (perfect precision)",
    "false_negatives": "every unmatched GT removed (perfect recall)",
}


@dataclass(frozen=True)
class RankedDetections:
    """The scored detections at IoU 0.5 (official matching): pair, image, ranking group, box,
    ``rank_key`` (the official order, lower first), outcome (``cocoeval.TP`` / ``FP`` /
    ``IGNORED``), the GT a TP took (index into :class:`Truth`, -1), and whether the label is a
    negative of its image."""

    pair: NDArray[np.int64]
    image: NDArray[np.int64]
    group: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    rank_key: NDArray[np.int64]
    state: NDArray[np.uint8]
    gt_taken: NDArray[np.int64]
    negative: NDArray[np.bool_]


@dataclass(frozen=True)
class Truth:
    """The GT rows: pair, image, ranking group, box, ignored (crowd or outside the area range)."""

    pair: NDArray[np.int64]
    image: NDArray[np.int64]
    group: NDArray[np.int64]
    box_xywh: NDArray[np.float64]
    ignored: NDArray[np.bool_]


@dataclass(frozen=True)
class Classified:
    """Each detection's error type (index into TYPES, -1: not an error), the GT its localisation or
    label error points at (-1), and each GT row's: ``missed`` and ``taken`` (a true positive took
    it)."""

    det_type: NDArray[np.int8]
    det_target: NDArray[np.int64]
    gt_missed: NDArray[np.bool_]
    gt_taken: NDArray[np.bool_]


class _Best:
    """Per detection, the highest IoU over a subset of its (detection, GT) combinations, and that
    GT: the combinations sorted once by (detection, IoU), each subset read from that order (replaces
    a sort per subset)."""

    def __init__(self, c_det: NDArray[np.int64], c_gt: NDArray[np.int64], iou: NDArray[np.float64],
                 n_det: int):
        self.order = np.lexsort((iou, c_det))
        self.c_det, self.c_gt, self.iou, self.n_det = (
            c_det[self.order],
            c_gt[self.order],
            iou[self.order],
            n_det,
        )

    def over(self, mask: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """(best IoU, -1 if none; its GT, -1) per detection over the combinations in ``mask``."""
        keep = mask[self.order]
        det, gt, iou = self.c_det[keep], self.c_gt[keep], self.iou[keep]
        # the highest IoU
        last = np.r_[det[1:] != det[:-1], True] if len(det) else np.zeros(0, dtype=bool)
        best = np.full(self.n_det, -1.0)
        target = np.full(self.n_det, -1, dtype=np.int64)
        best[det[last]] = iou[last]
        target[det[last]] = gt[last]
        return best, target


def classify(det: RankedDetections, gt: Truth) -> Classified:
    """The error type of every false positive and the missed GT (see the module docstring)."""
    n, fp = len(det.pair), det.state == FP
    taken = np.zeros(len(gt.pair), dtype=bool)
    taken[det.gt_taken[(det.state == TP) & (det.gt_taken >= 0)]] = True
    # every (false positive, GT of its image) combination
    f = np.flatnonzero(fp)
    c_fp, c_gt = same_key_combinations(det.image[f], gt.image)
    c_det = f[c_fp]
    with np.errstate(invalid="ignore", over="ignore"):
        d_xyxy, g_xyxy = xywh_to_xyxy(det.box_xywh), xywh_to_xyxy(gt.box_xywh)
        iou = np.nan_to_num(
            iou_aligned_xyxy(d_xyxy[c_det], g_xyxy[c_gt], dtype=np.float64, eps=0.0), nan=0.0
        )
    close = iou >= BACKGROUND_IOU          # every test reads IoUs >= 0.1 (background: none of them)
    c_det, c_gt, iou = c_det[close], c_gt[close], iou[close]
    same = gt.pair[c_gt] == det.pair[c_det]
    usable = ~gt.ignored[c_gt]
    best = _Best(c_det, c_gt, iou, n)
    own, own_gt = best.over(same & usable)
    used, _ = best.over(same & usable & taken[c_gt])
    other, other_gt = best.over(~same & usable)
    anything, _ = best.over(usable)
    det_type = np.full(n, -1, dtype=np.int8)
    target = np.full(n, -1, dtype=np.int64)
    rules = [("localisation", (own >= BACKGROUND_IOU) & (own <= FOREGROUND_IOU), own_gt),
             ("duplicate", used >= FOREGROUND_IOU, None),
             ("hard_negative", (other >= FOREGROUND_IOU) & det.negative, other_gt),
             ("wrong_positive", other >= FOREGROUND_IOU, other_gt),
             ("background", anything <= BACKGROUND_IOU, None),
             ("both", np.ones(n, dtype=bool), None)]
    for name, hit, points_at in rules:
        new = fp & (det_type < 0) & hit
        det_type[new] = TYPES.index(name)
        if points_at is not None:
            target[new] = points_at[new]
    pointed = np.zeros(len(gt.pair), dtype=bool)
    pointed[target[target >= 0]] = True
    return Classified(det_type, target, ~gt.ignored & ~taken & ~pointed, taken)


#: errors whose fix removes the detection, and errors whose fix points it at a GT
_REMOVED, _POINTING = {"duplicate", "background", "both"}, {"localisation", "hard_negative",
                                                            "wrong_positive"}


def _codes(names: set[str]) -> list[int]:
    return [TYPES.index(n) for n in names if n in TYPES]


@dataclass(frozen=True)
class Fixed:
    """The outcome at IoU 0.5 with some error types fixed: per detection whether it still counts,
    whether it is a TP, the pair and group it now belongs to (a fixed label error moves to its
    GT's); per GT row whether it left the GT count."""

    counted: NDArray[np.bool_]
    tp: NDArray[np.bool_]
    pair: NDArray[np.int64]
    group: NDArray[np.int64]
    gt_removed: NDArray[np.bool_]


def fixed(det: RankedDetections, gt: Truth, c: Classified, fix: set[str]) -> Fixed:
    """The error types in ``fix`` fixed as TIDE fixes them (see the module docstring)."""
    counted = det.state != IGNORED
    tp = det.state == TP
    pair, group = det.pair.copy(), det.group.copy()
    in_fix = np.isin(c.det_type, _codes(fix))
    counted &= ~(in_fix & np.isin(c.det_type, _codes(_REMOVED)))
    if fix & _POINTING:
        # the highest-ranked error of each untaken GT becomes its TP (label and box corrected); the
        # others go
        cand = np.flatnonzero(np.isin(c.det_type, _codes(_POINTING)) & (c.det_target >= 0))
        cand = cand[~c.gt_taken[c.det_target[cand]]]
        order = cand[np.lexsort((det.rank_key[cand], c.det_target[cand]))]
        best = (
            order[np.r_[True, c.det_target[order][1:] != c.det_target[order][:-1]]]
            if len(order)
            else order
        )
        winners = best[in_fix[best]]
        losers = np.setdiff1d(np.flatnonzero(in_fix & np.isin(c.det_type, _codes(_POINTING))),
                              winners)
        tp[winners] = True
        pair[winners], group[winners] = (
            gt.pair[c.det_target[winners]],
            gt.group[c.det_target[winners]],
        )
        counted[losers] = False
    removed = np.zeros(len(gt.pair), dtype=bool)
    if "missed" in fix:
        removed |= c.gt_missed
    if "false_positives" in fix:
        counted &= tp
    if "false_negatives" in fix:
        removed |= ~gt.ignored & ~c.gt_taken
    return Fixed(counted, tp, pair, group, removed)


def _fixed_ap(det: RankedDetections, gt: Truth, c: Classified, fix: set[str], n_groups: int,
              params: Params) -> NDArray[np.float64]:
    """Per-group AP at IoU 0.5 with the error types in ``fix`` fixed."""
    f = fixed(det, gt, c, fix)
    n_gt = np.bincount(gt.group[~gt.ignored & ~f.gt_removed], minlength=n_groups).astype(np.int64)
    return average_precision_at(f.group[f.counted], det.rank_key[f.counted], f.tp[f.counted], n_gt,
                                params)


#: what a fix is named by in results: each error type, and TIDE's two special rows
FIXES = (*TYPES, "false_positives", "false_negatives")


def delta_ap(det: RankedDetections, gt: Truth, c: Classified, n_groups: int, headline: Any,
             params: Params = DEFAULT_PARAMS) -> tuple[float | None, dict[str, float | None]]:
    """(the headline AP at IoU 0.5 as scored, ΔAP per error type and per TIDE special row), percent
    points. ``headline`` turns the per-group APs (-1 undefined) into the benchmark's number (a
    fraction, None)."""
    order = np.argsort(det.rank_key,
                       # once: every fix's ranking is then a linear-time sort
                       kind="stable")
    det = RankedDetections(
        *(getattr(det, f.name)[order] for f in dataclasses.fields(RankedDetections))
    )
    c = dataclasses.replace(c, det_type=c.det_type[order], det_target=c.det_target[order])
    base = headline(_fixed_ap(det, gt, c, set(), n_groups, params))
    out: dict[str, float | None] = {}
    for name in FIXES:
        value = headline(_fixed_ap(det, gt, c, {name}, n_groups, params))
        out[name] = None if value is None or base is None else 100.0 * (value - base)
    return (None if base is None else 100.0 * base), out


def count_by(types: NDArray[np.int8], codes: NDArray[np.int64], missed_codes: NDArray[np.int64],
             names: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Counts of each error type per slice value: ``codes`` (indices into ``names``) per detection,
    with ``types``, and ``missed_codes`` per missed GT. Slice value -> type -> count (values and
    types with none left out)."""
    is_error = types >= 0
    kinds = np.concatenate([types[is_error].astype(np.int64),
                            np.full(len(missed_codes), TYPES.index("missed"), dtype=np.int64)])
    values = np.concatenate([codes[is_error], missed_codes]).astype(np.int64)
    table = np.bincount(values * len(TYPES) + kinds, minlength=len(names) * len(TYPES)).reshape(
        len(names), -1
    )
    # one bincount over (value, type) replaces a loop over the errors
    return {v: {t: int(n) for t, n in zip(TYPES, row.tolist()) if n} for v,
            row in zip(names, table) if row.any()}


def categories(values: NDArray[Any]) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """Labels -> (codes, names) for :func:`count_by` (compute it on few values, e.g. per pair, then
    index)."""
    names, codes = np.unique(np.asarray(values).astype(str), return_inverse=True)
    return codes.reshape(-1).astype(np.int64), tuple(names.tolist())


SIZES, SHAPES = ("small", "medium", "large"), ("tall", "square", "wide")


def size_of(box_xywh: NDArray[np.float64]) -> NDArray[np.int64]:
    """COCO's size of each box by its area w * h, as indices into SIZES: small (< 32^2), medium (<
    96^2), large (the bounds of ``Params.area_rngs``)."""
    area = box_xywh[:, 2] * box_xywh[:, 3] if len(box_xywh) else np.zeros(0)
    small, medium = DEFAULT_PARAMS.area_rngs[1][1], DEFAULT_PARAMS.area_rngs[2][1]
    return np.where(area < small, 0, np.where(area < medium, 1, 2))


def shape_of(box_xywh: NDArray[np.float64]) -> NDArray[np.int64]:
    """Each box's aspect ratio w / h, as indices into SHAPES: tall (< 1/2), square (1/2 to 2), wide
    (> 2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = box_xywh[:, 2] / box_xywh[:, 3] if len(box_xywh) else np.zeros(0)
    return np.where(ratio < 0.5, 0, np.where(ratio > 2, 2, 1))


def summary(det: RankedDetections, gt: Truth, c: Classified, n_groups: int, headline: Any, *,
            delta_key: str,
            slices: Mapping[str, tuple[NDArray[np.int64], NDArray[np.int64], tuple[str, ...]]],
            describe: Any, params: Params = DEFAULT_PARAMS) -> dict[str, Any]:
    """The ``analysis`` of a result: each error type's count, ΔAP50 and definition; the counts per
    slice (a slice gives every detection and every GT row a code into its names); a few examples per
    type (``describe("det" | "gt", index)`` -> a plain dict naming the image and box)."""
    base, deltas = delta_ap(det, gt, c, n_groups, headline, params)
    counts = np.bincount(c.det_type[c.det_type >= 0], minlength=len(TYPES))
    counts[TYPES.index("missed")] = int(c.gt_missed.sum())
    errors = {t: {"count": int(counts[i]), f"delta_{delta_key}": deltas[t],
                  "definition": DEFINITIONS[t]}
              for i, t in enumerate(TYPES)}
    errors["false_positives"] = {"count": int((det.state == FP).sum()),
                                 f"delta_{delta_key}": deltas["false_positives"],
                                 "definition": DEFINITIONS["false_positives"]}
    errors["false_negatives"] = {"count": int((~gt.ignored & ~c.gt_taken).sum()),
                                 f"delta_{delta_key}": deltas["false_negatives"],
                                 "definition": DEFINITIONS["false_negatives"]}
    missed = np.flatnonzero(c.gt_missed)
    counted = {name: count_by(c.det_type, d, g[missed], names) for name,
               (d, g, names) in slices.items()}
    examples: dict[str, list[dict[str, Any]]] = {}
    for i, t in enumerate(TYPES[:-1]):
        of_type = np.flatnonzero(c.det_type == i)
        top = of_type[np.argsort(det.rank_key[of_type], kind="stable")[:EXAMPLES]]
        examples[t] = [describe("det", int(d)) for d in top.tolist()]
    areas = gt.box_xywh[missed, 2] * gt.box_xywh[missed, 3] if len(missed) else np.zeros(0)
    examples["missed"] = [
        describe("gt", int(g)) for g in missed[np.argsort(-areas, kind="stable")[:EXAMPLES]]
    ]
    return {"delta_key": delta_key, "as_scored": base, "errors": errors, "slices": counted,
            "examples": examples,
            "note": "not official: a TIDE-style decomposition at IoU 0.5 "
                    f"(vlbench.engine.error_analysis); each type's delta_{delta_key} is "
                    f"{delta_key} with that type fixed alone minus {delta_key} as scored, so the "
                    "parts do not add up"}


#: COCO's parameters cut to what the analysis reads: IoU 0.5, every area, 100 detections
_AT_50 = Params(iou_thrs=np.array([FOREGROUND_IOU]), max_dets=(100,), area_rngs=((0.0, 1e10),),
                area_labels=("all",))


class AnalysisReplicator:
    """Each fix's cost under image weights (:mod:`vlbench.engine.uncertainty`), for paired
    comparisons of two files' analyses: every fix's outcome as a one-threshold ranking
    (:class:`vlbench.engine.cocoeval.WeightedRanking`), the headline of each resample from its
    per-group APs, the cost fixed minus as scored. Keys ``analysis:<fix>``."""

    unit = "image"

    def __init__(self, det: RankedDetections, gt: Truth, c: Classified, *,
                 pair_group: NDArray[np.int64],
                 unit_of_pair: NDArray[np.int64], n_units: int, headline_rows: Any) -> None:
        from .cocoeval import Matches, WeightedRanking

        self.strata, self.headline_rows = (n_units,), headline_rows
        n_pairs, n_groups = len(pair_group), int(pair_group.max(initial=-1)) + 1
        base_npig = np.bincount(gt.pair[~gt.ignored], minlength=n_pairs)
        self.rankings = {}
        for name in ("", *FIXES):
            f = fixed(det, gt, c, {name} if name else set())
            state = np.where(f.counted, np.where(f.tp, TP, FP), IGNORED).astype(np.uint8)
            npig = base_npig - np.bincount(gt.pair[f.gt_removed & ~gt.ignored], minlength=n_pairs)
            m = Matches(det_index=np.arange(len(f.pair)), pair=f.pair,
                        rank=np.zeros(len(f.pair), dtype=np.int64),
                        score=-det.rank_key.astype(np.float64), state=state[None, None, :],
                        npig=npig[None, :], has_result=np.ones(n_pairs, dtype=bool), id0_matches=0)
            self.rankings[name] = WeightedRanking.build(m, np.arange(n_pairs), pair_group, n_groups,
                                                        unit_of_pair, n_units, _AT_50)

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """``weights`` (R, images) -> ``analysis:<fix>`` -> (R,) cost in percent points (NaN where
        undefined)."""
        heads = {name: self.headline_rows(r(weights)[0][:, 0, :]) for name,
                 r in self.rankings.items()}
        return {f"analysis:{name}": 100.0 * (heads[name] - heads[""]) for name in FIXES}
