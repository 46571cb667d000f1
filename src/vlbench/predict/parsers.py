"""Boxes out of a VLM's answer text, in each model family's own coordinate convention -> xyxy pixels of the image.

A mismatch of conventions does not fail loudly: it gives boxes in the wrong place and near-zero IoU. So each family's
convention is named, chosen from the model's ``model_type`` (overridable with ``--box-format``), and an answer that
holds no box, or a box outside the image, is a :class:`ParseFailure` the caller counts and reports, never a silent
``[0, 0, 0, 0]``.

Conventions (from the families' model cards and processors):

- ``pixel-resized`` (Qwen2.5-VL): ``[x1, y1, x2, y2]`` in pixels of the *resized* model input (the processor's
  smart resize), usually as JSON ``[{"bbox_2d": [...], "label": ...}]``; scaled by original / input size.
- ``grid-1000`` (Qwen3-VL, and Qwen2-VL's ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>``): a 0..1000 grid of the image.
- ``loc-1000`` (Florence-2): ``<loc_x1><loc_y1><loc_x2><loc_y2>``, bins 0..999, a bin's centre ((b + 0.5) / 1000).
- ``loc-1024`` (PaliGemma): ``<locY1><locX1><locY2><locX2>`` (four digits each, y first), bins 0..1023, b / 1024.
- ``normalized`` (many LLaVA-style models): ``[x1, y1, x2, y2]`` as fractions 0..1 of the image.
- ``pixel``: ``[x1, y1, x2, y2]`` in pixels of the original image.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["BOX_FORMATS", "ParseFailure", "box_format_for", "parse_box", "parse_labelled_boxes"]

#: box convention -> what it is, for ``--box-format`` help and errors
BOX_FORMATS = {
    "pixel-resized": "pixels of the resized model input (Qwen2.5-VL)",
    "grid-1000": "a 0..1000 grid of the image (Qwen3-VL, Qwen2-VL)",
    "loc-1000": "<loc_N> tokens, 1000 bins, x first (Florence-2)",
    "loc-1024": "<locNNNN> tokens, 1024 bins, y first (PaliGemma)",
    "normalized": "fractions 0..1 of the image",
    "pixel": "pixels of the original image",
}

#: ``config.model_type`` -> the family's box convention
_FAMILY = {"qwen2_5_vl": "pixel-resized", "qwen3_vl": "grid-1000", "qwen3_vl_moe": "grid-1000",
           "qwen2_vl": "grid-1000", "florence2": "loc-1000", "paligemma": "loc-1024"}

#: how far (in pixels) a box may reach beyond the image before it counts as outside (rounding of the conventions)
TOLERANCE = 2.0

_NUMBER = r"-?\d+(?:\.\d+)?"
_FOUR = re.compile(rf"({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})")
_PAIRS = re.compile(rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,?\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)")
_LOC_1000 = re.compile(r"<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>")
_LOC_1024 = re.compile(r"<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>")


class ParseFailure(Exception):
    """An answer that gives no usable box: why, and the answer itself (kept for the report)."""

    def __init__(self, reason: str, answer: str) -> None:
        super().__init__(reason)
        self.reason, self.answer = reason, answer

    def __str__(self) -> str:
        return f"{self.reason}: {self.answer[:120]!r}"


def box_format_for(model_type: str | None, override: str | None = None) -> str:
    """The box convention of a model family (``override`` wins); an unknown family must be told which."""
    from ..errors import InputError

    chosen = override or _FAMILY.get((model_type or "").lower())
    if chosen is None:
        raise InputError(f"no known box convention for model type {model_type!r}",
                         fix="pass --box-format, one of: " + ", ".join(f"{k} ({v})" for k, v in BOX_FORMATS.items()))
    if chosen not in BOX_FORMATS:
        raise InputError(f"unknown box format {chosen!r}", fix="use one of " + ", ".join(BOX_FORMATS))
    return chosen


def _json_boxes(answer: str) -> list[tuple[list[float], str | None]] | None:
    """Every ``{"bbox_2d" | "bbox": [4 numbers], "label": ...}`` of a JSON answer (fenced or bare); None if not JSON."""
    text = re.sub(r"^```(?:json)?|```$", "", answer.strip(), flags=re.M).strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    out = []
    for item in data if isinstance(data, list) else [data]:
        box = item.get("bbox_2d", item.get("bbox")) if isinstance(item, dict) else None
        if isinstance(box, list) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box):
            label = item.get("label")
            out.append(([float(v) for v in box], str(label) if label is not None else None))
    return out


_LOC_1000_LABELLED = re.compile(r"([^<>]*?)\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>")
_LOC_1024_LABELLED = re.compile(r"<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>\s*([^<;]*)")


def _raw_labelled_boxes(answer: str, box_format: str) -> list[tuple[list[float], str | None]]:
    """Every (box in the convention's units, x1 y1 x2 y2; its label or None) of an answer listing several."""
    if box_format == "loc-1000":       # Florence-2: "label<loc_x1><loc_y1><loc_x2><loc_y2>label2<loc_...>..."
        return [([(int(v) + 0.5) / 1000 for v in m.groups()[1:]], _label(m.group(1)))
                for m in _LOC_1000_LABELLED.finditer(answer.replace("</s>", "").replace("<s>", ""))]
    if box_format == "loc-1024":       # PaliGemma: "<locY1><locX1><locY2><locX2> label ; ..."
        out = []
        for m in _LOC_1024_LABELLED.finditer(answer):
            y1, x1, y2, x2 = (int(v) / 1024 for v in m.groups()[:4])
            out.append(([x1, y1, x2, y2], _label(m.group(5))))
        return out
    boxes = _json_boxes(answer)
    if boxes is not None:
        return boxes
    return [([float(v) for v in m.groups()], None) for m in (_PAIRS.finditer(answer) if _PAIRS.search(answer)
                                                             else _FOUR.finditer(answer))]


def _label(text: str) -> str | None:
    text = text.strip(" ;,.:\n\t")
    return text or None


def _to_pixels(box: list[float], box_format: str, image_size: tuple[int, int], input_size: tuple[int, int] | None,
               answer: str) -> list[float]:
    """A box in the convention's units -> xyxy pixels of the image; an empty, inverted or outside box fails."""
    width, height = image_size
    x1, y1, x2, y2 = box
    if box_format == "pixel-resized":
        if not input_size:
            raise ParseFailure("pixel-resized boxes need the model input's size", answer)
        sx, sy = width / input_size[0], height / input_size[1]
    elif box_format == "grid-1000":
        sx, sy = width / 1000, height / 1000
    elif box_format in ("loc-1000", "loc-1024", "normalized"):
        sx, sy = width, height
    else:
        sx, sy = 1.0, 1.0
    out = [x1 * sx, y1 * sy, x2 * sx, y2 * sy]
    if not (out[2] > out[0] and out[3] > out[1]):
        raise ParseFailure("an empty or inverted box", answer)
    if out[0] < -TOLERANCE or out[1] < -TOLERANCE or out[2] > width + TOLERANCE or out[3] > height + TOLERANCE:
        raise ParseFailure(f"a box outside the {width}x{height} image ({', '.join(f'{v:.0f}' for v in out)})", answer)
    return out


def parse_labelled_boxes(answer: str, box_format: str, image_size: tuple[int, int],
                         input_size: tuple[int, int] | None = None
                         ) -> tuple[list[tuple[list[float], str | None]], list[ParseFailure]]:
    """Every box of an answer listing several (a detection answer) as (xyxy pixels, label or None), and a failure
    for each box that cannot be used (empty, inverted, outside the image); an answer with no box at all fails."""
    raw = _raw_labelled_boxes(answer, box_format)
    if not raw:
        if _json_boxes(answer) == [] and answer.strip().strip("`").removeprefix("json").strip().startswith("["):
            return [], []                       # "[]": the model found nothing, a valid answer
        raise ParseFailure(f"no box in the {box_format} convention", answer)
    boxes, failures = [], []
    for box, label in raw:
        try:
            boxes.append((_to_pixels(box, box_format, image_size, input_size, answer), label))
        except ParseFailure as failure:
            failures.append(failure)
    return boxes, failures


def _raw_box(answer: str, box_format: str) -> list[float]:
    """The first box of the answer, in the convention's own units, x1 y1 x2 y2."""
    if box_format == "loc-1000":
        m = _LOC_1000.search(answer)
        if m:
            return [(int(v) + 0.5) / 1000 for v in m.groups()]
    elif box_format == "loc-1024":
        m = _LOC_1024.search(answer)
        if m:
            y1, x1, y2, x2 = (int(v) / 1024 for v in m.groups())
            return [x1, y1, x2, y2]
    else:
        boxes = _json_boxes(answer)
        if boxes:
            return boxes[0][0]
        m = _PAIRS.search(answer) or _FOUR.search(answer)
        if m:
            return [float(v) for v in m.groups()]
    raise ParseFailure(f"no box in the {box_format} convention", answer)


def parse_box(answer: str, box_format: str, image_size: tuple[int, int],
              input_size: tuple[int, int] | None = None) -> list[float]:
    """The first box of a VLM answer as xyxy pixels of the image (``image_size`` = (width, height));
    ``input_size`` is the resized model input's (width, height), needed by ``pixel-resized``."""
    return _to_pixels(_raw_box(answer, box_format), box_format, image_size, input_size, answer)
