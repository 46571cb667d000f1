"""Tiny randomly initialised models built from configs, offline (no download): an OWL-ViT detector and a LLaVA
image-text-to-text model, each saved with a processor into a folder that ``vlbench predict --model`` loads.

Their tokenizers are built in code (a byte-level CLIP BPE without merges; a word-level vocabulary), so nothing is
fetched. Their outputs are meaningless; what they exercise is the loop, the processors and the file formats.
"""

from __future__ import annotations

from pathlib import Path


def tiny_owlvit(folder: Path, *, width: int = 32, layers: int = 2, image_size: int = 64,
                patch_size: int = 16) -> Path:
    """OWL-ViT: ``layers``-layer text and vision towers ``width`` wide, square ``image_size`` input cut into
    ``patch_size`` patches (one box each), 16-token queries. The defaults make it tiny (16 boxes)."""
    import torch
    from transformers import CLIPTokenizer, OwlViTConfig, OwlViTForObjectDetection, OwlViTImageProcessor, OwlViTProcessor
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    chars = list(bytes_to_unicode().values())
    # id 0 is unused: OWL-ViT takes a query whose first id is 0 for padding
    vocab = {t: i for i, t in enumerate(["<unused>", "<|startoftext|>", "<|endoftext|>"] + chars
                                        + [c + "</w>" for c in chars])}
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=16)
    tower = {"hidden_size": width, "intermediate_size": 4 * width if width > 32 else 64,
             "num_hidden_layers": layers, "num_attention_heads": max(2, width // 64)}
    config = OwlViTConfig(text_config={**tower, "vocab_size": len(vocab), "max_position_embeddings": 16,
                                       "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2},
                          vision_config={**tower, "image_size": image_size, "patch_size": patch_size},
                          projection_dim=width)
    torch.manual_seed(0)
    OwlViTForObjectDetection(config).save_pretrained(folder)
    size = {"height": image_size, "width": image_size}
    OwlViTProcessor(image_processor=OwlViTImageProcessor(size=size, crop_size=size),
                    tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tiny_llava(folder: Path) -> Path:
    """LLaVA: a 2-layer CLIP vision tower (32x32 input, 4 patches) and a 2-layer Llama over a word-level vocabulary
    whose words can spell a box answer ("[ 0.1 , 0.2 , 0.5 , 0.9 ]")."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor, PreTrainedTokenizerFast)

    words = ["<pad>", "<s>", "</s>", "<unk>", "<image>", "USER:", "ASSISTANT:", "[", "]", ",", "0.1", "0.2", "0.5",
             "0.9", "a", "dog", "cat", "photo", "of", "the"]
    vocab = {w: i for i, w in enumerate(words)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##")           # joins words with spaces
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                        unk_token="<unk>", pad_token="<pad>")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    small = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
    config = LlavaConfig(vision_config=CLIPVisionConfig(**small, image_size=32, patch_size=16, projection_dim=32),
                         text_config=LlamaConfig(**small, vocab_size=len(vocab), num_key_value_heads=2,
                                                 max_position_embeddings=256, pad_token_id=0, bos_token_id=1,
                                                 eos_token_id=2),
                         image_token_id=vocab["<image>"], vision_feature_layer=-1,
                         vision_feature_select_strategy="default")
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    template = ("{% for m in messages %}{{ m['role'].upper() + ': ' }}{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}{{ '<image> ' }}{% else %}{{ c['text'] + ' ' }}{% endif %}{% endfor %}"
                "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}")
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=16,
                   vision_feature_select_strategy="default", chat_template=template,
                   num_additional_image_tokens=1).save_pretrained(folder)
    return folder
