"""Scores of generated boxes from the model's own token probabilities (vlbench.predict.confidence).

The log-probabilities ``vlbench predict`` records while it generates are checked against an
independent computation: the same greedy answer fed back to the model in one teacher-forced forward
pass, whose log-softmax at each answer position is read at the answer's token. The box score is then
checked by hand on a written answer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PIL import Image

from vlbench.predict.confidence import TokenScores, box_confidence, strip_with_offsets

torch = pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("transformers", reason="predict needs transformers (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    from tiny_models import tiny_qwen_vl
    from vlbench.predict import models

    folder = str(tiny_qwen_vl(tmp_path_factory.mktemp("qwen") / "qwen2vl", "2"))
    info = models.inspect_model(folder)
    preset = info.family.preset("boxes", None, None)
    torch.manual_seed(0)
    return models.load_model(folder, info, device="cpu", preset=preset), preset


def _item(seed: int):
    from vlbench.benchmarks.protocol.predicting import PredictItem

    pixels = np.random.default_rng(seed).integers(0, 255, (56, 84, 3), dtype=np.uint8)
    return PredictItem(f"k{seed}", Image.fromarray(pixels), ("red car", "cup"))


def test_recorded_log_probabilities_equal_a_teacher_forced_forward_pass(qwen):
    """For each of two items (one batch, left-padded): the greedy answer's tokens, fed back after
    the prompt in one forward pass, have log-softmax(logits) at their positions equal to what
    generate recorded (float32 noise only); and the token offsets cut the answer text into the
    tokens' own texts (a byte tokenizer: one character per token, special tokens writing
    nothing)."""
    from vlbench.predict import models
    from vlbench.predict.families import render_prompt

    loaded, preset = qwen
    items = [_item(1), _item(2)]
    prompts = [render_prompt(preset, "boxes", it.queries) for it in items]
    answers = models.generate(loaded, items, prompts, preset, max_new_tokens=12, text_answer=False,
                              token_scores=True)
    tokenizer = loaded.processor.tokenizer
    for n, (item, prompt, answer) in enumerate(zip(items, prompts, answers)):
        # this row alone: no padding
        inputs = models._inputs(loaded, [item], [prompt], preset)
        with torch.inference_mode():
            seq = loaded.model.generate(**inputs, do_sample=False, num_beams=1, max_new_tokens=12)
            length = inputs["input_ids"].shape[1]
            forced = dict(inputs, input_ids=seq, attention_mask=torch.ones_like(seq))
            if "mm_token_type_ids" in inputs:       # the answer's tokens are text
                forced["mm_token_type_ids"] = torch.nn.functional.pad(inputs["mm_token_type_ids"],
                                                                      (0, seq.shape[1] - length))
            logits = loaded.model(**forced).logits[0, length - 1:-1].float()
        new = seq[0, length:]
        expected = torch.log_softmax(logits, -1).gather(1, new[:, None])[:, 0].numpy()
        got = answer.tokens.logprob[-len(expected):]
        assert np.allclose(got, expected, atol=1e-4), (n, got, expected)
        assert np.all(np.isfinite(got)) and np.all(got <= 0)
        pieces = [answer.text[s:e] for s,
                  e in zip(answer.tokens.start.tolist(), answer.tokens.end.tolist())]
        assert "".join(pieces) == answer.text
        written = [tokenizer.decode([t]) for t in new.tolist()]
        assert all(p == w or (p == "" and w in tokenizer.all_special_tokens) or p == w.strip()
                   for p, w in zip(pieces, written)), (pieces, written)


def test_a_box_is_scored_by_the_geometric_mean_of_its_tokens_probabilities():
    """Answer 'car(1,2),(3,4) cup(5,6),(7,8)' written by 4 tokens: 'car(1,2),' (chars 0-9), '(3,4)'
    (9-14), ' cup(5,6),(7,8)' (14-29) and an end token that wrote nothing (29-29), with
    log-probabilities -0.2, -0.6, -0.1, -1.0. The grid-1000 parser's first box spans
    'car(1,2),(3,4)' (0-14): tokens 0 and 1, score exp(-0.4); the second ' cup(5,6),(7,8)' (14-29):
    token 2 alone, exp(-0.1). A span no token covers falls back to the mean of the tokens that wrote
    something: exp(-0.3). No probabilities: None."""
    from vlbench.predict.parsers import parse_labelled_boxes

    answer = "car(1,2),(3,4) cup(5,6),(7,8)"
    boxes, _ = parse_labelled_boxes(answer, "grid-1000", (1000, 1000))
    assert [b.span for b in boxes] == [(0, 14), (14, 29)]
    tokens = TokenScores(np.array([-0.2, -0.6, -0.1, -1.0]), np.array([0, 9, 14, 29]),
                         np.array([9, 14, 29, 29]))
    assert box_confidence(tokens, boxes[0].span) == pytest.approx(math.exp(-0.4))
    assert box_confidence(tokens, boxes[1].span) == pytest.approx(math.exp(-0.1))
    assert box_confidence(tokens, (40, 50)) == pytest.approx(math.exp(-0.3))
    assert box_confidence(None, (0, 14)) is None


def test_stripping_special_tokens_keeps_each_position_s_place():
    """'<pad> ab<eos>c ' -> 'abc': raw positions 0..14 map to 0 up to 'a' (6), then 1, 2, stay 2
    over '<eos>', 3."""
    text, position = strip_with_offsets("<pad> ab<eos>c ", {"<pad>", "<eos>"})
    assert text == "abc"
    assert position.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 3, 3]


def test_predict_writes_each_box_s_token_probability_score_and_records_the_rule(built_samples,
                                                                                tmp_path):
    """`vlbench predict` on the first image of the OVDEval sample's 'color' sub-dataset with a
    scripted tiny Qwen2-VL (tiny_models.scripted_qwen_vl) whose greedy answer is
    '<loc0000><loc0100><loc0500><loc0600> LABEL<|im_end|>' (PaliGemma's convention, LABEL the
    image's first label, one token), token i winning by the logit margin m_i over the V - 1 other
    tokens: p_i = e^m_i / (e^m_i + V - 1). The box spans its four location tokens, the space and the
    label (the end token writes nothing), so its score is exp(mean_{i<6} log p_i). With
    box_scores='constant' the same box is scored 1. The meta file names the rule."""
    from tiny_models import scripted_qwen_vl
    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import _items, load_data, predict

    data = built_samples / "ovdeval"
    rows, _ = load_data("ovdeval", data, config="color")
    label = _items(get_benchmark("ovdeval"), rows, "image-text-to-text", data)[0].queries[0]
    answer = ["<loc0000>", "<loc0100>", "<loc0500>", "<loc0600>", " ", label, "<|im_end|>"]
    margins = [3.0, 1.0, 2.0, 4.0, 5.0, 0.5, 6.0]
    model = scripted_qwen_vl(tmp_path / "model", answer, margins)
    vocabulary = json.loads((model / "config.json").read_text())["text_config"]["vocab_size"]
    logp = [m - math.log(math.exp(m) + vocabulary - 1) for m in margins]
    expected = {"token-probability": math.exp(sum(logp[:6]) / 6), "constant": 1.0}
    for rule, score in expected.items():
        out = tmp_path / f"{rule}.json"
        predict("ovdeval", str(model), data, out, config="color", device="cpu", limit=1,
                batch_size=1,
                max_new_tokens=12, box_format="loc-1024", box_scores=rule, progress=False)
        entries = json.loads(out.read_text())
        assert len(entries) == 1 and entries[0]["score"] == pytest.approx(score, rel=1e-5)
        assert (
            json.loads((tmp_path / f"{rule}.json.meta.json").read_text())["settings"]["box_scores"]
            == rule
        )
    with pytest.raises(Exception, match="box score rule"):
        predict("ovdeval", str(model), data, tmp_path / "x.json", config="color", box_scores="area")


def test_predict_in_bfloat16_spread_by_a_device_map(built_samples, tmp_path):
    """--dtype bfloat16 and --device-map auto (accelerate; here every weight lands on the CPU): the
    scripted model still writes its one box (bfloat16 moves its probabilities a little, not its
    greedy answer), the weights are bfloat16, and the meta file records both settings; a dtype that
    is not one is refused before the model loads."""
    from tiny_models import scripted_qwen_vl
    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import _items, load_data, predict

    data = built_samples / "ovdeval"
    rows, _ = load_data("ovdeval", data, config="color")
    label = _items(get_benchmark("ovdeval"), rows, "image-text-to-text", data)[0].queries[0]
    model = scripted_qwen_vl(tmp_path / "model",
                             ["<loc0000>", "<loc0100>", "<loc0500>", "<loc0600>", " ", label,
                                                  "<|im_end|>"],
                             [3.0, 1.0, 2.0, 4.0, 5.0, 0.5, 6.0])
    out = tmp_path / "bf16.json"
    predict("ovdeval", str(model), data, out, config="color", limit=1, batch_size=1,
            max_new_tokens=12,
            box_format="loc-1024", dtype="bfloat16", device_map="auto", progress=False)
    entries = json.loads(out.read_text())
    assert len(entries) == 1 and 0 < entries[0]["score"] < 1
    settings = json.loads((tmp_path / "bf16.json.meta.json").read_text())["settings"]
    assert settings["dtype"] == "bfloat16" and settings["device_map"] == "auto"
    from vlbench.predict import models

    loaded = models.load_model(str(model), models.inspect_model(str(model)), dtype="bfloat16",
                               device_map="auto")
    assert loaded.model.dtype == torch.bfloat16 and loaded.device == "cpu"
    with pytest.raises(Exception, match="unknown dtype"):
        predict("ovdeval", str(model), data, tmp_path / "x.json", config="color", dtype="float8")


def test_an_image_that_does_not_decode_names_its_item():
    """Damaged image bytes in a dataset cell: decoding the batch is a FormatError naming the item
    (not PIL's OSError, which the loop would report as a failed write of its partial file)."""
    from test_build_safety import bomb_png
    from vlbench.benchmarks.protocol.predicting import PredictItem
    from vlbench.engine.errors import FormatError
    from vlbench.predict.streaming import LazyImage, loaded

    # damaged bytes; a header over Pillow's pixel cap
    for data in (b"not an image", bomb_png()):
        cells = [{"image": {"bytes": data, "path": None}}]
        with pytest.raises(FormatError, match="item row-7"):
            loaded([PredictItem("row-7", LazyImage(cells, 0, "image"), ("cup",))])
