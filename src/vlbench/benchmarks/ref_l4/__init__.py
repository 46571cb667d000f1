"""Ref-L4 (Chen et al., 2024): referring expression comprehension with long expressions.

Read top to bottom: :mod:`.schema` (columns, features, class table), :mod:`.records` (the rows as
arrays), :mod:`.reader` (official release / Hub folder -> records; release -> Hub folder),
:mod:`.scorer` (records + predictions -> :class:`~vlbench.engine.result.Result`), :mod:`.views`
(tables, plots, scenes), :mod:`.predict` (a model in the loop), :mod:`.card` (dataset card).
:data:`BENCHMARK` composes them (:mod:`vlbench.benchmarks.protocol`).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..benchmark import (
    Benchmark,
    Card,
    Conventions,
    DatasetBuilder,
    EvalTask,
    Predictor,
    Scorer,
    Showcase,
    SplitLeaderboards,
    Views,
    lazy,
)
from . import card, schema

__all__ = ["RefL4Leaderboards", "RefL4Showcase", "BENCHMARK"]


class RefL4Leaderboards(SplitLeaderboards):
    """Acc50 and mAcc on test and on val; a merged split (``all``) reaches none."""

    def check(self, result: Any) -> None:
        """The Hub leaderboards are per split: ``all`` has none."""
        from ...engine.errors import InputError

        split = result.options.get("split")
        if split not in ("val", "test"):
            raise InputError(f"this Ref-L4 result is for split {split!r}; the Hub leaderboards are "
                             "per split",
                             fix="score one split on its own (--split test or --split val) to "
                                 "report it")


class RefL4Showcase(Showcase):
    """The bundled release; the Space's choice is the split."""

    subsets = ("all", "val", "test")
    #: val + test: 45,341 expressions, one {"id", "pred_bbox" (5), "format"} entry each (8 values),
    #: with room to spare
    max_prediction_values = 500_000

    def sample_references(self, subset: str) -> str:
        """The bundled release folder."""
        return str(resources.files("vlbench").joinpath("samples/ref_l4"))

    def example_predictions(self, quality: str, subset: str) -> str:
        """The bundled good / poor prediction file (covers both splits)."""
        return str(
            resources.files("vlbench").joinpath(f"samples/ref_l4/predictions_{quality}.json")
        )

    def options(self, subset: str) -> dict[str, Any]:
        """The Space's choice is the split."""
        return {"split": subset}


def _modules() -> tuple[DatasetBuilder, Views, Predictor, Conventions]:
    """The modules behind the capabilities, imported when first used (listing the benchmarks loads
    none of them)."""
    from . import conventions, predict, reader, views

    return reader, views, predict, conventions


def _scorer() -> Scorer[Any]:
    """The scorer (:mod:`.scorer`), imported when a command scores: listing the benchmarks and
    building a command line read only the options, keys and form declared with it."""
    from .scorer import RefL4Scorer

    return RefL4Scorer()


BENCHMARK = Benchmark(
    id="ref_l4", display_name="Ref-L4",
    scorer=lazy(_scorer, options_type=schema.RefL4Options, prediction_keys=schema.PREDICTION_KEYS,
                prediction_form=schema.PREDICTION_FORM),
    aliases=("ref-l4", "refl4"), listing_order=0,
    metric_keys=schema.METRIC_KEYS,
    headline=("Acc50", "Acc75", "Acc90", "mAcc", "class_Acc50", "class_mAcc"),
    default_split="all", split_help="val, test or all (default all)",
    card=Card(task_type="object-detection", task_name="Referring Expression Comprehension",
              license=card.card_metadata()["license"], citation=card.CITATION, quirks=card.QUIRKS,
              official_scorer=card.OFFICIAL_SCORER,
              metric_names={
                  "Acc50": "Acc@0.5", "Acc75": "Acc@0.75", "Acc90": "Acc@0.9",
                  "mAcc": "mAcc@0.5:0.95",
                  "small_Acc50": "Acc@0.5 (small)", "small_mAcc": "mAcc (small)",
                  "medium_Acc50": "Acc@0.5 (medium)", "medium_mAcc": "mAcc (medium)",
                  "large_Acc50": "Acc@0.5 (large)", "large_mAcc": "mAcc (large)",
                  "class_Acc50": "Acc@0.5 (class average)", "class_mAcc": "mAcc (class average)"},
              interval_note=" (the expressions of one image move together; pass `file_name` in the "
                            "references)",
              outputs_note="Not official: `breakdowns[\"threshold_metrics\"]` gives precision "
                           "(over the expressions answered), recall (over all: Acc@0.5) and F1 at "
                           "IoU 0.5, with their counts.",
              analysis_note="Every miss at IoU 0.5 gets one cause, tested in order: "
                            "`no_prediction`, `out_of_image` (less than half of the box inside the "
                            "image; needs `width` / `height`), `same_class_object` (IoU > 0.5 with "
                            "another annotated object of the same category: the right kind of "
                            "object, not the one described), `other_class_object`, `localisation` "
                            "(0.1 <= IoU <= 0.5 with its own object) and `background`; "
                            "`errors[cause]` gives its `count` and `delta_Acc50` (count / rows * "
                            "100: these add up to 100 - Acc50). `slices` give Acc50 by expression "
                            "length (words: 1-10, 11-20, 21-30, 31-50, >50) and object size; "
                            "`iou_histogram` the IoUs in tenths; `examples` the first rows of each "
                            "cause."),
    dataset=lazy(lambda: _modules()[0]), views=lazy(lambda: _modules()[1]),
    predictor=lazy(lambda: _modules()[2]), showcase=RefL4Showcase(),
    conventions=lazy(lambda: _modules()[3]),
    leaderboards=RefL4Leaderboards(tuple(EvalTask(f"{m.lower()}_{split}", m, "default", split,
                                                  f"{m}, {split} split")
                                         for split in ("test", "val") for m in ("Acc50", "mAcc"))),
    release=card.RELEASE)
