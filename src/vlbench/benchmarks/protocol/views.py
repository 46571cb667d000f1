"""The views capability: how a benchmark's results and images are shown (terminal layout, tables,
plots, the sample viewer's scenes), and the types they are made of."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Views", "NoViews", "Scene", "Sample", "Table", "mark_boxes", "detection_badness",
           "SHOW_SCORE", "ALL_QUERIES"]

#: A breakdown table: column headers and rows.
Table = tuple[list[str], list[list[Any]]]


class Views(Protocol):
    """Renderings that read only a ``Result`` (and, for scenes, the records and parsed predictions).
    A benchmark's ``views`` module usually is one (a module with these four functions satisfies the
    protocol)."""

    def text(self, result: Any, /) -> str | None:
        """A terminal layout of its own (e.g. a paper's table), or None for the generic one."""
        ...

    def tables(self, result: Any, /) -> dict[str, Table]:
        """Breakdown tables beyond "all metrics", as (headers, rows)."""
        ...

    def plots(self, result: Any, figure: Callable[..., Any], /) -> dict[str, Any]:
        """matplotlib figures; ``figure(**kwargs)`` makes a new one (object API, thread-safe)."""
        ...

    def scenes(self, references: Any, predictions: Any, result: Any, /) -> list[Scene]:
        """Every image of the sample viewer with its boxes per query (any order: callers sort by
        badness)."""
        ...


@dataclass(frozen=True)
class Sample:
    """One sample to show: an image (by file name), boxes as (xywh in pixels, label, kind) and a
    caption.

    ``kind`` is ``"gt"``, ``"match"``, ``"miss"`` or ``"fp"``; a benchmark without boxes leaves them
    empty.
    """

    image: str | None
    caption: str
    boxes: list[tuple[list[float], str, str]] = field(default_factory=list)


def mark_boxes(
    gt: list[tuple[list[float], str]],
    predicted: list[tuple[list[float], str]],
    iou_threshold: float = 0.5,
    *,
    gt_queries: Sequence[Collection[str]] | None = None,
    pred_queries: Sequence[str] | None = None,
    other_gt: Sequence[list[float]] = (),
    negatives: Collection[str] = frozenset(),
) -> tuple[list[tuple[list[float], str, str]], int]:
    """Boxes (xywh) of one image for display, and the number of misses plus erroneous predictions.
    With the queries (each GT box's, each prediction's), a prediction matches only a GT box of its
    own query at IoU >= ``iou_threshold``, as the benchmarks' matching does: GT ``gt`` (found) /
    ``miss``; a prediction ``match``, else ``negative`` (on an object, GT shown or ``other_gt``,
    named with one of the image's ``negatives``: a hard negative), ``wrong_label`` (on an object
    named with another label) or ``fp``. Without queries, any GT box matches. A picture of the
    matching, not the metric (no ranking: a box may match a GT another box also matches)."""
    import numpy as np

    from ...engine.geometry import iou_matrix_xywh

    def over(boxes: Sequence[list[float]]) -> Any:
        return (
            iou_matrix_xywh([b for b, _ in predicted], list(boxes)) >= iou_threshold
            if boxes and predicted
            else np.zeros((len(predicted), len(boxes)), dtype=bool)
        )

    close = over([b for b, _ in gt])
    if gt_queries is not None and pred_queries is not None:
        # (prediction, GT) pairs of one query: one membership test per pair replaces a label loop
        # per prediction
        close &= np.asarray(
            [[q in qs for qs in gt_queries] for q in pred_queries], dtype=bool
        ).reshape(close.shape)
    found, hit = close.any(axis=0), close.any(axis=1)
    on_object = ~hit & (over([b for b, _ in gt]).any(axis=1) | over(list(other_gt)).any(axis=1))
    queries = pred_queries if pred_queries is not None else [""] * len(predicted)
    kinds = ["match" if h else ("negative" if q in negatives else "wrong_label") if o else "fp"
             for h, o, q in zip(hit.tolist(), on_object.tolist(), queries)]
    boxes = [(b, label, "gt" if ok else "miss") for (b, label), ok in zip(gt, found)]
    boxes += [(b, label, kind) for (b, label), kind in zip(predicted, kinds)]
    return boxes, int((~found).sum() + (~hit).sum())


#: the default score threshold of a drawn sample (the viewer's slider starts there)
SHOW_SCORE = 0.3
#: the "query" choice that shows every box of an image
ALL_QUERIES = "all"


@dataclass(frozen=True)
class Scene:
    """One image of the sample viewer: each GT and predicted box (xywh pixels) with its query (the
    description, category or expression it answers), and the text to show beside it (e.g. a caption
    and its references).

    ``badness`` orders the viewer (worst first); a predicted box's score is None for formats without
    scores.
    """

    image: str | None
    title: str
    badness: float
    gt: list[tuple[list[float], str]] = field(default_factory=list)
    predicted: list[tuple[list[float], str, float | None]] = field(default_factory=list)
    text: str = ""
    #: the ids an analysis' examples name this scene by (its image id, or the ids of the rows it
    #: shows)
    keys: tuple[Any, ...] = ()
    #: the queries that are negatives of this image (OVDEval's neg_text, OmniLabel's negative
    #: descriptions): a box named so on an object is drawn as a hard negative, never as a match
    negatives: frozenset[str] = frozenset()
    #: predicted boxes (xywh, as tuples) the benchmark's own step removed before scoring (a
    #: suppression): drawn as ``suppressed``, neither matches nor errors
    removed: frozenset[tuple[float, ...]] = frozenset()

    def queries(self) -> list[str]:
        """The queries of this image, in first-seen order."""
        return list(dict.fromkeys([q for _, q in self.gt] + [q for _, q, _ in self.predicted]))

    def boxes(self, query: str = ALL_QUERIES,
              threshold: float = SHOW_SCORE) -> tuple[list[tuple[list[float], str, str]], int]:
        """The boxes to draw for one query (or all), predictions scoring below ``threshold`` left
        out, marked as :func:`mark_boxes` does; with all queries a box is drawn once (GT: its first
        two queries; prediction: the query it scores highest for)."""
        every = query == ALL_QUERIES
        gt: dict[tuple[float, ...], list[str]] = {}
        for box, q in self.gt:
            if every or q == query:
                gt.setdefault(tuple(box), []).append(q)
        best: dict[tuple[float, ...], tuple[float, str]] = {}
        for box, q, score in self.predicted:
            value = 1.0 if score is None else score
            if (
                (every or q == query)
                and value >= threshold
                and value > best.get(tuple(box), (-1.0, ""))[0]
            ):
                best[tuple(box)] = (value, q)
        gt_boxes = [(list(b), " / ".join(q[:2]) if every else "GT") for b, q in gt.items()]
        scored = any(score is not None for _, _, score in self.predicted)

        def shown(boxes: dict[tuple[float, ...], tuple[float, str]]) -> list[tuple[list[float],
                                                                                   str]]:
            return [
                (
                    list(b),
                    " ".join(
                        ([q] if every else [])
                        + ([f"{s:.2f}"] if scored else [] if every else ["prediction"])
                    ),
                )
                for b, (s, q) in boxes.items()
            ]

        kept = {b: v for b, v in best.items() if b not in self.removed}
        # the objects of other queries
        other = [box for box, q in self.gt if not every and q != query]
        marked, errors = mark_boxes(gt_boxes, shown(kept), gt_queries=list(gt.values()),
                                    pred_queries=[q for _, q in kept.values()], other_gt=other,
                                    negatives=self.negatives)
        removed = {b: v for b, v in best.items() if b in self.removed}
        return marked + [(b, label, "suppressed") for b, label in shown(removed)], errors

    def sample(self, query: str = ALL_QUERIES, threshold: float = SHOW_SCORE) -> Sample:
        """This scene as one drawable :class:`Sample`."""
        caption = self.title + (f" | {self.text}" if self.text else "")
        return Sample(image=self.image, caption=caption, boxes=self.boxes(query, threshold)[0])


def detection_badness(gt: list[tuple[list[float], str]],
                      predicted: list[tuple[list[float], str, float | None]],
                      threshold: float = SHOW_SCORE,
                      removed: frozenset[tuple[float, ...]] = frozenset()) -> int:
    """Missed plus spurious boxes of one image, query by query, predictions at or above
    ``threshold`` (those in ``removed`` left out, as the scorer leaves them out)."""
    scene = Scene(image=None, title="", badness=0.0, gt=gt, predicted=predicted, removed=removed)
    return sum(scene.boxes(q, threshold)[1] for q in scene.queries())


class NoViews:
    """The views of a benchmark that has none of its own: the generic layout, no tables, plots or
    scenes."""

    def text(self, result: Any, /) -> str | None:
        """None: the generic layout."""
        return None

    def tables(self, result: Any, /) -> dict[str, Table]:
        """No breakdown tables."""
        return {}

    def plots(self, result: Any, figure: Callable[..., Any], /) -> dict[str, Any]:
        """No plots."""
        return {}

    def scenes(self, references: Any, predictions: Any, result: Any, /) -> list[Scene]:
        """No sample viewer."""
        return []
