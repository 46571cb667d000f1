"""OmniLabel metric for 🤗 Evaluate: the 13 numbers of the official OmniLabelEval (omnilabeltools),
number for number. A thin face over ``vlbench`` (all logic lives in the engine)."""

from typing import Any

import datasets
import evaluate

from vlbench.benchmarks import get_benchmark
from vlbench.library.metric_support import RowInputs, compute

_CITATION = get_benchmark("omnilabel").card.citation


_DESCRIPTION = """\
OmniLabel scores language-based object detection. Each image has its own label space of plain
categories and free-form descriptions (some negative: they refer to nothing in the image). A
prediction is a box scored for one or more label-space entries. Matching is COCO-style per
(image, description) pair (IoU >= t, crowd boxes ignored, 100 detections per pair), but AP is
pooled: all pairs of a group share one score ranking. Groups: categ, descr, descr-pos and
descr-S/M/L (<=3, 4-8, >=9 words). AP = 2 * AP_categ * AP_descr / (AP_categ + AP_descr + 1e-5),
computed on fractions; every value is then reported in percent, None where a group has no GT.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one dict per image:
        `{"boxes": [[x, y, w, h], ...], "scores": [...], "description_ids": [...]}` in pixels; per
        box either one score and one description id, or a list of each (same length).
    references: rows of the OmniLabel Hub dataset (validation split): `image_id`, `labelspace`
        (list of `{id, text, type}`, type "category"/"description" or its class index) and `boxes`
        (list of `{id, bbox [x, y, w, h], description_ids, iscrowd}`); other keys are ignored.
    protocol: "official" (default; reproduces OmniLabelEval, pycocotools' GT-id-0 quirk included) or
        "corrected" (a match to a GT box with id 0 counts as a match).
    ci: a level such as 0.95 adds "confidence_intervals" {metric: (low, high)}, a percentile
        bootstrap over images recomputing each corpus metric per resample; `resamples` (1000) and
        `seed` (0).
    return_details: if True, also return "breakdowns" (per source, PR curves, per description),
        "counts" and "warnings".
    analysis: also return "analysis": why the model fails (error types with the headline each
        costs, slices, worst examples; not official; slower). See the card.
Returns:
    AP, AP_categ, AP_descr, AP_descr_pos, AP_descr_S, AP_descr_M, AP_descr_L, AP50_descr,
    AP75_descr, AP50_categ, AP75_categ, AR_descr, AR_categ (percent, or None).
Examples:
    >>> import evaluate, vlbench
    >>> metric = evaluate.load(vlbench.metric_path("omnilabel"))
    >>> ref = {"image_id": 1,
    ...        "labelspace": [{"id": 1, "text": "person", "type": "category"},
    ...                       {"id": 7, "text": "a person holding an umbrella",
    ...                        "type": "description"}],
    ...        "boxes": [{"id": 1, "bbox": [10, 10, 50, 100], "description_ids": [1, 7],
    ...                   "iscrowd": 0}]}
    >>> pred = {"boxes": [[10, 10, 50, 98]], "scores": [[0.9, 0.8]], "description_ids": [[1, 7]]}
    >>> # IoU 0.98: a hit at every threshold
    >>> result = metric.compute(predictions=[pred], references=[ref])
    >>> # AP carries the official +1e-5 of the harmonic mean
    >>> round(result["AP_descr"], 6), round(result["AP"], 4)
    (100.0, 99.9995)
"""

_LS_KEYS = ("id", "text", "type")
_BOX_KEYS = ("id", "bbox", "description_ids", "iscrowd")


def _slim_reference(reference: Any) -> Any:
    """Keep what the metric needs, so whole Hub rows (image, file names, ...) can be passed."""
    if not isinstance(reference, dict):
        return reference
    # a missing label space or box list stays missing (None): the engine names the reference, never
    # scores it empty
    labelspace = (
        None
        if reference.get("labelspace") is None
        else [
            {
                k: (
                    ("description" if e.get(k) == 1 else "category")
                    if k == "type" and isinstance(e.get(k), int)
                    else e.get(k)
                )
                for k in _LS_KEYS
            }
            for e in reference["labelspace"]
        ]
    )
    boxes = (
        None
        if reference.get("boxes") is None
        else [{k: b.get(k) for k in _BOX_KEYS} for b in reference["boxes"]]
    )
    return {"image_id": reference.get("image_id"), "labelspace": labelspace, "boxes": boxes}


def _lists_per_box(prediction):
    """One score / description per box -> one-element lists, the official multi-label form."""
    if not isinstance(prediction, dict):
        return prediction
    scores, ids = prediction.get("scores"), prediction.get("description_ids")
    if isinstance(scores, list) and scores and not isinstance(scores[0], (list, tuple)):
        scores = [[s] for s in scores]
    if isinstance(ids, list) and ids and not isinstance(ids[0], (list, tuple)):
        ids = [[d] for d in ids]
    return {"boxes": prediction.get("boxes"), "scores": scores, "description_ids": ids}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OmniLabel(RowInputs, evaluate.Metric):
    """The metric module: ``evaluate.load(vlbench.metric_path(...))``; all logic in vlbench."""

    slim_prediction = staticmethod(_lists_per_box)
    slim_reference = staticmethod(_slim_reference)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": {
                        "boxes": datasets.List(datasets.List(datasets.Value("float64"))),
                        "scores": datasets.List(datasets.List(datasets.Value("float64"))),
                        "description_ids": datasets.List(datasets.List(datasets.Value("int64"))),
                    },
                    "references": {
                        "image_id": datasets.Value("int64"),
                        "labelspace": datasets.List(
                            {
                                "id": datasets.Value("int64"),
                                "text": datasets.Value("string"),
                                "type": datasets.Value("string"),
                            }
                        ),
                        "boxes": datasets.List(
                            {
                                "id": datasets.Value("int64"),
                                "bbox": datasets.List(datasets.Value("float64")),
                                "description_ids": datasets.List(datasets.Value("int64")),
                                "iscrowd": datasets.Value("int64"),
                            }
                        ),
                    },
                }
            ),
            codebase_urls=["https://github.com/samschulter/omnilabeltools"],
            reference_urls=["https://www.omnilabel.org"],
        )

    def _compute(self, predictions, references, protocol="official", return_details=False, ci=None,
                 resamples=1000, seed=0, analysis=False):
        return compute("omnilabel", predictions, references, return_details=return_details, ci=ci,
                       resamples=resamples, seed=seed, analysis=analysis, protocol=protocol)
