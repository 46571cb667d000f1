"""OVDEval with a model in the loop: one item per image of a sub-dataset, its positive labels and
hard negatives (``text`` + ``neg_text``) as the queries, as the official evaluation prompts the
detector; an image-text-to-text model is asked to list the boxes of those labels
(:mod:`vlbench.predict` reads them as detections, each scored by the model's probabilities of the
tokens that wrote it: :mod:`vlbench.predict.confidence`). Entries are COCO results ``{"image_id",
"category_id", "bbox" (xywh), "score"}``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..protocol.predicting import DetectorAnswer, PredictData, PredictItem

#: a detector, or an image-text-to-text model listing labelled boxes
kinds = ("detector", "image-text-to-text")
answer_kind = "boxes"


def options_for_run(config: str | None, unanswered: int) -> dict[str, Any]:
    """A run over one sub-dataset's config is scored as that sub-dataset."""
    return {"sub_dataset": config} if config and config != "all" else {}


def items(data: PredictData, kind: str) -> Iterator[PredictItem]:
    """One item per image; each query maps to the category id of that name in its sub-dataset's
    category list (kept in the built folder's card: rows name only the categories of their
    boxes)."""
    from ...engine.errors import InputError
    from .reader import sub_dataset_header

    if data.folder is None:
        raise InputError("OVDEval needs the built dataset folder (its card lists each "
                         "sub-dataset's categories)",
                         fix="pass --data <folder written by 'vlbench build ovdeval'>")
    categories: dict[str, dict[str, int]] = {}
    for row in data.rows:
        sub: str = row.get("sub_dataset") or data.config or ""
        if sub not in categories:
            categories[sub] = {
                str(c["name"]): int(c["id"])
                for c in sub_dataset_header(data.folder, sub)["categories"]
            }
        names = [n for n in dict.fromkeys((row.get("text") or []) + (row.get("neg_text") or []))
                 if n in categories[sub]]
        yield PredictItem(key=f"{sub}/{row['image_id']}", image=row.get("image"),
                          queries=tuple(names), context={"image_id": row["image_id"], "part": sub,
                                   "category_ids": [categories[sub][n] for n in names]})


def from_detections(item: PredictItem, detections: DetectorAnswer) -> list[dict[str, Any]]:
    """Each box under the category of the query it answers."""
    cats = item.context["category_ids"]
    return [{"image_id": item.context["image_id"], "category_id": cats[q],
             "bbox": [x0, y0, x1 - x0, y1 - y0], "score": float(s)}
            for (x0, y0, x1, y1), s,
            q in zip(detections.boxes_xyxy, detections.scores, detections.query)]


def from_answer(item: PredictItem, text: str) -> list[dict[str, Any]]:
    """Not reached: OVDEval answers are labelled boxes (``answer_kind`` "boxes", read by
    :func:`from_detections`)."""
    raise NotImplementedError
