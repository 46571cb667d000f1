"""OVDEval metric for 🤗 Evaluate: NMS-AP (the official eval.py) and plain COCO AP, number for
number. A thin face over ``vlbench`` (all logic lives in the engine)."""

from typing import Any

import datasets
import evaluate

from vlbench.benchmarks import get_benchmark
from vlbench.benchmarks.ovdeval.schema import category_listed
from vlbench.library.metric_support import RowInputs, compute

_CITATION = get_benchmark("ovdeval").card.citation


_DESCRIPTION = """\
OVDEval measures open-vocabulary detection with hard negatives. NMS-AP first runs the official
ground-truth-guided, class-ignored suppression: per image and for every GT box, among all
predictions of any label with IoU > 0.5, only the highest-scoring one survives (a prediction kept
for any GT box is never removed). Then COCO bbox AP (pycocotools semantics, the file's area for
small/medium/large). A model that puts a confident hard-negative label ("blue car") on a red car
loses its correct "red car" box under NMS-AP, while plain AP ignores the wrong label entirely
because "blue car" has no ground truth. Values in percent, None where COCOeval gives -1.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one dict per image:
        `{"boxes": [[x, y, w, h], ...], "scores": [...], "labels": [...]}` in pixels, labels =
        category ids of the sub-dataset.
    references: rows of an OVDEval Hub config (split "test"): `image_id` and `boxes`
        (list of `{id, bbox [x, y, w, h], category_id, area, iscrowd}`); other keys are ignored.
    protocol: "official" (default; pycocotools' GT-id-0 quirk included) or "corrected".
    ci: a level such as 0.95 adds "confidence_intervals" {metric: (low, high)}, a percentile
        bootstrap over images recomputing each corpus metric per resample; `resamples` (1000) and
        `seed` (0).
    return_details: also return "breakdowns" (suppression counts, per-category AP, inflation =
        AP - NMS_AP), "counts" and "warnings".
    analysis: also return "analysis": why the model fails (error types with the headline each
        costs, slices, worst examples; not official; slower). See the card.
Returns:
    NMS_AP, NMS_AP50, NMS_AP75, NMS_AP_small, NMS_AP_medium, NMS_AP_large, NMS_AR1, NMS_AR10,
    NMS_AR100, NMS_AR_small, NMS_AR_medium, NMS_AR_large, and the same twelve without suppression
    (AP, AP50, ...).
Examples:
    >>> import evaluate, vlbench
    >>> metric = evaluate.load(vlbench.metric_path("ovdeval"))
    >>> ref = {"image_id": 0, "boxes": [{"id": 1, "bbox": [100, 100, 100, 80], "category_id": 0,
    ...                                  "area": 8000, "iscrowd": 0}]}                 # a red car
    >>> pred = {"boxes": [[102, 101, 98, 80], [100, 100, 100, 80]], "scores": [0.81, 0.90],
    ...         "labels": [0, 1]}      # "red car" 0.81 and the hard negative "blue car" 0.90
    >>> result = metric.compute(predictions=[pred], references=[ref])
    >>> round(result["AP"], 4), round(result["NMS_AP"], 4)
    (100.0, 0.0)
"""

_BOX_KEYS = ("id", "bbox", "category_id", "area", "iscrowd")


def _slim(reference: Any) -> Any:
    if not isinstance(reference, dict):
        return reference
    # "listed": the box's category is one its file lists (a Hub row's label is null otherwise)
    boxes = [
        {**{k: b.get(k) for k in _BOX_KEYS}, "listed": category_listed(b)}
        for b in reference.get("boxes") or []
    ]
    return {"image_id": reference.get("image_id"), "boxes": boxes,
            # "": rows of one config (the column is optional)
            "sub_dataset": reference.get("sub_dataset") or ""}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OVDEval(RowInputs, evaluate.Metric):
    """The metric module: ``evaluate.load(vlbench.metric_path(...))``; all logic in vlbench."""

    slim_reference = staticmethod(_slim)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": {
                        "boxes": datasets.List(datasets.List(datasets.Value("float64"))),
                        "scores": datasets.List(datasets.Value("float64")),
                        "labels": datasets.List(datasets.Value("int64")),
                    },
                    "references": {
                        "image_id": datasets.Value("int64"),
                        "sub_dataset": datasets.Value("string"),
                        "boxes": datasets.List(
                            {
                                "id": datasets.Value("int64"),
                                "bbox": datasets.List(datasets.Value("float64")),
                                "category_id": datasets.Value("int64"),
                                "area": datasets.Value("float64"),
                                "iscrowd": datasets.Value("int64"),
                                "listed": datasets.Value("bool"),
                            }
                        ),
                    },
                }
            ),
            codebase_urls=["https://github.com/om-ai-lab/OVDEval"],
            reference_urls=["https://arxiv.org/abs/2308.13177"],
        )

    def _compute(self, predictions, references, protocol="official", return_details=False, ci=None,
                 resamples=1000, seed=0, analysis=False):
        return compute("ovdeval", predictions, references, return_details=return_details, ci=ci,
                       resamples=resamples, seed=seed, analysis=analysis, protocol=protocol)
