"""Every kind of bad Ref-L4 input gets its own error class and a message naming the entry and the
fix."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from vlbench.benchmarks.ref_l4.reader import references_from_rows
from vlbench.benchmarks.ref_l4.scorer import score
from vlbench.engine.errors import CoverageError, FormatError, InputError, PredictionError
from vlbench.library import api

REFS = references_from_rows(
    [{"id": i, "bbox": [0, 0, 50, 50], "ori_category_id": "o365_1"} for i in range(12)]
)


def good(i, **over):
    return {"id": i, "pred_bbox": [0, 0, 50, 50], "format": "xywh", **over}


def test_missing_predictions_name_count_and_first_ids():
    with pytest.raises(CoverageError) as err:
        score(REFS, [good(i) for i in range(5)])
    msg = str(err.value)
    assert "7 of the 12 rows have no prediction" in msg and "5, 6, 7, 8, 9 (and 2 more)" in msg
    assert "--missing miss" in msg


def test_duplicate_ids():
    with pytest.raises(PredictionError, match=r"1 id\(s\) occur more than once: 3"):
        score(REFS, [good(i) for i in range(12)] + [good(3)])


def test_unknown_ids_are_counted_ignored_and_warned():
    result = score(REFS, [good(i) for i in range(12)] + [good(99), good(100)])
    assert result.counts["unknown_ids_ignored"] == 2
    assert any(
        "2 prediction(s) have ids that are not rows of the references" in w and "99, 100" in w
        for w in result.warnings
    )
    assert result.metrics["Acc50"] == 100.0


def test_string_id_matches_no_row_and_the_error_says_so():
    """Officially a string id is a dict key no row id equals: row 11 then has no prediction (the
    official scorer raises "Id 11 not found"); the error names the string id and the fix."""
    with pytest.raises(CoverageError) as err:
        score(REFS, [good(i) for i in range(11)] + [good("11")])
    assert (
        "ids 11" in str(err.value)
        and "'11'" in str(err.value)
        and "without quotes" in str(err.value)
    )


def test_unusable_ids_are_ignored_counted_and_never_collide():
    """Non-integral floats, strings and ids beyond int64 equal no row id: ignored and counted (text,
    a type no row id has, apart from the numbers that are just not rows); two different ones never
    collide (the official dict keeps them apart), equal ones are duplicates (the official
    raises)."""
    extra = [good(0.5), good(0.7), good("x"), good(2**70)]
    result = score(REFS, [good(i) for i in range(12)] + extra)
    assert result.counts["unusable_ids_ignored"] == 1 and result.counts["unknown_ids_ignored"] == 3
    assert result.metrics["Acc50"] == 100.0
    with pytest.raises(PredictionError, match="occur more than once"):
        score(REFS, [good(i) for i in range(12)] + [good(0.5), good(0.5)])


@pytest.mark.parametrize("box, protocol",
                         [([1, 2, 3], "official"), ([1, 2, 3, "4"], "official"), (None, "official"),
                                           ([True, 0, 1, 1], "corrected"),
                                           ([1, 2, 3, float("nan")], "corrected"),
                                           ([1, 2, float("inf"), 4], "corrected")])
def test_boxes_must_be_four_finite_numbers(box, protocol):
    """Not four numbers: refused. NaN / infinity: refused under ``corrected`` only (officially a
    miss, below)."""
    preds = [good(i) for i in range(12)]
    preds[4] = good(4, pred_bbox=box)
    with pytest.raises(PredictionError) as err:
        score(REFS, preds, protocol=protocol)
    assert "entry 4 (id 4)" in str(err.value) and "pred_bbox" in str(err.value)


def test_an_xyxy_box_of_five_values_is_refused_an_xywh_one_is_read_by_its_first_four():
    """Official: an xywh box becomes [b0, b1, b0 + b2, b1 + b3], so a 5th or 6th value is never
    read; an xyxy box goes into the tensor as written, and a row of five values fails its shape
    assertion."""
    preds = [good(i) for i in range(12)]
    preds[3] = good(3, pred_bbox=[0, 0, 50, 50, 0.9])
    preds[5] = good(5, pred_bbox=[0, 0, 50, 50, 0.9, 7])
    result = score(REFS, preds)
    assert result.metrics["Acc90"] == 100.0          # every box equals its GT box: IoU 1
    assert any("more than four values" in w for w in result.warnings)
    with pytest.raises(PredictionError, match="more than four"):
        score(REFS, preds, protocol="corrected")
    preds[3] = good(3, pred_bbox=[0, 0, 50, 50, 0.9], format="xyxy")
    with pytest.raises(PredictionError, match=r"entry 3 \(id 3\)"):
        score(REFS, preds)


def test_boolean_coordinates_are_one_and_zero_as_in_the_official_tensor():
    """torch.tensor makes true 1.0 and false 0.0. GT (0, 0, 50, 50). Box xyxy [true, false, 26, 50]
    is (1, 0, 26, 50): overlap 25 * 50 = 1250, union 2500, IoU 0.5 exactly, a miss (strict >). Read
    as (0, 0, 26, 50) it would be 1300 / 2500 = 0.52, a hit; [false, false, 26, 50] is that hit. So
    Acc50 = 11/12 and 12/12."""
    preds = [good(i) for i in range(12)]
    preds[7] = good(7, pred_bbox=[True, False, 26, 50], format="xyxy")
    assert score(REFS, preds).metrics["Acc50"] == pytest.approx(100 * 11 / 12)
    preds[7] = good(7, pred_bbox=[False, False, 26, 50], format="xyxy")
    result = score(REFS, preds)
    assert result.metrics["Acc50"] == 100.0 and any("true/false" in w for w in result.warnings)


def test_boxes_of_ids_the_split_does_not_score_are_never_read():
    """Official: only the predictions of the split's rows are looked up, so a broken box on an extra
    id is ignored."""
    result = score(REFS, [good(i) for i in range(12)] + [good(99, pred_bbox="not a box")])
    assert result.metrics["Acc50"] == 100.0 and result.counts["unknown_ids_ignored"] == 1


TEXT_REFS = references_from_rows([{"id": f"{i:06d}", "bbox": [0, 0, 50, 50],
                                   "ori_category_id": "o365_1"}
                                  for i in range(12)])


def test_text_row_ids_join_by_equality_as_the_official_dict():
    """Rows whose ids are text ('000005', as the official docstring writes them) are found by the
    same text; the integer 5 equals no such row (the official dict compares by type): row '000005'
    is missing, an error naming the types, or with --missing miss a miss: Acc50 = 11/12."""
    preds = [good(f"{i:06d}") for i in range(12)]
    assert score(TEXT_REFS, preds).metrics["Acc50"] == 100.0
    preds[5] = good(5)
    with pytest.raises(CoverageError) as err:
        score(TEXT_REFS, preds)
    assert "'000005'" in str(err.value) and "in quotes" in str(err.value)
    result = score(TEXT_REFS, preds, missing="miss")
    assert (
        result.metrics["Acc50"] == pytest.approx(100 * 11 / 12)
        and result.counts["unusable_ids_ignored"] == 1
    )


def test_a_null_class_and_the_class_named_none_are_two_classes():
    """The official dict keeps None and "None" apart. Rows 0-3 (null class) all hit; rows 4-11
    (class "None") half hit: class_Acc50 = (100 + 50) / 2 = 75; merged into one class it would be
    8/12 = 66.67."""
    refs = references_from_rows([{"id": i, "bbox": [0, 0, 50, 50],
                                  "ori_category_id": None if i < 4 else "None"}
                                 for i in range(12)])
    preds = [good(i) if i < 8 else good(i, pred_bbox=[100, 100, 10, 10]) for i in range(12)]
    result = score(refs, preds)
    assert result.metrics["class_Acc50"] == 75.0 and result.metrics["Acc50"] == pytest.approx(
        100 * 8 / 12
    )
    assert {c["name"] for c in result.breakdowns["per_class"]} == {"null", "None"}


@pytest.mark.parametrize("box", [[1, 2, 3, float("nan")], [float("nan")] * 4,
                                 [1, 2, float("inf"), 4],
                                 [float("-inf"), 0, 100, 100], [0, 0, float("inf"), float("inf")]])
def test_officially_a_non_finite_box_is_a_miss(box):
    """The official IoU of a box with a NaN coordinate is NaN (torch propagates it), and with an
    infinite one NaN or 0 (the union is infinite): ``iou > t`` is false, so it is a miss; every
    other box here is perfect, so Acc50 = 11/12 exactly, with a warning naming the id."""
    preds = [good(i) for i in range(12)]
    preds[4] = good(4, pred_bbox=box)
    result = score(REFS, preds)
    assert result.metrics["Acc50"] == pytest.approx(100 * 11 / 12)
    assert any("NaN or infinite" in w and "4" in w for w in result.warnings)


def test_missing_format_key():
    preds = [good(i) for i in range(12)]
    del preds[2]["format"]
    with pytest.raises(PredictionError, match=r"entry 2 \(id 2\): missing key 'format'"):
        score(REFS, preds)


def test_corrected_protocol_rejects_unknown_format():
    with pytest.raises(PredictionError, match="'format' is 'cxcywh'"):
        score(REFS, [good(i, format="cxcywh") for i in range(12)], protocol="corrected")


@pytest.mark.parametrize("payload, message", [
    ({"id": 0}, "must be a JSON list"),
    ([], "the prediction list is empty"),
    ([{"image_id": 0, "caption": "a dog"}], "looks like a nocaps prediction file"),
    ([{"image_id": 0, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}],
     "looks like a ovdeval prediction file"),
    ([[0, 0, 1, 1]], "expected an object"),
])
def test_file_level_format_errors(payload, message):
    with pytest.raises(
        FormatError
        if not isinstance(payload, list) or not payload or isinstance(payload[0], dict)
        else PredictionError,
        match=message,
    ):
        score(REFS, payload)


def test_not_json_file(tmp_path, sample_release):
    bad = tmp_path / "preds.json"
    bad.write_text("[{'id': 0}]")
    with pytest.raises(
        FormatError, match=r"preds.json: the prediction file is not valid JSON \(line 1, column 3"
    ):
        api.score("ref_l4", sample_release, bad)


def test_unknown_split_and_option(sample_release):
    with pytest.raises(InputError, match="unknown split 'dev'"):
        api.score("ref_l4", sample_release / "ref-l4-val.parquet",
                  sample_release / "predictions_good.json", split="dev")
    with pytest.raises(InputError, match="cider_idf do not apply to ref_l4"):
        api.score("ref_l4", sample_release, sample_release / "predictions_good.json",
                  cider_idf="subset")


def test_references_without_needed_columns(tmp_path):
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps([{"id": 0, "box": [0, 0, 1, 1]}]))
    with pytest.raises(FormatError, match=r"lack the column\(s\) bbox, ori_category_id"):
        api.load_references("ref_l4", refs)


@pytest.mark.parametrize("args, message", [
    (["--predictions", "{preds_bad}"], "not valid JSON"),
    (["--predictions", "{preds_missing}"], "have no prediction"),
    (["--predictions", "{nowhere}"], "does not exist"),
    (["--predictions", "{preds_ok}", "--cider-idf", "subset"],
     "--cider-idf applies to nocaps only"),
])
def test_cli_bad_input_exits_2_without_traceback(args, message, tmp_path, sample_release):
    paths = {"preds_bad": tmp_path / "bad.json", "preds_missing": tmp_path / "missing.json",
             "nowhere": tmp_path / "nowhere.json",
             "preds_ok": sample_release / "predictions_good.json"}
    paths["preds_bad"].write_text("not json")
    paths["preds_missing"].write_text(json.dumps([{"id": 0, "pred_bbox": [0, 0, 1, 1],
                                                   "format": "xyxy"}]))
    argv = [a.format(**paths) for a in args]
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), *argv)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("vlbench score: error: ")


def test_cli_unknown_benchmark():
    proc = run_cli("score", "refcoco", "--references", "x", "--predictions", "y")
    assert proc.returncode == 2 and "unknown benchmark 'refcoco'" in proc.stderr
