"""nocaps (Agrawal et al., ICCV 2019): novel object captioning.

Read top to bottom: :mod:`.schema` (domains, metric keys, features), :mod:`.records` (images with
domains and references), :mod:`.reader` (captions JSON / Hub folder -> records; JSON -> Hub folder
and back), :mod:`.scorer` (the toolkit's metrics overall and per domain), :mod:`.views`,
:mod:`.predict`, :mod:`.card`. :data:`BENCHMARK` composes them (:mod:`vlbench.benchmarks.protocol`).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..benchmark import (
    Benchmark,
    Card,
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

__all__ = ["NocapsShowcase", "BENCHMARK"]


#: The Space's bounds on an upload's captions (the validation references hold 11.2 words on average,
#: 46 at most; 4,500 captions of 15 words are 67,500), which bound METEOR's time on the Space's
#: machine
SPACE_CAPTION_WORDS = 200
SPACE_WORDS = 100_000


class NocapsShowcase(Showcase):
    """The bundled validation captions, and bounds on the captions a visitor uploads."""

    subsets = ("validation",)
    boxes = False
    #: val + test: 15,100 images, one {"image_id", "caption"} entry each (3 values), with room to
    #: spare
    max_prediction_values = 100_000

    def sample_references(self, subset: str) -> str:
        """The bundled validation captions."""
        return str(resources.files("vlbench").joinpath("samples/nocaps/nocaps_val_captions.json"))

    def example_predictions(self, quality: str, subset: str) -> str:
        """The bundled good / poor captions."""
        return str(
            resources.files("vlbench").joinpath(f"samples/nocaps/predictions_{quality}.json")
        )

    def check(self, predictions: Any) -> None:
        """At most SPACE_CAPTION_WORDS words per caption and SPACE_WORDS in all: METEOR's alignment
        search grows with the product of the lengths it aligns (a 5,000-word caption takes minutes,
        the jar's too)."""
        from ...engine.errors import FormatError

        entries = predictions if isinstance(predictions, list) else []
        lengths = [
            len(e["caption"].split())
            if isinstance(e, dict) and isinstance(e.get("caption"), str)
            else 0
            for e in entries
        ]
        longest = max(range(len(lengths)), key=lengths.__getitem__, default=None)
        fix = ("score captions this long with the CLI ('vlbench score nocaps'), which has no such "
               "bound")
        if longest is not None and lengths[longest] > SPACE_CAPTION_WORDS:
            raise FormatError(f"entry {longest} has a caption of {lengths[longest]:,} words; the "
                              "Space scores "
                              f"captions of at most {SPACE_CAPTION_WORDS} words", fix=fix)
        if sum(lengths) > SPACE_WORDS:
            raise FormatError(f"the captions hold {sum(lengths):,} words; the Space scores at most "
                              f"{SPACE_WORDS:,} in one upload", fix=fix)


_DOMAINS = (("", "overall"), ("_in", "in-domain"), ("_near", "near-domain"), ("_out", "out-domain"))

def _modules() -> tuple[DatasetBuilder, Views, Predictor]:
    """The modules behind the capabilities, imported when first used (listing the benchmarks loads
    none of them)."""
    from . import predict, reader, views

    return reader, views, predict


def _scorer() -> Scorer[Any]:
    """The scorer (:mod:`.scorer`), imported when a command scores: listing the benchmarks and
    building a command line read only the options, keys and form declared with it."""
    from .scorer import NocapsScorer

    return NocapsScorer()


BENCHMARK = Benchmark(
    id="nocaps", display_name="nocaps",
    scorer=lazy(_scorer, options_type=schema.NocapsOptions, prediction_keys=schema.PREDICTION_KEYS,
                prediction_form=schema.PREDICTION_FORM),
    listing_order=3, metric_keys=schema.METRIC_KEYS,
    headline=("CIDEr", "SPICE", "B4", "METEOR", "ROUGE_L", "CIDEr_in", "CIDEr_near", "CIDEr_out"),
    default_split="validation", split_help="validation (the test split has no public captions)",
    card=Card(task_type="image-to-text", task_name="Novel Object Captioning",
              license=card.card_metadata()["license"],
              citation=card.CITATION, official_scorer=card.OFFICIAL_SCORER, quirks=card.QUIRKS,
              metric_names={f"{m}{suffix}": f"{m}{' (' + name + ')' if suffix else ''}"
                            for m in schema.METRICS for suffix, name in _DOMAINS},
              analysis_note="`domain_gaps[metric][domain]`: the domain's value minus the whole "
                            "split's; `missed_words`: the words at least half of an image's "
                            "references use and its caption does not (stop words aside), counted "
                            "over images, `novel` ones (never used by an in-domain image's "
                            "references: what COCO lacks) apart from the `other`; `examples`: the "
                            "images of lowest CIDEr-D with their missed words, novel first."),
    dataset=lazy(lambda: _modules()[0]), views=lazy(lambda: _modules()[1]),
    predictor=lazy(lambda: _modules()[2]), showcase=NocapsShowcase(),
    # CIDEr and SPICE overall and per domain, on validation
    leaderboards=SplitLeaderboards(tuple(
        EvalTask(f"{m.lower()}{suffix or '_overall'}", f"{m}{suffix}", "default", "validation",
                 f"{m}, {name}")
        for m in ("CIDEr", "SPICE") for suffix, name in _DOMAINS)),
    release=card.RELEASE)
