"""Ref-L4 (Chen et al., 2024): referring expression comprehension with long expressions.

Read top to bottom: :mod:`.schema` (columns, features, class table), :mod:`.records` (the rows as
arrays), :mod:`.reader` (official release / Hub folder -> records; release -> Hub folder),
:mod:`.scorer` (records + predictions -> :class:`~vlbench.result.Result`), :mod:`.views` (tables,
plots, samples), :mod:`.card` (dataset card). :data:`BENCHMARK` puts them behind the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from ...benchmark import Benchmark, EvalTask, Options, check_examples as _check_examples, option
from . import card, schema

__all__ = ["RefL4", "RefL4Options", "BENCHMARK"]

_REFERENCE_KEYS = ("id", "bbox", "ori_category_id")


@dataclass(frozen=True)
class RefL4Options(Options):
    """Ref-L4 options: what a row without a prediction is."""

    missing: str = option("error", "rows without a prediction: 'error', or 'miss' to count them as misses",
                          ("error", "miss"))


class RefL4(Benchmark[RefL4Options]):
    """Ref-L4 behind the benchmark protocol."""

    id = "ref_l4"
    listing_order = 0
    aliases = ("ref-l4", "refl4")
    display_name = "Ref-L4"
    task_type = "object-detection"
    task_name = "Referring Expression Comprehension"
    hub_id = "vlbench/ref-l4"
    default_split = "all"
    split_help = "val, test or all (default all)"
    metric_keys = schema.METRIC_KEYS
    metric_names = {
        "Acc50": "Acc@0.5", "Acc75": "Acc@0.75", "Acc90": "Acc@0.9", "mAcc": "mAcc@0.5:0.95",
        "small_Acc50": "Acc@0.5 (small)", "small_mAcc": "mAcc (small)",
        "medium_Acc50": "Acc@0.5 (medium)", "medium_mAcc": "mAcc (medium)",
        "large_Acc50": "Acc@0.5 (large)", "large_mAcc": "mAcc (large)",
        "class_Acc50": "Acc@0.5 (class average)", "class_mAcc": "mAcc (class average)",
    }
    headline = ("Acc50", "Acc75", "Acc90", "mAcc", "class_Acc50", "class_mAcc")
    prediction_keys = frozenset({"pred_bbox"})
    prediction_form = '{"id", "pred_bbox", "format"}'
    options_type = RefL4Options
    quirks = card.QUIRKS
    citation = card.CITATION
    license = card.card_metadata()["license"]
    interval_note = " (the expressions of one image move together; pass `file_name` in the references)"
    views_module = f"{__name__}.views"
    predict_module = f"{__name__}.predict"
    predict_kinds = ("detector", "image-text-to-text")
    answer_kind = "box"
    #: val + test: 45,341 expressions, one {"id", "pred_bbox" (5), "format"} entry each (8 values), with room to spare
    max_prediction_values = 500_000
    reader_module = f"{__name__}.reader"
    space_subsets = ("all", "val", "test")

    def entries_from_examples(self, references: list[dict[str, Any]], predictions: list[Any]) -> list[Any]:
        """``{"pred_bbox", "format"}`` per row -> official entries carrying the row's ``id``."""
        from ...errors import PredictionError

        _check_examples(references, predictions)
        for n, p in enumerate(predictions):
            if not isinstance(p, dict) or "pred_bbox" not in p or "format" not in p:
                raise PredictionError("each prediction is {\"pred_bbox\": [4 numbers], \"format\": \"xyxy\" | \"xywh\"}",
                                      file="predictions", entry=f"example {n}")
        return [{"id": int(r["id"]), "pred_bbox": p["pred_bbox"], "format": p["format"]}
                for r, p in zip(references, predictions)]

    def options_for_run(self, config: str | None, unanswered: int) -> dict[str, Any]:
        """Expressions the model gave no usable box for are misses (the run counted and reported them)."""
        return {"missing": "miss"} if unanswered else {}

    def score(self, references: Any, predictions: Any, options: RefL4Options, source: str = "predictions") -> Any:
        """Acc@0.5/0.75/0.9, mAcc, per size and per class (see :mod:`.scorer`)."""
        from .scorer import score

        return score(references, predictions, protocol=options.protocol, missing=options.missing,
                     split=options.split or "given", source=source, with_samples=options.details)

    def eval_tasks(self) -> list[EvalTask]:
        """Acc50 and mAcc on test and on val."""
        return [EvalTask(f"{m.lower()}_{split}", m, "default", split, f"{m}, {split} split")
                for split in ("test", "val") for m in ("Acc50", "mAcc")]

    def check_leaderboard(self, result: Any) -> None:
        """The Hub leaderboards are per split: ``all`` has none."""
        from ...errors import InputError

        split = result.options.get("split")
        if split not in ("val", "test"):
            raise InputError(f"this Ref-L4 result is for split {split!r}; the Hub leaderboards are per split",
                             fix="score one split on its own (--split test or --split val) to report it")

    def sample_references(self, subset: str) -> str:
        """The bundled release folder."""
        return str(resources.files("vlbench").joinpath("samples/ref_l4"))

    def example_predictions(self, quality: str, subset: str) -> str:
        """The bundled good / poor prediction file (covers both splits)."""
        return str(resources.files("vlbench").joinpath(f"samples/ref_l4/predictions_{quality}.json"))

    def space_options(self, subset: str) -> dict[str, Any]:
        """The Space's choice is the split."""
        return {"split": subset}


BENCHMARK = RefL4()
