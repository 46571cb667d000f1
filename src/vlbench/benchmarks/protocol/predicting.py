"""The predict capability: what ``vlbench predict`` asks a model about each row of a built dataset,
and how the answers become official prediction entries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Predictor", "PredictItem", "PredictData", "DetectorAnswer"]


@dataclass(frozen=True)
class PredictItem:
    """One unit of model work for ``vlbench predict``: an image and what to ask about it.

    ``key`` names the item in a resumable run; ``queries`` are what is asked: a detector's text
    queries, the expression of a one-box answer, the labels of a detection answer (an
    image-text-to-text model's prompt is built from them by its family's preset,
    :mod:`vlbench.predict.families`); ``context`` holds the ids the official entries need.
    """

    key: str
    image: Any
    queries: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PredictData:
    """What ``vlbench predict`` reads: the rows of one config and split of a built dataset, and the
    folder (its card holds what rows do not, e.g. a sub-dataset's full category list); ``folder`` is
    None for a dataset given as rows."""

    rows: Any
    folder: Any = None
    config: str | None = None


@dataclass(frozen=True)
class DetectorAnswer:
    """A detector's answer for one item: boxes as xyxy pixels, their scores, and the query each
    answers."""

    boxes_xyxy: list[list[float]]
    scores: list[float]
    query: list[int]


class Predictor(Protocol):
    """A benchmark's side of ``vlbench predict`` / ``run`` (the generic loop,
    :mod:`vlbench.predict`, names no benchmark). A benchmark's ``predict`` module usually is one (a
    module with these members satisfies the protocol).

    ``kinds``: the kinds of model that can answer ("detector", "image-text-to-text").
    ``answer_kind``: what an image-text-to-text answer is: "box" (one for the item's expression,
    parsed in the model family's convention), "boxes" (every labelled box it lists) or "text"; boxes
    reach the benchmark as :class:`DetectorAnswer` (scored from the model's token probabilities,
    :mod:`vlbench.predict.confidence`), text through ``from_answer``.
    """

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of model that can answer."""
        ...

    @property
    def answer_kind(self) -> str:
        """What an image-text-to-text answer is: "box", "boxes" or "text"."""
        ...

    def items(self, data: PredictData, kind: str, /) -> Iterable[PredictItem]:
        """A built dataset's rows -> the :class:`PredictItem` of each unit of model work."""
        ...

    def from_detections(self, item: PredictItem, detections: DetectorAnswer, /) -> list[Any]:
        """Boxes for ``item`` (a detector's, or the boxes of a text answer) -> official prediction
        entries."""
        ...

    def from_answer(self, item: PredictItem, answer: str, /) -> list[Any]:
        """A text answer (a caption) for ``item`` -> official prediction entries."""
        ...

    def options_for_run(self, config: str | None, unanswered: int, /) -> dict[str, Any]:
        """Scoring options for a file ``vlbench run`` just wrote from ``config`` of the dataset,
        ``unanswered`` items having no entry (e.g. an answer without a usable box)."""
        ...
