"""Threshold metrics beside AP (not official): precision, recall and F1 at IoU 0.5 over every box of
a file, and the boxes that name a hard negative (OVDEval ``neg_text``, OmniLabel negative
descriptions) while lying on an object. Every expected number is derived by hand in the test's
docstring."""

from __future__ import annotations

import json

import pytest

import vlbench


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_ovdeval_precision_recall_f1_and_hard_negative_boxes(tmp_path):
    """Two images, a 'red car' each (GT A = [10,10,20,20], B = [50,50,20,20]); both list 'blue car'
    as neg_text.

    Predictions (two tie at 0.9, so the file's scores do not rank all of its boxes): (1) img 1 red
    car on A, 0.9; (2) img 1 blue car [11,11,20,20], 0.5, IoU with A 361/439 = 0.82;
    (3) img 1 red car [70,70,10,10], 0.8, on nothing; (4) img 2 blue car on B, 0.9; (5) img 2 red
    car [51,51,20,20], 0.7. The GT-guided suppression keeps per GT box only its top-scoring
    overlapping box: (2) and (5) go, (1), (3), (4) stay: 3 boxes. At IoU 0.5: TP = (1); FP = (3) and
    (4) (blue car has no GT on img 2); GT = 2. Precision 1/3 = 33.33, recall 1/2 = 50, F1 = 2
    (1/3)(1/2) / (5/6) = 40. Hard-negative boxes: (4) alone ((2) was suppressed): 1 of 3 =
    33.33%."""
    subset = {"images": [{"id": 1, "file_name": "1.jpg", "text": ["red car"],
                          "neg_text": ["blue car"]},
                         {"id": 2, "file_name": "2.jpg", "text": ["red car"],
                          "neg_text": ["blue car"]}],
              "categories": [{"id": 1, "name": "red car"}, {"id": 2, "name": "blue car"}],
              "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20],
                               "area": 400, "iscrowd": 0},
                              {"id": 2, "image_id": 2, "category_id": 1, "bbox": [50, 50, 20, 20],
                               "area": 400, "iscrowd": 0}]}
    preds = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9},
             {"image_id": 1, "category_id": 2, "bbox": [11, 11, 20, 20], "score": 0.5},
             {"image_id": 1, "category_id": 1, "bbox": [70, 70, 10, 10], "score": 0.8},
             {"image_id": 2, "category_id": 2, "bbox": [50, 50, 20, 20], "score": 0.9},
             {"image_id": 2, "category_id": 1, "bbox": [51, 51, 20, 20], "score": 0.7}]
    result = vlbench.score("ovdeval", _write(tmp_path / "color.json", subset),
                           _write(tmp_path / "p.json", preds))
    t = result.breakdowns["threshold_metrics"]
    assert (t["true_positives"], t["false_positives"], t["gt_boxes"], t["boxes"]) == (1, 2, 2, 3)
    assert (
        t["precision"] == pytest.approx(100 / 3)
        and t["recall"] == pytest.approx(50)
        and t["F1"] == pytest.approx(40)
    )
    assert t["hard_negative_boxes"] == 1 and t["hard_negative_share"] == pytest.approx(100 / 3)
    assert "not official" in t["note"]
    # never beside the official keys
    assert "threshold_metrics" not in result.metrics and "F1" not in result.metrics


def test_ovdeval_folder_pools_the_sub_datasets_counts(ovdeval_sample, tmp_path):
    """Scoring the sample's folder with every score set to 1: the pooled counts are the sums of the
    sub-datasets' (micro averages), and the pooled precision is their TP over TP + FP."""
    folder = tmp_path / "preds"
    folder.mkdir()
    for path in (ovdeval_sample / "predictions_poor").glob("*.json"):
        _write(folder / path.name, [{**e, "score": 1} for e in json.loads(path.read_text())])
    result = vlbench.score("ovdeval", ovdeval_sample / "annotations", folder)
    t = result.breakdowns["threshold_metrics"]
    parts = t["sub_datasets"].values()
    for key in ("true_positives", "false_positives", "gt_boxes", "boxes", "hard_negative_boxes"):
        assert t[key] == sum(p[key] for p in parts)
    assert t["precision"] == pytest.approx(
        100 * t["true_positives"] / (t["true_positives"] + t["false_positives"])
    )


def test_omnilabel_precision_recall_f1_by_type_and_negative_description_boxes(tmp_path):
    """One image; descriptions 1 'car' (category), 2 'red car' (positive description), 3 'blue car'
    (in the image's label space, refers to nothing: a negative description); one GT box
    [10,10,20,20] for 1 and 2 (two GT rows: OmniLabel evaluates per (image, description)).

    Predictions, every score 1 (a model without confidences): (a) the GT box for 1 and 2: two TPs;
    (b) [60,60,10,10] for 1: FP; (c) [11,11,20,20] for 3: FP,
    on the object (IoU 0.82); (d) [70,70,10,10] for 3: FP, on nothing. 5 boxes (one per description
    answered). All: TP 2, FP 3, GT 2: precision 40, recall 100, F1 2 * 0.4 / 1.4 = 57.14.
    Categories: TP 1, FP 1, GT 1: 50, 100, 66.67. Descriptions: TP 1, FP 2, GT 1: 33.33, 100, 50.
    Negative-description boxes on an object: (c), 1 of 5 = 20%."""
    data = {"images": [{"id": 1, "file_name": "1.jpg"}],
            "descriptions": [
                {"id": 1, "text": "car", "anno_info": {"type": "object_category"},
                 "image_ids": [1]},
                {"id": 2, "text": "red car", "anno_info": {"type": "object_description"},
                 "image_ids": [1]},
                {"id": 3, "text": "blue car", "anno_info": {"type": "object_description"},
                 "image_ids": [1]}],
            "annotations": [{"id": 5, "image_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
                             "iscrowd": 0, "description_ids": [1, 2]}]}
    preds = [{"image_id": 1, "bbox": [10, 10, 20, 20], "description_ids": [1, 2], "scores": [1, 1]},
             {"image_id": 1, "bbox": [60, 60, 10, 10], "description_ids": [1], "scores": [1]},
             {"image_id": 1, "bbox": [11, 11, 20, 20], "description_ids": [3], "scores": [1]},
             {"image_id": 1, "bbox": [70, 70, 10, 10], "description_ids": [3], "scores": [1]}]
    result = vlbench.score("omnilabel", _write(tmp_path / "gt.json", data),
                           _write(tmp_path / "p.json", preds))
    t = result.breakdowns["threshold_metrics"]
    assert (t["true_positives"], t["false_positives"], t["gt_boxes"], t["boxes"]) == (2, 3, 2, 5)
    assert (t["precision"], t["recall"], t["F1"]) == pytest.approx((40, 100, 400 / 7))
    categ, descr = t["by_type"]["categ"], t["by_type"]["descr"]
    assert (categ["precision"], categ["recall"], categ["F1"]) == pytest.approx((50, 100, 200 / 3))
    assert (descr["precision"], descr["recall"], descr["F1"]) == pytest.approx((100 / 3, 100, 50))
    assert t["negative_description_boxes"] == 1 and t[
        "negative_description_share"
    ] == pytest.approx(20)


def test_ref_l4_precision_is_over_the_expressions_answered_and_recall_is_acc50(tmp_path):
    """The 8 val rows of the sample: rows 0-3 answered with their own GT box (IoU 1), rows 4-5 with
    a box shifted by its own width and height (IoU 0), rows 6-7 not answered (``missing='miss'``).
    TP 4, FP 2, GT 8: precision 4/6 = 66.67, recall 4/8 = 50 (= Acc@0.5), F1 2 (2/3)(1/2) / (7/6) =
    57.14."""
    from importlib import resources

    import pyarrow.parquet as pq

    refs = str(resources.files("vlbench").joinpath("samples/ref_l4/ref-l4-val.parquet"))
    rows = pq.read_table(refs).to_pylist()
    preds = [{"id": r["id"], "pred_bbox": r["bbox"], "format": "xywh"} for r in rows[:4]]
    preds += [{"id": r["id"],
               "pred_bbox": [r["bbox"][0] + r["bbox"][2], r["bbox"][1] + r["bbox"][3], r["bbox"][2],
                                            r["bbox"][3]], "format": "xywh"} for r in rows[4:6]]
    result = vlbench.score("ref_l4", refs, _write(tmp_path / "p.json", preds), split="val",
                           missing="miss")
    t = result.breakdowns["threshold_metrics"]
    assert (t["true_positives"], t["false_positives"], t["gt_boxes"], t["boxes"]) == (4, 2, 8, 6)
    assert (t["precision"], t["recall"], t["F1"]) == pytest.approx((200 / 3, 50, 400 / 7))
    assert t["recall"] == pytest.approx(result.metrics["Acc50"])


def test_a_file_whose_scores_rank_every_box_pays_nothing(omnilabel_sample):
    """The threshold metrics are the view of a file whose boxes tie in score; a file with distinct
    scores (the bundled OmniLabel predictions, ties removed) gets none, and costs nothing more."""
    preds = json.loads((omnilabel_sample / "predictions_good.json").read_text())
    n = 0
    for p in preds:
        p["scores"] = [1 - (n + k) * 1e-6 for k in range(len(p["scores"]))]
        n += len(p["scores"])
    result = vlbench.score("omnilabel", omnilabel_sample / "dataset_val.json", preds)
    assert "threshold_metrics" not in result.breakdowns and "tie_bounds" not in result.breakdowns


def test_ovdeval_is_negative_is_a_set_lookup_of_neg_text_pairs():
    """``OVDEvalSubset.is_negative`` against the plain definition: the (image, category) pair is
    negative when the category's name is in the image's ``neg_text``; random ids include images
    without negatives, categories named twice, and ids outside either list."""
    import numpy as np

    from vlbench.benchmarks.ovdeval.records import OVDEvalSubset

    rng = np.random.default_rng(3)
    names = {c: f"label {c % 7}" for c in range(-3, 20)}  # several ids per name
    negatives = {
        int(i): frozenset(f"label {k}" for k in rng.choice(9, size=2, replace=False))
        for i in range(0, 40, 3)
    }
    empty = np.zeros(0)
    subset = OVDEvalSubset(name="x", image_ids=np.arange(40), category_ids=np.arange(-3, 20),
                           ann_image=empty,
                           ann_category=empty, ann_box=empty.reshape(0, 4), ann_area=empty,
                           ann_iscrowd=empty.astype(bool), ann_id=empty, category_names=names,
                           image_negatives=negatives)
    image, category = rng.integers(-5, 45, size=3000), rng.integers(-6, 25, size=3000)
    expected = [names.get(int(c)) in negatives.get(int(i), ()) for i, c in zip(image, category)]
    assert subset.is_negative(image, category).tolist() == expected and any(expected)
