"""OmniLabel: golden parity (CLI and evaluate), lossless Hub round trip, bad input."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
from datasets import load_dataset

from conftest import ROOT, SHARED, agree, golden_cases, run_cli
from vlbench.benchmarks.omnilabel import schema
from vlbench.benchmarks.omnilabel.reader import build, export, parse_official
from vlbench.benchmarks.omnilabel.scorer import score
from vlbench.engine.errors import FormatError, PredictionError
from vlbench.library import api

CASES = golden_cases("omnilabel")
#: cases whose image ids are text: scored (every face that reads official files), never built (the
#: Hub's ids are integers; test_a_build_refuses_text_image_ids)
TEXT_ID_CASES = [c for c in CASES if c.name.startswith("text_image_ids")]
#: a repeated description id and description ids of other types: scored, never built (a Hub row keys
#: a label-space entry by its integer id; test_a_build_refuses_repeated_and_text_description_ids)
ODD_DESCRIPTION_ID_CASES = [c for c in CASES if c.name == "description_id_types"]
BUILDABLE = [c for c in CASES if c not in TEXT_ID_CASES + ODD_DESCRIPTION_ID_CASES]
#: with the adversarial cases, for the face that reads the official files
ALL_CASES = golden_cases("omnilabel", adversarial=True)




@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_cli_matches_official(case, tmp_path):
    expected = json.loads((case / "expected.json").read_text())
    out = tmp_path / "r.json"
    run_cli("score", "omnilabel", "--references", str(case / "references.json"), "--predictions",
            str(case / "predictions.json"), "--output", str(out), "--quiet", check=True)
    assert not agree(json.loads(out.read_text())["metrics"], expected["metrics"])


@pytest.fixture(scope="module")
def omnilabel_metric():
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "omnilabel"))


@pytest.mark.parametrize("case", BUILDABLE, ids=[c.name for c in BUILDABLE])
def test_hub_rows_through_evaluate_match_official(case, omnilabel_metric, tmp_path):
    """official JSON -> vlbench build -> load_dataset -> evaluate.load("metrics/omnilabel") ->
    official numbers."""
    expected = json.loads((case / "expected.json").read_text())
    # annotations only
    # own cache dir: datasets caches local folders by name and layout, and every case here is a
    build(case / "references.json", tmp_path / "hub", allow_missing_images=True)
    # "hub" folder
    ds = load_dataset(str(tmp_path / "hub"), split="validation", cache_dir=str(tmp_path / "cache"))
    preds = json.loads((case / "predictions.json").read_text())
    by_image: dict[int, list[dict]] = {}
    for p in preds:
        by_image.setdefault(p["image_id"], []).append(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:
            mine = by_image.get(row["image_id"], [])
            omnilabel_metric.add(
                prediction={
                    "boxes": [p["bbox"] for p in mine],
                    "scores": [p["scores"] for p in mine],
                    "description_ids": [p["description_ids"] for p in mine],
                },
                reference=row,
            )
        got = omnilabel_metric.compute()
    assert not agree(got, expected["metrics"])


def test_a_build_refuses_text_image_ids(tmp_path):
    """Scoring reads image ids written as text as the official loader does (the golden cases
    ``text_image_ids*``); the Hub dataset stores them as int64, where Arrow would turn "259" into
    259 without a word, so a build names the first text id and writes nothing."""
    assert TEXT_ID_CASES
    for case in TEXT_ID_CASES:
        with pytest.raises(FormatError, match=r"'images' \('id'\) is '259', not an integer"):
            build(case / "references.json", tmp_path / case.name, allow_missing_images=True)
        assert not (tmp_path / case.name).exists()
    data = json.loads((CASES[0] / "references.json").read_text())
    # integer images, one text id in a label space
    data["descriptions"][0]["image_ids"].append("17")
    (tmp_path / "one_text.json").write_text(json.dumps(data))
    with pytest.raises(FormatError, match=r"'descriptions' \('image_ids'\) is '17'"):
        build(tmp_path / "one_text.json", tmp_path / "one_text", allow_missing_images=True)


def test_a_build_refuses_repeated_and_text_description_ids(tmp_path):
    """Scoring reads a repeated description id and description ids of other types where boxes list
    them as the official code does (``description_id_types``); a Hub row keys each label-space entry
    by its integer id, so a build names the first such id and writes nothing."""
    case = ODD_DESCRIPTION_ID_CASES[0]
    with pytest.raises(FormatError,
                       match=r"a description id in 'annotations' \('description_ids'\) is '\d+'"):
        build(case / "references.json", tmp_path / "odd", allow_missing_images=True)
    data = json.loads((case / "references.json").read_text())
    for a in data["annotations"]:
        a["description_ids"] = [int(d) for d in a["description_ids"]]
    (tmp_path / "repeated.json").write_text(json.dumps(data))
    with pytest.raises(FormatError, match=r"description id \d+ is given to 2 descriptions"):
        build(tmp_path / "repeated.json", tmp_path / "repeated", allow_missing_images=True)
    assert not (tmp_path / "odd").exists() and not (tmp_path / "repeated").exists()


def test_text_image_ids_where_the_ids_are_integers_are_no_image():
    """A description listing ``"17"`` (text) where the images' ids are integers lists no image: the
    official loader keys its label spaces by the value, so the entry is never looked up, and the
    scores are those of the file without it (vlbench's former reading, "17" as 17, would have given
    image 17 that label, were it an image). The note says so."""
    case = next(c for c in CASES if c.name == "random_small")
    data = json.loads((case / "references.json").read_text())
    image = data["images"][0]["id"]
    data["descriptions"][0]["image_ids"].append(str(image))
    refs = parse_official(data)
    assert any("no image's id" in n and repr(str(image)) in n for n in refs.notes)
    assert refs.counts == parse_official(json.loads((case / "references.json").read_text())).counts


def test_id_zero_quirk_is_reported_and_corrected():
    case = next(c for c in CASES if c.name == "gt_id_zero")
    twin = next(c for c in CASES if c.name == "edge_handmade")  # same set with ids from 1
    official = api.score("omnilabel", case / "references.json", case / "predictions.json")
    corrected = api.score("omnilabel", case / "references.json", case / "predictions.json",
                          protocol="corrected")
    same_set = json.loads((twin / "expected.json").read_text())["metrics"]
    assert any("annotation id 0" in w for w in official.warnings)
    assert not agree(corrected.metrics, same_set)


def _lossless(data: dict, tmp_path, images=None) -> None:
    build(_write(tmp_path / "gt.json", data), tmp_path / "hub", images=images,
          allow_missing_images=images is None)
    assert export(tmp_path / "hub", "validation") == data


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("name", ["edge_handmade", "random_small", "real_8357"])
def test_round_trip_is_lossless(name, tmp_path):
    data = json.loads((SHARED / "golden" / "omnilabel" / name / "references.json").read_text())
    _lossless(data, tmp_path)


def test_round_trip_keeps_odd_fields_and_order(tmp_path):
    data = json.loads((SHARED / "realdata" / "omnilabel" / "8357.json").read_text())
    data = copy.deepcopy(data)
    data["info"] = {"name": "OmniLabel", "version": "0.1.3", "url": "https://www.omnilabel.org"}
    data["images"][0]["height"] = 480
    data["annotations"].reverse()                       # not grouped by id
    data["annotations"][0]["note"] = {"x": [1, 2]}      # an unknown key
    data["descriptions"][0]["anno_info"]["extra_flag"] = True
    del data["annotations"][1]["iscrowd"]               # missing field stays missing
    _lossless(data, tmp_path)


def test_sample_release_builds_with_images_and_every_config_loads(tmp_path, omnilabel_sample):
    report = build([omnilabel_sample / "dataset_val.json", omnilabel_sample / "dataset_test.json"],
                   tmp_path / "hub", images=omnilabel_sample / "images")
    assert report.rows == {"validation": 8, "test": 3} and not report.missing_images
    for config in ("all", "coco", "objects365", "openimages", "descriptions"):
        ds = load_dataset(str(tmp_path / "hub"), config, cache_dir=str(tmp_path / "cache"))
        assert sum(len(s) for s in ds.values()) > 0
    val = load_dataset(str(tmp_path / "hub"), split="validation", cache_dir=str(tmp_path / "cache"))
    assert val.features == schema.image_features()
    row = val[0]
    assert row["image"].size == (320, 240)
    assert all(
        e["positive"] == any(e["id"] in b["description_ids"] for b in row["boxes"])
        for e in row["labelspace"]
    )
    test = load_dataset(str(tmp_path / "hub"), split="test", cache_dir=str(tmp_path / "cache"))
    assert all(r["boxes"] == [] for r in test)
    assert export(tmp_path / "hub", "test") == json.loads(
        (omnilabel_sample / "dataset_test.json").read_text()
    )
    # the CLI's export writes the same file back
    out = tmp_path / "back.json"
    run_cli("export", "omnilabel", "--folder", str(tmp_path / "hub"), "--out", str(out), check=True)
    assert json.loads(out.read_text()) == json.loads(
        (omnilabel_sample / "dataset_val.json").read_text()
    )


def test_test_split_is_refused_with_a_reason(omnilabel_sample):
    proc = run_cli("score", "omnilabel", "--references",
                   str(omnilabel_sample / "dataset_test.json"),
                   "--predictions", str(omnilabel_sample / "predictions_good.json"))
    assert proc.returncode == 2 and "test server never launched" in proc.stderr


def test_breakdowns(omnilabel_sample):
    result = api.score("omnilabel", omnilabel_sample / "dataset_val.json",
                       omnilabel_sample / "predictions_good.json")
    assert set(result.breakdowns["per_source"]) == {"coco", "objects365"}
    assert len(result.breakdowns["pr_curves"]["recall"]) == 101
    per = result.breakdowns["per_description"]
    assert len(per["id"]) == result.counts["descriptions"]
    aps = [a for a in per["AP"].tolist() if a == a]
    assert aps == sorted(aps)  # worst first
    data = json.loads(result.to_json())
    first = data["breakdowns"]["per_description"]["AP"][0]
    assert first is None or isinstance(first, float)


# -- bad input -------------------------------------------------------------------------------------

@pytest.fixture()
def gt_and_preds(omnilabel_sample):
    gt = parse_official(json.loads((omnilabel_sample / "dataset_val.json").read_text()))
    preds = json.loads((omnilabel_sample / "predictions_good.json").read_text())
    return gt, preds


@pytest.mark.parametrize("change, protocol, message", [
    (lambda p: p.update(scores=p["scores"][:-1]), "official",
     r"'description_ids' has \d+ entries but 'scores' has \d+"),
    (lambda p: p.update(scores=[float("nan")] * len(p["scores"])), "corrected",
     "not a finite number"),
    (lambda p: p.update(bbox=[1, 2, float("inf"), 5]), "corrected", "not four finite numbers"),
    (lambda p: p.update(bbox=[1, 2, 3]), "official", r"'bbox' must be \[x, y, w, h\]"),
    (lambda p: p.pop("scores"), "official", "missing key 'scores'"),
    (lambda p: p.update(image_id=[100]), "official", r"'image_id' \[100\] cannot be an id"),
    (lambda p: p.update(description_ids=[[1]] * len(p["description_ids"])), "official",
     r"'description_ids' \[1\] cannot be an id"),
    (lambda p: p.update(scores=["0.5"] * len(p["scores"])), "official",
     "holds text for a description"),
])
def test_bad_prediction_entries(gt_and_preds, change, protocol, message):
    """Refused under both protocols: what the official evaluator cannot score (a text score it would
    negate, an id no dict can key: omnilabeltools' ``defaultdict`` raises TypeError); refused only
    under ``corrected``: NaN, infinities (the official evaluator scores them)."""
    gt, preds = gt_and_preds
    change(preds[3])
    with pytest.raises(PredictionError, match=message) as err:
        score(gt, preds, protocol=protocol)
    assert "entry 3" in str(err.value)


@pytest.mark.parametrize("degenerate", [[10, 10, 0, 20], [10, 10, 20, 0], [10, 10, -5, 20]])
def test_zero_or_negative_size_predictions_are_false_positives(degenerate):
    """Official (OFFICIAL-SCORERS.md section 5): such a box is scored, IoU 0 with every GT box, so a
    false positive. By hand: one category with one GT box; the degenerate box scores 0.95, a perfect
    box 0.9. The ranking is FP, TP: precision 0 then 1/2 at recall 1, so the interpolated precision
    is 1/2 at every recall point and every IoU threshold: AP_categ = AP50_categ = 50. Without the
    degenerate box it would be 100."""
    data = {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"}],
            "descriptions": [{"id": 7, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
                             "iscrowd": 0, "description_ids": [7]}]}
    preds = [{"image_id": 1, "bbox": degenerate, "description_ids": [7], "scores": [0.95]},
             {"image_id": 1, "bbox": [10, 10, 20, 20], "description_ids": [7], "scores": [0.9]}]
    result = score(parse_official(data), preds)
    assert result.metrics["AP_categ"] == pytest.approx(50.0, abs=1e-9)
    assert result.metrics["AP50_categ"] == pytest.approx(50.0, abs=1e-9)
    assert any("zero or negative width or height" in w for w in result.warnings)
    assert score(parse_official(data), preds[1:]).metrics["AP_categ"] == pytest.approx(
        100.0, abs=1e-9
    )


def test_ids_no_image_id_equals_are_dropped_as_the_official_drops_them(gt_and_preds):
    """An image id beyond int64 (``2**63``) or written as text where the references' ids are
    integers equals no image's id: omnilabeltools files the entry under a key it never looks up, so
    the number is that of the file without the entry, and the drop is counted and warned about."""
    gt, preds = gt_and_preds
    without = score(gt, preds[:3] + preds[4:])
    for odd in (2**63, str(preds[3]["image_id"])):
        changed = copy.deepcopy(preds)
        changed[3]["image_id"] = odd
        result = score(gt, changed)
        assert result.metrics == without.metrics
        assert result.counts["dropped_unknown_image"] == len(preds[3]["description_ids"])


def test_ids_of_other_types_are_looked_up_as_the_official_dicts_look_them_up():
    """omnilabeltools files detections under ``(image_id, description_id)`` keys of a dict and looks
    up only the references' ids, so equality decides: ``1.0`` and ``true`` are the ids 1; the texts
    ``"1"`` and ``"7"``, ``7.5`` and null equal no integer id and are never looked up (the golden
    case ``description_id_types``, made with omnilabeltools run here, checks this on a whole file).
    By hand: category 1 has one GT box on image 1. The detections that count are the perfect box
    under ``1.0`` (score 0.9) and under ``true`` (0.8): TP then duplicate FP, precision 1 up to
    recall 1, so AP_categ = 100. Were the text ``"1"`` (0.95, a poor box) or the text image id
    ``"1"`` (0.97, a poor box) read as 1, a false positive would rank first and AP_categ would be
    50."""
    data = {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"}],
            "descriptions": [{"id": 1, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
                             "iscrowd": 0, "description_ids": [1]}]}
    preds = [{"image_id": 1, "bbox": [10, 10, 20, 20], "description_ids": [1.0], "scores": [0.9]},
             {"image_id": 1, "bbox": [10, 10, 20, 20], "description_ids": [True], "scores": [0.8]},
             {"image_id": 1, "bbox": [50, 50, 5, 5], "description_ids": ["1", 7.5, None],
              "scores": [0.95, 0.96, 0.99]},
             {"image_id": "1", "bbox": [50, 50, 5, 5], "description_ids": [1], "scores": [0.97]}]
    result = score(parse_official(data), preds)
    assert result.metrics["AP_categ"] == pytest.approx(100.0, abs=1e-9)
    assert (
        result.counts["dropped_unequal_description_id"] == 3
        and result.counts["dropped_unknown_image"] == 1
    )
    assert any("'1', 7.5, None" in w and "never looks them up" in w for w in result.warnings)
    assert any("true / false" in w for w in result.warnings)
    assert any("which no text equals" in w for w in result.warnings)


def test_reference_description_ids_must_be_integers_as_omnilabeltools_asserts():
    """omnilabeltools' ``get_description`` asserts ``isinstance(description_id, int)`` for every
    description id (run here on the text id ``"5"``: AssertionError), so a file with text or float
    description ids is refused, naming the entry. Text where a box lists its descriptions only makes
    that copy of the box unseen (a note)."""
    data = {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"}],
            "descriptions": [{"id": 5, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]},
                             {"id": 6, "text": "Mug", "anno_info": {"type": "object_category"},
                              "image_ids": [1]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 10, 20, 20], "iscrowd": 0,
                             "description_ids": ["5", 6.0]}]}
    gt = parse_official(data)
    assert gt.counts["gt_copies"] == 1 and gt.counts["gt_copies_outside_labelspace"] == 1
    assert any("equal no description's id (e.g. '5'" in n for n in gt.notes)
    for bad in ("5", 5.0):
        changed = copy.deepcopy(data)
        changed["descriptions"][1]["id"] = bad
        with pytest.raises(FormatError,
                           match=r"descriptions\[1\].*is not an integer: omnilabeltools asserts"):
            parse_official(changed)


def test_a_repeated_description_id_keeps_each_entry_and_refuses_one_image_twice():
    """omnilabeltools keys descriptions by id (the last entry's text gives the word count) but files
    every entry under the images it lists, with its own type; the golden case
    ``description_id_types`` has the numbers. Two entries of one id listing one image trip its
    assertion that a (description, image) pair is new: refused."""
    data = {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"},
                       {"id": 2, "file_name": "coco/val2017/2.jpg"}],
            "descriptions": [{"id": 5, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]},
                             {"id": 5, "text": "a cup of tea",
                              "anno_info": {"type": "object_description"}, "image_ids": [2]}],
            "annotations": []}
    gt = parse_official(data)
    assert gt.pair_words.tolist() == [4, 4]                     # "a cup of tea", for both entries
    assert sorted(gt.pair_type.tolist()) == sorted([schema.TYPE_C, schema.TYPE_DN])
    assert any("repeat an earlier description's id" in n for n in gt.notes)
    data["descriptions"][1]["image_ids"] = [2, 1]
    with pytest.raises(FormatError, match="description 5 is listed twice for image 1"):
        parse_official(data)


def test_unknown_images_and_outside_labelspace_are_counted_and_warned(gt_and_preds):
    gt, preds = gt_and_preds
    preds.append({"image_id": 99999, "bbox": [1, 1, 5, 5], "description_ids": [1], "scores": [0.5]})
    preds.append({"image_id": preds[0]["image_id"], "bbox": [1, 1, 5, 5],
                  "description_ids": [424242], "scores": [0.5]})
    result = score(gt, preds)
    assert (
        result.counts["dropped_unknown_image"] == 1
        and result.counts["dropped_outside_labelspace"] == 1
    )
    assert any("99999" in w for w in result.warnings)
    assert any("outside the image's label space" in w for w in result.warnings)


def test_empty_prediction_list_scores_zero(gt_and_preds):
    gt, _ = gt_and_preds
    result = score(gt, [])
    assert result.metrics["AP_categ"] == 0.0 and result.metrics["AP"] == 0.0
    assert any("empty" in w for w in result.warnings)


def test_reference_errors(omnilabel_sample, tmp_path):
    data = json.loads((omnilabel_sample / "dataset_val.json").read_text())
    dup = copy.deepcopy(data)
    dup["descriptions"][0]["image_ids"].append(dup["descriptions"][0]["image_ids"][0])
    with pytest.raises(FormatError, match="listed twice for image"):
        parse_official(dup)
    no_crowd = copy.deepcopy(data)
    del no_crowd["annotations"][0]["iscrowd"]
    assert any("no 'iscrowd' and were read as 0" in n for n in parse_official(no_crowd).notes)
    with pytest.raises(FormatError, match="looks like a COCO-style file"):
        parse_official({"images": [], "annotations": [], "categories": []})


def _records_equal(a, b) -> None:
    """Every field of two OmniLabelReferences equal (arrays element for element, with their
    dtypes)."""
    import numpy as np

    for name, value in a.__dict__.items():
        other = b.__dict__[name]
        if isinstance(value, np.ndarray):
            assert value.dtype == other.dtype and np.array_equal(value, other), name
        elif name != "source":
            assert value == other, name


def _variants(data):
    """The sample file as written, and edits that the typed reading must decline (each read as
    dicts) or accept."""
    out = {"as written": data}
    def edit(name, change):
        d = copy.deepcopy(data)
        change(d)
        out[name] = d
    edit("boolean image id", lambda d: d["images"][0].update(id=True))
    edit("string iscrowd", lambda d: d["annotations"][0].update(iscrowd="0"))
    edit("iscrowd 2", lambda d: d["annotations"][0].update(iscrowd=2))
    edit("crowd box", lambda d: d["annotations"][0].update(iscrowd=1))
    edit("no iscrowd", lambda d: d["annotations"][0].pop("iscrowd"))
    edit("no annotations", lambda d: d.pop("annotations"))
    edit("null anno_info", lambda d: d["descriptions"][0].update(anno_info=None))
    edit("anno_info a list",
         lambda d: d["descriptions"][0].update(anno_info=["object_description"]))
    edit("no file_name", lambda d: d["images"][0].pop("file_name"))
    edit("null file_name", lambda d: d["images"][0].update(file_name=None))
    edit("other version", lambda d: d.update(info={"name": "OmniLabel", "version": "0.1.2"}))
    edit("integral float box id", lambda d: d["annotations"][0].update(id=7.0))
    edit("integer coordinates", lambda d: d["annotations"][0].update(bbox=[1, 2, 30, 40]))
    edit("coordinate beyond 2^53",
         lambda d: d["annotations"][0].update(bbox=[2**53 + 1, 2, 30, 40]))
    return out


def test_typed_reference_reading_equals_the_dict_path(omnilabel_sample, tmp_path):
    """load_references decodes the usual file with msgspec (no dict per object) and falls back to
    dicts for anything else: the records equal parse_official's of the same JSON, for the sample and
    for each unusual edit."""
    import msgspec

    from vlbench.benchmarks.omnilabel.reader import TypedDataset, load_references

    data = json.loads((omnilabel_sample / "dataset_val.json").read_text())
    typed_ok = {}
    for name, variant in _variants(data).items():
        path = tmp_path / "refs.json"
        path.write_text(json.dumps(variant))
        try:
            msgspec.json.decode(path.read_bytes(), type=TypedDataset)
            typed_ok[name] = True
        except msgspec.ValidationError:
            typed_ok[name] = False
        try:
            typed_read = load_references(path)
        except FormatError as exc:          # refused: in the same words as the dict path
            with pytest.raises(FormatError) as general:
                parse_official(variant, source=str(path))
            assert str(exc) == str(general.value)
            continue
        _records_equal(typed_read, parse_official(variant, source=str(path)))
    # the usual shapes go the typed way, the unusual ones the general way
    assert typed_ok == {"as written": True, "boolean image id": False, "string iscrowd": False,
                        "iscrowd 2": True,
                        "crowd box": True, "no iscrowd": False, "no annotations": True,
                        "null anno_info": True,
                        "anno_info a list": False, "no file_name": True, "null file_name": False,
                        "other version": True, "integral float box id": False,
                        "integer coordinates": True, "coordinate beyond 2^53": False}


def test_typed_reference_reading_keeps_the_messages(omnilabel_sample, tmp_path):
    """A file the typed reading accepts but the records refuse is named as the dict path names
    it."""
    from vlbench.benchmarks.omnilabel.reader import load_references

    data = json.loads((omnilabel_sample / "dataset_val.json").read_text())
    for change, message in [
        (lambda d: d["descriptions"].append(dict(d["descriptions"][0])), "listed twice for image"),
        (
            lambda d: d["descriptions"][0]["image_ids"].append(
                d["descriptions"][0]["image_ids"][0]
            ),
            "listed twice for image",
        ),
    ]:
        d = copy.deepcopy(data)
        change(d)
        path = tmp_path / "refs.json"
        path.write_text(json.dumps(d))
        with pytest.raises(FormatError, match=message) as typed:
            load_references(path)
        with pytest.raises(FormatError) as general:
            parse_official(d, source=str(path))
        assert str(typed.value) == str(general.value)


def test_an_image_listed_twice_is_one_image_with_a_note(omnilabel_sample, tmp_path):
    """The official code keys images by id: an image listed twice is evaluated once (the public
    adversarial case ``duplicate_image_entries`` checks the numbers); the typed and the dict
    readings say so alike."""
    from vlbench.benchmarks.omnilabel.reader import load_references

    data = json.loads((omnilabel_sample / "dataset_val.json").read_text())
    once = parse_official(data)
    data["images"].append(dict(data["images"][0]))
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(data))
    for refs in (load_references(path), parse_official(data)):
        assert np.array_equal(refs.image_ids, once.image_ids)
        assert any("repeat an image id" in n for n in refs.notes)


def test_wrong_benchmark_prediction_file_is_named(omnilabel_sample):
    ref_l4_preds = ROOT / "src" / "vlbench" / "samples" / "ref_l4" / "predictions_good.json"
    proc = run_cli("score", "omnilabel", "--references", str(omnilabel_sample / "dataset_val.json"),
                   "--predictions", str(ref_l4_preds))
    assert proc.returncode == 2 and "looks like a ref_l4 prediction file" in proc.stderr


# -- typed reading (#32): a file of the usual shape decoded without a dict per entry ---------------

BAD_ENTRIES = [
    (lambda p: p.update(scores=p["scores"][:-1]), "official",
     r"'description_ids' has \d+ entries but 'scores' has \d+"),
    (lambda p: p.update(bbox=[1, 2, 3]), "official", r"'bbox' must be \[x, y, w, h\]"),
    (lambda p: p.pop("scores"), "official", "missing key 'scores'"),
    (lambda p: p.update(image_id={"id": 100}), "official",
     "'image_id' {'id': 100} cannot be an id"),
    (lambda p: p.update(description_ids=[[1]] * len(p["description_ids"])), "official",
     r"'description_ids' \[1\] cannot be an id"),
    (lambda p: p.update(scores=["0.5"] * len(p["scores"])), "official",
     "holds text for a description"),
]


@pytest.mark.parametrize("change, protocol, message", BAD_ENTRIES)
def test_a_file_read_typed_names_the_same_bad_entry(gt_and_preds, omnilabel_sample, tmp_path,
                                                    change, protocol,
                                                     message):
    """Scoring a path reads it typed where it can; a file typed decoding refuses is read as dicts,
    and one it takes (unequal list lengths) is checked on the records: either way the error names
    entry 3 as the dict path does."""
    _, preds = gt_and_preds
    change(preds[3])
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    with pytest.raises(PredictionError, match=message) as err:
        api.score("omnilabel", omnilabel_sample / "dataset_val.json", path, protocol=protocol)
    assert "entry 3" in str(err.value)


def test_typed_records_only_when_asked_and_only_for_the_usual_shape(omnilabel_sample, tmp_path):
    """``read_predictions`` gives dicts by default (what the Space, the views and users read); with
    ``typed`` a file of the usual shape comes back as records, and one holding what typed decoding
    leaves to the general path (an integer score beyond 2^53, a boolean coordinate, an integral
    float id) as dicts."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.benchmarks.omnilabel.scorer import TypedPrediction

    scorer = get_benchmark("omnilabel").scorer
    good = omnilabel_sample / "predictions_good.json"
    assert isinstance(scorer.read_predictions(good)[0], dict)
    assert isinstance(scorer.read_predictions(good, typed=True)[0], TypedPrediction)
    for odd in ({"scores": [2**53 + 1]}, {"bbox": [1, 2, True, 4]}, {"image_id": 100.0}):
        entry = {"image_id": 100, "bbox": [1, 2, 3, 4], "description_ids": [1], "scores": [0.5],
                 **odd}
        path = tmp_path / "odd.json"
        path.write_text(json.dumps([entry]))
        assert isinstance(scorer.read_predictions(path, typed=True)[0], dict), odd


def test_typed_and_dict_entries_give_the_same_result(omnilabel_sample, tmp_path):
    """The same file scored from its path (typed records) and from its parsed dicts: every metric
    and breakdown equal, bit for bit; integers in boxes and scores (read by typed decoding as their
    floats) included."""
    refs = omnilabel_sample / "dataset_val.json"
    preds = json.loads((omnilabel_sample / "predictions_good.json").read_text())
    for i, p in enumerate(preds[::7]):                  # some integer coordinates and scores
        p["bbox"] = [int(v) for v in p["bbox"]]
        p["scores"] = [i % 2] + p["scores"][1:]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    from_path = api.score("omnilabel", refs, path).to_dict()
    from_dicts = api.score("omnilabel", refs, json.loads(path.read_text())).to_dict()
    assert from_path == from_dicts


def test_typed_decoding_reads_numbers_as_python_does():
    """The typed reader's numbers against Python's own correctly rounded ``float()`` (what ``json``
    gives), on decimal strings of every length, exponents and the subnormal range: the same float64
    bit for bit."""
    import random

    import msgspec

    rng = random.Random(0)
    texts = ["0.1", "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
             "9007199254740991", "-0.0"]
    for _ in range(20_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
        point = rng.randint(0, len(digits))
        whole = digits[:point].lstrip("0") or "0"               # JSON allows no leading zero
        exponent = rng.randint(-340, 306 - len(whole))           # within float64's range
        texts.append(f"{rng.choice(['', '-'])}{whole}.{digits[point:] or '0'}e{exponent}")
    decoded = msgspec.json.decode(("[" + ",".join(texts) + "]").encode(), type=list[float])
    assert [v.hex() for v in decoded] == [float(t).hex() for t in texts]
