"""Loading a Hugging Face model for ``vlbench predict`` and running one batch of it: zero-shot detectors
(``AutoModelForZeroShotObjectDetection`` + the processor's post-processing) and image-text-to-text models
(``AutoModelForImageTextToText``, greedy decoding). torch and transformers are imported here only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..benchmark import Detections, PredictItem
from ..errors import InputError

__all__ = ["LoadedModel", "require_extra", "load_model", "detect", "generate"]

DETECTOR, GENERATOR = "detector", "image-text-to-text"


@dataclass
class LoadedModel:
    """A model, its processor, its kind (``detector`` / ``image-text-to-text``), ``config.model_type`` and device."""

    model: Any
    processor: Any
    kind: str
    model_type: str
    device: str


def require_extra() -> None:
    """Fail with the install command when torch or transformers is missing."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise InputError("running a model needs torch and transformers",
                         fix='pip install "vlbench[predict]"') from None


def load_model(name: str, *, revision: str | None = None, device: str | None = None,
               kind: str | None = None) -> LoadedModel:
    """A Hub id or local folder -> the model in eval mode on ``device`` (default: cuda if present, else cpu); the
    kind follows the config's architecture unless given."""
    require_extra()
    import torch
    from transformers import (AutoConfig, AutoModelForImageTextToText, AutoModelForZeroShotObjectDetection,
                              AutoProcessor)
    from transformers.models.auto.modeling_auto import (MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
                                                        MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES)

    try:
        config = AutoConfig.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot load the model config ({exc})".splitlines()[0], file=name,
                         fix="pass a Hub model id or a folder holding config.json") from None
    if kind is None:
        kind = (DETECTOR if config.model_type in MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES
                else GENERATOR if config.model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES else None)
    if kind not in (DETECTOR, GENERATOR):
        raise InputError(f"model type {config.model_type!r} is neither a zero-shot object detector nor an "
                         "image-text-to-text model", file=name,
                         fix="use e.g. OWLv2 / Grounding DINO (detection) or a VLM (captions, grounding)")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    auto = AutoModelForZeroShotObjectDetection if kind == DETECTOR else AutoModelForImageTextToText
    model = auto.from_pretrained(name, revision=revision).to(device).eval()
    processor = AutoProcessor.from_pretrained(name, revision=revision)
    if kind == GENERATOR and getattr(processor, "tokenizer", None) is not None:
        processor.tokenizer.padding_side = "left"       # batched generation continues every prompt at its end
    return LoadedModel(model, processor, kind, config.model_type, device)


def _target_size(loaded: LoadedModel, width: int, height: int) -> tuple[int, int]:
    """(height, width) to scale normalised boxes to: OWLv2 pads every image to a square before predicting."""
    if loaded.model_type == "owlv2":
        side = max(width, height)
        return side, side
    return height, width


def detect(loaded: LoadedModel, items: list[PredictItem], *, threshold: float, top_k: int,
           max_queries: int) -> list[Detections]:
    """Float xyxy boxes of each item for its queries, at most ``top_k`` per item (highest scores), scores at or
    above ``threshold``; queries are sent ``max_queries`` at a time (a detector's text length is bounded)."""
    import torch

    found: list[list[tuple[float, list[float], int]]] = [[] for _ in items]
    chunks = max(1, max(-(-len(it.queries) // max_queries) for it in items))
    for c in range(chunks):
        batch = [(n, it, list(it.queries[c * max_queries:(c + 1) * max_queries])) for n, it in enumerate(items)]
        batch = [b for b in batch if b[2]]
        if not batch:
            continue
        images = [it.image.convert("RGB") for _, it, _ in batch]
        texts = [queries for _, _, queries in batch]
        # every query padded to the tokenizer's length: OWL-ViT stacks the images' query lists into one tensor
        inputs = loaded.processor(text=texts, images=images, return_tensors="pt", padding="max_length",
                                  truncation=True)
        with torch.inference_mode():
            outputs = loaded.model(**inputs.to(loaded.device))
        sizes = [_target_size(loaded, *im.size) for im in images]
        results = loaded.processor.post_process_grounded_object_detection(
            outputs, threshold=threshold, target_sizes=sizes, text_labels=texts)
        for (n, _, queries), res in zip(batch, results):
            labels = list(res["labels"].tolist() if isinstance(res["labels"], torch.Tensor) else res["labels"])
            for box, score, label in zip(res["boxes"].tolist(), res["scores"].tolist(), labels):
                # an index into the queries (OWL-ViT, OWLv2) or the phrase itself (Grounding DINO)
                q = queries.index(label) if isinstance(label, str) and label in queries else label
                if isinstance(q, int) and 0 <= q < len(queries):      # not a padding query of a shorter list
                    found[n].append((float(score), [float(v) for v in box], c * max_queries + q))
    out = []
    for boxes in found:
        boxes.sort(key=lambda t: -t[0])
        kept = boxes[:top_k]
        out.append(Detections([b for _, b, _ in kept], [s for s, _, _ in kept], [q for _, _, q in kept]))
    return out


def generate(loaded: LoadedModel, items: list[PredictItem], *,
             max_new_tokens: int) -> list[tuple[str, tuple[int, int] | None]]:
    """Greedy answers to each item's prompt: (text, the model input's (width, height) when the processor reports it,
    for conventions in pixels of the resized input)."""
    import torch

    messages = [[{"role": "user", "content": [{"type": "image", "image": it.image.convert("RGB")},
                                               {"type": "text", "text": it.prompt}]}] for it in items]
    inputs = loaded.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                  return_dict=True, return_tensors="pt",
                                                  processor_kwargs={"padding": True})
    inputs = inputs.to(loaded.device)
    with torch.inference_mode():
        generated = loaded.model.generate(**inputs, do_sample=False, max_new_tokens=max_new_tokens)
    new = generated[:, inputs["input_ids"].shape[1]:]
    texts = loaded.processor.batch_decode(new, skip_special_tokens=False)
    special = {t for t in (getattr(loaded.processor.tokenizer, "pad_token", None),
                           getattr(loaded.processor.tokenizer, "eos_token", None)) if t}
    sizes = _input_sizes(loaded, inputs, len(items))
    return [(_strip(text, special), size) for text, size in zip(texts, sizes)]


def _strip(text: str, special: set[str]) -> str:
    for token in special:
        text = text.replace(token, "")
    return text.strip()


def _input_sizes(loaded: LoadedModel, inputs: Any, n: int) -> list[tuple[int, int] | None]:
    """The resized input of each image as (width, height): Qwen-VL processors report a patch grid (t, h, w)."""
    grid = inputs.get("image_grid_thw")
    patch = getattr(getattr(loaded.processor, "image_processor", None), "patch_size", None)
    if grid is None or not patch:
        return [None] * n
    return [(int(w) * patch, int(h) * patch) for _, h, w in grid.tolist()]
