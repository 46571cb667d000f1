"""OmniLabel with a detector in the loop: one item per image, its whole label space (object
categories and free-form descriptions, positive and negative) as the text queries. Entries are the
official ``{"image_id", "bbox" (xywh), "description_ids", "scores"}``, one per detected box."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..protocol.predicting import DetectorAnswer, PredictData, PredictItem

#: detectors only (a label space of free-form descriptions per image)
kinds = ("detector",)
answer_kind = "text"


def options_for_run(config: str | None, unanswered: int) -> dict[str, Any]:
    """No option: every image of the run is scored."""
    return {}


def items(data: PredictData, kind: str) -> Iterator[PredictItem]:
    """One item per image; the queries are the label space's texts, in its order."""
    for row in data.rows:
        space = row["labelspace"]
        yield PredictItem(key=str(row["image_id"]), image=row["image"],
                          queries=tuple(d["text"] for d in space),
                          context={"image_id": row["image_id"],
                                   "description_ids": [d["id"] for d in space]})


def from_detections(item: PredictItem, detections: DetectorAnswer) -> list[dict[str, Any]]:
    """Each box with the description it answers and its score (a box found for several queries is
    listed once per query, as the format allows)."""
    ids = item.context["description_ids"]
    return [{"image_id": item.context["image_id"], "bbox": [x0, y0, x1 - x0, y1 - y0],
             "description_ids": [ids[q]], "scores": [float(s)]}
            for (x0, y0, x1, y1), s,
            q in zip(detections.boxes_xyxy, detections.scores, detections.query)]


def from_answer(item: PredictItem, answer: Any) -> list[dict[str, Any]]:
    """Not reached: OmniLabel takes detectors only (``predict_kinds``)."""
    raise NotImplementedError
