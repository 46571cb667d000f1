"""Every kind of bad Ref-L4 input gets its own error class and a message naming the entry and the fix."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from vlbench.benchmarks.ref_l4.reader import references_from_rows
from vlbench.benchmarks.ref_l4.scorer import score
from vlbench.engine.errors import CoverageError, FormatError, InputError, PredictionError
from vlbench.library import api

REFS = references_from_rows([{"id": i, "bbox": [0, 0, 50, 50], "ori_category_id": "o365_1"} for i in range(12)])


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
    assert any("2 prediction(s) have ids that are not rows of the references" in w and "99, 100" in w for w in result.warnings)
    assert result.metrics["Acc50"] == 100.0


def test_string_id_matches_no_row_and_the_error_says_so():
    """Officially a string id is a dict key no row id equals: row 11 then has no prediction (the official scorer
    raises "Id 11 not found"); the error names the string id and the fix."""
    with pytest.raises(CoverageError) as err:
        score(REFS, [good(i) for i in range(11)] + [good("11")])
    assert "ids 11" in str(err.value) and "'11'" in str(err.value) and "without quotes" in str(err.value)


def test_unusable_ids_are_ignored_counted_and_never_collide():
    """Non-integral floats, strings and ids beyond int64 equal no row id: ignored and counted; two different
    ones never collide (the official dict keeps them apart), equal ones are duplicates (the official raises)."""
    extra = [good(0.5), good(0.7), good("x"), good(2**70)]
    result = score(REFS, [good(i) for i in range(12)] + extra)
    assert result.counts["unusable_ids_ignored"] == 4 and result.metrics["Acc50"] == 100.0
    with pytest.raises(PredictionError, match="occur more than once"):
        score(REFS, [good(i) for i in range(12)] + [good(0.5), good(0.5)])


@pytest.mark.parametrize("box, protocol", [([1, 2, 3], "official"), ([1, 2, 3, "4"], "official"), (None, "official"),
                                           ([True, 0, 1, 1], "official"), ([1, 2, 3, float("nan")], "corrected"),
                                           ([1, 2, float("inf"), 4], "corrected")])
def test_boxes_must_be_four_finite_numbers(box, protocol):
    """Not four numbers: refused. NaN / infinity: refused under ``corrected`` only (officially a miss, below)."""
    preds = [good(i) for i in range(12)]
    preds[4] = good(4, pred_bbox=box)
    with pytest.raises(PredictionError) as err:
        score(REFS, preds, protocol=protocol)
    assert "entry 4 (id 4)" in str(err.value) and "pred_bbox" in str(err.value)


@pytest.mark.parametrize("box", [[1, 2, 3, float("nan")], [float("nan")] * 4, [1, 2, float("inf"), 4],
                                 [float("-inf"), 0, 100, 100], [0, 0, float("inf"), float("inf")]])
def test_officially_a_non_finite_box_is_a_miss(box):
    """The official IoU of a box with a NaN coordinate is NaN (torch propagates it), and with an infinite one NaN
    or 0 (the union is infinite): ``iou > t`` is false, so it is a miss; every other box here is perfect, so
    Acc50 = 11/12 exactly, with a warning naming the id."""
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
    ([{"image_id": 0, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}], "looks like a ovdeval prediction file"),
    ([[0, 0, 1, 1]], "expected an object"),
])
def test_file_level_format_errors(payload, message):
    with pytest.raises(FormatError if not isinstance(payload, list) or not payload or isinstance(payload[0], dict)
                       else PredictionError, match=message):
        score(REFS, payload)


def test_not_json_file(tmp_path, sample_release):
    bad = tmp_path / "preds.json"
    bad.write_text("[{'id': 0}]")
    with pytest.raises(FormatError, match=r"preds.json: the prediction file is not valid JSON \(line 1, column 3"):
        api.score("ref_l4", sample_release, bad)


def test_unknown_split_and_option(sample_release):
    with pytest.raises(InputError, match="unknown split 'dev'"):
        api.score("ref_l4", sample_release / "ref-l4-val.parquet", sample_release / "predictions_good.json", split="dev")
    with pytest.raises(InputError, match="cider_idf do not apply to ref_l4"):
        api.score("ref_l4", sample_release, sample_release / "predictions_good.json", cider_idf="subset")


def test_references_without_needed_columns(tmp_path):
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps([{"id": 0, "box": [0, 0, 1, 1]}]))
    with pytest.raises(FormatError, match=r"lack the column\(s\) bbox, ori_category_id"):
        api.load_references("ref_l4", refs)


@pytest.mark.parametrize("args, message", [
    (["--predictions", "{preds_bad}"], "not valid JSON"),
    (["--predictions", "{preds_missing}"], "have no prediction"),
    (["--predictions", "{nowhere}"], "does not exist"),
    (["--predictions", "{preds_ok}", "--cider-idf", "subset"], "--cider-idf applies to nocaps only"),
])
def test_cli_bad_input_exits_2_without_traceback(args, message, tmp_path, sample_release):
    paths = {"preds_bad": tmp_path / "bad.json", "preds_missing": tmp_path / "missing.json",
             "nowhere": tmp_path / "nowhere.json", "preds_ok": sample_release / "predictions_good.json"}
    paths["preds_bad"].write_text("not json")
    paths["preds_missing"].write_text(json.dumps([{"id": 0, "pred_bbox": [0, 0, 1, 1], "format": "xyxy"}]))
    argv = [a.format(**paths) for a in args]
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), *argv)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("vlbench score: error: ")


def test_cli_unknown_benchmark():
    proc = run_cli("score", "refcoco", "--references", "x", "--predictions", "y")
    assert proc.returncode == 2 and "unknown benchmark 'refcoco'" in proc.stderr
