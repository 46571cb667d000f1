"""Ref-L4 with a model in the loop: one item per referring expression; a detector's best box for the expression
(its only query), or a VLM's answer parsed in its family's box convention. Entries are the official
``{"id", "pred_bbox" (xyxy), "format": "xyxy"}``."""

from __future__ import annotations

from typing import Any, Iterator

from ...benchmark import Detections, PredictData, PredictItem

#: the grounding prompt (``{expression}`` filled in); the Ref-L4 release ships no inference prompt, so this is the
#: plain RefCOCO-style request, overridable with ``--prompt``
PROMPT = "Locate the object this expression refers to and give its bounding box: {expression}"


def items(data: PredictData, kind: str, prompt: str | None) -> Iterator[PredictItem]:
    """One item per expression (row), keyed by its id."""
    for row in data.rows:
        yield PredictItem(key=str(row["id"]), image=row.get("image"), queries=(row["caption"],),
                          prompt=(prompt or PROMPT).format(expression=row["caption"]), context={"id": row["id"]})


def from_detections(item: PredictItem, detections: Detections) -> list[dict[str, Any]]:
    """The top-scoring box (Ref-L4 scores one box per expression); none when the detector returned no box."""
    if not detections.scores:
        return []
    best = max(range(len(detections.scores)), key=detections.scores.__getitem__)
    return [{"id": item.context["id"], "pred_bbox": [float(v) for v in detections.boxes_xyxy[best]], "format": "xyxy"}]


def from_answer(item: PredictItem, box_xyxy: list[float]) -> list[dict[str, Any]]:
    """A parsed answer box."""
    return [{"id": item.context["id"], "pred_bbox": [float(v) for v in box_xyxy], "format": "xyxy"}]
