"""The ``Benchmark`` protocol: everything that makes one benchmark different from another, behind one interface.

Every package ``vlbench.benchmarks.<id>`` defines one subclass of :class:`Benchmark` and exposes an
instance as ``BENCHMARK``; the registry (:mod:`vlbench.benchmarks`) finds it. The fronts (CLI,
library API, report, registration, metric cards, the Space, the ``evaluate`` modules) only loop
over the registry and call these methods, so adding a benchmark changes no generic module.

Data flows one way::

    raw release --build--> Hub folder
    reference source --load_references--> records --+
    prediction source --read_predictions--> entries -+--score(options)--> Result --> renderings

``score`` is pure: no file I/O and no rendering. The rendering hooks (``tables``, ``plots``,
``samples``, ``text``) read only the ``Result`` and the records.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from .errors import InputError, UnsupportedError

__all__ = ["Benchmark", "Options", "EvalTask", "Sample", "Table", "PROTOCOLS", "option", "mark_boxes", "check_examples"]

#: ``official`` reproduces the official scorer, quirks included; ``corrected`` fixes its known bugs.
PROTOCOLS = ("official", "corrected")

#: A breakdown table: column headers and rows.
Table = tuple[list[str], list[list[Any]]]


def option(default: Any, help: str, choices: tuple[Any, ...] | None = None, cli: bool = True) -> Any:
    """A benchmark option field: ``help`` and ``choices`` feed the CLI flag and the validation."""
    return field(default=default, metadata={"help": help, "choices": choices, "cli": cli})


@dataclass(frozen=True)
class Options:
    """Options every benchmark takes; a benchmark subclasses this to add its own (declared with :func:`option`)."""

    protocol: str = option("official", "official (the official number) or corrected (known bugs fixed)", PROTOCOLS,
                           cli=False)
    split: str | None = option(None, "which split of the references to score", cli=False)
    details: bool = option(True, "per-sample / per-description breakdowns in the result", cli=False)

    @classmethod
    def names(cls) -> list[str]:
        """The option names this benchmark takes."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def own_fields(cls) -> list[dataclasses.Field]:
        """The fields a benchmark adds to the common ones."""
        common = {f.name for f in dataclasses.fields(Options)}
        return [f for f in dataclasses.fields(cls) if f.name not in common]

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            choices = f.metadata.get("choices")
            value = getattr(self, f.name)
            if choices and value is not None and value not in choices:
                raise InputError(f"unknown {f.name} {value!r}", fix="use " + " or ".join(map(repr, choices)))


@dataclass(frozen=True)
class EvalTask:
    """One leaderboard: the ``metric`` key of a result on (``config``, ``split``) of the Hub dataset."""

    id: str
    metric: str
    config: str | None
    split: str
    title: str
    #: configs that must all have been scored (a mean over configs)
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sample:
    """One sample to show: an image (by file name), boxes as (xywh in pixels, label, kind) and a caption.

    ``kind`` is ``"gt"``, ``"match"``, ``"miss"`` or ``"fp"``; a benchmark without boxes leaves them empty.
    """

    image: str | None
    caption: str
    boxes: list[tuple[list[float], str, str]] = field(default_factory=list)


def mark_boxes(gt: list[tuple[list[float], str]], predicted: list[tuple[list[float], str]],
               iou_threshold: float = 0.5) -> tuple[list[tuple[list[float], str, str]], int]:
    """Boxes (xywh) of one image for display: GT found / missed, predictions matched / false positive, by best
    IoU >= ``iou_threshold`` (a picture, not the metric); and the number of misses plus false positives."""
    import numpy as np

    from .geometry import iou_matrix_xywh

    iou = (iou_matrix_xywh([b for b, _ in predicted], [b for b, _ in gt]) if gt and predicted
           else np.zeros((len(predicted), len(gt))))
    found = iou.max(axis=0) >= iou_threshold if predicted else np.zeros(len(gt), bool)
    hit = iou.max(axis=1) >= iou_threshold if gt else np.zeros(len(predicted), bool)
    boxes = [(b, label, "gt" if ok else "miss") for (b, label), ok in zip(gt, found)]
    boxes += [(b, label, "match" if ok else "fp") for (b, label), ok in zip(predicted, hit)]
    return boxes, int((~found).sum() + (~hit).sum())


#: the default score threshold of a drawn sample (the viewer's slider starts there)
SHOW_SCORE = 0.3
#: the "query" choice that shows every box of an image
ALL_QUERIES = "all"


@dataclass(frozen=True)
class Scene:
    """One image of the sample viewer: each GT and predicted box (xywh pixels) with its query (the description,
    category or expression it answers), and the text to show beside it (e.g. a caption and its references).

    ``badness`` orders the viewer (worst first); a predicted box's score is None for formats without scores.
    """

    image: str | None
    title: str
    badness: float
    gt: list[tuple[list[float], str]] = field(default_factory=list)
    predicted: list[tuple[list[float], str, float | None]] = field(default_factory=list)
    text: str = ""

    def queries(self) -> list[str]:
        """The queries of this image, in first-seen order."""
        return list(dict.fromkeys([q for _, q in self.gt] + [q for _, q, _ in self.predicted]))

    def boxes(self, query: str = ALL_QUERIES,
              threshold: float = SHOW_SCORE) -> tuple[list[tuple[list[float], str, str]], int]:
        """The boxes to draw for one query (or all), predictions scoring below ``threshold`` left out, marked as
        :func:`mark_boxes` does; with all queries a box is drawn once (GT: its first two queries; prediction: the
        query it scores highest for)."""
        every = query == ALL_QUERIES
        gt: dict[tuple[float, ...], list[str]] = {}
        for box, q in self.gt:
            if every or q == query:
                gt.setdefault(tuple(box), []).append(q)
        best: dict[tuple[float, ...], tuple[float, str]] = {}
        for box, q, score in self.predicted:
            value = 1.0 if score is None else score
            if (every or q == query) and value >= threshold and value > best.get(tuple(box), (-1.0, ""))[0]:
                best[tuple(box)] = (value, q)
        gt_boxes = [(list(b), " / ".join(q[:2]) if every else "GT") for b, q in gt.items()]
        scored = any(score is not None for _, _, score in self.predicted)
        shown = [(list(b), " ".join(([q] if every else []) + ([f"{s:.2f}"] if scored else [] if every else
                                                                ["prediction"])))
                 for b, (s, q) in best.items()]
        return mark_boxes(gt_boxes, shown)

    def sample(self, query: str = ALL_QUERIES, threshold: float = SHOW_SCORE) -> Sample:
        """This scene as one drawable :class:`Sample`."""
        caption = self.title + (f" | {self.text}" if self.text else "")
        return Sample(image=self.image, caption=caption, boxes=self.boxes(query, threshold)[0])


def detection_badness(gt: list[tuple[list[float], str]], predicted: list[tuple[list[float], str, float | None]],
                      threshold: float = SHOW_SCORE) -> int:
    """Missed plus spurious boxes of one image, query by query, predictions at or above ``threshold``."""
    scene = Scene(image=None, title="", badness=0.0, gt=gt, predicted=predicted)
    return sum(scene.boxes(q, threshold)[1] for q in scene.queries())


@dataclass(frozen=True)
class PredictItem:
    """One unit of model work for ``vlbench predict``: an image and what to ask about it.

    ``key`` names the item in a resumable run; ``queries`` are what is asked: a detector's text queries, the
    expression of a one-box answer, the labels of a detection answer (an image-text-to-text model's prompt is built
    from them by its family's preset, :mod:`vlbench.predict.families`); ``context`` holds the ids the official
    entries need.
    """

    key: str
    image: Any
    queries: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PredictData:
    """What ``vlbench predict`` reads: the rows of one config and split of a built dataset, and the folder (its card
    holds what rows do not, e.g. a sub-dataset's full category list); ``folder`` is None for a dataset given as rows."""

    rows: Any
    folder: Any = None
    config: str | None = None


@dataclass(frozen=True)
class Detections:
    """A detector's answer for one item: boxes as xyxy pixels, their scores, and the query each answers."""

    boxes_xyxy: list[list[float]]
    scores: list[float]
    query: list[int]


def check_examples(references: Any, predictions: Any) -> None:
    """An ``evaluate`` module's inputs: two lists of one length (``None`` or a mismatch is a clear error)."""
    from .errors import PredictionError

    for name, value in (("predictions", predictions), ("references", references)):
        if not isinstance(value, (list, tuple)):
            raise PredictionError(f"the {name} must be a list (one entry per example), got {type(value).__name__}",
                                  file=name, fix="pass predictions=[...] and references=[...] of equal length")
    if len(references) != len(predictions):
        raise PredictionError(f"{len(predictions)} predictions but {len(references)} references", file="predictions",
                              fix="give exactly one prediction per reference row")


OptionsT = TypeVar("OptionsT", bound=Options)


class Benchmark(Generic[OptionsT]):
    """One benchmark behind one interface. Subclasses set the class attributes and implement the hooks.

    Required: ``id``, ``display_name``, ``load_references`` and ``score``. Everything else has a
    default that says plainly what the benchmark does not offer.
    """

    #: canonical id (``vlbench score <id>``), other accepted names, and the name shown to people
    id: ClassVar[str]
    #: where the benchmark is listed (CLI help, the Space's dropdown): lower first, then by id
    listing_order: ClassVar[int] = 100
    aliases: ClassVar[tuple[str, ...]] = ()
    display_name: ClassVar[str]
    #: Hub task type and name for the model card, and the default dataset id
    task_type: ClassVar[str] = "other"
    task_name: ClassVar[str] = ""
    hub_id: ClassVar[str | None] = None
    #: the split scored when none is given, and a one-line help for ``--split``
    default_split: ClassVar[str | None] = None
    split_help: ClassVar[str] = ""
    #: the metric keys of one scoring call (CONTRACT.md), key -> readable name (model card), headline keys
    metric_keys: ClassVar[tuple[str, ...]] = ()
    metric_names: ClassVar[dict[str, str]] = {}
    headline: ClassVar[tuple[str, ...]] = ()
    #: keys every prediction entry has (to recognise this benchmark's files) and its shape for messages
    prediction_keys: ClassVar[frozenset[str]] = frozenset()
    prediction_form: ClassVar[str] = "{...}"
    #: the benchmark's options (``Options`` itself when it declares none of its own)
    options_type: type[OptionsT] = Options  # type: ignore[assignment]
    #: the official scorer's known quirks (dataset and metric cards), its citation and the data license
    quirks: ClassVar[tuple[str, ...]] = ()
    citation: ClassVar[str] = ""
    license: ClassVar[str] = "other"
    #: extra sentences of the metric card: under the output keys, and about the bootstrap unit
    outputs_note: ClassVar[str] = ""
    interval_note: ClassVar[str] = ""
    #: the Space: choices of its "split / sub-dataset" dropdown
    space_subsets: ClassVar[tuple[str, ...]] = ("default",)
    #: a module defining ``text``, ``tables``, ``plots`` and ``samples`` (the hooks below, as functions)
    views_module: ClassVar[str | None] = None
    #: JSON values a prediction file for the largest real split holds at most (sized from the release's counts of
    #: entries and boxes); the Space refuses bigger uploads (None: no bound of its own)
    max_prediction_values: ClassVar[int | None] = None
    #: a module defining ``load_references(source, split)``, ``references_from_rows(rows, source=)``,
    #: ``build(raw, out, **options)`` and ``export(folder, split)``, which the default hooks call
    reader_module: ClassVar[str | None] = None

    # -- options -------------------------------------------------------------------------------
    def options(self, **kwargs: Any) -> OptionsT:
        """Validate options once: unknown names and values are an :class:`InputError` saying what is taken."""
        names = self.options_type.names()
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            own = [f.name for f in self.options_type.own_fields()]
            raise InputError(f"option(s) {', '.join(unknown)} do not apply to {self.id}",
                             fix=f"{self.id} takes: {', '.join(own) or 'no extra option'}")
        given = {k: v for k, v in kwargs.items() if v is not None or k == "split"}
        if given.get("split") is None:
            given["split"] = self.default_split
        return self.options_type(**given)

    # -- reading -------------------------------------------------------------------------------
    def _reader(self) -> Any:
        import importlib

        if not self.reader_module:
            raise UnsupportedError(f"{self.id} has no reader")
        return importlib.import_module(self.reader_module)

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """Official annotation file, Hub folder or Hub id -> this benchmark's records."""
        return self._reader().load_references(source, split or self.default_split)

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of the Hub dataset (the ``evaluate`` module's references) -> records."""
        return self._reader().references_from_rows(rows, source="references")

    def read_predictions(self, source: str | os.PathLike, *, max_bytes: int | None = None,
                         max_values: int | None = None) -> Any:
        """A prediction file (official format) -> its parsed entries; the limits as :func:`vlbench.io.read_json`."""
        from .io import MAX_JSON_BYTES, read_json

        return read_json(source, what="prediction file", max_bytes=max_bytes or MAX_JSON_BYTES, max_values=max_values)

    def entries_from_examples(self, references: list[dict[str, Any]], predictions: list[Any]) -> list[Any]:
        """Per-example predictions of the ``evaluate`` module (aligned with ``references``) -> official entries."""
        raise UnsupportedError(f"{self.id} has no evaluate module")

    # -- scoring -------------------------------------------------------------------------------
    def score(self, references: Any, predictions: Any, options: OptionsT, source: str = "predictions") -> Any:
        """Records + parsed predictions -> :class:`~vlbench.result.Result` (pure: no I/O, no rendering)."""
        raise NotImplementedError

    # -- building and exporting the Hub dataset --------------------------------------------------
    def build(self, raw: Any, out: str | os.PathLike, **kwargs: Any) -> Any:
        """Official release -> Hub folder; returns a :class:`~vlbench.validation.BuildReport`."""
        return self._reader().build(raw, out, **kwargs)

    def export(self, folder: str | os.PathLike, split: str | None) -> Any:
        """Hub folder -> the official annotation data of ``split`` (JSON-serialisable)."""
        return self._reader().export(folder, split or self.default_split)

    # -- model in the loop (``vlbench predict``; from ``predict_module`` when set) ---------------------
    #: a module with ``items(data, kind)``, ``from_detections(item, detections)``, ``from_answer(item, text)``
    #: (see :mod:`vlbench.predict`)
    predict_module: ClassVar[str | None] = None
    #: the kinds of model that can answer this benchmark: "detector", "image-text-to-text"
    predict_kinds: ClassVar[tuple[str, ...]] = ()
    #: what an image-text-to-text answer is: "box" (one for the item's expression, parsed in the model family's
    #: convention), "boxes" (a detection answer: every labelled box it lists) or "text"; boxes reach the benchmark
    #: as :class:`Detections` (scored 1), text through ``entries_from_answer``
    answer_kind: ClassVar[str] = "text"

    def _predictor(self) -> Any:
        import importlib

        if not self.predict_module:
            raise UnsupportedError(f"{self.display_name} has no model runner", fix="write the predictions yourself")
        return importlib.import_module(self.predict_module)

    def predict_items(self, data: PredictData, kind: str) -> Any:
        """A built dataset's rows -> the :class:`PredictItem` of each unit of model work."""
        if kind not in self.predict_kinds:
            raise InputError(f"{self.display_name} cannot be answered by a model of kind {kind!r}",
                             fix="use a model of kind " + " or ".join(map(repr, self.predict_kinds)))
        return self._predictor().items(data, kind)

    def options_for_run(self, config: str | None, unanswered: int) -> dict[str, Any]:
        """Scoring options for a file ``vlbench run`` just wrote from ``config`` of the dataset, ``unanswered``
        items having no entry (e.g. an answer without a usable box)."""
        return {}

    def entries_from_detections(self, item: PredictItem, detections: Detections) -> list[Any]:
        """Boxes for ``item`` (a detector's, or the boxes of a text answer) -> official prediction entries."""
        return self._predictor().from_detections(item, detections)

    def entries_from_answer(self, item: PredictItem, answer: str) -> list[Any]:
        """A text answer (a caption) for ``item`` -> official prediction entries."""
        return self._predictor().from_answer(item, answer)

    # -- registration (eval.yaml, .eval_results) --------------------------------------------------
    def eval_tasks(self) -> list[EvalTask]:
        """The leaderboards of the Hub dataset, one per headline number."""
        return []

    def result_scope(self, result: Any) -> tuple[str | None, str | None]:
        """(config, split) of the Hub dataset a result was computed on."""
        return None, result.options.get("split")

    def check_leaderboard(self, result: Any) -> None:
        """Raise an :class:`InputError` with the fix when no leaderboard can take ``result`` (e.g. a merged split)."""

    def task_value(self, task: EvalTask, result: Any) -> float | None:
        """The number of ``task`` that ``result`` holds, or None."""
        config, split = self.result_scope(result)
        if task.split != split or task.requires or (config is not None and task.config not in (config, None)):
            return None
        return result.metrics.get(task.metric)

    # -- renderings (from ``views_module`` when set) ------------------------------------------------
    def _views(self) -> Any:
        import importlib

        return importlib.import_module(self.views_module) if self.views_module else None

    def text(self, result: Any) -> str | None:
        """A terminal layout of its own (e.g. a paper's table), or None for the generic one."""
        return self._views().text(result) if self.views_module else None

    def tables(self, result: Any) -> dict[str, Table]:
        """Breakdown tables beyond "all metrics", as (headers, rows)."""
        return self._views().tables(result) if self.views_module else {}

    def plots(self, result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
        """matplotlib figures; ``figure(**kwargs)`` makes a new one (object API, thread-safe)."""
        return self._views().plots(result, figure) if self.views_module else {}

    def scenes(self, references: Any, predictions: Any, result: Any) -> list[Scene]:
        """Every image of the sample viewer with its boxes per query (any order: callers sort by badness)."""
        return self._views().scenes(references, predictions, result) if self.views_module else []

    # -- the Space ---------------------------------------------------------------------------------
    def sample_references(self, subset: str) -> str:
        """Path of the bundled sample references for a Space choice."""
        raise UnsupportedError(f"{self.id} ships no sample")

    def example_predictions(self, quality: str, subset: str) -> str:
        """Path of a bundled example prediction file (or folder) for a Space choice."""
        raise UnsupportedError(f"{self.id} ships no example predictions")

    def space_options(self, subset: str) -> dict[str, Any]:
        """Options that a Space choice stands for (e.g. the split)."""
        return {}

    def space_check(self, predictions: Any) -> None:
        """Refuse (FormatError) parsed predictions whose scoring time the Space cannot bound though their size
        is within its upload limits (e.g. captions far longer than any real one); by default none."""

    def __repr__(self) -> str:
        return f"<Benchmark {self.id}>"
