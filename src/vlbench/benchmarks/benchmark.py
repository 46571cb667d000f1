"""A benchmark: its names and card facts, and the capabilities it composes.

Every package ``vlbench.benchmarks.<id>`` builds one :class:`Benchmark` and exposes it as
``BENCHMARK``; the registry (:mod:`vlbench.benchmarks`) finds it. What a benchmark can do lives in
small interfaces, one per capability (:mod:`vlbench.benchmarks.protocol`): a
:class:`~vlbench.benchmarks.protocol.Scorer` (every benchmark), and optionally a
:class:`~vlbench.benchmarks.protocol.DatasetBuilder`, :class:`~vlbench.benchmarks.protocol.Views`, a
:class:`~vlbench.benchmarks.protocol.Predictor`, a :class:`~vlbench.benchmarks.protocol.Showcase`
(the Space) and :class:`~vlbench.benchmarks.protocol.Leaderboards`. The fronts (CLI, library API,
report, registration, metric cards, the Space, the ``evaluate`` modules) ask a benchmark for the
capability they need; one it lacks is a clear :class:`~vlbench.engine.errors.UnsupportedError`.

Data flows one way::

    raw release --dataset.build--> Hub folder
    reference source --scorer.load_references--> records --+
    prediction source --scorer.read_predictions--> entries -+--score(options)--> Result --> views

This module also re-exports the protocol's names, so that a benchmark's package imports what it
needs from one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from ..engine.errors import UnsupportedError
from .protocol import (
    ALL_QUERIES,
    AS_WRITTEN,
    PROTOCOLS,
    SHOW_SCORE,
    Conventions,
    DatasetBuilder,
    DetectorAnswer,
    EvalTask,
    Leaderboards,
    NoViews,
    Options,
    PredictData,
    PredictItem,
    Predictor,
    Sample,
    Scene,
    Scorer,
    Showcase,
    SplitLeaderboards,
    Table,
    Views,
    check_examples,
    detection_badness,
    mark_boxes,
    option,
)

__all__ = ["Benchmark", "Card", "Release", "TIES_NOTE", "DETECTION_CHECKS_NOTE",
           "DETECTION_ANALYSIS_NOTE", "lazy",
           "ALL_QUERIES", "AS_WRITTEN", "Conventions", "PROTOCOLS", "SHOW_SCORE", "DatasetBuilder",
           "DetectorAnswer",
           "EvalTask", "Leaderboards", "NoViews", "Options", "PredictData", "PredictItem",
           "Predictor", "Sample",
           "Scene", "Scorer", "Showcase", "SplitLeaderboards", "Table", "Views", "check_examples",
           "detection_badness", "mark_boxes", "option"]


T = TypeVar("T")


class _Lazy:
    """What :func:`lazy` returns: the declared attributes at once, the loaded object's others on
    first use."""

    __slots__ = ("_load", "_loaded", "_declared")

    def __init__(self, load: Callable[[], Any], declared: dict[str, Any]) -> None:
        self._load, self._loaded, self._declared = load, None, declared

    def __getattr__(self, name: str) -> Any:
        if name in self._declared:
            return self._declared[name]
        if self._loaded is None:
            self._loaded = self._load()
        return getattr(self._loaded, name)


def lazy(load: Callable[[], T], **declared: Any) -> T:
    """``load()``'s result, loaded on first attribute access: a benchmark's scorer, reader, views
    and predict modules load when used, not when the registry lists the benchmark (``vlbench
    --help`` needs names and options only). ``declared`` attributes are answered without loading (a
    scorer's ``options_type``, which every command line parser reads). ``load`` imports explicitly
    (``from .scorer import ...``), so readers, IDEs and type checkers follow it."""
    return cast(T, _Lazy(load, declared))


#: the metric-card sentence of a benchmark whose rankings can tie (its result carries
#: ``tie_bounds``)
TIES_NOTE = ("When detections share a score (a model without confidences gives every box the same "
             "one), the AP depends on how ties are ordered, which the official code does by "
             "position; the number is that order's, and `breakdowns[\"tie_bounds\"]` "
             "(`return_details=True`) holds each AP key's lowest and highest value over every "
             "order of the ties (per IoU threshold, each tie block's true positives last, then "
             "first; matches as the official order makes them), with a warning when they are more "
             "than 1 point apart. AR has no bounds, though it too depends on the order of ties "
             "within one image (the max-dets cut and the greedy matching keep the first of tied "
             "boxes); only ties across images leave it unchanged.")

#: the metric card's words on the detection benchmarks' error analysis
#: (vlbench.engine.error_analysis; a test holds the two to the same error types)
DETECTION_ANALYSIS_NOTE = (
    "A TIDE-style decomposition (Bolya et al., ECCV 2020) at IoU 0.5: every false positive is "
    "`localisation` (its own label's GT at 0.1 <= IoU <= 0.5), `duplicate` (its own label's GT at "
    "IoU > 0.5, already taken by a higher-ranked box), `hard_negative` (a GT of another label at "
    "IoU >= 0.5, and its label is a negative of the image), `wrong_positive` (the same with a "
    "positive label), `background` (IoU <= 0.1 with every GT) or `both` (anything else); a GT no "
    "box took and no localisation or label error points at is `missed`. `errors[type]` gives its "
    "`count` and `delta_<headline>50`: the headline at IoU 0.5 with that type fixed alone, minus "
    "as scored (a localisation or label error becomes the TP of the GT it points at, once per GT "
    "and only if no box took it, the others are removed; duplicates, background and both are "
    "removed; missed GT leave the GT count), plus TIDE's `false_positives` (all removed) and "
    "`false_negatives` (all unmatched GT removed). The rows do not add up: each is fixed alone. "
    "The boundaries are TIDE 1.0.1's own; the AP fixed is COCO's, the official one, while stock "
    "TIDE's AP is not (its recall grid, a class without GT counted as 0: up to 23 points away on "
    "small sets): compare TIDE's ΔAP rows with these, not its AP with the official number. "
    "`slices` count the types by box size and shape and by the benchmark's own slices; `examples` "
    "hold the worst boxes of each type (image id, label, box, score).")

#: the metric card's words on the detection benchmarks' answer-set view and convention check
DETECTION_CHECKS_NOTE = (
    'Not official, beside AP when the scores tie: `breakdowns["threshold_metrics"]` gives '
    "precision, recall and "
    "F1 at IoU 0.5 with every box counted as predicted (no score threshold: the view of a model "
    "without "
    "confidences), their counts, and the share of boxes that name a negative label of their image "
    "(one that refers to "
    "nothing in it) while overlapping a ground-truth box at IoU >= 0.5. The "
    "convention check reads the first 200 images' boxes as written (`[x, y, w, h]` pixels) and as "
    "xyxy pixels, "
    "fractions of the image, a 0-1000 grid or y first (the grids need the images' `width` / "
    "`height`), compares "
    "the share of GT boxes each reading covers at IoU 0.5, and warns, naming the convention and "
    "its fix, when "
    "another reading covers at least 20 points and twice as much; the official number is unchanged."
)


@dataclass(frozen=True)
class Card:
    """What the dataset, metric and model cards say of a benchmark beyond its numbers.

    ``task_type`` / ``task_name``: the model card's task; ``license``: the annotations' license;
    ``quirks``: the official scorer's known quirks; ``metric_names``: metric key -> readable name;
    ``outputs_note`` and ``interval_note``: extra sentences of the metric card (under the output
    keys; about the bootstrap unit); ``analysis_note``: what its error analysis holds;
    ``official_scorer``: the official code the numbers reproduce, at the version the golden cases
    were scored with.
    """

    task_type: str = "other"
    task_name: str = ""
    license: str = "other"
    citation: str = ""
    quirks: tuple[str, ...] = ()
    metric_names: Mapping[str, str] = field(default_factory=dict)
    outputs_note: str = ""
    interval_note: str = ""
    #: what ``analysis=True`` (``vlbench analyze``) returns for this benchmark (the metric card's
    #: "Error analysis")
    analysis_note: str = ""
    official_scorer: str = ""


@dataclass(frozen=True)
class Release:
    """Where a benchmark's official release lives, as its authors publish it: ``home`` is
    ``hf://OWNER/NAME`` (a Hub dataset, fetched through ``huggingface_hub``) or an https URL (each
    of ``files`` is then a URL); ``files`` are the files a build reads; ``optional`` those fetched
    when the revision holds them (a build without them is said); ``revision`` the Hub revision
    fetched by default (a commit pins it; a branch is resolved to its commit, which is recorded);
    ``sha256`` pins files' hashes the package knows; ``license``, ``size`` and ``by_hand`` (what a
    user fetches by hand: images under other terms) are for the README and errors.
    """

    home: str
    files: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    revision: str = "main"
    license: str = ""
    size: str = ""
    by_hand: str = ""
    sha256: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Benchmark:
    """One benchmark: names, the metric keys a score returns (FORMATS.md) and the keys shown first,
    the split scored when none is given, its card facts, and its capabilities. Only ``id``,
    ``display_name`` and ``scorer`` are required; a missing capability is None (the views and
    leaderboards default to none), and so is the folder of a plug-in's ``evaluate`` module.
    """

    id: str
    display_name: str
    scorer: Scorer[Any]
    metric_keys: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()
    #: the keys whose smaller value is better (an error, an MAE); every other key is
    #: higher-is-better, as torchmetrics' ``higher_is_better`` and lmms-eval's task YAMLs declare it
    #: (read by compare's verdicts)
    lower_is_better: frozenset[str] = frozenset()
    aliases: tuple[str, ...] = ()
    #: where the benchmark is listed (CLI help, the Space's dropdown): lower first, then by id
    listing_order: int = 100
    default_split: str | None = None
    split_help: str = ""
    card: Card = Card()
    dataset: DatasetBuilder | None = None
    views: Views = NoViews()
    predictor: Predictor | None = None
    showcase: Showcase | None = None
    leaderboards: Leaderboards = SplitLeaderboards()
    #: a plug-in's ``evaluate`` module: the folder holding ``<id>.py`` (vlbench's own are in its
    #: evaluate_modules/)
    evaluate_module: str | None = None
    conventions: Conventions | None = None
    #: where the official release lives (``vlbench build ID`` without ``--raw`` fetches it); None:
    #: given by hand
    release: Release | None = None

    def options(self, **kwargs: Any) -> Options:
        """Validated options (:meth:`Options.parse` of the scorer's ``options_type``): unknown names
        and values are an :class:`~vlbench.engine.errors.InputError` saying what is taken; no split
        means ``default_split``."""
        return self.scorer.options_type.parse(kwargs, owner=self.id,
                                              default_split=self.default_split)

    def require_dataset(self) -> DatasetBuilder:
        """The dataset builder, or an :class:`UnsupportedError` saying this benchmark has none."""
        if self.dataset is None:
            raise UnsupportedError(f"{self.display_name} has no dataset builder",
                                   fix="build its Hub folder yourself, or score its official files "
                                       "directly")
        return self.dataset

    def require_predictor(self) -> Predictor:
        """The model runner's side of the benchmark, or an :class:`UnsupportedError` saying it has
        none."""
        if self.predictor is None:
            raise UnsupportedError(f"{self.display_name} has no model runner",
                                   fix="write the predictions yourself")
        return self.predictor

    def require_showcase(self) -> Showcase:
        """The Space's samples and bounds, or an :class:`UnsupportedError` saying it ships none."""
        if self.showcase is None:
            raise UnsupportedError(f"{self.display_name} ships no sample for the Space",
                                   fix="pass your own references and predictions")
        return self.showcase

    def __repr__(self) -> str:
        return f"<Benchmark {self.id}>"
