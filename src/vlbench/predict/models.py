"""Loading a Hugging Face model for ``vlbench predict`` and running one batch of it: zero-shot
detectors (their family's function in :mod:`vlbench.predict.detectors`) and image-text-to-text
models (greedy decoding through the chat template or the processor's own text, as the family's
preset says). torch and transformers are imported here and in :mod:`.detectors` only.

The model's config is read first (a few kB): the family, its kind and what its processor needs are
known, and checked, before any weight loads.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..benchmarks.protocol.predicting import DetectorAnswer, PredictItem
from ..engine.errors import InputError
from .confidence import TokenScores, strip_with_offsets
from .families import DETECTOR, GENERATOR, OTHER, Family, Preset, family_of

__all__ = ["LoadedModel", "ModelInfo", "Answer", "require_extra", "inspect_model", "square_view",
           "load_model", "detect", "generate", "has_chat_template"]


@dataclass
class ModelInfo:
    """What a model's config says before its weights load: its kind, ``model_type`` and family."""

    kind: str
    model_type: str
    family: Family
    is_encoder_decoder: bool = False
    #: how the image processor makes the square a padded-square family (LLaVA-1.5) sees, as a box
    #: convention (:func:`square_view`); None where the family has no such convention or the
    #: processor says nothing
    square_view: str | None = None


@dataclass
class LoadedModel:
    """A model, its processor, its kind (``detector`` / ``image-text-to-text``),
    ``config.model_type``, device and family."""

    model: Any
    processor: Any
    kind: str
    model_type: str
    device: str
    family: Family | None = None

    def place(self, inputs: Any) -> Any:
        """A batch's inputs on the model's (first) device, floating tensors in the model's dtype
        (the processors give float32 pixels; a bfloat16 model wants bfloat16)."""
        inputs = inputs.to(self.device)
        dtype = getattr(self.model, "dtype", None)
        return inputs.to(dtype) if dtype is not None and str(dtype) != "torch.float32" else inputs


@dataclass(frozen=True)
class Answer:
    """One generated answer: its text, the model input's (width, height) when the processor reports
    it (for conventions in pixels of the resized input), and whether it stopped at the answer
    length."""

    text: str
    input_size: tuple[int, int] | None = None
    truncated: bool = False
    #: the answer's tokens with their log-probabilities (box answers, when the model's generate
    #: exposes them)
    tokens: TokenScores | None = None
    #: the model a server says answered (its reply's ``model``), None for a model run in this
    #: process
    model: str | None = None
    #: what was wrong with the item's image when it did not decode and was skipped
    #: (``--skip-bad-images``)
    unreadable: str | None = None


def require_extra() -> None:
    """Fail with the install command when torch or transformers is missing."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise InputError("running a model needs torch and transformers",
                         fix='pip install "vlbench[predict]"') from None


def inspect_model(name: str, *, revision: str | None = None, kind: str | None = None) -> ModelInfo:
    """A Hub id or local folder -> its kind and family from the config alone (no weights); the kind
    follows the config's architecture unless given. The packages the family's processor needs are
    checked here."""
    require_extra()
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
        MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES,
    )

    try:
        config = AutoConfig.from_pretrained(name, revision=revision)
    # OSError, ValueError, KeyError, TypeError from a missing or malformed config
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        raise InputError(
            f"cannot load the model config ({type(exc).__name__}: {_first_line(exc)})",
            file=name,
            fix="pass a Hub model id or a folder holding a valid config.json",
        ) from None
    if kind is None:
        kind = (
            DETECTOR
            if config.model_type in MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES
            else GENERATOR
            if config.model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
            else None
        )
    if kind not in (DETECTOR, GENERATOR):
        raise InputError(f"model type {config.model_type!r} is neither a zero-shot object detector "
                         "nor an image-text-to-text model", file=name,
                         fix="use e.g. OWLv2 / Grounding DINO (detection) or a VLM (captions, "
                             "grounding)")
    family = family_of(config.model_type, kind)
    if family.kind != kind and family is not OTHER:
        what = {DETECTOR: "zero-shot object detectors", GENERATOR: "image-text-to-text models"}
        raise InputError(f"{family.name} models are {what[family.kind]}: --kind {kind} cannot run "
                         "them", file=name,
                         fix="drop --kind (the kind is read from the model's config)")
    for module, package in family.needs.items():
        try:
            importlib.import_module(module)
        # a wheel built for another torch fails with RuntimeError, not ImportError
        except Exception as exc:
            raise InputError(f"{family.name} processors need {package}, which does not load here "
                             f"({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})", file=name,
                             fix=f'pip install "vlbench[predict]" (it installs {package} matching '
                                 'your torch)') from None
    square = None
    if any(p.box_format == "normalized-square" for p in family.presets.values()):
        square = square_view(name, revision)
    return ModelInfo(kind, config.model_type, family,
                     bool(getattr(config, "is_encoder_decoder", False)), square)


def square_view(name: str, revision: str | None = None) -> str | None:
    """The box convention of the square a LLaVA-1.5 model sees, from its image processor (loaded by
    transformers, so its class's defaults count): padded (``do_pad``, the reference code's
    ``expand2square``) -> ``normalized-square``; centre-cropped (``do_center_crop``, the CLIP
    processor of the HF-format checkpoints) -> ``normalized-crop-E[-CWxCH]``, its resize edge and
    crop; resized whole -> ``normalized``. None without a loadable image processor (the family's
    convention then stands)."""
    from transformers import AutoImageProcessor

    from .parsers import crop_format

    try:
        processor = AutoImageProcessor.from_pretrained(name, revision=revision)
    # no preprocessor config, an unreadable one, a class that does not load here
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        return None
    if getattr(processor, "do_pad", False):
        return "normalized-square"
    if not getattr(processor, "do_center_crop", False):
        return "normalized"
    size, crop = _size_dict(processor, "size"), _size_dict(processor, "crop_size")
    edge, crop_width, crop_height = size.get("shortest_edge"), crop.get("width"), crop.get("height")
    if not getattr(processor, "do_resize", True) or not (edge and crop_width and crop_height):
        return "normalized-crop"      # a geometry the named form cannot say: the continuous reading
    return crop_format(int(edge), int(crop_width), int(crop_height))


def _size_dict(processor: Any, key: str) -> dict[str, Any]:
    """An image processor's size setting as a plain dict (transformers keeps a dict or a
    ``SizeDict``)."""
    value = getattr(processor, key, None) or {}
    if isinstance(value, dict):
        return value
    return {k: getattr(value, k, None) for k in ("shortest_edge", "height", "width")}


def viewed_preset(preset: Any, view: str | None, box_format: str | None) -> Any:
    """``preset`` with its padded-square convention replaced by ``view``, the square the model's
    image processor makes (:func:`square_view`); unchanged where ``box_format`` was given or the
    view is unknown (None)."""
    if box_format is not None or view is None or preset.box_format != "normalized-square":
        return preset
    return dataclasses.replace(preset, box_format=view)


def rgb(image: Any) -> Any:
    """An image in RGB: a decoded one itself when it is RGB already (PIL's ``convert`` would copy
    it, and the processor converts once more); a :class:`~.streaming.LazyImage` decoded (its
    ``convert`` copies nothing)."""
    return image if getattr(image, "mode", None) == "RGB" else image.convert("RGB")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _load_processor(name: str, revision: str | None) -> Any:
    from transformers import AutoProcessor

    try:
        return AutoProcessor.from_pretrained(name, revision=revision)
    except Exception as exc:        # OSError, ValueError, ImportError, TypeError...
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        raise InputError(f"cannot load the model's processor ({type(exc).__name__}: "
                         f"{_first_line(exc)})", file=name,
                         fix="pass a model folder or Hub id with its processor (preprocessor and "
                             "tokenizer files)") from None


def _device(device: str | None) -> str:
    """The torch device to run on, checked before anything loads (default: cuda if present, else
    cpu)."""
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise InputError(f"unknown device {device!r} ({_first_line(exc)})",
                         fix="pass --device cpu, cuda, cuda:0 or mps") from None
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available(),
    }
    if not available.get(parsed.type, False):
        raise InputError(f"device {device!r} is not available here",
                         fix="pass --device cpu (or leave it out)")
    if (
        parsed.type == "cuda"
        and parsed.index is not None
        and parsed.index >= torch.cuda.device_count()
    ):
        raise InputError(f"device {device!r} does not exist ({torch.cuda.device_count()} GPU(s) "
                         "here)",
                         fix="pass --device cuda:0 (or leave it out)")
    return device


def _load_weights(auto: Any, name: str, revision: str | None, placing: dict[str, Any]) -> Any:
    """``auto.from_pretrained`` with its failures (no weights, a truncated file, a config of another
    kind) as clear errors; weights the checkpoint lacks are refused (the model would predict from
    random initialisation)."""
    try:
        model, info = auto.from_pretrained(name, revision=revision, output_loading_info=True,
                                           **placing)
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        raise InputError(f"cannot load the model's weights ({type(exc).__name__}: "
                         f"{_first_line(exc)})", file=name,
                         fix="pass a complete checkpoint (config.json and its *.safetensors / "
                             "*.bin files)") from None
    missing = list(info.get("missing_keys") or [])
    if missing:
        raise InputError(f"the checkpoint lacks {len(missing)} of the model's weights (e.g. "
                         f"{', '.join(missing[:3])}): they would be random", file=name,
                         fix="pass a complete checkpoint of this architecture (or --kind matching "
                             "it)")
    return model


def has_chat_template(processor: Any) -> bool:
    """Whether the processor (or its tokenizer) carries a chat template."""
    return bool(getattr(processor, "chat_template", None)
                or getattr(getattr(processor, "tokenizer", None), "chat_template", None))


#: ``--dtype`` values: the checkpoint's own (auto), or one the weights are cast to
DTYPES = ("auto", "float32", "float16", "bfloat16")


def load_model(name: str, info: ModelInfo, *, revision: str | None = None,
               device: str | None = None,
               preset: Preset | None = None, dtype: str | None = None,
               device_map: str | None = None) -> LoadedModel:
    """The processor (checked against ``preset`` before the weights load), then the model in eval
    mode on ``device`` (default: cuda if present, else cpu), in ``dtype`` (default the
    checkpoint's); ``device_map="auto"`` spreads a model larger than one device over all of them
    (accelerate) instead."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoModelForZeroShotObjectDetection

    device = _device(device)
    processor = _load_processor(name, revision)
    if preset is not None and preset.chat and not has_chat_template(processor) \
            and getattr(processor, "image_token", None) is None:
        raise InputError("the model's processor has no chat template and names no image token, so "
                         "vlbench cannot build its input", file=name,
                         fix="use a model folder with its chat template (chat_template.jinja), or "
                             "another family")
    auto = (
        AutoModelForZeroShotObjectDetection
        if info.kind == DETECTOR
        else AutoModelForImageTextToText
    )
    placing = {"dtype": getattr(torch, dtype) if dtype and dtype != "auto" else "auto",
               **({"device_map": device_map} if device_map else {})}
    try:
        model = _load_weights(auto, name, revision, placing)
        model = (model if device_map else model.to(device)).eval()
    except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
        raise InputError(f"cannot place the model on {device_map or device} ({_first_line(exc)})",
                         file=name,
                         fix="pass another --device (or --device-map auto), a smaller --dtype, or "
                             "free memory") from None
    if device_map:
        device = str(model.device)
    if info.kind == GENERATOR and getattr(processor, "tokenizer", None) is not None:
        # batched generation continues every prompt at its end
        processor.tokenizer.padding_side = "left"
    return LoadedModel(model, processor, info.kind, info.model_type, device, info.family)


def detect(loaded: LoadedModel, items: list[PredictItem], *, threshold: float, top_k: int,
           max_queries: int) -> tuple[list[DetectorAnswer], list[dict[str, int]]]:
    """Float xyxy boxes of each item for its queries, at most ``top_k`` per item (highest scores),
    scores at or above ``threshold``; queries are sent ``max_queries`` at a time (a detector's text
    length is bounded). Also, per item, how many queries its family had to alter (cut at the text
    length, separators escaped)."""
    from . import detectors

    run = getattr(detectors,
                  loaded.family.detector if loaded.family and loaded.family.detector else "owl")
    found: list[list[tuple[float, list[float], int]]] = [[] for _ in items]
    notes: list[dict[str, int]] = [{} for _ in items]
    chunks = max(1, max(-(-len(it.queries) // max_queries) for it in items))
    for c in range(chunks):
        batch = [(n, list(it.queries[c * max_queries:(c + 1) * max_queries])) for n,
                 it in enumerate(items)]
        batch = [b for b in batch if b[1]]
        if not batch:
            continue
        images = [rgb(items[n].image) for n, _ in batch]
        result = run(loaded, images, [queries for _, queries in batch], threshold, top_k)
        for row, (n, _) in enumerate(batch):
            found[n].extend((s, box, c * max_queries + q) for s, box, q in result.boxes[row])
            for key, counts in (("queries_truncated", result.truncated),
                                ("queries_escaped", result.escaped),
                                ("boxes_non_finite", result.non_finite)):
                if counts[row]:
                    notes[n][key] = notes[n].get(key, 0) + counts[row]
    out = []
    # each pass's best top_k (finite) merged: the item's best top_k, ties in pass order
    for boxes in found:
        kept = sorted(boxes, key=lambda t: -t[0])[:top_k]
        out.append(DetectorAnswer([b for _, b, _ in kept], [s for s, _, _ in kept],
                                  [q for _, _, q in kept]))
    return out, notes


def _inputs(loaded: LoadedModel, items: list[PredictItem], prompts: list[str],
            preset: Preset) -> Any:
    """The batch's model inputs: through the chat template, or the prompt as the processor's own
    text (with the processor's image token in front when a chat family's processor has no
    template)."""
    images = [rgb(it.image) for it in items]
    if preset.chat and has_chat_template(loaded.processor):
        messages = [[{"role": "user", "content": [{"type": "image", "image": image},
                                                   {"type": "text", "text": prompt}]}]
                    for image, prompt in zip(images, prompts)]
        return loaded.processor.apply_chat_template(messages, add_generation_prompt=True,
                                                    tokenize=True,
                                                    return_dict=True, return_tensors="pt",
                                                    processor_kwargs={"padding": True})
    if preset.chat:         # a chat family without a template: the image token, then the prompt
        prompts = [f"{loaded.processor.image_token}\n{p}" for p in prompts]
    return loaded.processor(text=prompts, images=images, return_tensors="pt", padding=True)


def _stop_ids(loaded: LoadedModel) -> set[int]:
    """Token ids that end an answer (the generation config's and the tokenizer's end and padding
    tokens)."""
    ids: set[int] = set()
    config = getattr(loaded.model, "generation_config", None)
    tokenizer = getattr(loaded.processor, "tokenizer", None)
    for value in (getattr(config, "eos_token_id", None), getattr(tokenizer, "eos_token_id", None),
                  getattr(config, "pad_token_id", None), getattr(tokenizer, "pad_token_id", None)):
        ids.update(
            value if isinstance(value, (list, tuple)) else [value] if value is not None else []
        )
    return ids


def generate(loaded: LoadedModel, items: list[PredictItem], prompts: list[str], preset: Preset, *,
             max_new_tokens: int, text_answer: bool, token_scores: bool = False) -> list[Answer]:
    """Greedy answers to each item's prompt. An encoder-decoder (Florence-2) returns only the
    answer; a decoder-only model returns the prompt too, which is cut off. Captions
    (``text_answer``) are decoded without special tokens; box answers keep them (Qwen2-VL's box
    tokens, Florence-2's and PaliGemma's location tokens). With ``token_scores`` each answer keeps
    its tokens' log-probabilities and text offsets (:mod:`.confidence`)."""
    import torch

    inputs = loaded.place(_inputs(loaded, items, prompts, preset))
    recorder = _LogProbRecorder(loaded.model) if token_scores else None
    try:
        with torch.inference_mode():
            generated = loaded.model.generate(
                **inputs,
                do_sample=False,
                num_beams=1,
                max_new_tokens=max_new_tokens,
                **({"logits_processor": [recorder.processor()]} if recorder else {}),
            )
    finally:
        if recorder:
            recorder.close()
    prompt_ids = inputs.get("input_ids")
    new = generated
    if (
        prompt_ids is not None
        and not getattr(loaded.model.config, "is_encoder_decoder", False)
        and generated.shape[1] >= prompt_ids.shape[1]
        and bool((generated[:, : prompt_ids.shape[1]] == prompt_ids.to(generated.device)).all())
    ):
        new = generated[:, prompt_ids.shape[1]:]
    stop = _stop_ids(loaded)
    # an encoder-decoder's rows open with its decoder start token, which is the EOS id for
    # Florence-2 (BART): not an end, so a cut-off answer still reads as cut off
    decoder_start = (getattr(loaded.model.generation_config, "decoder_start_token_id", None)
                     if getattr(loaded.model.config, "is_encoder_decoder", False) else None)
    rows = new.tolist()
    texts = loaded.processor.batch_decode(new, skip_special_tokens=text_answer)
    tokenizer = getattr(loaded.processor, "tokenizer", loaded.processor)
    special = {t for t in (getattr(tokenizer, "pad_token", None),
                           getattr(tokenizer, "eos_token", None),
                           getattr(tokenizer, "bos_token", None)) if t}
    # a caption holds no markup: the family's tag tokens (Kosmos-2's <phrase>, <object>...) go
    if text_answer:
        special |= {
            t
            for t in getattr(tokenizer, "get_added_vocab", dict)()
            if re.fullmatch(r"<[^<>\s]+>", t)
        }
    sizes = _input_sizes(loaded, inputs, len(items))
    logprobs = recorder.logprobs(len(rows), len(rows[0]) if rows else 0) if recorder else None
    answers = []
    for n, (raw, size, row) in enumerate(zip(texts, sizes, rows)):
        text, position = strip_with_offsets(raw, special)
        tokens = None
        if logprobs is not None:
            start, end = _token_offsets(tokenizer, row, raw, text_answer)
            tokens = TokenScores(logprobs[n], position[start], position[end])
        body = row[1:] if decoder_start is not None and row[:1] == [decoder_start] else row
        answers.append(Answer(text, size,
                              truncated=len(body) >= max_new_tokens and not stop & set(body),
                              tokens=tokens))
    return answers


class _LogProbRecorder:
    """The log-probability of each token greedy decoding picks, from the model's raw logits
    (penalties such as a generation config's ``repetition_penalty`` change which token is picked,
    not its probability): forward hooks keep the last position's log-softmax (of the model's output,
    else of its output embedding layer, for families whose ``generate`` runs a sub-model: Kosmos-2),
    and a logits processor, which runs last, gathers it at the picked token. One step of (batch,
    vocabulary) is held at a time, not the whole answer's."""

    def __init__(self, model: Any) -> None:
        self.outer: Any = None
        self.inner: Any = None
        self.steps: list[Any] = []
        self.handles = [model.register_forward_hook(lambda m, a,
                                                    out: self._keep("outer", getattr(out, "logits",
                                                                                     None)))]
        # every transformers model has one
        output_embeddings = getattr(model, "get_output_embeddings", None)
        head = output_embeddings() if output_embeddings is not None else None
        if head is not None:
            self.handles.append(head.register_forward_hook(lambda m, a,
                                                           out: self._keep("inner", out)))

    def _keep(self, which: str, logits: Any) -> None:
        import torch

        if isinstance(logits, torch.Tensor) and logits.dim() == 3:
            setattr(self, which, torch.log_softmax(logits[:, -1, :].float(), dim=-1))

    def processor(self) -> Any:
        """The logits processor to pass to ``generate`` (it must run last: custom processors do)."""
        import torch
        from transformers import LogitsProcessor

        recorder = self

        class Gather(LogitsProcessor):
            def __call__(self, input_ids: Any, scores: Any) -> Any:
                raw = recorder.outer if recorder.outer is not None else recorder.inner
                picked = scores.argmax(dim=-1)
                if raw is not None and raw.shape == scores.shape:
                    recorder.steps.append(raw.gather(1, picked[:, None])[:, 0].cpu())
                else:       # logits that are not the scores' (no hook fired): unknown
                    recorder.steps.append(torch.full((len(scores),), float("nan")))
                recorder.outer = recorder.inner = None
                return scores
        return Gather()

    def close(self) -> None:
        """Remove the hooks from the model."""
        for handle in self.handles:
            handle.remove()

    def logprobs(self, rows: int, width: int) -> Any:
        """(rows, width) numpy log-probabilities of the returned answer tokens: the recorded steps
        are the last columns (an encoder-decoder's answer starts with its decoder start token, which
        no step produced)."""
        import torch

        out = np.full((rows, width), np.nan)
        if self.steps:
            steps = (
                torch.stack(self.steps, dim=1).numpy()[:, -width:] if width else np.zeros((rows, 0))
            )
            if steps.shape[0] == rows:
                out[:, width - steps.shape[1]:] = steps
        return out


def _token_offsets(tokenizer: Any, row: list[int], raw: str, skip_special: bool) -> tuple[Any, Any]:
    """(start, end) character offsets in ``raw`` (the row's decode) of each token, by incremental
    detokenisation: a token's text is what decoding a few tokens before it and itself adds to
    decoding those before it alone (decoding one token alone loses SentencePiece's spaces and splits
    multi-byte characters)."""
    window = 6
    lows = [max(0, i - window) for i in range(len(row))]
    with_token = tokenizer.batch_decode([row[lo:i + 1] for i, lo in enumerate(lows)],
                                        skip_special_tokens=skip_special)
    without = tokenizer.batch_decode([row[lo:i] for i, lo in enumerate(lows)],
                                     skip_special_tokens=skip_special)
    length = np.array([max(len(a) - len(b), 0) for a, b in zip(with_token, without)],
                      dtype=np.int64)
    end = np.minimum(np.cumsum(length), len(raw))
    return end - np.minimum(length, end), end


def _input_sizes(loaded: LoadedModel, inputs: Any, n: int) -> list[tuple[int, int] | None]:
    """The resized input of each image as (width, height): Qwen-VL processors report a patch grid
    (t, h, w)."""
    grid = inputs.get("image_grid_thw")
    patch = getattr(getattr(loaded.processor, "image_processor", None), "patch_size", None)
    if grid is None or not patch:
        return [None] * n
    return [(int(w) * patch, int(h) * patch) for _, h, w in grid.tolist()]
