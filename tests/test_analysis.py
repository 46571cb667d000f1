"""The error analysis (#30): every error type placed by hand, its count and the headline it costs
(ΔAP50, ΔAcc50) derived in each test's docstring. AP50 here is COCO's 101-point interpolated
precision at IoU 0.5; the as-scored value of every case is also the official metric of the same run
(NMS_AP50, the harmonic mean of AP50_categ and AP50_descr, Acc50), an independent check of the
analysis' own AP."""

from __future__ import annotations

import json

import pytest

import vlbench
from conftest import run_cli

# OVDEval: a red car and a cup on image 1 (100 x 100)
A, B = [10, 10, 40, 40], [60, 60, 30, 30]


def _ovdeval(tmp_path, preds):
    subset = {"images": [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 100,
                          "text": ["red car", "cup"], "neg_text": ["blue car"]}],
              "categories": [{"id": 1, "name": "red car"}, {"id": 2, "name": "blue car"},
                             {"id": 3, "name": "cup"}],
              "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": A, "area": 1600,
                               "iscrowd": 0},
                              {"id": 2, "image_id": 1, "category_id": 3, "bbox": B, "area": 900,
                               "iscrowd": 0}]}
    (tmp_path / "color.json").write_text(json.dumps(subset))
    entries = [{"image_id": 1, "category_id": c, "bbox": box, "score": s} for c, box, s in preds]
    (tmp_path / "p.json").write_text(json.dumps(entries))
    return vlbench.score("ovdeval", tmp_path / "color.json", tmp_path / "p.json", analysis=True)


CUP_ON_B = (3, B, 0.8)

#: type -> (predictions besides the cup on B, NMS-AP50 as scored, ΔNMS-AP50 of fixing that type)
OVDEVAL_CASES = {
    # red car box [30,30,40,40]: IoU with A = 400 / 2800 = 0.14: right label, poorly placed. Red car
    # AP 0, cup AP 1:
    # 50. Fixed: it becomes A's TP: 100.
    "localisation": ([(1, [30, 30, 40, 40], 0.9)], 50.0, 50.0),
    # blue car (a neg_text of the image) on A: red car AP 0, cup 1: 50. Fixed: relabelled, A's TP:
    # 100.
    "hard_negative": ([(2, A, 0.9)], 50.0, 50.0),
    # a cup on A at 0.9, above the cup on B: cup ranking FP, TP: precision 1/2 at recall 1, AP 0.5;
    # red car 0: 25. Fixed: relabelled to red car, A's TP: red car 1, cup 1: 100, +75.
    "wrong_positive": ([(3, A, 0.9)], 25.0, 75.0),
    # a red car on nothing at 0.9 above the red car on A at 0.5: red car AP 0.5, cup 1: 75. Fixed
    # (removed): 100.
    "background": ([(1, [80, 0, 10, 10], 0.9), (1, A, 0.5)], 75.0, 25.0),
    # a cup at [30,30,40,40]: IoU 0.14 with A (another label), 100 / 2400 = 0.04 with B (its own):
    # neither placed nor labelled right. Cup ranking FP, TP: 0.5; red car on A: 1: 75. Fixed
    # (removed): 100.
    "both": ([(3, [30, 30, 40, 40], 0.9), (1, A, 0.85)], 75.0, 25.0),
    # no red car at all: A is missed. Red car 0, cup 1: 50. Fixed: A leaves the GT count, red car
    # undefined: 100.
    "missed": ([], 50.0, 50.0),
}


@pytest.mark.parametrize("error_type", list(OVDEVAL_CASES))
def test_ovdeval_each_error_type_is_counted_with_the_ap_it_costs(tmp_path, error_type):
    """See OVDEVAL_CASES: one error of the type, nothing else wrong (the cup on B is a TP in every
    case)."""
    preds, as_scored, delta = OVDEVAL_CASES[error_type]
    result = _ovdeval(tmp_path, preds + [CUP_ON_B])
    a = result.analysis
    assert result.metrics["NMS_AP50"] == pytest.approx(as_scored) and a[
        "as_scored"
    ] == pytest.approx(as_scored)
    counts = {t: e["count"] for t,
              e in a["errors"].items() if t not in ("false_positives", "false_negatives")}
    assert counts == {t: int(t == error_type) for t in counts}
    assert a["errors"][error_type]["delta_NMS_AP50"] == pytest.approx(delta)
    others = [e["delta_NMS_AP50"] for t,
              e in a["errors"].items() if t not in (error_type, "false_positives",
                                                                                "false_negatives")]
    assert others == pytest.approx([0.0] * len(others))
    example = a["examples"][error_type][0]
    assert example["image_id"] == 1 and example["bbox"] in (
        [float(v) for v in p[1]] for p in preds + [(0, A)]
    )


def test_ovdeval_duplicates_are_what_the_suppression_removes(tmp_path):
    """A second red car on A ([11,11,40,40], IoU 0.91) below the first: the GT-guided suppression
    keeps only the top box per GT, so NMS-AP never sees it: ``suppressed`` 1, no duplicate error,
    AP50 100."""
    a = _ovdeval(tmp_path, [(1, A, 0.9), (1, [11, 11, 40, 40], 0.7), CUP_ON_B]).analysis
    assert (
        a["suppressed"] == 1
        and a["errors"]["duplicate"]["count"] == 0
        and a["as_scored"] == pytest.approx(100)
    )


def test_omnilabel_duplicate_and_negative_description_costs(tmp_path):
    """Image 1: category 1 'car' with GT boxes A and C=[60,60,30,30]; description 2 'red car' refers
    to A; description 3 'blue car' is in the label space and refers to nothing (a negative
    description).

    Detections: car on A 0.9 (TP), car at [11,11,40,40] 0.8 (IoU 0.91 with A, taken: duplicate), car
    on C 0.7 (TP); 'blue car' on A 0.99 (hard negative: a negative description on an object), 'red
    car' on A 0.95 (TP). AP50_categ: TP, FP, TP over 2 GT: recall 1/2 at precision 1, recall 1 at
    2/3: (51 * 1 + 50 * 2/3) / 101 = 0.834983. AP50_descr: FP (0.99), TP (0.95) over 1 GT: 0.5. AP50
    = hm(c, d) = 2cd / (c + d + 1e-5). Fix the duplicate (removed): c = 1. Fix the hard negative: it
    points at A, which a TP took: removed, d = 1."""
    data = {"images": [{"id": 1, "file_name": "1.jpg"}],
            "descriptions": [
                {"id": 1, "text": "car", "anno_info": {"type": "object_category"},
                 "image_ids": [1]},
                {"id": 2, "text": "red car", "anno_info": {"type": "object_description"},
                 "image_ids": [1]},
                {"id": 3, "text": "blue car", "anno_info": {"type": "object_description"},
                 "image_ids": [1]}],
            "annotations": [{"id": 5, "image_id": 1, "bbox": A, "area": 1600, "iscrowd": 0,
                             "description_ids": [1, 2]},
                            {"id": 6, "image_id": 1, "bbox": B, "area": 900, "iscrowd": 0,
                             "description_ids": [1]}]}
    preds = [{"image_id": 1, "bbox": A, "description_ids": [1], "scores": [0.9]},
             {"image_id": 1, "bbox": [11, 11, 40, 40], "description_ids": [1], "scores": [0.8]},
             {"image_id": 1, "bbox": B, "description_ids": [1], "scores": [0.7]},
             {"image_id": 1, "bbox": A, "description_ids": [3], "scores": [0.99]},
             {"image_id": 1, "bbox": A, "description_ids": [2], "scores": [0.95]}]
    (tmp_path / "gt.json").write_text(json.dumps(data))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    result = vlbench.score("omnilabel", tmp_path / "gt.json", tmp_path / "p.json", analysis=True)
    hm = lambda c, d: 100 * 2 * c * d / (c + d + 1e-5)  # noqa: E731
    c = (51 + 50 * 2 / 3) / 101
    a = result.analysis
    assert a["as_scored"] == pytest.approx(hm(c, 0.5))
    assert a["as_scored"] == pytest.approx(hm(result.metrics["AP50_categ"] / 100,
                                              result.metrics["AP50_descr"] / 100))
    errors = a["errors"]
    assert {t: e["count"] for t, e in errors.items() if e["count"]} == {"duplicate": 1,
                                                                        "hard_negative": 1,
                                                                         "false_positives": 2}
    assert errors["duplicate"]["delta_AP50"] == pytest.approx(hm(1, 0.5) - hm(c, 0.5))
    assert errors["hard_negative"]["delta_AP50"] == pytest.approx(hm(c, 1) - hm(c, 0.5))
    assert errors["false_positives"]["delta_AP50"] == pytest.approx(hm(1, 1) - hm(c, 0.5))
    assert a["slices"]["description"] == {"category": {"duplicate": 1},
                                          "negative description": {"hard_negative": 1}}


def _ref_l4_rows():
    """Two images (a: 100 x 100, b); objects X [10,10,30,30] and Y [60,10,30,30] of category
    refcoco_1, Z [10,60,30,30] of refcoco_2, W [60,60,30,30] of refcoco_3 on a; V on b."""
    X, Y, Z, W, V = (
        [10, 10, 30, 30],
        [60, 10, 30, 30],
        [10, 60, 30, 30],
        [60, 60, 30, 30],
        [5, 5, 20, 20],
    )
    objects = [(X, "refcoco_1", "a"), (Y, "refcoco_1", "a"), (Z, "refcoco_2", "a"),
               (Z, "refcoco_2", "a"), (W, "refcoco_3", "a"), (W, "refcoco_3", "a"),
               (V, "refcoco_4", "b")]
    words = [5, 5, 5, 5, 15, 15, 15]
    return [{"id": i, "caption": " ".join(["word"] * n), "bbox": box, "bbox_area": box[2] * box[3],
             "bbox_id": i,
             "ori_category_id": cat, "image_id": image, "height": 100, "width": 100,
             "file_name": f"{image}.jpg",
             "is_rewrite": False, "split": "val"} for i,
            ((box, cat, image), n) in enumerate(zip(objects, words))]


def test_ref_l4_every_miss_cause(tmp_path):
    """Row 0 answered with X (hit); row 1 (Y) with X: another object of its class; row 2 (Z) with Y:
    an object of another class; row 3 (Z) with [20,70,30,30] (IoU 400 / 1400 = 0.29): localisation;
    row 4 (W) with [95,95,30,30] (25 of 900 px inside the image): out of image; row 5 (W) with
    [0,90,5,5]: background; row 6: no prediction. Acc50 = 1/7; each cause costs 100/7 and the parts
    add up to 100 - Acc50. By length: rows 0-3 (5 words) 1 of 4 = 25; rows 4-6 (15 words) 0."""
    rows = _ref_l4_rows()
    answers = [rows[0]["bbox"], rows[0]["bbox"], rows[1]["bbox"], [20, 70, 30, 30],
               [95, 95, 30, 30], [0, 90, 5, 5]]
    preds = [{"id": i, "pred_bbox": box, "format": "xywh"} for i, box in enumerate(answers)]
    (tmp_path / "refs.json").write_text(json.dumps(rows))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    result = vlbench.score("ref_l4", tmp_path / "refs.json", tmp_path / "p.json", missing="miss",
                           analysis=True)
    a = result.analysis
    assert a["as_scored"] == pytest.approx(100 / 7) == pytest.approx(result.metrics["Acc50"])
    assert {c: e["count"] for c, e in a["errors"].items()} == {c: 1 for c in a["errors"]}
    assert sum(e["delta_Acc50"] for e in a["errors"].values()) == pytest.approx(
        100 - result.metrics["Acc50"]
    )
    assert a["slices"]["length"]["1-10"] == {"n": 4, "Acc50": 25.0}
    assert a["slices"]["length"]["11-20"] == {"n": 3, "Acc50": 0.0}
    assert (
        sum(a["iou_histogram"]["counts"]) == 7 and a["examples"]["same_class_object"][0]["id"] == 1
    )


def test_nocaps_missed_words_novel_first(tmp_path):
    """Image 0 (in-domain) refs all say 'dog', the caption says 'cat': 'dog' is missed, and not
    novel (in-domain references use it). Image 1 (out-domain) refs all say 'tortoise', the caption
    'turtle': missed, novel (no in-domain reference uses it). 'brown' (1 of 3 references) is not
    missed."""
    refs = {"images": [{"id": 0, "domain": "in-domain", "file_name": "0.jpg"},
                       {"id": 1, "domain": "out-domain", "file_name": "1.jpg"}],
            "annotations": [{"image_id": 0, "id": i, "caption": c} for i, c in
                            enumerate(["a dog on grass", "a dog on the grass", "a brown dog"])]
            + [{"image_id": 1, "id": 10 + i, "caption": c} for i, c in
               enumerate(["a red tortoise", "a tortoise walking", "the tortoise on sand"])]}
    (tmp_path / "refs.json").write_text(json.dumps(refs))
    (tmp_path / "p.json").write_text(json.dumps([{"image_id": 0, "caption": "a cat on grass"},
                                                 {"image_id": 1, "caption": "a turtle on sand"}]))
    result = vlbench.score("nocaps", tmp_path / "refs.json", tmp_path / "p.json", analysis=True,
                           meteor=False, spice=False)
    a = result.analysis
    assert a["missed_words"] == {"novel": [["tortoise", 1]], "other": [["dog", 1]]}
    assert a["domain_gaps"]["CIDEr"]["in-domain"] == pytest.approx(
        result.metrics["CIDEr_in"] - result.metrics["CIDEr"]
    )
    missed = {e["image_id"]: e["missed_words"] for e in a["examples"]["lowest_CIDEr"]}
    assert missed == {0: ["dog"], 1: ["tortoise"]}


def test_analyze_prints_the_tables_and_score_keeps_it_off(tmp_path, ovdeval_sample):
    """`vlbench analyze` prints the error table; `vlbench score` writes no analysis unless
    --analysis."""
    refs, preds = ovdeval_sample / "annotations", ovdeval_sample / "predictions_poor"
    proc = run_cli("analyze", "ovdeval", "--references", str(refs), "--predictions", str(preds))
    assert proc.returncode == 0, proc.stderr
    assert (
        "hard_negative" in proc.stdout
        and "gained when fixed" in proc.stdout
        and "by sub_dataset" in proc.stdout
    )
    out = tmp_path / "r.json"
    assert run_cli("score", "ovdeval", "--references", str(refs), "--predictions", str(preds),
                   "--quiet", "--output", str(out)).returncode == 0
    assert "analysis" not in json.loads(out.read_text())
    assert run_cli("score", "ovdeval", "--references", str(refs), "--predictions", str(preds),
                   "--quiet", "--analysis", "--output", str(out)).returncode == 0
    saved = vlbench.Result.from_dict(json.loads(out.read_text()))
    assert saved.analysis is not None and saved.analysis["errors"]["hard_negative"]["count"] > 0


def test_the_card_names_every_error_type_and_the_evaluate_module_returns_the_analysis(
    ovdeval_sample,
):
    """The metric card's words (benchmark.DETECTION_ANALYSIS_NOTE) and the engine's types are the
    same list; the OVDEval evaluate module on Hub-style rows returns the analysis with
    ``analysis=True``: the counts of scoring the same rows with vlbench.score. (Rows name only the
    categories of their boxes, so boxes labelled with a category that has no box in the split, most
    hard negatives here, are dropped as the scorer drops them: the card says to score the
    sub-dataset JSON for those.)"""
    import evaluate

    from vlbench.benchmarks.benchmark import DETECTION_ANALYSIS_NOTE
    from vlbench.engine.error_analysis import TYPES

    assert all(f"`{t}`" in DETECTION_ANALYSIS_NOTE for t in TYPES)
    data = json.loads((ovdeval_sample / "annotations" / "color.json").read_text())
    preds = json.loads((ovdeval_sample / "predictions_poor" / "color.json").read_text())
    boxes = {img["id"]: [] for img in data["images"]}
    for a in data["annotations"]:
        boxes[a["image_id"]].append({k: a.get(k) for k in ("id", "bbox", "category_id", "area",
                                                           "iscrowd")})
    references = [
        {
            "image_id": img["id"],
            "boxes": boxes[img["id"]],
            "neg_text": img.get("neg_text"),
            "width": img.get("width"),
            "height": img.get("height"),
        }
        for img in data["images"]
    ]
    per_image = {img["id"]: {"boxes": [], "scores": [], "labels": []} for img in data["images"]}
    for p in preds:
        per_image[p["image_id"]]["boxes"].append(p["bbox"])
        per_image[p["image_id"]]["scores"].append(p["score"])
        per_image[p["image_id"]]["labels"].append(p["category_id"])
    metric = evaluate.load(vlbench.metric_path("ovdeval"))
    out = metric.compute(predictions=[per_image[img["id"]] for img in data["images"]],
                         references=references, analysis=True)
    from vlbench.benchmarks import get_benchmark

    scorer = get_benchmark("ovdeval").scorer
    rows = scorer.references_from_rows(references)
    entries = scorer.entries_from_examples(references,
                                           [per_image[img["id"]] for img in data["images"]])
    expected = vlbench.score("ovdeval", rows, entries, analysis=True).analysis
    got = {t: e["count"] for t, e in out["analysis"]["errors"].items()}
    assert got == {t: e["count"] for t, e in expected["errors"].items()} and got["localisation"] > 0


def test_compare_shows_what_each_error_type_costs_each_file_with_paired_intervals(tmp_path):
    """Two OVDEval files on the hand case of OVDEVAL_CASES: A names A's object with a hard negative
    ('blue car'), B finds it right. A's hard negatives cost it 50 points of NMS-AP50, B's none: the
    difference is 50, and every resample keeps it (one image: each resample draws it, or draws
    nothing and is undefined), so the interval is [50, 50] and A loses more to that type; the other
    types cost neither file anything."""
    from vlbench.library.api import compare

    def write(name, preds):
        path = tmp_path / f"{name}.json"
        path.write_text(
            json.dumps(
                [{"image_id": 1, "category_id": c, "bbox": box, "score": s} for c, box, s in preds]
            )
        )
        return path

    _ovdeval(tmp_path, [])      # writes the references
    a = write("a", [(2, A, 0.9), CUP_ON_B])
    b = write("b", [(1, A, 0.9), CUP_ON_B])
    comparison, _, _ = compare("ovdeval", tmp_path / "color.json", a, b, analysis=True,
                               resamples=200)
    rows = {r["metric"]: r for r in comparison.to_dict()["metrics"]}
    hard = rows["cost of hard_negative (NMS_AP50)"]
    assert (hard["a"], hard["b"], hard["diff"]) == pytest.approx((50.0, 0.0, 50.0))
    assert (hard["low"], hard["high"]) == pytest.approx((50.0, 50.0)) and hard[
        "verdict"
    ] == "A loses more to it"
    assert rows["cost of background (NMS_AP50)"]["diff"] == pytest.approx(0.0)


def test_a_file_compared_with_itself_differs_in_no_cost(omnilabel_sample):
    """OmniLabel's bundled poor file against itself: the same resampled images, the same costs, so
    every cost's difference and interval is exactly 0 (the weighted rankings of each fix are rebuilt
    for each file)."""
    from vlbench.library.api import compare

    refs, preds = omnilabel_sample / "dataset_val.json", omnilabel_sample / "predictions_poor.json"
    comparison, a, _ = compare("omnilabel", refs, preds, preds, analysis=True, resamples=100)
    rows = [r for r in comparison.to_dict()["metrics"] if r["metric"].startswith("cost of ")]
    assert len(rows) == 9 and all(r["diff"] == 0 and r["low"] == 0 and r["high"] == 0 for r in rows)
    assert a.analysis["errors"]["localisation"]["delta_AP50"] > 0


# OmniLabel cases: object A (a "car", described as "red car"); B a "cup"
CAR_ON_A, RED_ON_A, CUP_ON_B_OMNI = (1, A, 0.9), (2, A, 0.9), (3, B, 0.8)
HM = lambda c, d: 100 * 2 * c * d / (c + d + 1e-5)  # noqa: E731  (OmniLabel's harmonic mean, in points)

#: type -> (predictions (description, box, score), AP50_categ and AP50_descr as scored, the same
#: fixed)
OMNILABEL_CASES = {
    # 'car' at [30,30,40,40] (IoU 0.14 with A) at 0.95, no car on A: categ ranking FP, TP(cup) over
    # 2 GT: recall 1/2 at precision 1/2, never 1: c = 51 * 0.5 / 101. Fixed: it becomes A's TP: c =
    # 1.
    "localisation": ([(1, [30, 30, 40, 40], 0.95), RED_ON_A, CUP_ON_B_OMNI], (51 * 0.5 / 101, 1.0),
                     (1.0, 1.0)),
    # 'cup' on A at 0.95 (A is a car, taken): categ FP, TP, TP: envelope 2/3 at both recalls: c =
    # 2/3. Fixed (A taken: removed): c = 1.
    "wrong_positive": ([(3, A, 0.95), CAR_ON_A, RED_ON_A, CUP_ON_B_OMNI], (2 / 3, 1.0), (1.0, 1.0)),
    # 'car' at [80,0,10,10], on nothing, at 0.95: the same ranking, c = 2/3; removed: 1.
    "background": ([(1, [80, 0, 10, 10], 0.95), CAR_ON_A, RED_ON_A, CUP_ON_B_OMNI], (2 / 3, 1.0),
                   (1.0, 1.0)),
    # 'cup' at [30,30,40,40]: 0.04 with B (its own label), 0.14 with A: c = 2/3; removed: 1.
    "both": ([(3, [30, 30, 40, 40], 0.95), CAR_ON_A, RED_ON_A, CUP_ON_B_OMNI], (2 / 3, 1.0),
             (1.0, 1.0)),
    # no cup at all: categ recall 1/2 at precision 1: c = 51 / 101. Fixed: B leaves the GT count: c
    # = 1.
    "missed": ([CAR_ON_A, RED_ON_A], (51 / 101, 1.0), (1.0, 1.0)),
}


@pytest.mark.parametrize("error_type", list(OMNILABEL_CASES))
def test_omnilabel_each_error_type_is_counted_with_the_ap_it_costs(tmp_path, error_type):
    """See OMNILABEL_CASES: descriptions 1 'car' and 3 'cup' (categories), 2 'red car' (refers to
    A), 4 'blue car' (a negative description); GT A for 1 and 2, B for 3. The headline is
    hm(AP50_categ, AP50_descr)."""
    preds, (c, d), (c_fixed, d_fixed) = OMNILABEL_CASES[error_type]
    data = {
        "images": [{"id": 1, "file_name": "1.jpg"}],
        "descriptions": [
            {"id": i, "text": t, "anno_info": {"type": kind}, "image_ids": [1]}
            for i, t, kind in (
                (1, "car", "object_category"),
                (2, "red car", "object_description"),
                (3, "cup", "object_category"),
                (4, "blue car", "object_description"),
            )
        ],
        "annotations": [
            {
                "id": 5,
                "image_id": 1,
                "bbox": A,
                "area": 1600,
                "iscrowd": 0,
                "description_ids": [1, 2],
            },
            {"id": 6, "image_id": 1, "bbox": B, "area": 900, "iscrowd": 0, "description_ids": [3]},
        ],
    }
    (tmp_path / "gt.json").write_text(json.dumps(data))
    (tmp_path / "p.json").write_text(json.dumps([{"image_id": 1, "bbox": box,
                                                  "description_ids": [i], "scores": [s]}
                                                 for i, box, s in preds]))
    result = vlbench.score("omnilabel", tmp_path / "gt.json", tmp_path / "p.json", analysis=True)
    a = result.analysis
    assert (result.metrics["AP50_categ"], result.metrics["AP50_descr"]) == pytest.approx(
        (100 * c, 100 * d)
    )
    assert a["as_scored"] == pytest.approx(HM(c, d))
    counts = {t: e["count"] for t,
              e in a["errors"].items() if t not in ("false_positives", "false_negatives")}
    assert counts == {t: int(t == error_type) for t in counts}
    assert a["errors"][error_type]["delta_AP50"] == pytest.approx(HM(c_fixed, d_fixed) - HM(c, d))


def test_ref_l4_costs_get_paired_intervals_too(tmp_path):
    """The hand case of test_ref_l4_every_miss_cause against a file that answers every row with its
    own box: A loses 100/7 points to each cause, B none; B costs 0 in every resample of the two
    images and A never less, so each cause's interval starts at 0 or above and holds the
    difference."""
    from vlbench.library.api import compare

    rows = _ref_l4_rows()
    answers = [rows[0]["bbox"], rows[0]["bbox"], rows[1]["bbox"], [20, 70, 30, 30],
               [95, 95, 30, 30], [0, 90, 5, 5]]
    (tmp_path / "refs.json").write_text(json.dumps(rows))
    (tmp_path / "a.json").write_text(json.dumps([{"id": i, "pred_bbox": b, "format": "xywh"}
                                                 for i, b in enumerate(answers)]))
    (tmp_path / "b.json").write_text(json.dumps([{"id": r["id"], "pred_bbox": r["bbox"],
                                                  "format": "xywh"}
                                                 for r in rows]))
    comparison, _, _ = compare("ref_l4", tmp_path / "refs.json", tmp_path / "a.json",
                               tmp_path / "b.json", missing="miss", analysis=True, resamples=200)
    rows_out = {
        r["metric"]: r
        for r in comparison.to_dict()["metrics"]
        if r["metric"].startswith("cost of ")
    }
    assert len(rows_out) == 6
    for r in rows_out.values():
        assert (
            r["diff"] == pytest.approx(100 / 7)
            and r["low"] >= 0
            and r["low"] <= r["diff"] <= r["high"]
        )


def _one_image(det_boxes, det_pairs, det_states, gt_taken, gt_boxes, gt_pairs):
    """Detections and GT on one image, one ranking group per pair, ranked as listed."""
    import numpy as np

    from vlbench.engine.error_analysis import RankedDetections, Truth

    n, m = len(det_boxes), len(gt_boxes)
    det = RankedDetections(pair=np.asarray(det_pairs), image=np.zeros(n, dtype=np.int64),
                           group=np.asarray(det_pairs),
                     box_xywh=np.asarray(det_boxes, dtype=np.float64), rank_key=np.arange(n),
                     state=np.asarray(det_states, dtype=np.uint8), gt_taken=np.asarray(gt_taken),
                     negative=np.zeros(n, dtype=bool))
    gt = Truth(pair=np.asarray(gt_pairs), image=np.zeros(m, dtype=np.int64),
               group=np.asarray(gt_pairs),
               box_xywh=np.asarray(gt_boxes, dtype=np.float64), ignored=np.zeros(m, dtype=bool))
    return det, gt


def test_the_boundaries_are_tides():
    """TIDE 1.0.1 (``tidecv/quantify.py``): Loc is ``0.1 <= IoU <= 0.5`` with the best GT of its
    class, tested before Dupe; Bkg is ``max IoU <= 0.1``. GT G = [0, 0, 10, 10] (label 0), taken by
    detection 0. Detection 1, [0, 0, 10, 5] label 0: IoU 50 / 100 = 0.5 exactly with the taken G:
    TIDE Loc (not Dupe). Detection 2, [0, 0, 10, 1] label 1: IoU 10 / 100 = 0.1 exactly with G,
    another label's GT: TIDE Bkg (not Both). Detection 3, [0, 0, 10, 6] label 0: IoU 0.6 with the
    taken G: Dupe."""
    from vlbench.engine.cocoeval import FP, TP
    from vlbench.engine.error_analysis import TYPES, classify

    det, gt = _one_image([[0, 0, 10, 10], [0, 0, 10, 5], [0, 0, 10, 1], [0, 0, 10, 6]],
                         [0, 0, 1, 0], [TP, FP, FP, FP], [0, -1, -1, -1], [[0, 0, 10, 10]], [0])
    types = [TYPES[t] if t >= 0 else None for t in classify(det, gt).det_type.tolist()]
    assert types == [None, "localisation", "background", "duplicate"]
