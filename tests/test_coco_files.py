"""Plain COCO bbox evaluation of an instances file and a results file (``vlbench.library.coco``)
against pycocotools' ``COCO`` / ``loadRes`` / ``COCOeval`` on the same files: the twelve stats and
the whole precision array; what pycocotools refuses is a clear error naming the entry."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from vlbench.engine.errors import FormatError
from vlbench.library.coco import evaluate_files


def _files(tmp_path, seed: int = 0, n_images: int = 30, n_dets: int = 900):
    """A random COCO set with integer and float coordinates, crowd boxes, tied scores and a category
    no result names."""
    rng = np.random.default_rng(seed)
    images = [{"id": i, "width": 200, "height": 150} for i in range(1, n_images + 1)]
    categories = [{"id": c, "name": f"c{c}"} for c in (1, 2, 3, 7)]
    anns = []
    for k in range(4 * n_images):
        w, h = float(rng.integers(2, 120)), round(float(rng.uniform(2, 100)), 2)
        anns.append({"id": k + 1, "image_id": int(rng.integers(1, n_images + 1)),
                     "category_id": int(rng.choice([1, 2, 3, 7])),
                     "bbox": [float(rng.integers(0, 80)), round(float(rng.uniform(0, 50)), 2), w,
                              h],
                     "area": round(w * h * float(rng.uniform(0.5, 1)), 2),
                     "iscrowd": int(rng.random() < 0.05)})
    dets = []
    for _ in range(n_dets):
        a = anns[int(rng.integers(len(anns)))]
        x, y, w, h = (v + float(rng.normal(0, 4)) for v in a["bbox"])
        dets.append({"image_id": a["image_id"], "category_id": int(rng.choice([1, 2, 3])),
                     "bbox": [round(x, 2), round(y, 2), round(abs(w) + 1, 2), round(abs(h) + 1, 2)],
                     "score": round(float(rng.random()), 2)})
    gt, dt = tmp_path / "instances.json", tmp_path / "results.json"
    gt.write_text(json.dumps({"images": images, "annotations": anns, "categories": categories}))
    dt.write_text(json.dumps(dets))
    return gt, dt


def _float_ids(path):
    """The same results with every third image id written as a float (``5.0``): pycocotools reads
    them as the ints (equal hash), the typed decoding does not take them, so the file goes through
    the general reader."""
    dets = json.loads(path.read_text())
    text = json.dumps([dict(d, image_id=float(d["image_id"])) if i % 3 == 0 else d for i,
                       d in enumerate(dets)])
    path.write_text(text)
    assert "0.0," in text


@pytest.mark.parametrize("seed,reader",
                         [(0, "typed"), (1, "typed"), (2, "typed"), (0, "general"), (1, "general")])
def test_the_files_score_as_pycocotools_scores_them(tmp_path, seed, reader):
    gt_path, dt_path = _files(tmp_path, seed)
    if reader == "general":
        _float_ids(dt_path)
    ev = _pycocotools(gt_path, dt_path)
    res = evaluate_files(gt_path, dt_path)
    np.testing.assert_array_equal(res.precision, ev.eval["precision"])
    np.testing.assert_array_equal(res.recall, ev.eval["recall"])
    assert list(res.stats.values()) == ev.stats.tolist()


def _pycocotools(gt_path, dt_path):
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(gt_path))
        ev = COCOeval(gt, gt.loadRes(str(dt_path)), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


@pytest.mark.parametrize("seed", [0, 1])
def test_text_image_ids_and_images_listed_twice_score_as_pycocotools_scores_them(tmp_path, seed):
    """Image ids written as text everywhere: COCOeval sorts them as text ("10" < "9"), which orders
    tied scores across images; scores rounded to one digit make such ties common. Every image is
    also listed twice (``COCO`` keeps one). The expected arrays are pycocotools' own on the same
    files."""
    gt_path, dt_path = _files(tmp_path, seed)
    data, dets = json.loads(gt_path.read_text()), json.loads(dt_path.read_text())
    data["images"] = [dict(img, id=str(img["id"])) for img in data["images"]] * 2
    data["annotations"] = [dict(a, image_id=str(a["image_id"])) for a in data["annotations"]]
    dets = [dict(d, image_id=str(d["image_id"]), score=round(d["score"], 1)) for d in dets]
    gt_path.write_text(json.dumps(data))
    dt_path.write_text(json.dumps(dets))
    ev, res = _pycocotools(gt_path, dt_path), evaluate_files(gt_path, dt_path)
    np.testing.assert_array_equal(res.precision, ev.eval["precision"])
    assert list(res.stats.values()) == ev.stats.tolist()
    integers = [dict(d, image_id=int(d["image_id"])) for d in dets]
    # 5 is not "5": loadRes refuses, and so does vlbench
    dt_path.write_text(json.dumps(integers))
    with pytest.raises(FormatError, match="not have"):
        evaluate_files(gt_path, dt_path)


def test_a_bad_ground_truth_id_is_an_error_of_the_instances_file(tmp_path):
    """A problem of the instances file is named as that file's, never the results file's."""
    gt_path, dt_path = _files(tmp_path, n_dets=5)
    data = json.loads(gt_path.read_text())
    data["annotations"][3]["category_id"] = "two"
    gt_path.write_text(json.dumps(data))
    with pytest.raises(FormatError) as err:
        evaluate_files(gt_path, dt_path)
    assert (
        str(gt_path) in str(err.value)
        and str(dt_path) not in str(err.value)
        and "entry 3" in str(err.value)
    )
    # text beside integers: sorted() fails in COCOeval
    data["images"][1]["id"] = "2"
    data["annotations"][3]["category_id"] = 2
    gt_path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match="cannot sort together") as err:
        evaluate_files(gt_path, dt_path)
    assert str(gt_path) in str(err.value)


def test_what_pycocotools_refuses_is_an_error_naming_the_entry(tmp_path):
    gt_path, dt_path = _files(tmp_path, n_dets=5)
    dets = json.loads(dt_path.read_text())
    for change, message, entry in (
            (lambda d: d[3].pop("score"), "has no 'score'", "result 3"),
            (lambda d: d[2].update(image_id=999), "not have (e.g. image_id 999)", "result 2"),
            (lambda d: d[4].update(score="high"), "is text", "result 4"),
            (lambda d: d.clear(), "no detections", None)):
        bad = json.loads(json.dumps(dets))
        change(bad)
        dt_path.write_text(json.dumps(bad))
        with pytest.raises(FormatError) as err:
            evaluate_files(gt_path, dt_path)
        assert (
            message in str(err.value)
            and str(dt_path) in str(err.value)
            and "Fix:" in str(err.value)
        )
        assert err.value.entry == entry
    data = json.loads(gt_path.read_text())
    del data["annotations"][6]["area"]
    gt_path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match="annotation 6 has no 'area'"):
        evaluate_files(gt_path, dt_path)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                          st.integers(-2**70, 2**70)),
                min_size=1, max_size=30))
def test_typed_decoding_reads_the_numbers_plain_json_reads(tmp_path_factory, values):
    """Whatever number a results file holds (floats in any notation json.dumps writes, -0.0,
    integers beyond 2^53 and beyond 64 bits): a file whose numbers are all exact in float64 (|v| <
    2^53) is decoded typed, and its columns hold, bit for bit, the float64 of what Python's json
    reads; any other file is left to the dict path (which checks and names each value)."""
    from vlbench.benchmarks.validation import TypedCocoResult, typed_coco_columns
    from vlbench.engine.io import read_json

    path = tmp_path_factory.mktemp("typed") / "results.json"
    path.write_text(
        json.dumps(
            [{"image_id": 1, "category_id": 1, "bbox": [v, v, v, v], "score": v} for v in values]
        )
    )
    expected = json.loads(path.read_text())
    got = read_json(path, typed=list[TypedCocoResult])
    assert isinstance(got[0], TypedCocoResult) == all(abs(v) < 2**53 for v in values)
    if isinstance(got[0], TypedCocoResult):
        _, _, boxes, score = typed_coco_columns(got)
        # -0.0 stays -0.0
        assert score.tobytes() == np.array([float(e["score"]) for e in expected]).tobytes()
        assert (
            boxes.tobytes() == np.array([[float(v) for v in e["bbox"]] for e in expected]).tobytes()
        )
