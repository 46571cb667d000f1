"""OVDEval (Yao et al., AAAI 2024): open-vocabulary detection with hard negatives, nine
sub-datasets.

Read top to bottom: :mod:`.schema` (sub-datasets, aspects, features), :mod:`.records` (a
sub-dataset's ground truth as arrays; a folder of prediction files), :mod:`.reader` (sub-dataset
JSON / release / Hub folder -> records; release -> Hub folder and back), :mod:`.scorer` (NMS-AP and
AP; Table 3), :mod:`.views`, :mod:`.predict`, :mod:`.card`. :data:`BENCHMARK` composes them
(:mod:`vlbench.benchmarks.protocol`).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..benchmark import (
    DETECTION_ANALYSIS_NOTE,
    DETECTION_CHECKS_NOTE,
    TIES_NOTE,
    Benchmark,
    Card,
    Conventions,
    DatasetBuilder,
    EvalTask,
    Predictor,
    Scorer,
    Showcase,
    Views,
    lazy,
)
from . import card, schema

__all__ = ["OVDEvalLeaderboards", "OVDEvalShowcase", "BENCHMARK"]

_ALL = "all (Table 3)"


class OVDEvalLeaderboards:
    """NMS-AP per sub-dataset (its config), and the Total Average over all nine."""

    def tasks(self) -> list[EvalTask]:
        """One task per sub-dataset, then the Total Average (which needs all nine)."""
        tasks = [
            EvalTask(f"nms_ap_{s}", "NMS_AP", s, "test", f"NMS-AP, {s}") for s in schema.SUBSETS
        ]
        return tasks + [EvalTask("nms_ap_total_average", "Total_Average", None, "test",
                                 "NMS-AP Total Average over the nine sub-datasets (paper Table 3)",
                                 tuple(schema.SUBSETS))]

    def scope(self, result: Any) -> tuple[str | None, str | None]:
        """One sub-dataset's config, or None for several; the split is always test."""
        return result.options.get("sub_dataset"), "test"

    def check(self, result: Any) -> None:
        """Every OVDEval result reaches some leaderboard."""

    def value(self, task: EvalTask, result: Any) -> float | None:
        """Several sub-datasets hold ``NMS_AP_<name>``; the Total Average needs all nine scored."""
        config = result.options.get("sub_dataset")
        if task.requires:
            scored = set(result.options.get("sub_datasets", []))
            return (
                result.metrics.get(task.metric)
                if config is None and set(task.requires) <= scored
                else None
            )
        if config is None:
            return result.metrics.get(f"NMS_AP_{task.config}")
        return result.metrics.get(task.metric) if task.config == config else None


class OVDEvalShowcase(Showcase):
    """The bundled release (two sub-datasets, or both as Table 3)."""

    subsets = ("color", "material", _ALL)
    #: all 9 sub-datasets (~20k images): 100 boxes per image, each {"image_id", "category_id",
    #: "bbox" (5), "score"} (9 values)
    max_prediction_values = 20_000_000

    def sample_references(self, subset: str) -> str:
        """The bundled release (all), or one sub-dataset's annotation JSON."""
        root = resources.files("vlbench").joinpath("samples/ovdeval")
        return str(root if subset == _ALL else root.joinpath(f"annotations/{subset}.json"))

    def example_predictions(self, quality: str, subset: str) -> str:
        """The bundled good / poor prediction folder (all) or file (one sub-dataset)."""
        root = resources.files("vlbench").joinpath(f"samples/ovdeval/predictions_{quality}")
        return str(root if subset == _ALL else root.joinpath(f"{subset}.json"))


def _modules() -> tuple[DatasetBuilder, Views, Predictor, Conventions]:
    """The modules behind the capabilities, imported when first used (listing the benchmarks loads
    none of them)."""
    from . import conventions, predict, reader, views

    return reader, views, predict, conventions


def _scorer() -> Scorer[Any]:
    """The scorer (:mod:`.scorer`), imported when a command scores: listing the benchmarks and
    building a command line read only the options, keys and form declared with it."""
    from .scorer import OVDEvalScorer

    return OVDEvalScorer()


BENCHMARK = Benchmark(
    id="ovdeval", display_name="OVDEval",
    scorer=lazy(_scorer, options_type=schema.OVDEvalOptions, prediction_keys=schema.PREDICTION_KEYS,
                prediction_form=schema.PREDICTION_FORM),
    aliases=("ovd-eval",), listing_order=2,
    metric_keys=schema.METRIC_KEYS,
    headline=("NMS_AP", "AP", "NMS_AP50", "AP50", "NMS_AR100", "AR100"),
    default_split="test",
    split_help="test (the only split; a sub-dataset name here means --sub-dataset)",
    card=Card(task_type="object-detection", task_name="Open-Vocabulary Detection",
              license=card.card_metadata()["license"], citation=card.CITATION, quirks=card.QUIRKS,
              official_scorer=card.OFFICIAL_SCORER,
              metric_names={**{f"NMS_{k}": f"NMS-{k}" for k in schema.STAT_KEYS},
                            **{k: f"{k} (without the suppression)" for k in schema.STAT_KEYS},
                            "Total_Average": "NMS-AP Total Average"},
              outputs_note=("Scoring several sub-datasets at once (CLI: a folder of prediction "
                            "files) gives "
                            "`NMS_AP_<sub-dataset>`, `AP_<sub-dataset>` and `Total_Average` (mean "
                            "NMS-AP, the "
                            "paper's Table 3). " + TIES_NOTE + " " + DETECTION_CHECKS_NOTE
                          + " A negative label here is one of the image's hard negatives "
                            "(`neg_text`)."),
              analysis_note=DETECTION_ANALYSIS_NOTE + " Here the headline is NMS-AP50 (the boxes "
                                                      "the GT-guided "
              "suppression keeps; `suppressed` counts the others), negative labels are the image's "
              "`neg_text`, and the "
              "slices add `sub_dataset` and `aspect` when several sub-datasets are scored "
              "(`delta_Total_Average50`: "
              "the mean of theirs). Hub rows name only the categories of their boxes, so a label "
              "no box of the "
              "split has is unknown there and its boxes are dropped (as the scorer drops them): "
              "score the "
              "sub-dataset JSON to see the hard negatives such labels hold."),
    dataset=lazy(lambda: _modules()[0]), views=lazy(lambda: _modules()[1]),
    predictor=lazy(lambda: _modules()[2]), conventions=lazy(lambda: _modules()[3]),
    showcase=OVDEvalShowcase(), leaderboards=OVDEvalLeaderboards(),
    release=card.RELEASE)


