"""OVDEval (Yao et al., AAAI 2024): open-vocabulary detection with hard negatives, nine sub-datasets.

Read top to bottom: :mod:`.schema` (sub-datasets, aspects, features), :mod:`.records` (a sub-dataset's
ground truth as arrays; a folder of prediction files), :mod:`.reader` (sub-dataset JSON / release /
Hub folder -> records; release -> Hub folder and back), :mod:`.scorer` (NMS-AP and AP; Table 3),
:mod:`.views`, :mod:`.predict`, :mod:`.card`. :data:`BENCHMARK` composes them (:mod:`vlbench.benchmarks.protocol`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from typing import Any, Self

from ..benchmark import (
    DETECTION_ANALYSIS_NOTE,
    DETECTION_CHECKS_NOTE,
    TIES_NOTE,
    Benchmark,
    Card,
    Conventions,
    DatasetBuilder,
    EvalTask,
    Options,
    Predictor,
    Scorer,
    Showcase,
    Views,
    check_examples as _check_examples,
    lazy,
    option,
)
from . import card, schema

__all__ = ["OVDEvalOptions", "OVDEvalScorer", "OVDEvalLeaderboards", "OVDEvalShowcase", "BENCHMARK"]

_ALL = "all (Table 3)"


@dataclass(frozen=True)
class OVDEvalOptions(Options):
    """OVDEval options: which sub-dataset of a multi-sub-dataset reference source to score."""

    sub_dataset: str | None = option(None, "score only this sub-dataset of a release or Hub folder")

    @classmethod
    def parse(cls, kwargs: dict[str, Any], *, owner: str, default_split: str | None) -> Self:
        """As :meth:`Options.parse`, and a sub-dataset name given as ``split`` means ``sub_dataset`` (the Hub split
        is test)."""
        split = kwargs.get("split")
        if split not in (None, "test", "all") and kwargs.get("sub_dataset") is None:
            kwargs = {**kwargs, "split": "test", "sub_dataset": split}
        return super().parse(kwargs, owner=owner, default_split=default_split)


class OVDEvalScorer(Scorer[OVDEvalOptions]):
    """NMS-AP and AP of one sub-dataset, or Table 3 of several (see :mod:`.scorer`)."""

    options_type = OVDEvalOptions
    prediction_keys = schema.PREDICTION_KEYS
    prediction_form = schema.PREDICTION_FORM

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """A sub-dataset JSON, the release folder or a Hub folder -> every sub-dataset's records."""
        from . import reader

        return reader.load_references(source, split)

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of a Hub config (``image_id``, ``boxes``) -> records, one sub-dataset per ``sub_dataset`` value (the
        default config ``all`` holds them all; each numbers its images and categories on its own)."""
        from . import reader
        from .records import OVDEvalReferences

        groups = _by_sub_dataset(rows)
        subsets = {name: reader.references_from_rows(group, name=name, source=f"references [{name}]")
                   for name, group in groups.items()}
        return OVDEvalReferences(subsets=subsets, source="references")

    def read_predictions(self, source: str | os.PathLike, *, max_bytes: int | None = None,
                         max_values: int | None = None, typed: bool = False) -> Any:
        """A COCO results file, or a folder of them (``<sub-dataset>.json``) scored together; with ``typed``, files
        of the usual shape as :class:`~vlbench.benchmarks.validation.TypedCocoResult` records (a third of the reading
        time), others as dicts."""
        from . import reader

        return reader.read_predictions(source, max_bytes=max_bytes, max_values=max_values, typed=typed)

    def entries_from_examples(self, references: list[dict[str, Any]], predictions: list[Any]) -> Any:
        """``{"boxes", "scores", "labels"}`` per image -> COCO results (a list, or one per sub-dataset)."""
        from ..validation import aligned_lists
        from .records import PredictionFolder

        _check_examples(references, predictions)
        entries: dict[str, list] = {}
        for n, (ref, pred) in enumerate(zip(references, predictions)):
            entries.setdefault(_sub_dataset_of(ref), []).extend(
                {"image_id": ref["image_id"], "category_id": label, "bbox": box, "score": s}
                for box, s, label in aligned_lists(pred, ("boxes", "scores", "labels"), n))
        if len(entries) > 1:    # rows of several sub-datasets: one prediction list each, scored as Table 3
            return PredictionFolder(entries=entries, files={k: "predictions" for k in entries}, folder="predictions")
        return next(iter(entries.values()), [])

    def score(self, references: Any, predictions: Any, options: OVDEvalOptions, source: str = "predictions") -> Any:
        """NMS-AP and AP of one sub-dataset, or Table 3 of several."""
        from .scorer import score_references

        return score_references(references, predictions, protocol=options.protocol, sub_dataset=options.sub_dataset,
                                source=source, analysis=options.analysis)


class OVDEvalLeaderboards:
    """NMS-AP per sub-dataset (its config), and the Total Average over all nine."""

    def tasks(self) -> list[EvalTask]:
        """One task per sub-dataset, then the Total Average (which needs all nine)."""
        tasks = [EvalTask(f"nms_ap_{s}", "NMS_AP", s, "test", f"NMS-AP, {s}") for s in schema.SUBSETS]
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
            return result.metrics.get(task.metric) if config is None and set(task.requires) <= scored else None
        if config is None:
            return result.metrics.get(f"NMS_AP_{task.config}")
        return result.metrics.get(task.metric) if task.config == config else None


class OVDEvalShowcase(Showcase):
    """The bundled release (two sub-datasets, or both as Table 3)."""

    subsets = ("color", "material", _ALL)
    #: all 9 sub-datasets (~20k images): 100 boxes per image, each {"image_id", "category_id", "bbox" (5), "score"}
    #: (9 values)
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
    """The modules behind the capabilities, imported when first used (listing the benchmarks loads none of them)."""
    from . import conventions, predict, reader, views

    return reader, views, predict, conventions


BENCHMARK = Benchmark(
    id="ovdeval", display_name="OVDEval", scorer=OVDEvalScorer(), aliases=("ovd-eval",), listing_order=2,
    metric_keys=schema.METRIC_KEYS, headline=("NMS_AP", "AP", "NMS_AP50", "AP50", "NMS_AR100", "AR100"),
    default_split="test", split_help="test (the only split; a sub-dataset name here means --sub-dataset)",
    card=Card(task_type="object-detection", task_name="Open-Vocabulary Detection",
              license=card.card_metadata()["license"], citation=card.CITATION, quirks=card.QUIRKS,
              official_scorer=card.OFFICIAL_SCORER,
              metric_names={**{f"NMS_{k}": f"NMS-{k}" for k in schema.STAT_KEYS},
                            **{k: f"{k} (without the suppression)" for k in schema.STAT_KEYS},
                            "Total_Average": "NMS-AP Total Average"},
              outputs_note=("Scoring several sub-datasets at once (CLI: a folder of prediction files) gives "
                            "`NMS_AP_<sub-dataset>`, `AP_<sub-dataset>` and `Total_Average` (mean NMS-AP, the "
                            "paper's Table 3). " + TIES_NOTE + " " + DETECTION_CHECKS_NOTE
                          + " A negative label here is one of the image's hard negatives (`neg_text`)."),
              analysis_note=DETECTION_ANALYSIS_NOTE + " Here the headline is NMS-AP50 (the boxes the GT-guided "
              "suppression keeps; `suppressed` counts the others), negative labels are the image's `neg_text`, and the "
              "slices add `sub_dataset` and `aspect` when several sub-datasets are scored (`delta_Total_Average50`: "
              "the mean of theirs). Hub rows name only the categories of their boxes, so a label no box of the "
              "split has is unknown there and its boxes are dropped (as the scorer drops them): score the "
              "sub-dataset JSON to see the hard negatives such labels hold."),
    dataset=lazy(lambda: _modules()[0]), views=lazy(lambda: _modules()[1]),
    predictor=lazy(lambda: _modules()[2]), conventions=lazy(lambda: _modules()[3]), showcase=OVDEvalShowcase(),
    leaderboards=OVDEvalLeaderboards(),
    release=card.RELEASE)


def _sub_dataset_of(row: Any) -> str:
    """The sub-dataset a reference row belongs to (rows of one config without the column: "references")."""
    name = row.get("sub_dataset") if isinstance(row, dict) else None
    return str(name) if name else "references"


def _by_sub_dataset(rows: list[Any]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for row in rows:
        groups.setdefault(_sub_dataset_of(row), []).append(row)
    return groups or {"references": []}
