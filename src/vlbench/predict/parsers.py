"""Boxes out of a VLM's answer text, in each model family's own coordinate convention -> xyxy pixels
of the image.

A mismatch of conventions does not fail loudly: it gives boxes in the wrong place and near-zero IoU.
So each family's convention is named (:mod:`vlbench.predict.families` picks it from the model's
``model_type``; ``--box-format`` overrides), and an answer that holds no box, or a box outside the
image, is a :class:`ParseFailure` the caller counts and reports, never a silent ``[0, 0, 0, 0]``.

Conventions (from the families' model cards, processors and reference code):

- ``pixel``: ``[x1, y1, x2, y2]`` in pixels of the original image.
- ``pixel-resized`` (Qwen2.5-VL): pixels of the *resized* model input (the processor's smart
  resize); scaled by original / input size.
- ``normalized``: fractions 0..1 of the image.
- ``normalized-square`` (LLaVA-1.5): fractions 0..1 of the image padded to a centred square
  (``expand2square``): ``x = v * S - (S - W) / 2`` with ``S = max(W, H)``.
- ``normalized-crop-E[-CWxCH]`` (LLaVA-1.5 checkpoints whose image processor centre-crops, as the
  HF-format ones on the Hub do: ``do_center_crop`` without ``do_pad``): fractions 0..1 of the crop
  the model saw, read with the processor's own integer geometry: the short side resized to ``E`` and
  the long one to ``int(E * long / short)`` (``get_resize_output_image_size``), a ``CW`` x ``CH``
  crop (default ``E`` x ``E``) at the offset ``int((resized - crop) / 2)`` (``center_crop``), so ``x
  = (v * CW + left) * W / W_resized``. Plain ``normalized-crop`` (processor unknown) is the
  continuous approximation ``x = v * S + (W - S) / 2``, ``S = min(W, H)``, up to ~3 px off.
- ``grid-1000`` (Qwen2-VL ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>``, Qwen3-VL / Qwen3.5 JSON,
  InternVL ``<box>[[...]]</box>``, GLM-4.1V ``<|begin_of_box|>...``): a 0..1000 grid, ``v / 1000``.
- ``grid-999`` (DeepSeek-VL2 ``<|det|>[[...]]<|/det|>``): a 0..999 grid, ``v / 999``.
- ``grid-1000-yx`` (Gemini's ``box_2d``): ``[y1, x1, y2, x2]`` on a 0..1000 grid.
- ``loc-1000`` (Florence-2): ``<loc_x1><loc_y1><loc_x2><loc_y2>``, 1000 bins, a bin's centre ``(b +
  0.5) / 1000``.
- ``loc-1024`` (PaliGemma): ``<locY1><locX1><locY2><locX2>`` (four digits, y first), ``b / 1023``:
  big_vision encodes ``round(v * 1023)`` and decodes ``b / 1023``
  (``pp/proj/paligemma/segmentation.py``).
- ``patch-32`` (Kosmos-2): ``<patch_index_UL><patch_index_LR>`` cells of a 32x32 grid, decoded as
  the processor's ``post_process_generation`` does (cell centres; whole cells when the corners share
  a row or column).

Labels (a detection answer) come from JSON ``"label"``, the family's reference tags (``<ref>``,
``<|object_ref_start|>``, ``<|ref|>``, ``<phrase>``), the text before a box (Florence-2) or after it
up to ``;`` (PaliGemma); boxes written one after another under one label share it.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

__all__ = ["BOX_FORMATS", "ParseFailure", "LabelledBox", "check_box_format", "parse_box",
           "parse_labelled_boxes", "label_index", "reaches_outside", "TRUNCATED", "crop_format",
           "crop_window", "box_format_argument"]

#: box convention -> what it is, for ``--box-format`` help and errors
BOX_FORMATS = {
    "pixel": "pixels of the original image",
    "pixel-resized": "pixels of the resized model input (Qwen2.5-VL)",
    "normalized": "fractions 0..1 of the image",
    "normalized-square": "fractions 0..1 of the image padded to a centred square (LLaVA-1.5)",
    "normalized-crop": "fractions 0..1 of the image's centred square crop, processor unknown "
                       "(LLaVA-1.5 with a centre-cropping processor; normalized-crop-E[-CWxCH] "
                       "gives its resize edge and crop)",
    "grid-1000": "a 0..1000 grid of the image (Qwen2-VL, Qwen3-VL, Qwen3.5, InternVL, GLM-4.1V)",
    "grid-999": "a 0..999 grid of the image (DeepSeek-VL2)",
    "grid-1000-yx": "y first, a 0..1000 grid (Gemini's box_2d)",
    "loc-1000": "<loc_N> tokens, 1000 bins, x first (Florence-2)",
    "loc-1024": "<locNNNN> tokens, y first, b / 1023 (PaliGemma)",
    "patch-32": "<patch_index_NNNN> pairs of a 32x32 grid (Kosmos-2)",
}

#: the failure reason of an answer cut off at the answer length (its complete entries are kept)
TRUNCATED = "truncated answer (raise --max-new-tokens)"

#: how far (in pixels) a box may reach beyond the image before it counts as outside (rounding of the
#: conventions)
TOLERANCE = 2.0

_NUMBER = r"-?\d+(?:\.\d+)?"
_FOUR = re.compile(rf"({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})")
_PAIRS = re.compile(
    rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,?\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)"
)
_TOKENS = {
    "loc-1000": re.compile(
        r"<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>\s*<loc_(\d{1,3})>"
    ),
    "loc-1024": re.compile(r"<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>\s*<loc(\d{4})>"),
    "patch-32": re.compile(r"<patch_index_(\d{4})>\s*<patch_index_(\d{4})>"),
}
#: the start of a box token of each token convention (a cut-off answer ends inside one)
_TOKEN_START = {"loc-1000": "<loc_", "loc-1024": "<loc", "patch-32": "<patch_index_"}
#: reference tags that name the object of the box after them
_REF = re.compile(
    r"<ref>(.*?)</ref>|<\|object_ref_start\|>(.*?)<\|object_ref_end\|>|<\|ref\|>(.*?)<\|/ref\|>"
    r"|<phrase>(.*?)</phrase>",
    re.S,
)
_TAG = re.compile(r"<[^<>]*>")
_BOX_KEYS = ("bbox_2d", "bbox", "box_2d", "box")


class LabelledBox(NamedTuple):
    """One box of an answer: xyxy pixels, its label (None when the answer gives none) and ``span``,
    the (start, end) characters of the answer that write it: its coordinates and its label (for a
    score from those tokens)."""

    xyxy: list[float]
    label: str | None
    span: tuple[int, int]


#: a box as written: its values in the convention's units, its label, its (start, end) in the answer
_Raw = tuple[list[float], str | None, tuple[int, int]]


class ParseFailure(Exception):
    """An answer that gives no usable box: why, and the answer itself (kept for the report)."""

    def __init__(self, reason: str, answer: str) -> None:
        super().__init__(reason)
        self.reason, self.answer = reason, answer

    def __str__(self) -> str:
        return f"{self.reason}: {self.answer[:120]!r}"


#: ``normalized-crop-E[-CWxCH]``: a centre-cropping processor's resize edge and crop size (CW x CH,
#: default E x E)
_CROP = re.compile(r"normalized-crop-([1-9]\d{0,4})(?:-([1-9]\d{0,4})x([1-9]\d{0,4}))?")


def crop_format(shortest_edge: int, crop_width: int, crop_height: int) -> str:
    """The ``normalized-crop-E[-CWxCH]`` name of a processor that resizes the short side to
    ``shortest_edge`` and centre-crops ``crop_width`` x ``crop_height``."""
    same = crop_width == crop_height == shortest_edge
    return f"normalized-crop-{shortest_edge}" + ("" if same else f"-{crop_width}x{crop_height}")


def _crop_geometry(box_format: str) -> tuple[int, int, int] | None:
    """(resize edge, crop width, crop height) of a ``normalized-crop-E[-CWxCH]`` name; None for any
    other."""
    match = _CROP.fullmatch(box_format)
    if not match:
        return None
    edge = int(match.group(1))
    return edge, int(match.group(2) or edge), int(match.group(3) or edge)


def crop_window(image_size: tuple[int, int], geometry: tuple[int, int, int]) -> tuple[int, int, int,
                                                                                      int]:
    """(left, top, resized width, resized height) of the crop a CLIP-style processor takes: the
    short side resized to the edge and the long side truncated (transformers'
    ``get_resize_output_image_size``), then the crop at the integer offset ``center_crop`` computes
    (negative: the processor pads)."""
    width, height = image_size
    edge, crop_width, crop_height = geometry
    if width <= height:
        resized = (edge, int(edge * height / width))
    else:
        resized = (int(edge * width / height), edge)
    left, top = ((r - c) // 2 if r >= c else -((c - r) // 2)
                 for r, c in zip(resized, (crop_width, crop_height)))
    return left, top, resized[0], resized[1]


def check_box_format(box_format: str) -> str:
    """``box_format`` if it is a known convention, else a clear error listing them."""
    from ..engine.errors import InputError

    if box_format not in BOX_FORMATS and _crop_geometry(box_format) is None:
        raise InputError(f"unknown box format {box_format!r}",
                         fix="use one of: " + ", ".join(f"{k} ({v})" for k,
                                                        v in BOX_FORMATS.items()))
    return box_format


def box_format_argument(value: str) -> str:
    """:func:`check_box_format` as argparse's ``type=``: an unknown name is a usage error listing
    the known ones."""
    import argparse

    from ..engine.errors import InputError

    try:
        return check_box_format(value)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def label_index(label: str | None, queries: tuple[str, ...] | list[str]) -> int | None:
    """The query a listed label names, compared without case, surrounding quotes or punctuation, and
    with runs of spaces as one ("Red  car." names "red car"); None when it names none."""
    if label is None:
        return None
    key = _label_key(label)
    for n, query in enumerate(queries):
        if _label_key(query) == key:
            return n
    return None


def _label_key(text: str) -> str:
    return " ".join(text.casefold().strip(" \t\n\"'`.,;:").split())


# -- finding boxes ---------------------------------------------------------------------------------
def _json_items(answer: str) -> tuple[list[Any] | None, bool]:
    """(the items of a JSON answer, fenced or bare, or None if it is not JSON; whether it was
    complete). A list cut off mid-way gives its complete objects and False."""
    text = re.sub(r"^```(?:json)?|```$", "", answer.strip(), flags=re.M).strip()
    try:
        data: Any = json.loads(text)
        return (data if isinstance(data, list) else [data]), True
    except ValueError:
        pass
    if not text.startswith(("[", "{")):
        return None, True
    decoder, at, end = json.JSONDecoder(), text.find("{"), 0
    items: list[Any] = []
    while at != -1:
        try:
            item, end = decoder.raw_decode(text, at)
        except ValueError:
            return items, False             # an object cut off mid-way
        items.append(item)
        at = text.find("{", end)
    return items, not text.startswith("[") or "]" in text[end:]


def _json_spans(answer: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level JSON object of the answer, in order (the objects of a list, or
    the one)."""
    decoder, spans, at = json.JSONDecoder(), [], answer.find("{")
    while at != -1:
        try:
            _, end = decoder.raw_decode(answer, at)
        except ValueError:
            break
        spans.append((at, end))
        at = answer.find("{", end)
    return spans


def _json_box(item: Any) -> tuple[list[float], str | None] | None:
    """(box in the convention's units, label) of one JSON item, or None."""
    if not isinstance(item, dict):
        return None
    box = next((item[k] for k in _BOX_KEYS if k in item), None)
    # [[x1, y1, x2, y2]]
    if isinstance(box, list) and len(box) == 1 and isinstance(box[0], list):
        box = box[0]
    if not (isinstance(box, list) and len(box) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
        return None
    label = item.get("label")
    return [float(v) for v in box], (str(label) if label is not None else None)


def _text_boxes(answer: str, box_format: str) -> tuple[list[tuple[int, int, list[float]]], bool]:
    """Every box written in the answer's text as (start, end, values in the convention's units), and
    whether the answer ends cleanly (not inside a box)."""
    pattern = _TOKENS.get(box_format)
    if pattern is None:
        pattern = _PAIRS if _PAIRS.search(answer) else _FOUR
    found = [(m.start(), m.end(), [float(v) for v in m.groups()]) for m in pattern.finditer(answer)]
    tail = (answer[found[-1][1]:] if found else answer).rstrip()
    if box_format in _TOKEN_START:      # ends with some of a box's tokens, or inside one
        start = re.escape(_TOKEN_START[box_format])
        cut = re.search(rf"(?:{start}\d+>\s*)+$|<[^<>]*$", tail) is not None
    # ends after an opening bracket and nothing but numbers and separators
    else:
        cut = (
            re.search(r"[\[(][\d\s.,()\[\]-]*$", tail) is not None
            and re.search(r"\d\s*,?$", tail) is not None
        )
    return found, not cut


def _gap_label(gap: str) -> str | None:
    """The object named before a box: the last reference tag in the gap, else its words without
    tags; None when the gap holds nothing (the box shares the previous box's label)."""
    refs = [next(g for g in m.groups() if g is not None) for m in _REF.finditer(gap)]
    if refs:
        return _TAG.sub("", refs[-1]).strip() or None
    words = re.sub(r"[\[\](){},;:\"'`]", " ", _TAG.sub(" ", gap)).split()
    return " ".join(words) or None


def _raw_labelled_boxes(answer: str, box_format: str) -> tuple[list[_Raw], bool]:
    """Every (box in the convention's units, its label or None, its span) of an answer, and whether
    the answer was complete. A JSON item's span is its object; a box in text spans its label and
    coordinates (the gap since the previous box, then the box; PaliGemma: the box, then its
    label)."""
    if box_format not in _TOKENS:
        items, complete = _json_items(answer)
        spans = _json_spans(answer)
        # objects not found one by one: each spans the whole answer
        if len(spans) != len(items or []):
            spans = [(0, len(answer))] * len(items or [])
        boxes = [(*b, span) for b, span in zip(map(_json_box, items or []), spans) if b is not None]
        if boxes:
            return boxes, complete
    found, complete = _text_boxes(answer, box_format)
    out: list[_Raw] = []
    for n, (start, end, values) in enumerate(found):
        # PaliGemma: the label follows the box, up to ';' or the next box
        if box_format == "loc-1024":
            after = answer[end:found[n + 1][0] if n + 1 < len(found) else len(answer)].split(";")[0]
            label = " ".join(_TAG.sub(" ", after).split()) or None
            span = (start, end + len(after))
        else:
            gap_start = found[n - 1][1] if n else 0
            label = _gap_label(answer[gap_start:start])
            if label is None and out:
                label = out[-1][1]
            span = (gap_start, end)
        out.append((values, label, span))
    return out, complete


# -- to pixels -------------------------------------------------------------------------------------
def _patch_box(ul: float, lr: float, side: int = 32) -> list[float]:
    """Kosmos-2's two corner cells -> fractions x1 y1 x2 y2: cell centres, or whole cells when the
    corners are one cell or share a row or column (as its processor's
    ``patch_index_to_coordinate``)."""
    ux, uy, lx, ly = int(ul) % side, int(ul) // side, int(lr) % side, int(lr) // side
    if ul == lr or ux == lx or uy == ly:
        return [ux / side, uy / side, (lx + 1) / side, (ly + 1) / side]
    return [(ux + 0.5) / side, (uy + 0.5) / side, (lx + 0.5) / side, (ly + 0.5) / side]


def _to_pixels(box: list[float], box_format: str, image_size: tuple[int, int],
               input_size: tuple[int, int] | None, answer: str) -> list[float]:
    """A box in the convention's units -> xyxy pixels of the image; an empty, inverted or outside
    box fails."""
    width, height = image_size
    if box_format == "patch-32":
        box = _patch_box(box[0], box[1])
    elif box_format == "loc-1024" or box_format == "grid-1000-yx":       # y first
        box = [box[1], box[0], box[3], box[2]]
    x1, y1, x2, y2 = box
    ox = oy = 0.0
    if box_format == "pixel-resized":
        if not input_size:
            raise ParseFailure("pixel-resized boxes need the model input's size", answer)
        sx, sy = width / input_size[0], height / input_size[1]
    elif box_format in ("grid-1000", "grid-1000-yx"):
        sx, sy = width / 1000, height / 1000
    elif box_format == "grid-999":
        sx, sy = width / 999, height / 999
    elif box_format == "loc-1000":
        x1, y1, x2, y2 = ((v + 0.5) / 1000 for v in (x1, y1, x2, y2))
        sx, sy = width, height
    elif box_format == "loc-1024":
        sx, sy = width / 1023, height / 1023
    elif box_format == "normalized-square":
        side = max(width, height)
        sx = sy = side
        ox, oy = (side - width) / 2, (side - height) / 2
    elif box_format == "normalized-crop":
        side = min(width, height)
        sx = sy = side
        ox, oy = (side - width) / 2, (side - height) / 2
    elif (geometry := _crop_geometry(box_format)) is not None:
        # the crop's pixels (v * crop + offset) in the resized image, then the resize undone per
        # axis
        left, top, resized_width, resized_height = crop_window(image_size, geometry)
        fx, fy = width / resized_width, height / resized_height
        sx, sy = geometry[1] * fx, geometry[2] * fy
        ox, oy = -left * fx, -top * fy
    elif box_format in ("normalized", "patch-32"):
        sx, sy = width, height
    else:
        sx, sy = 1.0, 1.0
    out = [x1 * sx - ox, y1 * sy - oy, x2 * sx - ox, y2 * sy - oy]
    if not (out[2] > out[0] and out[3] > out[1]):
        raise ParseFailure("an empty or inverted box", answer)
    return out


def reaches_outside(xyxy: list[float], image_size: tuple[int, int]) -> bool:
    """Whether a box reaches more than :data:`TOLERANCE` pixels beyond the image: a likely
    convention slip, counted by the caller; the box itself is kept and scored, as the official
    scorers score what a model wrote."""
    width, height = image_size
    return (xyxy[0] < -TOLERANCE or xyxy[1] < -TOLERANCE or xyxy[2] > width + TOLERANCE
            or xyxy[3] > height + TOLERANCE)


# -- the public parsers ----------------------------------------------------------------------------
def parse_labelled_boxes(answer: str, box_format: str, image_size: tuple[int, int],
                         input_size: tuple[int, int] | None = None) -> tuple[list[LabelledBox],
                                                                             list[ParseFailure]]:
    """Every box of an answer listing several (a detection answer) as a :class:`LabelledBox`, and a
    failure for each box that cannot be used (empty, inverted) plus one :data:`TRUNCATED` failure
    when the answer was cut off (its complete boxes are kept); an answer with no box at all
    fails."""
    raw, complete = _raw_labelled_boxes(answer, box_format)
    if not raw:
        items, whole = _json_items(answer) if box_format not in _TOKENS else (None, True)
        if items == [] and whole:
            return [], []                       # "[]": the model found nothing, a valid answer
        raise ParseFailure(TRUNCATED if not (complete and whole) else f"no box in the {box_format} "
                                                                      "convention", answer)
    boxes, failures = [], []
    for box, label, span in raw:
        try:
            boxes.append(LabelledBox(_to_pixels(box, box_format, image_size, input_size, answer),
                                     label, span))
        except ParseFailure as failure:
            failures.append(failure)
    if not complete:
        failures.insert(0, ParseFailure(TRUNCATED, answer))
    return boxes, failures


def parse_box(answer: str, box_format: str, image_size: tuple[int, int],
              input_size: tuple[int, int] | None = None) -> list[float]:
    """The first box of a VLM answer as xyxy pixels of the image (``image_size`` = (width, height));
    ``input_size`` is the resized model input's (width, height), needed by ``pixel-resized``."""
    raw, complete = _raw_labelled_boxes(answer, box_format)
    if not raw:
        raise ParseFailure(TRUNCATED if not complete else f"no box in the {box_format} convention",
                           answer)
    return _to_pixels(raw[0][0], box_format, image_size, input_size, answer)
