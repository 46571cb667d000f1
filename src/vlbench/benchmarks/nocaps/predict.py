"""nocaps with a model in the loop: one caption per image from an image-text-to-text model. Entries are the
official ``{"image_id", "caption"}``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..protocol.predicting import PredictData, PredictItem

#: an image-text-to-text model answering a caption
kinds = ("image-text-to-text",)
answer_kind = "text"


def options_for_run(config: str | None, unanswered: int) -> dict[str, Any]:
    """Images a run did not caption (``--limit``) are scored as empty captions (the run counted them)."""
    return {"missing": "empty"} if unanswered else {}


def items(data: PredictData, kind: str) -> Iterator[PredictItem]:
    """One item per image (each model family's captioning prompt is used, see :mod:`vlbench.predict.families`)."""
    for row in data.rows:
        yield PredictItem(key=str(row["image_id"]), image=row.get("image"), context={"image_id": row["image_id"]})


def from_detections(item: PredictItem, detections: Any) -> list[dict[str, Any]]:
    """Not reached: nocaps takes image-text-to-text models only (``predict_kinds``)."""
    raise NotImplementedError


def from_answer(item: PredictItem, text: str) -> list[dict[str, Any]]:
    """The caption, on one line (the toolkit's tokenizer would split a caption at a line break)."""
    return [{"image_id": item.context["image_id"], "caption": " ".join(str(text).split())}]
