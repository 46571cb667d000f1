"""Box parsers on answers written in each family's documented output format (model cards and processors), and
malformed answers. Expected boxes derived by hand in each case's comment. No torch needed."""

from __future__ import annotations

import pytest

from vlbench.errors import InputError
from vlbench.predict.parsers import ParseFailure, box_format_for, parse_box

IMAGE = (1920, 1080)     # width, height of the original image


@pytest.mark.parametrize("answer, box_format, input_size, expected", [
    # Qwen2.5-VL: pixels of the resized input 1288x728 -> x * 1920/1288, y * 1080/728
    ('```json\n[\n\t{"bbox_2d": [644, 364, 966, 546], "label": "the dog"}\n]\n```', "pixel-resized", (1288, 728),
     [960.0, 540.0, 1440.0, 810.0]),
    # Qwen3-VL: a 0..1000 grid -> x * 1.92, y * 1.08
    ('[{"bbox_2d": [250, 500, 750, 1000], "label": "dog"}]', "grid-1000", None, [480.0, 540.0, 1440.0, 1080.0]),
    # Qwen2-VL: the same grid, written as two points between box tokens
    ("<|object_ref_start|>the dog<|object_ref_end|><|box_start|>(250,500),(750,1000)<|box_end|>", "grid-1000", None,
     [480.0, 540.0, 1440.0, 1080.0]),
    # Florence-2: bins of 1/1000, a bin's centre: (b + 0.5) / 1000 * size
    ("</s><s>the dog<loc_249><loc_499><loc_749><loc_899></s>", "loc-1000", None,
     [479.04, 539.46, 1439.04, 971.46]),
    # PaliGemma: y first, b / 1024 * size: y1 = 256/1024*1080 = 270, x1 = 512/1024*1920 = 960, ...
    ("<loc0256><loc0512><loc0768><loc1000> dog", "loc-1024", None, [960.0, 270.0, 1875.0, 810.0]),
    # normalised fractions
    ("The dog is at [0.25, 0.5, 0.75, 1.0].", "normalized", None, [480.0, 540.0, 1440.0, 1080.0]),
    # original pixels, the first of several boxes
    ("[10, 20, 110, 220] and [0, 0, 5, 5]", "pixel", None, [10.0, 20.0, 110.0, 220.0]),
])
def test_each_family_s_convention_to_pixels(answer, box_format, input_size, expected):
    assert parse_box(answer, box_format, IMAGE, input_size) == pytest.approx(expected)


@pytest.mark.parametrize("answer, box_format, reason", [
    ("", "grid-1000", "no box"),
    ("I cannot find the dog in this image.", "pixel", "no box"),
    ('[{"bbox_2d": [10, 20], "label": "dog"}]', "grid-1000", "no box"),
    ("the dog<loc_249><loc_499><loc_749>", "loc-1000", "no box"),              # three of four locations
    ("<loc256><loc512><loc768><loc1000> dog", "loc-1024", "no box"),            # not four digits
    ('[{"bbox_2d": [750, 500, 250, 1000]}]', "grid-1000", "inverted"),
    ("[0.2, 0.1, 1.6, 0.9]", "normalized", "outside"),                          # x2 = 3072 > 1920
    ('[{"bbox_2d": [644, 364, 966, 546]}]', "pixel-resized", "input's size"),  # no input size given
])
def test_malformed_answers_are_failures_with_the_answer_kept(answer, box_format, reason):
    with pytest.raises(ParseFailure, match=reason) as info:
        parse_box(answer, box_format, IMAGE, None)
    assert info.value.answer == answer


def test_the_convention_follows_the_family_and_can_be_overridden():
    assert box_format_for("qwen2_5_vl") == "pixel-resized" and box_format_for("qwen3_vl") == "grid-1000"
    assert box_format_for("florence2") == "loc-1000" and box_format_for("paligemma") == "loc-1024"
    assert box_format_for("llava", "normalized") == "normalized"
    with pytest.raises(InputError, match="--box-format"):
        box_format_for("llava")
    with pytest.raises(InputError, match="unknown box format"):
        box_format_for("qwen3_vl", "xywh")


def test_a_detection_answer_lists_labelled_boxes_and_none_is_valid():
    """Qwen-style JSON (pixels): two boxes, one outside the 1920x1080 image (x2 = 2000 > 1922: reported); a
    Florence-2 answer with two labelled boxes ((b + 0.5) / 1000 * size); "[]" (nothing found) is an answer."""
    from vlbench.predict.parsers import parse_labelled_boxes

    boxes, failures = parse_labelled_boxes(
        '[{"bbox_2d": [10, 20, 110, 220], "label": "red car"}, {"bbox_2d": [1900, 0, 2000, 10], "label": "cup"}]',
        "pixel", IMAGE)
    assert boxes == [([10.0, 20.0, 110.0, 220.0], "red car")] and "outside" in failures[0].reason
    boxes, failures = parse_labelled_boxes("car<loc_0><loc_0><loc_499><loc_999>cup<loc_500><loc_0><loc_999><loc_99>",
                                           "loc-1000", IMAGE)
    assert [label for _, label in boxes] == ["car", "cup"] and not failures
    assert boxes[1][0] == pytest.approx([960.96, 0.54, 1919.04, 107.46])
    assert parse_labelled_boxes("```json\n[]\n```", "grid-1000", IMAGE) == ([], [])
    with pytest.raises(ParseFailure, match="no box"):
        parse_labelled_boxes("There is no car.", "grid-1000", IMAGE)
