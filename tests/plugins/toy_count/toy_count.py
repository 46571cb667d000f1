"""ToyCount metric for 🤗 Evaluate, shipped by the plug-in: a thin face over vlbench
(``metric_support.compute``)."""

import datasets
import evaluate

from vlbench.library.metric_support import RowInputs, compute


class ToyCount(RowInputs, evaluate.Metric):
    """``evaluate.load(vlbench.metric_path("toy_count"))``: exact-count accuracy and MAE."""

    @staticmethod
    def slim_reference(reference):
        """The fields the metric reads of a Hub row."""
        return {"image_id": reference.get("image_id"), "count": reference.get("count")}

    def _info(self):
        return evaluate.MetricInfo(
            description="Exact-count accuracy (percent) and mean absolute error of object counts.",
            citation="",
            inputs_description="predictions: one count per row; references: rows {image_id, count}",
            features=datasets.Features({"predictions": datasets.Value("int64"),
                                        "references": {"image_id": datasets.Value("int64"),
                                                       "count": datasets.Value("int64")}}))

    def _compute(self, predictions, references, return_details=False, ci=None, resamples=1000,
                 seed=0):
        return compute("toy_count", predictions, references, return_details=return_details, ci=ci,
                       resamples=resamples, seed=seed)
