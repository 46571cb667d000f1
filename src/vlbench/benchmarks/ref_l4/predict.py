"""Ref-L4 with a model in the loop: one item per referring expression (its only query); a detector's
best box for it, or a VLM's one box (parsed in its family's convention by :mod:`vlbench.predict`).
Entries are the official ``{"id", "pred_bbox" (xyxy), "format": "xyxy"}``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..protocol.predicting import DetectorAnswer, PredictData, PredictItem

#: a detector (its best box), or an image-text-to-text model answering one box
kinds = ("detector", "image-text-to-text")
answer_kind = "box"


def options_for_run(config: str | None, unanswered: int) -> dict[str, Any]:
    """Expressions the model gave no usable box for are misses (the run counted and reported
    them)."""
    return {"missing": "miss"} if unanswered else {}


def items(data: PredictData, kind: str) -> Iterator[PredictItem]:
    """One item per expression (row), keyed by its id; the expression is the query (the release
    ships no inference prompt: each model family's grounding prompt is used, see
    :mod:`vlbench.predict.families`)."""
    for row in data.rows:
        yield PredictItem(key=str(row["id"]), image=row.get("image"), queries=(row["caption"],),
                          context={"id": row["id"]})


def from_detections(item: PredictItem, detections: DetectorAnswer) -> list[dict[str, Any]]:
    """The top-scoring box (Ref-L4 scores one box per expression); none when the model returned no
    box."""
    if not detections.scores:
        return []
    best = max(range(len(detections.scores)), key=detections.scores.__getitem__)
    return [{"id": item.context["id"], "pred_bbox": [float(v) for v in detections.boxes_xyxy[best]],
             "format": "xyxy"}]


def from_answer(item: PredictItem, text: str) -> list[dict[str, Any]]:
    """Not reached: Ref-L4 answers are boxes (``answer_kind`` "box", read by
    :func:`from_detections`)."""
    raise NotImplementedError
