"""The COCO-style detection engine: pycocotools ``COCOeval`` bbox semantics, vectorised with numpy.

Reproduces pycocotools 2.0.11 exactly (OFFICIAL-SCORERS.md, section 5) for any grouping of (image,
label) *pairs* into ranking groups:

- plain COCO: one group per category, holding that category's pairs on every image;
- pooled evaluation: a few groups (e.g. all categories, all free-form descriptions), each holding
  many (image, label) pairs that share one score ranking.

The three steps of ``COCOeval``, one module each, and the arrays passed between them (axes: P pairs,
N kept detections, K groups, A area ranges, T IoU thresholds, R recall thresholds, M max-dets
settings):

=====================  ===========================  ================================================
step                   module                       out
=====================  ===========================  ================================================
``evaluate()``         :mod:`.matching`             :class:`Matches`: ``state`` (A, T, N), ``npig``
(A, P) ``accumulate()``       :mod:`.accumulation`         ``precision`` (T, R, K, A, M), ``recall``
(T, K, A, M) ``summarize()``        :mod:`.summaries`            the 12 stats, ``{name: fraction}``
=====================  ===========================  ================================================

:mod:`.data` holds the parameters and the records above; :func:`evaluate_bbox` runs the three steps
as stock ``COCOeval(gt, dt, "bbox")`` does; :mod:`.bootstrap` repeats the accumulation under image
weights.
"""

from .accumulation import (
    TIE_ORDERS,
    accumulate,
    accumulate_orders,
    average_precision_at,
    group_npig,
    has_ties,
    interpolated_ap,
    interpolated_precision,
    mean_ap_per_group,
    precision_recall_f1,
    recall_hits,
    recall_only,
    threshold_counts,
    tied_detections,
    tp_envelope,
)
from .bootstrap import WeightedRanking, summary_rankings, summary_replicates
from .data import (
    FP,
    IGNORED,
    STAT_NAMES,
    STATS,
    TP,
    GroundTruth,
    Matches,
    PairDetections,
    Params,
    Stat,
)
from .evaluate import CocoEvalResult, evaluate_bbox, resolve_by_id, tie_bounds_bbox
from .matching import match, on_objects, recall_any_score
from .summaries import mean_of_valid, stat_steps, summarize, summary_value

__all__ = ["Params", "GroundTruth", "PairDetections", "Matches", "match", "accumulate", "summarize",
           "evaluate_bbox",
           "CocoEvalResult", "mean_ap_per_group", "Stat", "STATS", "STAT_NAMES", "TP", "FP",
           "IGNORED",
           "stat_steps", "recall_only", "TIE_ORDERS", "has_ties", "tied_detections",
           "tie_bounds_bbox",
           "accumulate_orders", "tp_envelope", "recall_hits", "interpolated_precision",
           "interpolated_ap",
           "average_precision_at", "group_npig", "precision_recall_f1", "threshold_counts",
           "WeightedRanking", "summary_rankings", "summary_replicates", "on_objects",
           "recall_any_score", "mean_of_valid", "resolve_by_id", "summary_value"]
