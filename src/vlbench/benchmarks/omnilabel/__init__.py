"""OmniLabel (Schulter et al., CVPR 2023): language-based object detection.

Read top to bottom: :mod:`.schema` (groups, features), :mod:`.records` (pairs of image and
description as arrays), :mod:`.reader` (official JSON / Hub folder -> records; JSON -> Hub folder
and back), :mod:`.scorer` (the 13 official numbers), :mod:`.views` (tables, plots, samples),
:mod:`.predict`, :mod:`.card`. :data:`BENCHMARK` composes them (:mod:`vlbench.benchmarks.protocol`).
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
    Options,
    Predictor,
    Scorer,
    Showcase,
    SplitLeaderboards,
    Views,
    lazy,
)
from . import card, schema

__all__ = ["OmniLabelShowcase", "BENCHMARK"]


class OmniLabelShowcase(Showcase):
    """The bundled validation sample."""

    subsets = ("validation",)
    #: val (~12.2k images): 100 boxes per image, each {"image_id", "bbox" (5), "description_ids",
    #: "scores"} with a dozen descriptions of its label space (~30 values)
    max_prediction_values = 40_000_000

    def sample_references(self, subset: str) -> str:
        """The bundled validation JSON."""
        return str(resources.files("vlbench").joinpath("samples/omnilabel/dataset_val.json"))

    def example_predictions(self, quality: str, subset: str) -> str:
        """The bundled good / poor prediction file."""
        return str(
            resources.files("vlbench").joinpath(f"samples/omnilabel/predictions_{quality}.json")
        )


def _modules() -> tuple[DatasetBuilder, Views, Predictor, Conventions]:
    """The modules behind the capabilities, imported when first used (listing the benchmarks loads
    none of them)."""
    from . import conventions, predict, reader, views

    return reader, views, predict, conventions


def _scorer() -> Scorer[Any]:
    """The scorer (:mod:`.scorer`), imported when a command scores: listing the benchmarks and
    building a command line read only the options, keys and form declared with it."""
    from .scorer import OmniLabelScorer

    return OmniLabelScorer()


BENCHMARK = Benchmark(
    id="omnilabel", display_name="OmniLabel",
    scorer=lazy(_scorer, options_type=Options, prediction_keys=schema.PREDICTION_KEYS,
                prediction_form=schema.PREDICTION_FORM),
    aliases=("omni-label",), listing_order=1,
    metric_keys=schema.METRIC_KEYS,
    headline=("AP", "AP_categ", "AP_descr", "AP_descr_pos", "AR_descr", "AR_categ"),
    default_split="validation", split_help="validation (the test split has no public boxes)",
    card=Card(task_type="object-detection", task_name="Language-based Object Detection",
              license=card.card_metadata()["license"], citation=card.CITATION, quirks=card.QUIRKS,
              official_scorer=card.OFFICIAL_SCORER,
              metric_names={
                  "AP": "AP (harmonic mean of AP_categ and AP_descr)", "AP_categ": "AP categories",
                  "AP_descr": "AP descriptions", "AP_descr_pos": "AP positive descriptions",
                  "AP_descr_S": "AP short descriptions (<=3 words)",
                  "AP_descr_M": "AP medium descriptions (4-8 words)",
                  "AP_descr_L": "AP long descriptions (>=9 words)",
                  "AP50_descr": "AP@0.5 descriptions",
                  "AP75_descr": "AP@0.75 descriptions", "AP50_categ": "AP@0.5 categories",
                  "AP75_categ": "AP@0.75 categories", "AR_descr": "AR descriptions",
                  "AR_categ": "AR categories"},
              outputs_note=TIES_NOTE + " " + DETECTION_CHECKS_NOTE + " A negative label here is a "
                                                                     "negative description "
                           "(in the image's label space, referring to no object of it); the counts "
                           "are also split "
                           "into categories and descriptions (`by_type`).",
              analysis_note=DETECTION_ANALYSIS_NOTE + " Here the headline is AP50: the harmonic "
                                                      "mean of AP50_categ and "
              "AP50_descr (the two pooled rankings); negative labels are the image's negative "
              "descriptions; the "
              "slices add `description` (category, positive or negative description), `length` "
              "(AP_descr_S/M/L's "
              "buckets) and `source` (the image's dataset)."),
    dataset=lazy(lambda: _modules()[0]), views=lazy(lambda: _modules()[1]),
    predictor=lazy(lambda: _modules()[2]), conventions=lazy(lambda: _modules()[3]),
    showcase=OmniLabelShowcase(), leaderboards=SplitLeaderboards((
        EvalTask("ap", "AP", "all", "validation", "AP (harmonic mean of AP_categ and AP_descr)"),
        EvalTask("ap_categ", "AP_categ", "all", "validation", "AP on plain categories"),
        EvalTask("ap_descr", "AP_descr", "all", "validation", "AP on free-form descriptions"))),
    release=card.RELEASE)
