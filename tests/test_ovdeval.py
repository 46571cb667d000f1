"""OVDEval: golden parity (CLI and evaluate), suppression vs the per-image loop, multi-file, round
trip, bad input."""

from __future__ import annotations

import json
import re
import warnings
from unittest import mock

import pytest
from datasets import load_dataset
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import ROOT, agree, golden_cases, run_cli
from reference import ovdeval_nms
from vlbench.benchmarks.ovdeval import scorer, synthetic
from vlbench.benchmarks.ovdeval.reader import build, export, parse_official
from vlbench.benchmarks.ovdeval.scorer import parse_predictions, score, suppress
from vlbench.engine.errors import FormatError, PredictionError
from vlbench.library import api

CASES = golden_cases("ovdeval")
#: cases whose ids are text: scored by every face that reads official files, never built (the Hub's
#: ids are integers; test_a_build_refuses_text_ids)
TEXT_ID_CASES = [c for c in CASES if c.name.startswith("text_")]
BUILDABLE = [c for c in CASES if c not in TEXT_ID_CASES]
#: with the adversarial cases, for the face that reads the official files
ALL_CASES = golden_cases("ovdeval", adversarial=True)




@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_cli_matches_official(case, tmp_path):
    expected = json.loads((case / "expected.json").read_text())
    out = tmp_path / "r.json"
    run_cli("score", "ovdeval", "--references", str(case / "references.json"), "--predictions",
            str(case / "predictions.json"), "--output", str(out), "--quiet", check=True)
    assert not agree(json.loads(out.read_text())["metrics"], expected["metrics"])


def test_an_image_listed_twice_is_one_image(tmp_path):
    """The official script reads no 'images' list and COCOeval keys images by id: listing every
    image twice changes no number. Expected: the official scorer's numbers of the unchanged case
    (golden ``coco_medium_ids1``)."""
    case = next(c for c in ALL_CASES if c.name == "coco_medium_ids1")
    data = json.loads((case / "references.json").read_text())
    data["images"] = data["images"] + data["images"][::-1]
    result = score(parse_official(data, "coco"),
                   json.loads((case / "predictions.json").read_text()))
    assert not agree(result.metrics, json.loads((case / "expected.json").read_text())["metrics"])
    assert any("repeat an image id" in w for w in result.warnings)


@pytest.fixture(scope="module")
def ovdeval_metric():
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "ovdeval"))


@pytest.mark.parametrize("case", BUILDABLE, ids=[c.name for c in BUILDABLE])
def test_hub_rows_through_evaluate_match_official(case, ovdeval_metric, tmp_path):
    expected = json.loads((case / "expected.json").read_text())
    build(case / "references.json", tmp_path / "hub", allow_missing_images=True)
    ds = load_dataset(str(tmp_path / "hub"), "references", split="test")
    by_image: dict[int, list[dict]] = {}
    for p in json.loads((case / "predictions.json").read_text()):
        by_image.setdefault(p["image_id"], []).append(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:
            mine = by_image.get(row["image_id"], [])
            ovdeval_metric.add(prediction={"boxes": [p["bbox"] for p in mine],
                                           "scores": [p["score"] for p in mine],
                                           "labels": [p["category_id"] for p in mine]},
                               reference=row)
        got = ovdeval_metric.compute()
    assert not agree(got, expected["metrics"])


@st.composite
def scene(draw):
    n_img = draw(st.integers(1, 4))
    coord = st.integers(0, 60).map(float)
    size = st.integers(2, 60).map(float)
    anns = [{"id": i, "image_id": draw(st.integers(0, n_img - 1)),
             "category_id": draw(st.integers(0, 3)),
             "bbox": [draw(coord), draw(coord), draw(size), draw(size)], "area": 100.0,
             "iscrowd": 0}
            for i in range(draw(st.integers(0, 8)))]
    preds = []
    for _ in range(draw(st.integers(0, 20))):
        if anns and draw(st.booleans()):
            b = draw(st.sampled_from(anns))["bbox"]
            box = [b[0] + draw(st.integers(-3, 3)), b[1], b[2] + draw(st.integers(-3, 3)), b[3]]
        else:
            box = [draw(coord), draw(coord), draw(size), draw(size)]
        preds.append({"image_id": draw(st.integers(0, n_img - 1)),
                      "category_id": draw(st.integers(0, 4)),
                      "bbox": box,
                      "score": draw(st.sampled_from([0.3, 0.5, 0.5, 0.9]) | st.floats(0, 1))})
    data = {"images": [{"id": i} for i in range(n_img)],
            "categories": [{"id": c, "name": f"c{c}"} for c in range(4)], "annotations": anns}
    return data, preds


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scene(), st.sampled_from([1, 2, 5, scorer._IOU_BLOCK]))
@pytest.mark.heavy
def test_suppression_equals_the_per_image_loop(data, block):
    """Also with the IoUs computed a few (prediction, GT) combinations at a time: the blocks'
    seams."""
    gt_json, preds = data
    gt = parse_official(gt_json, "x")
    with mock.patch.object(scorer, "_IOU_BLOCK", block):
        keep, info = suppress(gt, parse_predictions(preds, gt))
    expected = ovdeval_nms.suppress(gt_json["annotations"], preds)
    assert [p for p, k in zip(preds, keep) if k] == expected
    assert info["after"] == len(expected)


def test_the_viewer_draws_what_the_suppression_removes_as_suppressed(ovdeval_sample):
    """The sample's poor color predictions in the Space's viewer (every score shown, all queries):
    the boxes drawn ``suppressed`` are exactly those the per-image reference loop of the official
    suppression removes (``reference/ovdeval_nms.py``), and each other predicted box is drawn as a
    match or an error, never suppressed; a removed box counts as no error in the scene's badness."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.benchmarks.protocol.views import detection_badness

    refs = api.load_references("ovdeval", ovdeval_sample / "annotations" / "color.json")
    preds = json.loads((ovdeval_sample / "predictions_poor" / "color.json").read_text())
    result = api.score("ovdeval", ovdeval_sample / "annotations" / "color.json",
                       ovdeval_sample / "predictions_poor" / "color.json")
    gt_json = json.loads((ovdeval_sample / "annotations" / "color.json").read_text())
    kept = ovdeval_nms.suppress(gt_json["annotations"], preds)
    removed = {(p["image_id"], tuple(p["bbox"])) for p in preds if p not in kept}
    # the case has something to show
    assert removed
    drawn: dict[str, set] = {}
    for scene in get_benchmark("ovdeval").views.scenes(refs, preds, result):
        boxes, _ = scene.boxes("all", 0.0)
        for box, _, kind in boxes:
            drawn.setdefault(kind, set()).add((scene.keys[0], tuple(box)))
        unremoved = [p for p in scene.predicted if tuple(p[0]) not in scene.removed]
        assert scene.badness == detection_badness(scene.gt, unremoved)
    assert drawn["suppressed"] == removed
    kept_boxes = {(p["image_id"], tuple(p["bbox"])) for p in kept}
    assert not (drawn["suppressed"] & (kept_boxes - removed))


def test_ties_keep_the_later_prediction_and_are_counted():
    gt_json = {"images": [{"id": 0}],
               "categories": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}],
               "annotations": [{"id": 1, "image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 10],
                                "area": 100, "iscrowd": 0}]}
    preds = [{"image_id": 0, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.8},
             {"image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 10], "score": 0.8}]
    gt = parse_official(gt_json, "x")
    keep, info = suppress(gt, parse_predictions(preds, gt))
    assert keep.tolist() == [False, True] and info["tie_decisions"] == 1
    result = score(gt, preds)
    assert result.metrics["NMS_AP"] == pytest.approx(100.0) and any(
        "equal scores" in w for w in result.warnings
    )


def test_many_sub_datasets_give_table_3(tmp_path, ovdeval_sample):
    out = tmp_path / "r.json"
    proc = run_cli("score", "ovdeval", "--references", str(ovdeval_sample), "--predictions",
                   str(ovdeval_sample / "predictions_good"), "--output", str(out), check=True)
    result = json.loads(out.read_text())
    single = {
        n: api.score(
            "ovdeval",
            ovdeval_sample / "annotations" / f"{n}.json",
            ovdeval_sample / "predictions_good" / f"{n}.json",
        )
        for n in ("color", "material")
    }
    assert result["metrics"]["NMS_AP_color"] == single["color"].metrics["NMS_AP"]
    assert result["metrics"]["Total_Average"] == pytest.approx(
        (single["color"].metrics["NMS_AP"] + single["material"].metrics["NMS_AP"]) / 2)
    assert result["breakdowns"]["aspects"]["Attribute"]["sub_datasets"] == ["color", "material"]
    assert "Total Average" in proc.stdout and "Attribute" in proc.stdout
    assert any("not scored: coco" in w for w in result["warnings"])


def test_default_config_holds_every_sub_dataset_and_scores_table_3(tmp_path, ovdeval_sample,
                                                                   ovdeval_metric):
    """`load_dataset(folder)` without a config name (from a directory outside the repository): the
    default config `all`, every sub-dataset's rows told apart by `sub_dataset`; through the evaluate
    module, each sub-dataset's NMS-AP equals the CLI's on that sub-dataset's official file, and
    Total_Average is their mean (by hand)."""
    import os

    build(ovdeval_sample, tmp_path / "hub")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ds = load_dataset(str(tmp_path / "hub"), split="test")
    finally:
        os.chdir(cwd)
    assert sorted(set(ds["sub_dataset"])) == ["color", "material"]
    assert ds.num_rows == sum(
        len(json.loads((ovdeval_sample / "annotations" / f"{n}.json").read_text())["images"])
        for n in ("color", "material")
    )
    preds: dict[tuple[str, int], list[dict]] = {}
    for n in ("color", "material"):
        for p in json.loads((ovdeval_sample / "predictions_good" / f"{n}.json").read_text()):
            preds.setdefault((n, p["image_id"]), []).append(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:
            mine = preds.get((row["sub_dataset"], row["image_id"]), [])
            ovdeval_metric.add(prediction={"boxes": [p["bbox"] for p in mine],
                                           "scores": [p["score"] for p in mine],
                                           "labels": [p["category_id"] for p in mine]},
                               reference=row)
        got = ovdeval_metric.compute()
    for n in ("color", "material"):
        cli = api.score("ovdeval", ovdeval_sample / "annotations" / f"{n}.json",
                        ovdeval_sample / "predictions_good" / f"{n}.json").metrics
        assert got[f"NMS_AP_{n}"] == pytest.approx(cli["NMS_AP"])
    assert got["Total_Average"] == pytest.approx((got["NMS_AP_color"] + got["NMS_AP_material"]) / 2)


def test_round_trip_is_lossless(tmp_path, ovdeval_sample):
    build(ovdeval_sample, tmp_path / "hub")
    for name in ("color", "material"):
        assert export(tmp_path / "hub", name=name) == json.loads(
            (ovdeval_sample / "annotations" / f"{name}.json").read_text()
        )
        ds = load_dataset(str(tmp_path / "hub"), name, split="test")
        assert all(r["image"].size == (r["width"], r["height"]) for r in ds)
    # adv_orphan_annotations_* hold annotations of images not in 'images': not representable in
    # image rows
    for case in [c for c in CASES if not c.name.startswith("adv_orphan")][:2]:
        build(case / "references.json", tmp_path / case.name, allow_missing_images=True)
        assert export(tmp_path / case.name, name="references") == json.loads(
            (case / "references.json").read_text()
        )
    # the Hub folder scores like the release
    a = api.score("ovdeval", tmp_path / "hub", ovdeval_sample / "predictions_poor")
    b = api.score("ovdeval", ovdeval_sample, ovdeval_sample / "predictions_poor")
    assert a.metrics == b.metrics


def test_a_build_refuses_text_ids(tmp_path):
    """Scoring reads category ids written as text as pycocotools does (the golden case
    ``text_category_ids``); the Hub dataset stores ids as int64, where Arrow would read "17" as 17
    without a word, so a build names the problem and writes no sub-dataset."""
    assert TEXT_ID_CASES
    for case in TEXT_ID_CASES:
        with pytest.raises(FormatError, match="category ids are written as text"):
            build(case / "references.json", tmp_path / case.name, allow_missing_images=True)
        assert not list((tmp_path / case.name).glob("data/*"))


def test_text_category_ids_are_join_keys_and_an_integer_equals_none():
    """The text-id case against its integer twin (``color_small_ids0``, whose ids are "c" + the
    integer): renaming the categories changes no number of the twin's predictions (every key within
    1e-9: only the summation order over categories differs); in the case itself the predictions
    whose category stayed an integer are counted as of no category, and the per-category table names
    the categories as the file writes them."""
    twin = next(c for c in CASES if c.name == "color_small_ids0")
    case = next(c for c in CASES if c.name == "text_category_ids")
    refs = json.loads((case / "references.json").read_text())
    refs["annotations"][0]["category_id"] = "c" + str(
        json.loads((twin / "references.json").read_text())["annotations"][0]["category_id"]
    )
    renamed = [
        {**p, "category_id": f"c{p['category_id']}"}
        for p in json.loads((twin / "predictions.json").read_text())
    ]
    gt = parse_official(refs, "renamed")
    got = score(gt, renamed).metrics
    want = json.loads((twin / "expected.json").read_text())["metrics"]
    assert all((got[k] is None) if v is None else got[k] == pytest.approx(v, abs=1e-9) for k,
               v in want.items())
    result = api.score("ovdeval", case / "references.json", case / "predictions.json")
    assert result.counts["unknown_category"] == 50
    written = {c["id"] for c in json.loads((case / "references.json").read_text())["categories"]}
    assert set(result.breakdowns["per_category"]["NMS"]["category_id"]) == written


def test_missing_images_are_an_error(tmp_path):
    data = synthetic.make_subset(3, seed=4, size=(64, 48))
    root = synthetic.write_release(tmp_path / "raw", {"color": data}, archive=False)
    (root / "images" / "color" / data["images"][0]["file_name"]).unlink()
    with pytest.raises(FormatError, match="1 of 3 images of color are missing"):
        build(root, tmp_path / "hub")


# -- bad input ------------------------------------------------------------------------------------

@pytest.fixture()
def color(ovdeval_sample):
    data = json.loads((ovdeval_sample / "annotations" / "color.json").read_text())
    preds = json.loads((ovdeval_sample / "predictions_good" / "color.json").read_text())
    return parse_official(data, "color"), data, preds


def test_unknown_categories_and_images_are_counted(color):
    gt, _, preds = color
    preds = preds + [{"image_id": 999, "category_id": 0, "bbox": [0, 0, 5, 5], "score": 0.5},
                     {"image_id": 0, "category_id": 4242, "bbox": [0, 0, 5, 5], "score": 0.5}]
    result = score(gt, preds)
    assert result.counts["dropped_unknown_image"] == 1 and result.counts["unknown_category"] == 1
    assert any("999" in w for w in result.warnings) and any(
        "take part in the suppression" in w for w in result.warnings
    )


def test_labels_as_text_are_never_scored_officially_and_resolved_when_corrected(color):
    """Officially a category name is no category id: every prediction takes part in the suppression
    and none is scored (all 24 numbers 0, as the adversarial case category_id_as_name shows
    on a mixed file), with a warning that names the fix. ``corrected`` resolves names to ids (the
    numbers of the id file) and rejects a label that is no name."""
    gt, data, preds = color
    by_id = {c["id"]: c["name"] for c in data["categories"]}
    as_text = [{**p, "category_id": by_id[p["category_id"]]} for p in preds]
    official = score(gt, as_text)
    assert all(v in (0.0, None) for v in official.metrics.values())
    assert any("NEVER scored" in w and "--protocol corrected" in w for w in official.warnings)
    assert (
        score(gt, as_text, protocol="corrected").metrics
        == score(gt, preds, protocol="corrected").metrics
    )
    as_text[0]["category_id"] = "purple unicorn"
    with pytest.raises(PredictionError,
                       match="not a category name of color: \\['purple unicorn'\\]"):
        score(gt, as_text, protocol="corrected")


def test_empty_predictions_give_zeros_not_a_crash(color):
    gt, _, _ = color
    result = score(gt, [])
    assert result.metrics["NMS_AP"] == 0.0 and result.metrics["AP"] == 0.0
    assert any("empty" in w for w in result.warnings)


@pytest.mark.parametrize("bad, protocol, message", [
    ({"bbox": [0, 0, float("nan"), 5]}, "corrected", "not four finite numbers"),
    ({"score": float("inf")}, "corrected", "not a finite number"),
    ({"score": True}, "corrected", "must be a number below 2\\^53"),
    ({"bbox": [0, 0, 5]}, "official", "must be \\[x, y, w, h\\]"),
    ({"image_id": "0"}, "official", "'image_id' must be an integer"),
    ({"score": "high"}, "official", "is text, and this prediction's category has ground truth"),
    ({"score": "high"}, "corrected", "'score' must be a number"),
    ({"score": None}, "official", "'score' must be a number"),
])
def test_bad_entries(color, bad, protocol, message):
    """What no official run scores is refused under both protocols (a text score that COCOeval would
    negate, a null); what the official scorer scores (NaN, infinities, booleans) is refused only
    under ``corrected``."""
    gt, _, preds = color
    preds[2] = {**preds[2], **bad}
    with pytest.raises(PredictionError, match=message) as err:
        score(gt, preds, protocol=protocol)
    assert "entry 2" in str(err.value)


def test_wrong_files_are_named(ovdeval_sample, omnilabel_sample):
    proc = run_cli("score", "ovdeval", "--references", str(omnilabel_sample / "dataset_val.json"),
                   "--predictions", str(ovdeval_sample / "predictions_good" / "color.json"))
    assert proc.returncode == 2 and "OmniLabel dataset JSON" in proc.stderr
    proc = run_cli("score", "ovdeval", "--references",
                   str(ovdeval_sample / "annotations" / "color.json"),
                   "--predictions", str(omnilabel_sample / "predictions_good.json"))
    assert proc.returncode == 2 and "looks like a omnilabel prediction file" in proc.stderr


@pytest.mark.parametrize("content, message", [
    ({"a": 1}, "must be a JSON list of COCO results"),
    ({}, "must be a JSON list of COCO results"),
    ({"foo": [], "bar": []},
     "no prediction list for any of color \\(the predictions name 'foo', 'bar'\\)"),
])
def test_a_prediction_file_holding_an_object_is_named_for_what_it_is(ovdeval_sample, tmp_path,
                                                                     content, message):
    """A JSON object is read as sub-dataset name -> prediction list; one that is not (a value other
    than a list, or no name at all) is told to be a list of COCO results, and a mapping of unknown
    names says which names it had."""
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(content))
    proc = run_cli("score", "ovdeval", "--references",
                   str(ovdeval_sample / "annotations" / "color.json"), "--predictions", str(path))
    assert (
        proc.returncode == 2 and re.search(message, proc.stderr) and "Traceback" not in proc.stderr
    ), proc.stderr


# -- typed reading (#32): a results file of the usual shape decoded without a dict per entry -------

@pytest.mark.parametrize("bad, protocol, message", [
    ({"bbox": [0, 0, 5]}, "official", "must be \\[x, y, w, h\\]"),
    ({"image_id": "0"}, "official", "'image_id' must be an integer"),
    ({"score": "high"}, "official", "is text, and this prediction's category has ground truth"),
    ({"score": None}, "official", "'score' must be a number"),
    ({"score": True}, "corrected", "must be a number below 2\\^53"),
])
def test_a_file_read_typed_names_the_same_bad_entry(ovdeval_sample, tmp_path, bad, protocol,
                                                    message):
    """A file that typed decoding refuses is read as dicts: scored from its path, the error names
    entry 2 as the dict path does."""
    preds = json.loads((ovdeval_sample / "predictions_good" / "color.json").read_text())
    preds[2] = {**preds[2], **bad}
    path = tmp_path / "color.json"
    path.write_text(json.dumps(preds))
    with pytest.raises(PredictionError, match=message) as err:
        api.score("ovdeval", ovdeval_sample / "annotations" / "color.json", path, protocol=protocol)
    assert "entry 2" in str(err.value)


@pytest.mark.heavy
def test_typed_records_score_as_dicts_and_only_for_the_usual_shape(ovdeval_sample, tmp_path):
    """Scored from a path (typed records) and from parsed dicts: the same result, bit for bit,
    integer coordinates and scores included; a file with a label written as text stays dicts (and
    keeps its official warning); a folder of sub-dataset files is read typed file by file."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.benchmarks.validation import TypedCocoResult

    refs = ovdeval_sample / "annotations" / "color.json"
    preds = json.loads((ovdeval_sample / "predictions_good" / "color.json").read_text())
    for i, p in enumerate(preds[::5]):
        p["bbox"], p["score"] = [int(v) for v in p["bbox"]], i % 2
    path = tmp_path / "color.json"
    path.write_text(json.dumps(preds))
    scorer = get_benchmark("ovdeval").scorer
    assert isinstance(scorer.read_predictions(path)[0], dict)
    assert isinstance(scorer.read_predictions(path, typed=True)[0], TypedCocoResult)
    assert api.score("ovdeval", refs, path).to_dict() == api.score("ovdeval", refs, preds).to_dict()
    named = [{**preds[0], "category_id": "red"}] + preds[1:]
    path.write_text(json.dumps(named))
    assert isinstance(scorer.read_predictions(path, typed=True)[0], dict)
    assert any("NEVER scored" in w for w in api.score("ovdeval", refs, path).warnings)
    folder = scorer.read_predictions(ovdeval_sample / "predictions_good", typed=True)
    assert all(isinstance(entries[0], TypedCocoResult) for entries in folder.entries.values())
