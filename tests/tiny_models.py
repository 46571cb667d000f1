"""Tiny randomly initialised models of every family ``vlbench predict`` claims, built from configs,
offline (no download): each is the family's real transformers model class with a few layers, saved
with the family's real processor class into a folder that ``vlbench predict --model`` loads.

Tokenizers are built in code: a byte-level BPE without merges (any text encodes, one token per byte)
carrying the family's special tokens (Qwen's ``<|object_ref_start|>``, InternVL's ``<IMG_CONTEXT>``,
Florence-2's ``<loc_N>``, PaliGemma's ``<locNNNN>``...), or, for the detectors, a character-level
CLIP BPE / BERT WordPiece (Grounding DINO's text attention needs BERT's ids 101, 102, 1012 '.' and
1029 '?'). Chat templates follow each family's turn format. Outputs are meaningless; what they
exercise is the loop, the processors and the file formats. ``BUILDERS`` lists them by family name
(the names of :data:`vlbench.predict.families.FAMILIES`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

_SMALL = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
          "num_attention_heads": 2}


# -- tokenizers ------------------------------------------------------------------------------------
def byte_tokenizer(specials: list[str], named: dict[str, str], extra: dict[str, str] | None = None,
                   **kwargs):
    """A byte-level BPE (one token per byte) with ``named`` special tokens (bos / eos / pad / unk),
    ``extra`` named tokens (attributes such as ``image_token``) and other ``specials``, each one
    token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    backend = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(bytes_to_unicode().values())},
                                   merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(list(dict.fromkeys([*named.values(), *(extra or {}).values(),
                                                   *specials])))
    return PreTrainedTokenizerFast(tokenizer_object=backend, extra_special_tokens=extra or {},
                                   **named, **kwargs)


def clip_tokenizer(max_length: int):
    """A CLIP BPE over single bytes (no merges); id 0 unused (OWL-ViT reads a query starting with 0
    as padding)."""
    from transformers import CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    chars = list(bytes_to_unicode().values())
    vocab = {t: i for i, t in enumerate(["<unused>", "<|startoftext|>", "<|endoftext|>"] + chars
                                        + [c + "</w>" for c in chars])}
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=max_length)


def bert_tokenizer():
    """A lower-casing character-level WordPiece with BERT's ids for [CLS] 101, [SEP] 102, '.' 1012
    and '?' 1029."""
    from transformers import BertTokenizer

    chars = (
        [chr(c) for c in range(97, 123)]
        + [str(d) for d in range(10)]
        + list(",-'!\"#$%&()*+/:;<=>@[\\]^_`{|}~")
    )
    vocab = ["[PAD]"] + [f"[unused{i}]" for i in range(100)]
    vocab[100:] = ["[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars]
    vocab += [f"[filler{i}]" for i in range(len(vocab), 1012)] + ["."]
    vocab += [f"[filler{i}]" for i in range(1013, 1029)] + ["?"]
    return BertTokenizer(vocab={t: i for i, t in enumerate(vocab)}, model_max_length=256)


def _text(tokenizer, **extra) -> dict:
    """A tiny decoder's config fields with the tokenizer's vocabulary and special ids."""
    return {**_SMALL, "vocab_size": len(tokenizer), "num_key_value_heads": 1,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id, **extra}


def _save(folder: Path, model_class, config, processor) -> Path:
    import torch

    torch.manual_seed(0)
    model_class(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


# -- zero-shot detectors ---------------------------------------------------------------------------
def tiny_owlvit(folder: Path, *, width: int = 32, layers: int = 2, image_size: int = 64,
                patch_size: int = 16, v2: bool = False) -> Path:
    """OWL-ViT (or OWLv2): ``layers``-layer towers ``width`` wide, square ``image_size`` input cut
    into ``patch_size`` patches (one box each), 16-token queries. The defaults make it tiny (16
    boxes)."""
    import transformers as T

    tokenizer = clip_tokenizer(16)
    tower = {"hidden_size": width, "intermediate_size": 4 * width if width > 32 else 64,
             "num_hidden_layers": layers, "num_attention_heads": max(2, width // 64)}
    config_class, model_class, processor_class = (
        (T.Owlv2Config, T.Owlv2ForObjectDetection, T.Owlv2Processor)
        if v2
        else (T.OwlViTConfig, T.OwlViTForObjectDetection, T.OwlViTProcessor)
    )
    config = config_class(text_config={**tower, "vocab_size": len(tokenizer.get_vocab()),
                                       "max_position_embeddings": 16,
                                       "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2},
                          vision_config={**tower, "image_size": image_size,
                                         "patch_size": patch_size},
                          projection_dim=width)
    size = {"height": image_size, "width": image_size}
    image_processor = (T.Owlv2ImageProcessor(size=size) if v2
                       else T.OwlViTImageProcessor(size=size, crop_size=size))
    return _save(folder, model_class, config,
                 processor_class(image_processor=image_processor, tokenizer=tokenizer))


def tiny_grounding_dino(folder: Path, *, mm: bool = False) -> Path:
    """Grounding DINO (or MM-Grounding-DINO): a 4-stage Swin backbone 16 wide, a 1-layer BERT, 20
    object queries."""
    import transformers as T

    tokenizer = bert_tokenizer()
    config_class, model_class = (
        (T.MMGroundingDinoConfig, T.MMGroundingDinoForObjectDetection)
        if mm
        else (T.GroundingDinoConfig, T.GroundingDinoForObjectDetection)
    )
    config = config_class(
        backbone_config=T.SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1],
                                     num_heads=[1, 1, 1, 1], window_size=4,
                                     out_features=["stage2", "stage3", "stage4"]),
        text_config=T.BertConfig(vocab_size=len(tokenizer.get_vocab()), hidden_size=32,
                                 num_hidden_layers=1,
                                 num_attention_heads=2, intermediate_size=37,
                                 max_position_embeddings=256),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        encoder_attention_heads=2, decoder_attention_heads=2, num_queries=20, num_feature_levels=3,
        encoder_n_points=2, decoder_n_points=2, max_text_len=256, fusion_droppath=0.0)
    image_processor = T.GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 96})
    return _save(folder, model_class, config,
                 T.GroundingDinoProcessor(image_processor=image_processor,
                                                                        tokenizer=tokenizer))


def tiny_omdet_turbo(folder: Path) -> Path:
    """OmDet-Turbo: a 4-stage Swin backbone 8 wide (HF's, not timm's), a 1-layer CLIP text tower, 20
    queries."""
    import transformers as T

    tokenizer = clip_tokenizer(77)
    text = {"model_type": "clip_text_model", "vocab_size": len(tokenizer.get_vocab()),
            "hidden_size": 16,
            "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "max_position_embeddings": 77, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2}
    backbone = {"model_type": "swin", "embed_dim": 8, "depths": (1, 1, 1, 1),
                "num_heads": (1, 1, 1, 1), "window_size": 4, "image_size": 64,
                "out_indices": (2, 3, 4)}
    # the class embedding must differ from the decoder width (transformers leaves task_project unset
    # otherwise)
    config = T.OmDetTurboConfig(
        text_config=text, backbone_config=backbone, use_timm_backbone=False,
        apply_layernorm_after_vision_backbone=False, image_size=64,
        encoder_in_channels=(16, 32, 64),
        vision_features_channels=[12, 12, 12], encoder_hidden_dim=12, decoder_hidden_dim=12,
        class_embed_dim=16,
        text_projection_in_dim=16, text_projection_out_dim=16, encoder_layers=1,
        decoder_num_layers=1,
        encoder_projection_indices=[2], encoder_attention_heads=2, decoder_num_heads=2,
        decoder_num_points=2,
        num_feature_levels=3, encoder_dim_feedforward=24, task_encoder_hidden_dim=24,
        decoder_dim_feedforward=24, num_queries=20)
    image_processor = T.DetrImageProcessor(size={"height": 64, "width": 64}, do_pad=False)
    return _save(folder, T.OmDetTurboForObjectDetection, config,
                 T.OmDetTurboProcessor(image_processor=image_processor, tokenizer=tokenizer))


# -- image-text-to-text ----------------------------------------------------------------------------
_QWEN_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                  "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else "
                  "%}{{ c['text'] }}"
                  "{% endif %}{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt "
                  "%}<|im_start|>assistant\n"
                  "{% endif %}")
_QWEN_SPECIALS = ["<|im_start|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                  "<|video_pad|>",
                  "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>"]


def tiny_qwen_vl(folder: Path, version: str, *, specials: tuple[str, ...] = ()) -> Path:
    """Qwen2-VL ("2"), Qwen2.5-VL ("2.5"), Qwen3-VL ("3") or Qwen3.5 ("3.5"): a 1-block vision tower
    with the family's patch size (14, or 16 from Qwen3), a 1-layer decoder (Qwen3.5: one linear- and
    one full-attention layer). Images are resized as the released processors do (between 4 and 1,280
    merged patches: a 1920x480 image keeps its size to the nearest patch multiple, larger ones are
    scaled down)."""
    import transformers as T

    tokenizer = byte_tokenizer([*_QWEN_SPECIALS, *specials],
                               {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in ("<|image_pad|>", "<|video_pad|>",
                                                           "<|vision_start|>",
                                                            "<|vision_end|>")}
    patch = 14 if version in ("2", "2.5") else 16
    image_processor = T.Qwen2VLImageProcessor(patch_size=patch, min_pixels=(2 * patch) ** 2 * 4,
                                              max_pixels=(2 * patch) ** 2 * 1280)
    text = _text(tokenizer, max_position_embeddings=4096)
    mrope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
             "mrope_interleaved": True}
    vision = {"depth": 1, "hidden_size": 32, "out_hidden_size": 32, "intermediate_size": 64,
              "num_heads": 2, "patch_size": patch, "spatial_merge_size": 2}
    if version == "2":
        classes = (T.Qwen2VLProcessor, T.Qwen2VLVideoProcessor, T.Qwen2VLConfig,
                   T.Qwen2VLForConditionalGeneration)
        vision = {"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                  "patch_size": 14, "spatial_merge_size": 2}
        text["rope_scaling"] = {"type": "mrope", "mrope_section": [2, 3, 3]}
    elif version == "2.5":
        classes = (T.Qwen2_5_VLProcessor, T.Qwen2VLVideoProcessor, T.Qwen2_5_VLConfig,
                   T.Qwen2_5_VLForConditionalGeneration)
        vision.update(window_size=56, fullatt_block_indexes=[0])
        text["rope_scaling"] = {"type": "mrope", "mrope_section": [2, 3, 3]}
    elif version == "3":
        classes = (T.Qwen3VLProcessor, T.Qwen3VLVideoProcessor, T.Qwen3VLConfig,
                   T.Qwen3VLForConditionalGeneration)
        vision.update(num_position_embeddings=64, deepstack_visual_indexes=[0])
        text.update(head_dim=16, rope_parameters=mrope)
    else:
        classes = (T.Qwen3VLProcessor, T.Qwen3VLVideoProcessor, T.Qwen3_5Config,
                   T.Qwen3_5ForConditionalGeneration)
        vision.update(num_position_embeddings=64)
        text.update(num_hidden_layers=2, head_dim=16,
                    layer_types=["linear_attention", "full_attention"],
                    linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
                    linear_num_value_heads=2,
                    rope_parameters={**mrope, "partial_rotary_factor": 1.0})
    processor_class, video_class, config_class, model_class = classes
    config = config_class(
        vision_config=vision,
        text_config=text,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        **({"vision_end_token_id": ids["<|vision_end|>"]} if version in ("3", "3.5") else {}),
    )
    processor = processor_class(image_processor=image_processor, tokenizer=tokenizer,
                                video_processor=video_class(), chat_template=_QWEN_TEMPLATE)
    return _save(folder, model_class, config, processor)


def scripted_qwen_vl(folder: Path, answer: list[str], margins: list[float]) -> Path:
    """A tiny Qwen2-VL whose greedy answer to any chat prompt is ``answer`` (tokens: each a single
    character or one of its special tokens, none twice, ending with ``<|im_end|>``), the token after
    ``answer[i - 1]`` (the prompt's last token, a newline, for i = 0) winning by the logit margin
    ``margins[i]`` over every other token of the vocabulary.

    How: attention and MLP outputs are zeroed, so the last hidden state is RMSNorm(embedding of the
    current token); the chain's tokens get one-hot embeddings e_i and the output layer's only
    non-zero weight per step puts ``margin`` on the next token. So p(answer[i]) = exp(m_i) /
    (exp(m_i) + V - 1) exactly (V the output vocabulary)."""
    import torch
    import transformers as T

    tiny_qwen_vl(folder, "2", specials=tuple(t for t in answer if len(t) > 1 and t != "<|im_end|>"))
    model = T.Qwen2VLForConditionalGeneration.from_pretrained(folder)
    tokenizer = T.AutoTokenizer.from_pretrained(folder)
    text = model.config.text_config
    chain = [
        tokenizer.convert_tokens_to_ids(t) if len(t) > 1 else tokenizer.encode(t)[0]
        for t in ["\n", *answer]
    ]
    assert len(set(chain)) == len(chain) and len(chain) <= text.hidden_size
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if name.endswith(("o_proj.weight", "down_proj.weight")) and "visual" not in name:
                weight.zero_()
            elif "norm" in name and "visual" not in name:
                weight.fill_(1.0)
        embed, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
        assert embed.data_ptr() != head.data_ptr()
        head.zero_()
        # RMSNorm(e_i) = e_i / scale
        scale = (1 / text.hidden_size + text.rms_norm_eps) ** 0.5
        for i, (token, following) in enumerate(zip(chain, chain[1:])):
            embed[token] = 0.0
            embed[token, i] = 1.0
            head[following, i] = margins[i] * scale
    model.save_pretrained(folder)
    return folder


def tiny_internvl(folder: Path) -> Path:
    """InternVL (transformers' InternVL3 port): 28x28 tiles of 14-pixel patches, one image token per
    tile, a 1-layer Qwen2 decoder; ``<ref>`` / ``<box>`` tags as tokens."""
    import transformers as T

    extra = {"start_image_token": "<img>", "end_image_token": "</img>",
             "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"}
    tokenizer = byte_tokenizer(["<|im_start|>", "<ref>", "</ref>", "<box>", "</box>"],
                               {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, extra)
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<IMG_CONTEXT>\n{% else %}{{ c['text'] }}{% endif "
                "%}{% endfor %}<|im_end|>\n"
                "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    image_processor = T.GotOcr2ImageProcessor(size={"height": 28, "width": 28},
                                              crop_to_patches=False)
    processor = T.InternVLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                    video_processor=T.InternVLVideoProcessor(), image_seq_length=1,
                                    chat_template=template)
    config = T.InternVLConfig(vision_config={**_SMALL, "image_size": (28, 28),
                                             "patch_size": (14, 14)},
                              text_config=_text(tokenizer, model_type="qwen2", bos_token_id=None),
                              image_token_id=tokenizer.context_image_token_id, image_seq_length=1)
    return _save(folder, T.InternVLForConditionalGeneration, config, processor)


def tiny_glm4v(folder: Path) -> Path:
    """GLM-4.1V: a 1-block vision tower of 14-pixel patches, a 1-layer GLM decoder (partial rotary,
    3D rope)."""
    import transformers as T

    names = ["<|begin_of_image|>", "<|end_of_image|>", "<|image|>", "<|video|>",
             "<|begin_of_video|>",
             "<|end_of_video|>", "<|begin_of_box|>", "<|end_of_box|>", "<|user|>", "<|assistant|>",
             "[gMASK]", "<sop>"]
    tokenizer = byte_tokenizer(names, {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"})
    template = ("[gMASK]<sop>{% for m in messages %}<|{{ m['role'] }}|>\n{% for c in "
                "m['content'] %}"
                "{% if c['type'] == 'image' %}<|begin_of_image|><|image|><|end_of_image|>{% else "
                "%}{{ c['text'] }}"
                "{% endif %}{% endfor %}{% endfor %}{% if add_generation_prompt "
                "%}<|assistant|>\n{% endif %}")
    image_processor = T.Glm4vImageProcessor(patch_size=14, size={"shortest_edge": 28 * 28 * 4,
                                                                 "longest_edge": 28 * 28 * 64})
    processor = T.Glm4vProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                 video_processor=T.Glm4vVideoProcessor(), chat_template=template)
    ids = {n: tokenizer.convert_tokens_to_ids(n) for n in names}
    config = T.Glm4vConfig(
        vision_config={"depth": 1, "hidden_size": 32, "out_hidden_size": 32,
                       "intermediate_size": 64, "num_heads": 2,
                       "patch_size": 14, "spatial_merge_size": 2, "image_size": 56},
        text_config=_text(tokenizer, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                      "mrope_section": [1, 1, 2],
                                                      "partial_rotary_factor": 0.5}),
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
        image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
        video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"])
    return _save(folder, T.Glm4vForConditionalGeneration, config, processor)


def tiny_paligemma(folder: Path) -> Path:
    """PaliGemma: a 1-layer SigLIP on 28x28 inputs (4 image tokens), a 1-layer Gemma, the 1024
    ``<locNNNN>`` tokens."""
    import transformers as T

    tokenizer = byte_tokenizer(["<image>"],
                               {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"},
                               add_bos_token=True)
    tokenizer.add_tokens([f"<loc{i:04d}>" for i in range(1024)])
    image_processor = T.SiglipImageProcessor(size={"height": 28, "width": 28})
    image_processor.image_seq_length = 4
    config = T.PaliGemmaConfig(
        vision_config={**_SMALL, "model_type": "siglip_vision_model", "image_size": 28,
                       "patch_size": 14, "projection_dim": 32},
        text_config=_text(tokenizer, model_type="gemma", head_dim=16),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), projection_dim=32)
    return _save(folder, T.PaliGemmaForConditionalGeneration, config,
                 T.PaliGemmaProcessor(image_processor=image_processor, tokenizer=tokenizer))


def tiny_florence2(folder: Path) -> Path:
    """Florence-2: a 4-stage DaViT on 64x64 inputs, a 1+1-layer BART (an encoder-decoder), the 1000
    ``<loc_N>`` tokens."""
    import transformers as T

    tokenizer = byte_tokenizer([], {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                                    "unk_token": "<unk>"}, {"image_token": "<image>"})
    tokenizer.add_tokens([f"<loc_{i}>" for i in range(1000)])
    image_processor = T.CLIPImageProcessor(size={"height": 64, "width": 64}, do_center_crop=False)
    image_processor.image_seq_length = 5
    config = T.Florence2Config(
        vision_config={"depths": (1, 1, 1, 1), "embed_dim": (8, 16, 16, 32),
                       "num_heads": (1, 1, 1, 2),
                       "num_groups": (1, 1, 1, 2), "window_size": 2, "projection_dim": 32,
                       "drop_path_rate": 0.0},
        text_config={"model_type": "bart", "vocab_size": len(tokenizer), "d_model": 32,
                     "encoder_layers": 1,
                     "decoder_layers": 1, "encoder_attention_heads": 2,
                     "decoder_attention_heads": 2,
                     "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "max_position_embeddings": 512,
                     "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
                     "pad_token_id": tokenizer.pad_token_id,
                     "decoder_start_token_id": tokenizer.eos_token_id,
                     "forced_bos_token_id": tokenizer.bos_token_id},
        image_token_id=tokenizer.image_token_id)
    return _save(folder, T.Florence2ForConditionalGeneration, config,
                 T.Florence2Processor(image_processor=image_processor, tokenizer=tokenizer))


def tiny_kosmos2(folder: Path) -> Path:
    """Kosmos-2: a 1-layer CLIP vision tower on 28x28 inputs, 64 latent queries, a 1-layer decoder;
    the processor adds its tag and ``<patch_index_NNNN>`` tokens."""
    import transformers as T

    tokenizer = byte_tokenizer([], {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                                    "unk_token": "<unk>"})
    processor = T.Kosmos2Processor(image_processor=T.CLIPImageProcessor(size={"height": 28,
                                                                              "width": 28},
                                                                         do_center_crop=False),
                                   tokenizer=tokenizer)
    tok = processor.tokenizer
    config = T.Kosmos2Config(
        vision_config={**_SMALL, "image_size": 28, "patch_size": 14},
        text_config={"vocab_size": len(tok), "embed_dim": 32, "layers": 1, "attention_heads": 2,
                     "ffn_dim": 64,
                     "max_position_embeddings": 512, "bos_token_id": tok.bos_token_id,
                     "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id},
        latent_query_num=64)
    return _save(folder, T.Kosmos2ForConditionalGeneration, config, processor)


def tiny_llava(folder: Path) -> Path:
    """LLaVA-1.5: a 2-layer CLIP vision tower (images padded to a square, 32x32, 4 patches), a
    2-layer Llama."""
    import transformers as T

    tokenizer = byte_tokenizer(["<image>"],
                               {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                                             "unk_token": "<unk>"})
    template = ("{% for m in messages %}{{ m['role'].upper() + ': ' }}{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}{{ '<image>\\n' }}{% else %}{{ c['text'] }}{% endif "
                "%}{% endfor %}\n"
                "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}")
    image_processor = T.LlavaImageProcessor(size={"shortest_edge": 32},
                                            crop_size={"height": 32, "width": 32}, do_pad=True)
    processor = T.LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                 patch_size=16,
                                 vision_feature_select_strategy="default", chat_template=template,
                                 num_additional_image_tokens=1)
    small = {**_SMALL, "num_hidden_layers": 2}
    config = T.LlavaConfig(vision_config=T.CLIPVisionConfig(**small, image_size=32, patch_size=16,
                                                            projection_dim=32),
                           text_config=T.LlamaConfig(**_text(tokenizer, **small,
                                                             num_key_value_heads=2,
                                                             max_position_embeddings=512)),
                           image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
                           vision_feature_layer=-1, vision_feature_select_strategy="default")
    return _save(folder, T.LlavaForConditionalGeneration, config, processor)


def tiny_idefics3(folder: Path, *, smol: bool = False) -> Path:
    """Idefics3 (or SmolVLM): a 1-layer SigLIP on 28x28 inputs (one token after pixel shuffle), a
    1-layer Llama, no image splitting."""
    import transformers as T

    specials = (["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
                + [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)])
    tokenizer = byte_tokenizer(specials,
                               {"bos_token": "<|im_start|>", "eos_token": "<end_of_utterance>",
                                          "pad_token": "<|endoftext|>",
                                          "unk_token": "<|endoftext|>"})
    template = ("<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:{% for c in "
                "m['content'] %}"
                "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% "
                "endfor %}"
                "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% "
                "endif %}")
    sizes = {"size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 28},
             "do_image_splitting": False}
    if smol:
        processor = T.SmolVLMProcessor(image_processor=T.SmolVLMImageProcessor(**sizes),
                                       tokenizer=tokenizer,
                                       video_processor=T.SmolVLMVideoProcessor(), image_seq_len=1,
                                       chat_template=template)
        config_class, model_class = T.SmolVLMConfig, T.SmolVLMForConditionalGeneration
    else:
        processor = T.Idefics3Processor(image_processor=T.Idefics3ImageProcessor(**sizes),
                                        tokenizer=tokenizer, image_seq_len=1,
                                        chat_template=template)
        config_class, model_class = T.Idefics3Config, T.Idefics3ForConditionalGeneration
    config = config_class(vision_config={**_SMALL, "image_size": 28, "patch_size": 14},
                          text_config=_text(tokenizer, model_type="llama"),
                          image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=2)
    return _save(folder, model_class, config, processor)


#: family name (as :data:`vlbench.predict.families.FAMILIES` names it) -> a builder writing a tiny
#: model there
BUILDERS: dict[str, Callable[[Path], Path]] = {
    "OWL-ViT": tiny_owlvit,
    "OWLv2": lambda folder: tiny_owlvit(folder, v2=True),
    "Grounding DINO": tiny_grounding_dino,
    "MM-Grounding-DINO": lambda folder: tiny_grounding_dino(folder, mm=True),
    "OmDet-Turbo": tiny_omdet_turbo,
    "Qwen2-VL": lambda folder: tiny_qwen_vl(folder, "2"),
    "Qwen2.5-VL": lambda folder: tiny_qwen_vl(folder, "2.5"),
    "Qwen3-VL": lambda folder: tiny_qwen_vl(folder, "3"),
    "Qwen3.5": lambda folder: tiny_qwen_vl(folder, "3.5"),
    "InternVL": tiny_internvl,
    "GLM-4.1V": tiny_glm4v,
    "PaliGemma": tiny_paligemma,
    "Florence-2": tiny_florence2,
    "Kosmos-2": tiny_kosmos2,
    "LLaVA-1.5": tiny_llava,
    "Idefics3": tiny_idefics3,
    "SmolVLM": lambda folder: tiny_idefics3(folder, smol=True),
}
