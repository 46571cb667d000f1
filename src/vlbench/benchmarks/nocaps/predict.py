"""nocaps with a model in the loop: one caption per image from an image-text-to-text model. Entries
are the official ``{"image_id", "caption"}``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..protocol.predicting import PredictData, PredictItem

#: an image-text-to-text model answering a caption
kinds = ("image-text-to-text",)
answer_kind = "text"


def options_for_run(config: str | None, unanswered: int) -> dict[str, Any]:
    """Images a run did not caption (``--limit``) are scored as empty captions (the run counted
    them)."""
    return {"missing": "empty"} if unanswered else {}


def items(data: PredictData, kind: str) -> Iterator[PredictItem]:
    """One item per image (each model family's captioning prompt is used, see
    :mod:`vlbench.predict.families`)."""
    for row in data.rows:
        yield PredictItem(key=str(row["image_id"]), image=row.get("image"),
                          context={"image_id": row["image_id"]})


def from_detections(item: PredictItem, detections: Any) -> list[dict[str, Any]]:
    """Not reached: nocaps takes image-text-to-text models only (``predict_kinds``)."""
    raise NotImplementedError


def from_answer(item: PredictItem, text: str) -> list[dict[str, Any]]:
    """The caption exactly as the model wrote it (an answer of only blanks: the empty caption):
    spaces and newlines change no token (the toolkit turns a newline into a space), and a CR,
    U+2028, U+2029, VT or FF is scored as the official toolkit scores it (it shifts the later
    captions, which the score's warning names; `--protocol corrected` replaces them). Trimming would
    not be neutral: a caption ending "\r\n" shifts the others, the same caption cut to end "\r" does
    not."""
    return [{"image_id": item.context["image_id"],
             "caption": str(text) if str(text).strip() else ""}]
