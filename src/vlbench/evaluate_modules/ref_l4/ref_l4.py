"""Ref-L4 metric for 🤗 Evaluate: Acc@0.5/0.75/0.9, mAcc, by size and by class, number for number
with the official RefL4Evaluator. A thin face over ``vlbench`` (all logic lives in the engine)."""

import datasets
import evaluate

from vlbench.benchmarks import get_benchmark
from vlbench.benchmarks.ref_l4.schema import written_in_integers
from vlbench.library.metric_support import RowInputs, compute

_CITATION = get_benchmark("ref_l4").card.citation


_DESCRIPTION = """\
Ref-L4 scores referring expression comprehension: one predicted box per referring expression.
A prediction is a hit at threshold t when IoU(pred, gt) > t (strict, computed in float32 as the
official scorer does). Acc50/Acc75/Acc90 = 100 * hits / N at t = 0.5 / 0.75 / 0.9;
mAcc = 100 * mean over t in {0.50, 0.55, ..., 0.95} of hits(t) / N. The same per size bucket
(sqrt(w*h) of the GT box: small < 128 <= medium <= 256 < large) and as an unweighted mean over
classes (class_Acc50, class_mAcc). All values are percent points; an empty size bucket gives None.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list of dicts `{"pred_bbox": [4 numbers], "format": "xyxy" | "xywh"}`, pixels.
        Under protocol="official" any format other than exactly "xywh" is read as xyxy.
    references: list of rows of the Ref-L4 Hub dataset, or dicts with at least
        `id` (int), `bbox` ([x, y, w, h] pixels) and `ori_category_id` ("refcoco_N" / "o365_N").
    protocol: "official" (default; reproduces RefL4Evaluator, its class-table bugs included) or
        "corrected" (fixed RefCOCO -> Objects365 table; case-insensitive format).
        Optional `file_name` (the image) lets `ci` resample the expressions of one image
        together; optional `width` / `height` (the image's, pixels) let the metric warn when the
        boxes look written as fractions of the image or on a 0-1000 grid.
    return_details: if True, also return "breakdowns" (per size, per source, per class, per sample),
        "counts" and "warnings".
    analysis: also return "analysis": why the model fails (error types with the headline each
        costs, slices, worst examples; not official; slower). See the card.
    ci: a level such as 0.95 adds "confidence_intervals" {metric: (low, high)}, a percentile
        bootstrap over images (over expressions when no `file_name` is given); `resamples` (1000)
        and `seed` (0).
Returns:
    dict with Acc50, Acc75, Acc90, mAcc, small_Acc50, small_mAcc, medium_Acc50, medium_mAcc,
    large_Acc50, large_mAcc, class_Acc50, class_mAcc (percent, or None for an empty size bucket).
Examples:
    >>> import evaluate, vlbench
    >>> metric = evaluate.load(vlbench.metric_path("ref_l4"))
    >>> refs = [{"id": 0, "bbox": [10, 10, 100, 50], "ori_category_id": "o365_1"},
    ...         {"id": 1, "bbox": [0, 0, 300, 300], "ori_category_id": "refcoco_1"}]
    >>> preds = [{"pred_bbox": [10, 10, 110, 60], "format": "xyxy"},
    ...          {"pred_bbox": [0, 0, 150, 300], "format": "xywh"}]
    >>> result = metric.compute(predictions=preds, references=refs)
    >>> result["Acc50"], result["Acc75"]
    (50.0, 50.0)
"""

_REFERENCE_KEYS = ("id", "bbox", "ori_category_id")


def _slim_prediction(prediction):
    """Keep ``pred_bbox`` and ``format``, and note whether the box was written in integers: the
    official evaluator's int64 path (exact areas), which the float64 feature would otherwise turn
    into floats."""
    if isinstance(prediction, dict):
        slim = {k: prediction[k] for k in ("pred_bbox", "format") if k in prediction}
        slim["integer"] = written_in_integers(prediction.get("pred_bbox"))
        return slim
    return prediction


def _slim(reference):
    """Keep the keys the metric needs, so whole Hub rows (image, caption, ...) can be passed."""
    if isinstance(reference, dict):
        slim = {k: reference.get(k) for k in _REFERENCE_KEYS}
        # optional: "" when the image is not named
        slim["file_name"] = reference.get("file_name") or ""
        # optional: 0 when unknown (the convention check then skips grids)
        for side in ("width", "height"):
            slim[side] = reference.get(side) or 0
        return slim
    return reference


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RefL4(RowInputs, evaluate.Metric):
    """The metric module: ``evaluate.load(vlbench.metric_path(...))``; all logic in vlbench."""

    slim_reference = staticmethod(_slim)
    slim_prediction = staticmethod(_slim_prediction)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": {"pred_bbox": datasets.List(datasets.Value("float64")),
                                "format": datasets.Value("string"),
                                "integer": datasets.Value("bool")},
                "references": {"id": datasets.Value("int64"),
                               "bbox": datasets.List(datasets.Value("float64")),
                               "ori_category_id": datasets.Value("string"),
                               "file_name": datasets.Value("string"),
                               "width": datasets.Value("int64"), "height": datasets.Value("int64")},
            }),
            codebase_urls=["https://github.com/JierunChen/Ref-L4"],
            reference_urls=["https://arxiv.org/abs/2406.16866"],
        )

    def _compute(self, predictions, references, protocol="official", return_details=False, ci=None,
                 resamples=1000, seed=0, analysis=False):
        return compute("ref_l4", predictions, references, return_details=return_details, ci=ci,
                       resamples=resamples, seed=seed, analysis=analysis, protocol=protocol,
                       split="given")
