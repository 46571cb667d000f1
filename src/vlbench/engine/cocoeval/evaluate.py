"""Stock COCO bbox evaluation end to end, as pycocotools' ``COCOeval(gt, dt, "bbox")`` runs it: the
driver of the three steps (:mod:`.matching`, then :mod:`.accumulation`, then :mod:`.summaries`),
:func:`evaluate_bbox`, its :class:`CocoEvalResult`, and the AP stats' bounds over the orders of tied
scores (:func:`tie_bounds_bbox`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..lookup import find_ids
from .accumulation import Curves, accumulate_steps, group_npig, has_ties, recall_only, store_curves
from .data import STATS, GroundTruth, Matches, PairDetections, Params
from .matching import match
from .summaries import mean_of_valid, stat_steps, summarize


@dataclass(frozen=True)
class CocoEvalResult:
    """What ``COCOeval`` leaves behind: ``stats`` (fractions, -1 undefined), ``precision``,
    ``recall``."""

    stats: dict[str, float]
    precision: NDArray[np.float64]
    recall: NDArray[np.float64]
    npig: NDArray[np.int64]
    matches: Matches
    category_ids: NDArray[np.int64]
    # detections whose category is not a GT category (pycocotools skips them)
    skipped_detections: int
    # GT annotations of images not in ``image_ids`` (pycocotools never looks them up)
    skipped_gt: int = 0
    #: the GT and detections as matched (pairs ``image index * K + category index``), for the error
    #: analysis
    truth: GroundTruth | None = None
    detections: PairDetections | None = None
    #: :func:`tie_bounds_bbox`'s values when ``evaluate_bbox(..., tie_bounds=True)`` found tied
    #: scores
    tie_bounds: dict[str, tuple[float, float]] | None = None


def resolve_by_id(gt: dict[str, NDArray], image_ids: NDArray[np.int64],
                  category_ids: NDArray[np.int64]) -> tuple[dict[str, NDArray], NDArray[np.bool_]]:
    """The GT annotations ``COCOeval`` evaluates, as pycocotools' ``COCO`` index gives them, and the
    orphan mask.

    ``_prepare`` loads ``loadAnns(getAnnIds(imgIds, catIds))``: the annotations of the evaluated
    images and categories, in image-id then file order, each looked up again *by its id* in
    ``anns``, where the last annotation with an id wins. With unique ids that is the annotations
    themselves; with a repeated id every annotation carrying it becomes the last one (which is then
    evaluated once per copy, under its own image and category). Annotations of images not in
    ``image_ids`` are never looked up (orphans).
    """
    image, category = np.asarray(gt["image_id"]), np.asarray(gt["category_id"])
    orphan = ~np.isin(image, image_ids)
    ids = np.asarray(gt["id"])
    if len(np.unique(ids)) == len(ids):
        return gt, orphan
    wanted = np.flatnonzero(~orphan & np.isin(category, category_ids))
    # getAnnIds: by image id, then file order
    wanted = wanted[np.argsort(image[wanted], kind="stable")]
    uniq, inverse = np.unique(ids, return_inverse=True)
    last = np.full(len(uniq), -1)
    # anns[id]: the last one wins
    np.maximum.at(last, inverse, np.arange(len(ids)))
    rows = last[inverse[wanted]]
    return {key: np.asarray(value)[rows] for key, value in gt.items()}, orphan


def evaluate_bbox(image_ids: NDArray[np.int64], category_ids: NDArray[np.int64],
                  gt: dict[str, NDArray],
                  dt: dict[str, NDArray], params: Params = Params(), *, id0_quirk: bool = True,
                  keep_gt_at: float | None = None, tie_bounds: bool = False,
                  stats_only: bool = False) -> CocoEvalResult:
    """Stock ``COCOeval(gt, dt, "bbox")`` evaluate + accumulate + summarize, one group per category.

    ``gt``: arrays ``image_id, category_id, bbox (xywh), area, iscrowd, id`` in file order;
    ``dt``: ``image_id, category_id, bbox, score`` in file order, every image a GT image (as
    ``loadRes`` asserts), and optionally ``score_exact`` / ``score_is_int`` (see
    :class:`PairDetections`). Detection area is ``w * h`` as ``loadRes`` sets it. ``keep_gt_at``:
    see :func:`match`. ``tie_bounds``: when scores tie, :func:`tie_bounds_bbox`'s values too, from
    the same accumulation (kept in the result). ``stats_only``: the precision and recall arrays hold
    only the (area, max-dets) entries the 12 stats read (:func:`stat_steps`), the rest -1: the stats
    are the same, at about half the accumulation's cost.
    """
    imgs = np.unique(np.asarray(image_ids, dtype=np.int64))
    cats = np.unique(np.asarray(category_ids, dtype=np.int64))
    K = len(cats)

    def pair_of(image_id, category_id):
        # an id that is not there is recognised, not filed under its neighbour (pycocotools only
        # looks up annotations of the evaluated image ids)
        (i, i_known), (k, k_known) = find_ids(imgs, image_id), find_ids(cats, category_id)
        known = i_known & k_known
        return np.where(known, i * K + k, 0), known

    gt, g_orphan = resolve_by_id(gt, imgs, cats)
    g_pair, g_known = pair_of(np.asarray(gt["image_id"]), np.asarray(gt["category_id"]))
    d_pair, d_known = pair_of(np.asarray(dt["image_id"]), np.asarray(dt["category_id"]))
    g_box = np.asarray(gt["bbox"], dtype=np.float64).reshape(-1, 4)
    d_box = np.asarray(dt["bbox"], dtype=np.float64).reshape(-1, 4)
    truth = GroundTruth(pair=g_pair[g_known], box_xywh=g_box[g_known],
                        area=np.asarray(gt["area"], dtype=np.float64)[g_known],
                        iscrowd=np.asarray(gt["iscrowd"]).astype(bool)[g_known],
                        ann_id=np.asarray(gt["id"], dtype=np.int64)[g_known])
    exact = dt.get("score_exact")
    with np.errstate(invalid="ignore", over="ignore"):
        d_area = d_box[:, 2] * d_box[:, 3]
    dets = PairDetections(
        pair=d_pair[d_known],
        box_xywh=d_box[d_known],
        score=np.asarray(dt["score"], dtype=np.float64)[d_known],
        area=d_area[d_known],
        exact=None if exact is None else np.asarray(exact, dtype=np.int64)[d_known],
        is_int=None if exact is None else np.asarray(dt["score_is_int"], dtype=bool)[d_known],
    )
    n_pairs = len(imgs) * K
    matches = match(truth, dets, n_pairs, params, id0_quirk=id0_quirk, keep_gt_at=keep_gt_at)
    precision, recall, npig, bounds = _accumulate_bbox(matches, K, params,
                                                       tie_bounds and has_ties(matches),
                                                       stats_only=stats_only)
    return CocoEvalResult(stats=summarize(precision, recall, params), precision=precision,
                          recall=recall, npig=npig, matches=matches, category_ids=cats,
                          skipped_detections=int((~d_known).sum()), skipped_gt=int(g_orphan.sum()),
                          truth=truth, detections=dets, tie_bounds=bounds)


def _accumulate_bbox(m: Matches, K: int, params: Params, bounds: bool, *, stats_only: bool = False
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64],
                                dict | None]:
    """:func:`accumulate` with one group per category; with ``bounds``, :func:`tie_bounds_bbox`'s
    values from the same pass (the bounds' orders only at the max-dets step the AP stats read, taken
    to stats at once: no (T, R, K, A, M) arrays of theirs). ``stats_only``: only the steps the stats
    read (:func:`stat_steps`)."""
    T, R, A, M = (
        len(params.iou_thrs),
        len(params.rec_thrs),
        len(params.area_rngs),
        len(params.max_dets),
    )
    pairs = np.arange(len(m.has_result))
    category = pairs % max(K, 1)
    precision, recall = -np.ones((T, R, K, A, M)), -np.ones((T, K, A, M))
    areas, max_dets, recall_steps = stat_steps(params) if stats_only else (tuple(range(A)),
                                                                           tuple(range(M)), ())
    step = _bounds_step(params)
    out = _BoundStats(params) if bounds else None
    npig = group_npig(m, pairs, category, K)
    for mi, a, curves in accumulate_steps(
        m,
        pairs,
        category,
        K,
        params,
        areas,
        max_dets,
        orders=("official", "worst", "best") if bounds else ("official",),
        orders_at=(step,),
        npig=npig,
    ):
        store_curves(curves[0], precision, recall, a, mi, R)
        if out is not None and mi == step:
            out.add(a, curves[1:])
    for a, mi in recall_steps:
        valid, final = recall_only(m, pairs, category, K, params, a, mi, npig=npig)
        recall[:, valid, a, mi] = final[:, valid]
    return precision, recall, npig, None if out is None else out.values()


def _bounds_step(params: Params) -> int:
    """The max-dets index the AP stats read (AR gets no bounds: it depends only on ties within an
    image)."""
    (step,) = stat_steps(params)[1]
    return step


class _BoundStats:
    """The AP stats' (low, high) gathered from the worst / best curves of each area range at
    :func:`_bounds_step`: each stat taken from the curves directly (no (T, R, K, A, M) arrays: an
    upload's memory stays as it was)."""

    def __init__(self, params: Params):
        self.params, self.stats = params, [s for s in STATS if s.ap]
        self.out = {s.name: [-1.0, -1.0] for s in self.stats}

    def add(self, a: int, worst_best: tuple[Curves, ...]) -> None:
        """Take area range ``a``'s AP stats from its worst and best curves."""
        p = self.params
        for side, c in enumerate(worst_best):
            # (T, R, valid K): precision's layout
            q = c.q(len(p.rec_thrs)).transpose(0, 2, 1)[:, :, c.valid]
            for stat in self.stats:
                if p.area_labels.index(stat.area) == a:
                    sel = (
                        q if stat.iou_thr is None else q[np.flatnonzero(p.iou_thrs == stat.iou_thr)]
                    )
                    self.out[stat.name][side] = mean_of_valid(sel)

    def values(self) -> dict[str, tuple[float, float]]:
        """Stat name -> (low, high), fractions, -1 undefined."""
        return {name: (low, high) for name, (low, high) in self.out.items()}


def tie_bounds_bbox(res: CocoEvalResult,
                    params: Params = Params()) -> dict[str, tuple[float, float]]:
    """The lowest and highest value of each AP stat of :func:`evaluate_bbox` over the orders of its
    tied detections (fractions, -1 undefined), each detection matched as the official order matches
    it; ``{}`` when no two detections share a score. Per IoU threshold a tie block's true positives
    go last / first, the extreme orders. Those of ``evaluate_bbox(..., tie_bounds=True)`` when it
    computed them in its own pass; else only the area ranges and the max-dets step the AP stats read
    are accumulated."""
    if not has_ties(res.matches):
        return {}
    if res.tie_bounds is not None:
        return res.tie_bounds
    K, pairs = len(res.category_ids), np.arange(len(res.matches.has_result))
    step = _bounds_step(params)
    areas = tuple(sorted({params.area_labels.index(s.area) for s in STATS if s.ap}))
    out = _BoundStats(params)
    for _, a, curves in accumulate_steps(res.matches, pairs, pairs % max(K, 1), K, params, areas,
                                         (step,), orders=("worst", "best")):
        out.add(a, curves)
    return out.values()
