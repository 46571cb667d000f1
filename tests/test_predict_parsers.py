"""Box parsers on answers written in each family's documented output format (model cards and
processors), and malformed answers. Expected boxes derived by hand in each case's comment. No torch
needed."""

from __future__ import annotations

import pytest

from vlbench.engine.errors import InputError
from vlbench.predict.families import FAMILIES, OTHER, family_of
from vlbench.predict.parsers import (
    TRUNCATED,
    ParseFailure,
    label_index,
    parse_box,
    parse_labelled_boxes,
)

IMAGE = (1920, 1080)     # width, height of the original image


@pytest.mark.parametrize("answer, box_format, input_size, expected", [
    # Qwen2.5-VL: pixels of the resized input 1288x728 -> x * 1920/1288, y * 1080/728
    ('```json\n[\n\t{"bbox_2d": [644, 364, 966, 546], "label": "the dog"}\n]\n```', "pixel-resized",
     (1288, 728), [960.0, 540.0, 1440.0, 810.0]),
    # Qwen3-VL: a 0..1000 grid -> x * 1.92, y * 1.08
    ('[{"bbox_2d": [250, 500, 750, 1000], "label": "dog"}]', "grid-1000", None,
     [480.0, 540.0, 1440.0, 1080.0]),
    # Qwen2-VL: the same grid, written as two points between box tokens
    ("<|object_ref_start|>the dog<|object_ref_end|><|box_start|>(250,500),(750,1000)<|box_end|>",
     "grid-1000", None, [480.0, 540.0, 1440.0, 1080.0]),
    # Florence-2: bins of 1/1000, a bin's centre: (b + 0.5) / 1000 * size
    ("</s><s>the dog<loc_249><loc_499><loc_749><loc_899></s>", "loc-1000", None,
     [479.04, 539.46, 1439.04, 971.46]),
    # PaliGemma: y first, b / 1023 * size (big_vision): x1 = 512/1023*1920 = 960.938, y1 =
    # 256/1023*1080 = 270.264, x2 = 1000/1023*1920 = 1876.833, y2 = 768/1023*1080 = 810.792
    ("<loc0256><loc0512><loc0768><loc1000> dog", "loc-1024", None,
     [960.938, 270.264, 1876.833, 810.792]),
    # InternVL: <ref>..</ref><box>[[x1, y1, x2, y2]]</box> on the 0..1000 grid
    ("<ref>the dog</ref><box>[[250, 500, 750, 1000]]</box>", "grid-1000", None,
     [480.0, 540.0, 1440.0, 1080.0]),
    # GLM-4.1V: <|begin_of_box|>[x1,y1,x2,y2]<|end_of_box|> on the 0..1000 grid
    ("<|begin_of_box|>[250,500,750,1000]<|end_of_box|>", "grid-1000", None,
     [480.0, 540.0, 1440.0, 1080.0]),
    # DeepSeek-VL2: a 0..999 grid: 333/999*1920 = 640, 999/999*1080 = 1080
    ("<|ref|>the dog<|/ref|><|det|>[[333, 0, 999, 999]]<|/det|>", "grid-999", None,
     [640.0, 0.0, 1920.0, 1080.0]),
    # Gemini: box_2d is [ymin, xmin, ymax, xmax] on 0..1000: x1 = 250*1.92 = 480, y1 = 100*1.08 =
    # 108
    ('[{"box_2d": [100, 250, 500, 750], "label": "dog"}]', "grid-1000-yx", None,
     [480.0, 108.0, 1440.0, 540.0]),
    # LLaVA-1.5: fractions of the 1920x1920 square the image is centred in (420 px above and below):
    # y1 = 0.25*1920 - 420 = 60, y2 = 0.75*1920 - 420 = 1020
    ("[0.25, 0.25, 0.75, 0.75]", "normalized-square", None, [480.0, 60.0, 1440.0, 1020.0]),
    # Kosmos-2: cells 44 (row 1, col 12) and 863 (row 26, col 31) of a 32-cell grid, cell centres:
    # x1 = 12.5/32*1920 = 750, y1 = 1.5/32*1080 = 50.625, x2 = 31.5/32*1920 = 1890, y2 =
    # 26.5/32*1080 = 894.375
    ("<phrase> a dog</phrase><object><patch_index_0044><patch_index_0863></object>", "patch-32",
     None, [750.0, 50.625, 1890.0, 894.375]),
    # Kosmos-2: corners in one column: whole cells, x1 = 3/32*1920 = 180, x2 = 4/32*1920 = 240,
    # y1 = 0, y2 = 2/32*1080 = 67.5
    ("<object><patch_index_0003><patch_index_0035></object>", "patch-32", None,
     [180.0, 0.0, 240.0, 67.5]),
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
    ("the dog<loc_249><loc_499><loc_749>", "loc-1000",
     "truncated"),           # cut off after three locations
    ("<loc256><loc512><loc768><loc1000> dog", "loc-1024", "no box"),            # not four digits
    ('[{"bbox_2d": [750, 500, 250, 1000]}]', "grid-1000", "inverted"),
    ('[{"bbox_2d": [644, 364, 966, 546]}]', "pixel-resized", "input's size"),  # no input size given
])
def test_malformed_answers_are_failures_with_the_answer_kept(answer, box_format, reason):
    with pytest.raises(ParseFailure, match=reason) as info:
        parse_box(answer, box_format, IMAGE, None)
    assert info.value.answer == answer


def test_the_convention_follows_the_family_and_can_be_overridden():
    def fmt(model_type, kind="box", box_format=None):
        return family_of(model_type, "image-text-to-text").preset(kind, None, box_format).box_format

    assert (
        fmt("qwen2_5_vl") == "pixel-resized"
        and fmt("qwen3_vl") == "grid-1000"
        and fmt("qwen3_5") == "grid-1000"
    )
    assert (
        fmt("florence2") == "loc-1000"
        and fmt("paligemma") == "loc-1024"
        and fmt("llava") == "normalized-square"
    )
    assert (
        fmt("internvl") == "grid-1000"
        and fmt("kosmos-2") == "patch-32"
        and fmt("glm4v") == "grid-1000"
    )
    assert fmt("some_new_vlm", box_format="normalized") == "normalized"
    with pytest.raises(InputError, match="--box-format"):
        # an unknown family must be told its convention
        fmt("some_new_vlm")
    with pytest.raises(InputError, match="unknown box format"):
        fmt("qwen3_vl", box_format="xywh")
    with pytest.raises(InputError, match="no documented way"):
        # a captioning family asked for a box
        fmt("idefics3")
    with pytest.raises(InputError, match=r"\{expression\}"):
        family_of("qwen3_vl", "image-text-to-text").preset("box", "Where is it?", None)


def test_every_preset_holds_its_field_and_a_known_convention():
    for family in FAMILIES + (OTHER,):
        for kind, preset in family.presets.items():
            assert {"box": "{expression}", "boxes": "{labels}"}.get(kind, "") in preset.prompt, (
                family.name,
                kind,
            )
            assert (preset.box_format is None) == (kind == "text") or family is OTHER, (family.name,
                                                                                        kind)


def test_a_box_beyond_the_image_is_kept_as_written_and_flagged():
    """The official scorers score the box a model wrote, wherever it lies: x2 = 1.6 * 1920 = 3072 is
    kept (a miss parsed as no box would change Ref-L4's Acc where the box still overlaps), and
    flagged as reaching outside."""
    from vlbench.predict.parsers import reaches_outside

    box = parse_box("[0.2, 0.1, 1.6, 0.9]", "normalized", IMAGE, None)
    assert box == pytest.approx([384.0, 108.0, 3072.0, 972.0]) and reaches_outside(box, IMAGE)
    # within the 2 px of rounding
    assert not reaches_outside([-2.0, 0.0, 1922.0, 1082.0], IMAGE)


def test_a_detection_answer_lists_labelled_boxes_and_none_is_valid():
    """Qwen-style JSON (pixels): two boxes, one reaching beyond the 1920x1080 image (x2 = 2000:
    kept); a Florence-2 answer with two labelled boxes ((b + 0.5) / 1000 * size); "[]" (nothing
    found) is an answer."""
    from vlbench.predict.parsers import parse_labelled_boxes

    boxes, failures = parse_labelled_boxes(
        '[{"bbox_2d": [10, 20, 110, 220], "label": "red car"}, {"bbox_2d": [1900, 0, 2000, 10], '
        '"label": "cup"}]',
        "pixel", IMAGE)
    assert [(b.xyxy, b.label) for b in boxes] == [
        ([10.0, 20.0, 110.0, 220.0], "red car"),
        ([1900.0, 0.0, 2000.0, 10.0], "cup"),
    ] and not failures
    boxes, failures = parse_labelled_boxes(
        "car<loc_0><loc_0><loc_499><loc_999>cup<loc_500><loc_0><loc_999><loc_99>", "loc-1000", IMAGE
    )
    assert [b.label for b in boxes] == ["car", "cup"] and not failures
    assert boxes[1].xyxy == pytest.approx([960.96, 0.54, 1919.04, 107.46])
    assert parse_labelled_boxes("```json\n[]\n```", "grid-1000", IMAGE) == ([], [])
    with pytest.raises(ParseFailure, match="no box"):
        parse_labelled_boxes("There is no car.", "grid-1000", IMAGE)


@pytest.mark.parametrize("answer, box_format, labels", [
    # a JSON list cut off inside its third entry: the two complete entries are kept
    ('[{"bbox_2d": [1, 2, 30, 40], "label": "red car"}, {"bbox_2d": [5, 6, 70, 80], "label": '
     '"cup"}, {"bbox_2d": [9, 9,', "pixel", ["red car", "cup"]),
    # Florence-2 cut off inside a box's locations
    ("car<loc_0><loc_0><loc_499><loc_999>cup<loc_500><loc_0>", "loc-1000", ["car"]),
    # PaliGemma cut off after the first location of its second box
    ("<loc0000><loc0000><loc0500><loc0500> car ; <loc0100>", "loc-1024", ["car"]),
    # Qwen2-VL cut off inside its second point
    ("<|object_ref_start|>car<|object_ref_end|><|box_start|>(1,2),(30,40)<|box_end|><|object_ref_start|>cup"
     "<|object_ref_end|><|box_start|>(5,6),(7", "grid-1000", ["car"]),
])
def test_a_cut_off_detection_list_keeps_its_complete_entries_and_says_truncated(answer, box_format,
                                                                                labels):
    boxes, failures = parse_labelled_boxes(answer, box_format, IMAGE)
    assert [b.label for b in boxes] == labels
    assert failures and failures[0].reason == TRUNCATED


def test_labels_of_each_family_s_list_format():
    """InternVL's two boxes under one <ref> share it; Qwen2-VL's object_ref tags; PaliGemma's label
    after the box."""
    boxes, _ = parse_labelled_boxes("<ref>cat</ref><box>[[1, 2, 30, 40], [50, 60, 70, "
                                    "80]]</box><ref>Red car</ref>"
                                    "<box>[[100, 100, 200, 200]]</box>", "grid-1000", IMAGE)
    assert [b.label for b in boxes] == ["cat", "cat", "Red car"]
    boxes, _ = parse_labelled_boxes("<|object_ref_start|>a "
                                    "cup<|object_ref_end|><|box_start|>(1,2),(30,40)<|box_end|>",
                                    "grid-1000", IMAGE)
    assert boxes[0].label == "a cup"
    boxes, _ = parse_labelled_boxes("<loc0000><loc0000><loc0500><loc0500> red car ; "
                                    "<loc0100><loc0100><loc0600><loc0600> cup", "loc-1024", IMAGE)
    assert [b.label for b in boxes] == ["red car", "cup"]


def test_labels_match_queries_without_case_spaces_or_quotes():
    queries = ("red car", "T-shirt", "Taylor Swift")
    assert label_index("Red  car", queries) == 0 and label_index('"red car."', queries) == 0
    assert label_index("t-shirt", queries) == 1 and label_index("taylor swift", queries) == 2
    assert label_index("red", queries) is None and label_index(None, queries) is None


@pytest.mark.parametrize("answer, box_format, written", [
    # JSON: each object, the label inside it
    ('[{"bbox_2d": [1, 2, 30, 40], "label": "car"}, {"bbox_2d": [5, 6, 70, 80], "label": "cup"}]',
     "pixel",
     ['{"bbox_2d": [1, 2, 30, 40], "label": "car"}',
      '{"bbox_2d": [5, 6, 70, 80], "label": "cup"}']),
    # Florence-2: the label before the box, then its location tokens
    ("car<loc_0><loc_0><loc_499><loc_999>cup<loc_500><loc_0><loc_999><loc_99>", "loc-1000",
     ["car<loc_0><loc_0><loc_499><loc_999>", "cup<loc_500><loc_0><loc_999><loc_99>"]),
    # PaliGemma: the box, then its label up to ';'
    ("<loc0000><loc0000><loc0500><loc0500> red car ; <loc0100><loc0100><loc0600><loc0600> cup",
     "loc-1024",
     ["<loc0000><loc0000><loc0500><loc0500> red car ", "<loc0100><loc0100><loc0600><loc0600> cup"]),
    # Qwen2-VL: the reference tags, then the box tokens
    ("<|object_ref_start|>car<|object_ref_end|><|box_start|>(1,2),(30,40)<|box_end|>", "grid-1000",
     ["<|object_ref_start|>car<|object_ref_end|><|box_start|>(1,2),(30,40)"]),
])
def test_each_box_spans_the_characters_of_its_coordinates_and_label(answer, box_format, written):
    """The span (the characters whose tokens score the box) holds the box's label and its
    coordinates."""
    boxes, _ = parse_labelled_boxes(answer, box_format, IMAGE)
    assert [answer[slice(*b.span)] for b in boxes] == written


def _transformers_crop(size: tuple[int, int], edge: int, crop: int) -> tuple[int, int, float,
                                                                             float]:
    """(left, top, width / resized width, height / resized height) of the crop a CLIP processor
    takes, from transformers' own functions: ``get_resize_output_image_size`` on an image of this
    size, and ``center_crop`` on grids holding each pixel's column and row (the first kept one is
    the offset)."""
    import numpy as np
    from transformers.image_transforms import center_crop, get_resize_output_image_size

    width, height = size
    resized_height, resized_width = get_resize_output_image_size(
        np.zeros((1, height, width)), size=edge, default_to_square=False,
        input_data_format="channels_first")
    cols, rows = np.meshgrid(np.arange(resized_width), np.arange(resized_height))
    left, top = (
        int(
            center_crop(
                grid[None],
                (crop, crop),
                data_format="channels_first",
                input_data_format="channels_first",
            )[0, 0, 0]
        )
        for grid in (cols, rows)
    )
    return left, top, width / resized_width, height / resized_height


@pytest.mark.parametrize("size", [(1333, 1000), (1000, 1333), (640, 427), (500, 375), (333, 500),
                                  (1024, 741)])
def test_llava_s_crop_is_read_with_the_processor_s_integer_geometry(size):
    """LLaVA-1.5's HF processor (CLIP: short side to 336, long side ``int(336 * long / short)``, a
    336 x 336 crop at an integer offset) sees a box at crop fractions; written to 4 decimals,
    ``normalized-crop-336`` gives it back within 0.5 px, where the continuous ``normalized-crop``
    (centred square of side min(W, H)) is up to ~3 px off (on 1333 x 1000: the crop starts at 55 of
    447 resized columns, 164.02 px, not (1333 - 1000) / 2 = 166.5)."""
    pytest.importorskip("transformers")
    width, height = size
    truth = [0.2 * width, 0.1 * height, 0.7 * width, 0.9 * height]
    left, top, fx, fy = _transformers_crop(size, 336, 336)
    # the box in the crop's pixels, as fractions of the crop (4 decimals: at most 0.02 crop px, 0.1
    # image px)
    fractions = [(truth[0] / fx - left) / 336, (truth[1] / fy - top) / 336,
                 (truth[2] / fx - left) / 336, (truth[3] / fy - top) / 336]
    answer = "[" + ", ".join(f"{v:.4f}" for v in fractions) + "]"
    assert parse_box(answer, "normalized-crop-336", size) == pytest.approx(truth, abs=0.5)
    if size == (1333, 1000):
        continuous = parse_box(answer, "normalized-crop", size)
        assert max(abs(a - b) for a, b in zip(continuous, truth)) > 2


def test_the_crop_convention_comes_from_the_model_s_image_processor(tmp_path):
    """The preprocessor config of the HF-format LLaVA-1.5 checkpoints (CLIPImageProcessor, shortest
    edge 336, crop 336, no padding) gives ``normalized-crop-336``; another edge or crop is named
    with them; a padding one is the padded square; an unknown format name is refused with the known
    ones."""
    pytest.importorskip("transformers")
    import json

    from vlbench.predict.models import square_view
    from vlbench.predict.parsers import check_box_format

    def view(config):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        (folder / "preprocessor_config.json").write_text(json.dumps(
            {"image_processor_type": "CLIPImageProcessor", **config}))
        return square_view(str(folder))

    llava = {"do_center_crop": True, "do_resize": True, "size": {"shortest_edge": 336},
             "crop_size": {"height": 336, "width": 336}}
    assert view(llava) == "normalized-crop-336"
    assert (
        view({**llava, "crop_size": {"height": 320, "width": 300}}) == "normalized-crop-336-300x320"
    )
    assert view({**llava, "do_pad": True}) == "normalized-square"
    assert check_box_format("normalized-crop-336-300x320") == "normalized-crop-336-300x320"
    with pytest.raises(InputError, match="unknown box format 'normalized-crop-0'"):
        check_box_format("normalized-crop-0")
