"""The model families ``vlbench predict`` knows: how each is asked and how its answer is read. One
table.

A family is found from ``config.model_type`` (read before any weight loads). A detector family names
how its text queries are sent and its boxes read back (:mod:`vlbench.predict.detectors`). An
image-text-to-text family has a :class:`Preset` per answer kind it can give:

- ``text``: a caption;
- ``box``: one box for a referring expression, the prompt holding ``{expression}``;
- ``boxes``: labelled boxes for a label list, the prompt holding ``{labels}``.

Each preset says the prompt (or task token), whether it goes through the processor's chat template
or as the processor's own text, the box convention (:data:`vlbench.predict.parsers.BOX_FORMATS`) and
where the family documents both. ``--prompt`` and ``--box-format`` override a preset; a family
without a preset for an answer kind (and the catch-all :data:`OTHER`) needs them, and says so before
the model loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..engine.errors import InputError
from .parsers import BOX_FORMATS, check_box_format

__all__ = ["Preset", "Family", "FAMILIES", "OTHER", "family_of", "family_named", "DETECTOR",
           "GENERATOR", "ANSWER_KINDS", "render_prompt"]

DETECTOR, GENERATOR = "detector", "image-text-to-text"
#: answer kind -> the field its prompt template must hold
ANSWER_KINDS = {"text": None, "box": "{expression}", "boxes": "{labels}"}


@dataclass(frozen=True)
class Preset:
    """How a family is asked one kind of question and how its answer is read."""

    #: the prompt: ``{expression}`` (box) or ``{labels}`` (boxes) is filled in
    prompt: str
    #: the answer's box convention (None for captions)
    box_format: str | None = None
    #: True: the processor's chat template builds the input; False: the prompt is the processor's
    #: own text (task tokens and prefixes of families trained without a chat turn: Florence-2,
    #: PaliGemma, Kosmos-2)
    chat: bool = True
    #: how the labels of ``{labels}`` are joined
    separator: str = ", "


@dataclass(frozen=True)
class Family:
    """A model family: its ``model_type`` values, kind, presets per answer kind, and where it
    documents them."""

    name: str
    model_types: tuple[str, ...]
    kind: str
    docs: str
    presets: Mapping[str, Preset] = field(default_factory=dict)
    #: detectors: how queries are sent and boxes read (a function name in
    #: :mod:`vlbench.predict.detectors`)
    detector: str | None = None
    #: packages the family's processor imports beyond torch / transformers (import name -> pip name)
    needs: Mapping[str, str] = field(default_factory=dict)

    def preset(self, answer_kind: str, prompt: str | None = None,
               box_format: str | None = None) -> Preset:
        """The preset for ``answer_kind`` with ``--prompt`` / ``--box-format`` applied; a clear
        error when the family has none and the user gave none (checked before the model loads)."""
        base = self.presets.get(answer_kind) or OTHER.presets.get(answer_kind)
        if base is None:
            raise InputError(f"no prompt for answers of kind {answer_kind!r}", fix="pass --prompt")
        if (
            answer_kind not in self.presets
            and self is not OTHER
            and prompt is None
            and box_format is None
        ):
            raise InputError(f"{self.name} models have no documented way to answer with "
                             f"{'a caption' if answer_kind == 'text' else 'boxes'}",
                             fix="pass --prompt (and --box-format for boxes) to try anyway, or use "
                                 "a model of the families in 'vlbench predict --help'")
        chosen = Preset(prompt if prompt is not None else base.prompt,
                        box_format if box_format is not None else base.box_format,
                        base.chat, base.separator)
        field_name = ANSWER_KINDS[answer_kind]
        if field_name and field_name not in chosen.prompt:
            raise InputError(f"the prompt must hold {field_name} where the "
                             f"{field_name.strip('{}')} goes",
                             fix=f"pass e.g. --prompt '{base.prompt}'")
        if answer_kind != "text":
            if chosen.box_format is None:
                raise InputError(
                    f"no known box convention for {self.name} models",
                    fix="pass --box-format, one of: "
                    + ", ".join(f"{k} ({v})" for k, v in BOX_FORMATS.items()),
                )
            check_box_format(chosen.box_format)
        return chosen


def render_prompt(preset: Preset, answer_kind: str, queries: tuple[str, ...]) -> str:
    """The prompt of one item: the expression (box) or the label list (boxes) put into the preset's
    template."""
    if answer_kind == "box":
        return preset.prompt.replace("{expression}", queries[0])
    if answer_kind == "boxes":
        return preset.prompt.replace("{labels}", preset.separator.join(queries))
    return preset.prompt


_QWEN_JSON_BOX = (
    'Locate "{expression}" in the image, output its bbox coordinates using JSON format.'
)
_QWEN_JSON_BOXES = ('Locate every instance that belongs to the following categories: "{labels}". '
                    'Report bbox coordinates in JSON format.')
_QWEN_CAPTION = "Describe this image in one short sentence."

#: every family vlbench knows (model_type values as transformers names them)
FAMILIES: tuple[Family, ...] = (
    # -- zero-shot detectors -----------------------------------------------------------------------
    Family("OWL-ViT", ("owlvit",), DETECTOR,
           "https://huggingface.co/docs/transformers/model_doc/owlvit", detector="owl"),
    Family("OWLv2", ("owlv2",), DETECTOR,
           "https://huggingface.co/docs/transformers/model_doc/owlv2", detector="owl"),
    # LLMDet checkpoints load as mm-grounding-dino
    Family("Grounding DINO", ("grounding-dino", "mm-grounding-dino"), DETECTOR,
           "https://github.com/IDEA-Research/GroundingDINO (captions 'a . b .', token spans, "
           "groundingdino/util/vl_utils.py); "
           "https://huggingface.co/docs/transformers/model_doc/mm-grounding-dino",
           detector="grounding_dino"),
    Family("OmDet-Turbo", ("omdet-turbo",), DETECTOR,
           "https://huggingface.co/docs/transformers/model_doc/omdet-turbo",
           detector="omdet_turbo", needs={"torchvision": "torchvision"}),
    # -- image-text-to-text ------------------------------------------------------------------------
    Family("Qwen2-VL", ("qwen2_vl",), GENERATOR,
           "https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct (grounding with "
           "<|object_ref_start|>...; boxes <|box_start|>(x1,y1),(x2,y2)<|box_end|> on a 0-1000 "
           "grid)",
           presets={"text": Preset(_QWEN_CAPTION),
                    "box": Preset("<|object_ref_start|>{expression}<|object_ref_end|>",
                                  "grid-1000"),
                    "boxes": Preset("Find every object of these categories: {labels}. Give each as "
                                    "<|object_ref_start|>category<|object_ref_end|><|box_start|>(x1,y1),(x2,y2)"
                                    "<|box_end|>.", "grid-1000")},
           needs={"torchvision": "torchvision"}),
    Family("Qwen2.5-VL", ("qwen2_5_vl",), GENERATOR,
           "https://github.com/QwenLM/Qwen2.5-VL/blob/main/cookbooks/spatial_understanding.ipynb "
           "(JSON bbox_2d in pixels of the resized input)",
           presets={"text": Preset(_QWEN_CAPTION), "box": Preset(_QWEN_JSON_BOX, "pixel-resized"),
                    "boxes": Preset(_QWEN_JSON_BOXES, "pixel-resized")},
           needs={"torchvision": "torchvision"}),
    Family("Qwen3-VL / Qwen3.5", ("qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"), GENERATOR,
           "https://github.com/QwenLM/Qwen3-VL/blob/main/cookbooks/2d_grounding.ipynb (JSON "
           "bbox_2d on a 0-1000 grid)",
           presets={"text": Preset(_QWEN_CAPTION), "box": Preset(_QWEN_JSON_BOX, "grid-1000"),
                    "boxes": Preset(_QWEN_JSON_BOXES, "grid-1000")},
           needs={"torchvision": "torchvision"}),
    Family("InternVL", ("internvl",), GENERATOR,
           "https://internvl.readthedocs.io/en/latest/ (grounding: <ref>...</ref> answered "
           "<box>[[x1, y1, x2, y2]]</box> on a 0-1000 grid)",
           presets={"text": Preset(_QWEN_CAPTION),
                    "box": Preset("Please provide the bounding box coordinate of the region this "
                                  "sentence describes: <ref>{expression}</ref>", "grid-1000"),
                    "boxes": Preset("Please detect every object of these categories in the image: "
                                    "{labels}. Answer each as <ref>category</ref><box>[[x1, y1, "
                                    "x2, y2]]</box>.",
                                    "grid-1000")},
           needs={"torchvision": "torchvision"}),
    Family("GLM-4.1V / GLM-4.5V", ("glm4v", "glm4v_moe", "glm46v"), GENERATOR,
           "https://github.com/zai-org/GLM-V (boxes <|begin_of_box|>[x1, y1, x2, y2]<|end_of_box|> "
           "on a 0-1000 grid)",
           presets={"text": Preset(_QWEN_CAPTION),
                    "box": Preset("Give the bounding box of {expression} in the image.",
                                  "grid-1000")},
           needs={"torchvision": "torchvision"}),
    Family("PaliGemma", ("paligemma",), GENERATOR,
           "https://ai.google.dev/gemma/docs/paligemma/prompt-system-instructions ('caption en', "
           "'detect a ; b'; answers <locYYYY><locXXXX>... y first, decoded b / 1023 as big_vision "
           "does)",
           presets={"text": Preset("<image>caption en", chat=False),
                    "box": Preset("<image>detect {expression}", "loc-1024", chat=False),
                    "boxes": Preset("<image>detect {labels}", "loc-1024", chat=False,
                                    separator=" ; ")}),
    Family("Florence-2", ("florence2",), GENERATOR,
           "https://huggingface.co/microsoft/Florence-2-large (task tokens <CAPTION>, "
           "<CAPTION_TO_PHRASE_GROUNDING>; answers <loc_x1><loc_y1><loc_x2><loc_y2>, bin centres "
           "of 1000)",
           presets={"text": Preset("<CAPTION>", chat=False),
                    "box": Preset("<CAPTION_TO_PHRASE_GROUNDING>{expression}", "loc-1000",
                                  chat=False),
                    "boxes": Preset("<CAPTION_TO_PHRASE_GROUNDING>{labels}", "loc-1000", chat=False,
                                    separator=". ")}),
    Family("Kosmos-2", ("kosmos-2",), GENERATOR,
           "https://huggingface.co/microsoft/kosmos-2-patch14-224 ('<grounding>' prompts; boxes as "
           "<patch_index_NNNN> pairs of a 32x32 grid, the processor's post_process_generation)",
           presets={"text": Preset("An image of", chat=False),
                    "box": Preset("<grounding><phrase> {expression}</phrase>", "patch-32",
                                  chat=False)}),
    Family("LLaVA-1.5", ("llava",), GENERATOR,
           "https://github.com/haotian-liu/LLaVA (RefCOCO prompt; boxes as fractions of the image "
           "padded to a centred square, expand2square)",
           presets={"text": Preset("Describe this image in one short sentence."),
                    "box": Preset("Please provide the bounding box coordinate of the region this "
                                  "sentence describes: {expression}", "normalized-square")}),
    Family("Idefics3", ("idefics3",), GENERATOR,
           "https://huggingface.co/docs/transformers/model_doc/idefics3",
           presets={"text": Preset("Describe this image in one short sentence.")}),
    Family("SmolVLM", ("smolvlm",), GENERATOR,
           "https://huggingface.co/docs/transformers/model_doc/smolvlm",
           presets={"text": Preset("Describe this image in one short sentence.")},
           needs={"num2words": "num2words", "torchvision": "torchvision"}),
)

#: any other image-text-to-text model: vlbench's own wording through the chat template; boxes need
#: --box-format
OTHER = Family("other", (), GENERATOR, "vlbench's own prompts",
               presets={"text": Preset("Describe this image in one short sentence."),
                        "box": Preset("Locate the object this expression refers to and give its "
                                      "bounding box as [x1, y1, x2, y2]: {expression}"),
                        "boxes": Preset('Find every object in the image that matches one of these '
                                        'labels: {labels}. Answer with a JSON list of {"bbox_2d": '
                                        '[x1, y1, x2, y2], "label": <one of the labels>}, or [] if '
                                        'none is present.')})


def family_named(name: str | None) -> Family:
    """A family by its name or one of its ``model_type`` values (None: :data:`OTHER`), for harness
    task packs."""
    if name is None:
        return OTHER
    key = name.casefold()
    for family in FAMILIES:
        if key == family.name.casefold() or key in family.model_types:
            return family
    raise InputError(
        f"unknown model family {name!r}",
        fix="use one of: " + ", ".join(f.name for f in FAMILIES if f.kind == GENERATOR),
    )


def family_of(model_type: str | None, kind: str) -> Family:
    """The family of a ``config.model_type`` (the catch-all :data:`OTHER` for an unknown
    image-text-to-text model)."""
    for family in FAMILIES:
        if (model_type or "").lower() in family.model_types:
            return family
    if kind == DETECTOR:
        raise InputError(
            f"no known way to run zero-shot detector type {model_type!r}",
            fix="use one of: " + ", ".join(f.name for f in FAMILIES if f.kind == DETECTOR),
        )
    return OTHER
