"""Zero-shot detectors, one function per family: a batch of images, each with its own text queries,
-> every (score, xyxy box in pixels, query index) at or above the threshold (with ``top_k``, the
best ``top_k`` per image and pass, chosen on the device). The family table
(:mod:`vlbench.predict.families`) names the function. torch is imported inside each.

Each keeps every box on the query it answers however the queries are written or batched:

- OWL-ViT / OWLv2: the processor pads shorter query lists with ``" "``, which the CLIP tokenizer
  does not mask; those padding queries are masked out before each box takes its best query (as the
  family's post-processing does).
- Grounding DINO (and MM-Grounding-DINO / LLMDet): one caption ``"q1 . q2 . q3 ."`` per image; a
  box's score for a query is the mean probability of the query's tokens, the token spans found from
  the tokenizer's offsets (the family's reference evaluation, ``PostProcessCocoGrounding``), never
  by decoding text back. ``.`` and ``?`` inside a query would split it (they separate phrases in the
  model's text attention), so they are written as ``,``; queries beyond the text length go to
  further passes.
- OmDet-Turbo: the processor takes a class list per image and the post-processing returns indices
  into it; images go in groups of equal class counts (the decoder attends to the padding of shorter
  lists).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Found", "owl", "grounding_dino", "omdet_turbo"]


@dataclass
class Found:
    """A batch's detections, per image: (score, xyxy box, query index) of each box, how many of its
    queries were cut at the text encoder's length (their last tokens never reach the model), how
    many had '.' / '?' written as ',' (Grounding DINO's phrase separators), and how many boxes at or
    above the threshold had a NaN or infinite value (dropped: not a box, and not valid JSON)."""

    boxes: list[list[tuple[float, list[float], int]]]
    truncated: list[int]
    escaped: list[int] = field(default_factory=list)
    non_finite: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.escaped = self.escaped or [0] * len(self.boxes)
        self.non_finite = self.non_finite or [0] * len(self.boxes)


def _kept(scores: Any, boxes: Any, labels: Any, threshold: float, top_k: int | None
          ) -> tuple[list[tuple[float, list[float], int]], int]:
    """The candidates (score, xyxy box, label; tensors on the model's device) at or above
    ``threshold`` with finite values, in candidate order, or, where more than ``top_k`` are, the
    ``top_k`` best by descending score (ties in candidate order: the order the caller's stable sort
    gives them), moved to the host in one transfer per tensor; and how many were dropped for a NaN
    or infinite value. A loop reading one box at a time synchronises with the device per box:
    thousands per image for a detector whose every patch is a box."""
    import torch

    keep = scores >= threshold
    finite = torch.isfinite(boxes).all(-1) & torch.isfinite(scores)
    dropped = int((keep & ~finite).sum())
    at = (keep & finite).nonzero().flatten()
    if top_k is not None and len(at) > top_k:
        at = at[torch.sort(-scores[at], stable=True).indices[:top_k]]
    return list(zip(scores[at].tolist(), boxes[at].tolist(), labels[at].tolist())), dropped


def _xyxy_pixels(cxcywh: Any, width: float, height: float) -> Any:
    """Normalised (cx, cy, w, h) boxes -> xyxy pixels of a width x height frame."""
    import torch

    cx, cy, w, h = cxcywh.unbind(-1)
    return torch.stack(
        [(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height],
        -1,
    )


def _text_limit(loaded: Any, default: int) -> int:
    """The text encoder's length in tokens."""
    limit = getattr(loaded.processor.tokenizer, "model_max_length", None)
    return int(limit) if isinstance(limit, int) and 0 < limit < 100_000 else default


def _count_truncated(loaded: Any, queries: list[list[str]], kept: list[list[int]],
                     limit: int) -> list[int]:
    """Per image, the queries cut at ``limit`` tokens, from ``kept``, each query's length in the
    batch's own (truncating) tokenization: only one that fills the limit can have been cut, so only
    those are tokenized again, whole (a batch of short queries costs no second call)."""
    full = [(n, q) for n, (qs, lengths) in enumerate(zip(queries, kept))
            for q, length in zip(qs, lengths) if length >= limit]
    counts = [0] * len(queries)
    if full:
        whole = loaded.processor.tokenizer([q for _, q in full])["input_ids"]
        for (n, _), ids in zip(full, whole):
            counts[n] += len(ids) > limit
    return counts


def _overflowed(encoded: Any, counts: list[int], stride: int) -> list[int] | None:
    """Per image, the queries a fast tokenizer cut, read from the batch's own encodings (truncation
    keeps what it cut as the encoding's overflow; image ``n``'s ``counts[n]`` queries at rows ``n *
    stride`` onward), or None where the tokenizer keeps no encodings (a slow tokenizer)."""
    encodings = getattr(encoded, "encodings", None)
    if not encodings:
        return None
    return [sum(bool(e.overflowing) for e in encodings[n * stride:n * stride + count]) for n,
            count in enumerate(counts)]


def _lengths(attention_mask: Any, counts: list[int], stride: int) -> list[list[int]]:
    """Each query's kept token count from a batch's attention mask: image ``n``'s ``counts[n]``
    queries at rows ``n * stride`` onward (each image's list padded to ``stride`` rows)."""
    lengths = attention_mask.sum(-1).tolist()
    return [lengths[n * stride:n * stride + count] for n, count in enumerate(counts)]


def owl(loaded: Any, images: list[Any], queries: list[list[str]], threshold: float,
        top_k: int | None = None) -> Found:
    """OWL-ViT / OWLv2: each box (an image patch) with its best real query. OWLv2 predicts on the
    image padded to a square at the bottom and right, so its boxes are scaled by the longer side."""
    import torch

    limit = _text_limit(loaded, 16)
    # The processor pads each list to the batch's query count with " " and every query to the
    # encoder's length; here queries are padded to the batch's longest instead: the text tower is
    # causal and pools at the end token, so the padding after it changes nothing but the work.
    per_image = max(map(len, queries))
    texts = [q for qs in queries for q in [*qs, *[" "] * (per_image - len(qs))]]
    inputs = loaded.processor.tokenizer(texts, return_tensors="pt", padding="longest",
                                        truncation=True, max_length=limit)
    inputs["pixel_values"] = loaded.processor.image_processor(images, return_tensors="pt")[
        "pixel_values"
    ]
    with torch.inference_mode():
        outputs = loaded.model(**loaded.place(inputs))
    found, dropped = [], []
    for n, (image, qs) in enumerate(zip(images, queries)):
        # the padding queries of shorter lists dropped
        logits = outputs.logits[n, :, :len(qs)].float()
        best, label = logits.max(-1)
        width, height = image.size
        if loaded.model_type == "owlv2":
            width = height = max(width, height)
        boxes, lost = _kept(torch.sigmoid(best),
                            _xyxy_pixels(outputs.pred_boxes[n].float(), width, height), label,
                            threshold, top_k)
        found.append(boxes)
        dropped.append(lost)
    counts = [len(qs) for qs in queries]
    cut = _overflowed(inputs, counts, stride=per_image)
    if cut is None:
        cut = _count_truncated(loaded, queries,
                               _lengths(inputs["attention_mask"], counts, stride=per_image), limit)
    return Found(found, truncated=cut, non_finite=dropped)


def _escape(query: str) -> str:
    """A query as one Grounding DINO phrase: its '.' and '?' (phrase separators) written as ','."""
    return (
        " ".join(query.replace(".", ",").replace("?", ",").split()).strip(" ,")
        or query.strip()
        or "object"
    )


def _caption_parts(tokenizer: Any, queries: list[str], limit: int) -> list[list[int]]:
    """The queries (indices) of each caption of one image, packed in order so that each caption fits
    ``limit`` tokens ([CLS] and [SEP] included); a query too long for one caption gets one of its
    own (and is cut)."""
    parts: list[list[int]] = []
    used = limit
    for n, q in enumerate(queries):
        # its tokens and its '.'
        cost = len(tokenizer(q, add_special_tokens=False)["input_ids"]) + 1
        if parts and used + cost <= limit:
            parts[-1].append(n)
            used += cost
        else:
            parts.append([n])
            used = 2 + cost
    return parts


def _spans(offsets: list[tuple[int, int]], chars: list[tuple[int, int]]) -> list[list[int]]:
    """The token positions of each character span (tokens whose characters lie inside it)."""
    return [[t for t, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end] for start,
            end in chars]


def grounding_dino(loaded: Any, images: list[Any], queries: list[list[str]], threshold: float,
                   top_k: int | None = None) -> Found:
    """Grounding DINO family: captions of the queries, scores by token span (see the module
    docstring)."""
    import torch

    tokenizer = loaded.processor.tokenizer
    limit = min(_text_limit(loaded, 256), int(getattr(loaded.model.config, "max_text_len", 256)))
    escaped = [[_escape(q) for q in qs] for qs in queries]
    parts = [_caption_parts(tokenizer, qs, limit) for qs in escaped]
    found: list[list[tuple[float, list[float], int]]] = [[] for _ in images]
    truncated, dropped = [0] * len(images), [0] * len(images)
    for round_ in range(max(map(len, parts), default=0)):
        batch = [(n, parts[n][round_]) for n in range(len(images)) if round_ < len(parts[n])]
        captions, chars = [], []
        for n, part in batch:
            text, spans = "", []
            for q in part:
                spans.append((len(text), len(text) + len(escaped[n][q])))
                text += escaped[n][q] + " . "
            captions.append(text.strip())
            chars.append(spans)
        inputs = loaded.processor(images=[images[n] for n, _ in batch], text=captions,
                                  return_tensors="pt",
                                  padding="longest", truncation=True, max_length=limit)
        encoded = tokenizer(captions, padding="longest", truncation=True, max_length=limit,
                            return_offsets_mapping=True)
        with torch.inference_mode():
            outputs = loaded.model(**loaded.place(inputs))
        for row, ((n, part), spans) in enumerate(zip(batch, chars)):
            offsets = encoded["offset_mapping"][row]
            tokens = _spans(offsets, spans)
            # the caption's last character kept
            reached = max((b for a, b in offsets if b > a), default=0)
            truncated[n] += sum(end > reached for _, end in spans)
            # (boxes, text positions)
            probs = torch.sigmoid(outputs.logits[row].float())
            # mean probability over each query's tokens: the normalised positive map of the
            # reference evaluation
            weights = torch.zeros(len(part), probs.shape[-1])
            for j, t in enumerate(tokens):
                if t:
                    weights[j, t] = 1.0 / len(t)
            # (boxes, queries)
            scores = probs @ weights.T.to(probs.device)
            width, height = images[n].size
            boxes = _xyxy_pixels(outputs.pred_boxes[row].float(), width, height)
            # every (box, query) pair a candidate, box-major (each box's queries in order)
            kept, lost = _kept(scores.flatten(), boxes.repeat_interleave(len(part), 0),
                               torch.arange(len(part), device=scores.device).repeat(len(boxes)),
                               threshold, top_k)
            found[n].extend((s, box, part[j]) for s, box, j in kept)
            dropped[n] += lost
    return Found(found, truncated=truncated,
                 escaped=[sum("." in q or "?" in q for q in qs) for qs in queries],
                 non_finite=dropped)


def omdet_turbo(loaded: Any, images: list[Any], queries: list[list[str]], threshold: float,
                top_k: int | None = None) -> Found:
    """OmDet-Turbo: a class list per image; the family's post-processing (per-class NMS) gives
    indices into it. Images are sent in groups of equal class counts: the model pads shorter class
    lists and its decoder attends to the padding, so a batch of unequal lists changes every image's
    scores."""
    import torch

    found: list[list[tuple[float, list[float], int]]] = [[] for _ in images]
    dropped = [0] * len(images)
    truncated = [0] * len(images)
    groups: dict[int, list[int]] = {}
    for n, qs in enumerate(queries):
        groups.setdefault(len(qs), []).append(n)
    for members in groups.values():
        texts = [queries[n] for n in members]
        inputs = loaded.processor(images=[images[n] for n in members], text=texts,
                                  return_tensors="pt", padding="max_length", truncation=True)
        # a group's lists are equally long; padded to max_length, the width is the length the
        # classes were cut at
        kept = _lengths(inputs["classes_attention_mask"], [len(t) for t in texts],
                        stride=len(texts[0]))
        cut = _count_truncated(loaded, texts, kept, inputs["classes_attention_mask"].shape[-1])
        for n, count in zip(members, cut):
            truncated[n] = count
        with torch.inference_mode():
            outputs = loaded.model(**loaded.place(inputs))
        results = loaded.processor.post_process_grounded_object_detection(
            outputs, text_labels=texts, threshold=threshold,
            target_sizes=[images[n].size[::-1] for n in members])
        for n, res in zip(members, results):
            found[n], dropped[n] = _kept(res["scores"].float(), res["boxes"].float(), res["labels"],
                                         threshold, top_k)
    return Found(found, truncated=truncated, non_finite=dropped)
