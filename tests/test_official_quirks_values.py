"""Official behaviour found by the third adversarial round (issue #26): integer scores beyond 2^53,
category names given as ids, NaN / infinite / boolean / text values. One test per behaviour, each
with its expected number derived by hand in the docstring, and randomised comparisons with
pycocotools run here on the same input (``reference`` marker), the OVDEval suppression restated as
``eval.py`` runs it (numpy's own arrays decide the dtypes)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from vlbench.benchmarks.ovdeval.reader import parse_official

BIG = 2**53
NAN, INF = float("nan"), float("inf")


def _subset(images: list[int], anns: list[dict], names: tuple[str, ...] = ("dog",)) -> dict:
    return {"categories": [{"supercategory": "object", "id": i, "name": n} for i,
                           n in enumerate(names)],
            "images": [{"id": i, "file_name": f"{i}.jpg", "height": 100, "width": 100, "text": [],
                        "neg_text": []}
                       for i in images],
            "annotations": [{"iscrowd": 0, "area": a["bbox"][2] * a["bbox"][3], "category_id": 0,
                             **a, "id": n + 1} for n, a in enumerate(anns)]}


def _ovdeval(subset: dict, preds: list[dict], protocol: str = "official") -> dict:
    from vlbench.benchmarks.ovdeval.scorer import score

    return score(
        parse_official(subset, "color"), json.loads(json.dumps(preds)), protocol=protocol
    ).metrics


# -- integer scores beyond 2^53 --------------------------------------------------------------------
def test_integer_scores_beyond_2p53_rank_exactly_where_the_official_arrays_are_int64():
    """One GT; a false positive scored 2^53 is listed before the true positive scored 2^53 + 1.
    Official (int64 everywhere): the TP ranks first, AP = AR1 = 100. float64 would make them equal
    and keep file order (FP first): AR1 0, AP 50 (precision 1/2 at recall 1)."""
    subset = _subset([0], [{"image_id": 0, "bbox": [10, 10, 40, 40]}])
    preds = [{"image_id": 0, "category_id": 0, "bbox": [60, 60, 20, 20], "score": BIG},
             {"image_id": 0, "category_id": 0, "bbox": [10, 10, 40, 40], "score": BIG + 1}]
    got = _ovdeval(subset, preds)
    assert (
        got["AP"] == pytest.approx(100)
        and got["AR1"] == 100.0
        and got["NMS_AP"] == pytest.approx(100)
    )


def test_an_empty_per_image_list_makes_the_pooled_ranking_float64():
    """Image 0: a FP scored 2^53 (no GT); image 1: GT + TP scored 2^53 + 1; image 2: GT, no
    detection. In ``accumulate`` image 2's empty score list is a float64 array, so the concatenation
    is float64: both scores become 2^53, the stable sort keeps image order, FP first. Two GTs:
    precision 1/2 at recall 1/2, nothing beyond: AP = 51 * 0.5 / 101 = 25.2475...; without image 2
    the ranking is int64: TP first, AP 100."""
    anns = [{"image_id": 1, "bbox": [10, 10, 40, 40]}, {"image_id": 2, "bbox": [10, 10, 40, 40]}]
    preds = [{"image_id": 0, "category_id": 0, "bbox": [10, 10, 40, 40], "score": BIG},
             {"image_id": 1, "category_id": 0, "bbox": [10, 10, 40, 40], "score": BIG + 1}]
    assert _ovdeval(_subset([0, 1, 2], anns), preds)["AP"] == pytest.approx(100 * 51 * 0.5 / 101)
    assert _ovdeval(_subset([0, 1], anns[:1]), preds)["AP"] == pytest.approx(100)


def test_omnilabel_orders_integer_scores_beyond_2p53_exactly_too():
    """The same pair as above in OmniLabel (one description, one GT box): official AP_categ 100
    (int64 ranking)."""
    gt = {"images": [{"id": 1, "file_name": "1.jpg"}],
          "descriptions": [{"id": 5, "text": "dog", "image_ids": [1],
                            "anno_info": {"type": "object_category"}}],
          "annotations": [{"id": 1, "image_id": 1, "bbox": [10, 10, 40, 40], "description_ids": [5],
                           "iscrowd": 0}]}
    preds = [{"image_id": 1, "bbox": [60, 60, 20, 20], "description_ids": [5], "scores": [BIG]},
             {"image_id": 1, "bbox": [10, 10, 40, 40], "description_ids": [5], "scores": [BIG + 1]}]
    from vlbench.benchmarks.omnilabel.reader import parse_official as omnilabel_references
    from vlbench.benchmarks.omnilabel.scorer import score

    assert score(omnilabel_references(gt), preds).metrics["AP_categ"] == pytest.approx(100)


# -- non-finite values -----------------------------------------------------------------------------
def test_a_nan_score_wins_the_suppression_and_ranks_last_in_cocoeval():
    """One GT [0, 0, 10, 10]; p1 (IoU 1) scores 0.9, p2 [0, 0, 10, 6.25] (IoU 0.625) scores NaN. The
    suppression reverses numpy's ascending argsort, which puts NaN last: p2 is kept, p1 removed.
    NMS-AP: p2 alone, a TP at the thresholds 0.50, 0.55, 0.60 only: 3 / 10 = 30; NMS_AP50 100. Plain
    AP: COCOeval ranks NaN last, so p1 first: a TP everywhere, AP 100. Under ``corrected`` the NaN
    is refused."""
    subset = _subset([0], [{"image_id": 0, "bbox": [0, 0, 10, 10]}])
    preds = [{"image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 10], "score": 0.9},
             {"image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 6.25], "score": NAN}]
    got = _ovdeval(subset, preds)
    assert got["NMS_AP"] == pytest.approx(30) and got["NMS_AP50"] == pytest.approx(100)
    assert got["AP"] == pytest.approx(100)
    with pytest.raises(Exception, match="not a finite number"):
        _ovdeval(subset, preds, "corrected")


def test_a_nan_coordinate_is_what_pycocotools_fmin_fmax_make_of_it():
    """Det [NaN, 0, 10, 10] against GT [0, 0, 10, 10]: the C IoU takes fmin(NaN + 10, 10) -
    fmax(NaN, 0) = 10 as the width (fmin / fmax skip NaN), so the IoU is 100 / (100 + 100 - 100) =
    1: a TP, AP 100. The suppression's own IoU is NaN there (numpy propagates it), never > 0.5, so
    the box is not a candidate and survives."""
    subset = _subset([0], [{"image_id": 0, "bbox": [0, 0, 10, 10]}])
    got = _ovdeval(subset, [{"image_id": 0, "category_id": 0, "bbox": [NAN, 0, 10, 10],
                             "score": 0.5}])
    assert got["AP"] == pytest.approx(100) and got["NMS_AP"] == pytest.approx(100)


def test_after_a_nan_iou_every_later_ground_truth_takes_the_match():
    """Det [0, 0, NaN, 10] and two GTs, G1 [0, 0, 10, 10], G2 [50, 50, 10, 10] (disjoint). IoU with
    G1 is NaN (the area w*h is NaN), with G2 0 (height <= 0). pycocotools' loop: G1's NaN is not
    below the running best, so G1 becomes the match; then 0 is not below NaN, so G2 replaces it. The
    detection is a TP of G2 at every threshold: recall 1/2 at precision 1, AP = 51 / 101 =
    50.495..."""
    subset = _subset([0], [{"image_id": 0, "bbox": [0, 0, 10, 10]},
                           {"image_id": 0, "bbox": [50, 50, 10, 10]}])
    got = _ovdeval(subset, [{"image_id": 0, "category_id": 0, "bbox": [0, 0, NAN, 10],
                             "score": 0.5}])
    assert got["AP"] == pytest.approx(100 * 51 / 101)


def test_boolean_scores_are_one_and_zero():
    """true ranks as 1, false as 0: the TP scored true ranks above the FP scored false, AP 100;
    swapped, the FP first: precision 1/2 at recall 1, AP 50."""
    subset = _subset([0], [{"image_id": 0, "bbox": [10, 10, 40, 40]}])
    fp = {"image_id": 0, "category_id": 0, "bbox": [60, 60, 20, 20]}
    tp = {"image_id": 0, "category_id": 0, "bbox": [10, 10, 40, 40]}
    assert _ovdeval(subset, [{**fp, "score": False}, {**tp, "score": True}])["AP"] == pytest.approx(
        100
    )
    assert _ovdeval(subset, [{**fp, "score": True}, {**tp, "score": False}])["AP"] == pytest.approx(
        50
    )


def test_text_scores_compare_as_text_in_the_suppression_and_are_never_scored():
    """A prediction whose category has no GT (id 7) scores "9" (text); on the same GT a TP scores
    10. The image's score array is text, and "9" > "10" as text: the text-scored one is kept, the TP
        removed, NMS-AP 0; plain AP
    (no suppression) 100. A text score on a category with GT stops the official scorer: refused."""
    subset = _subset([0], [{"image_id": 0, "bbox": [0, 0, 10, 10]}])
    preds = [{"image_id": 0, "category_id": 7, "bbox": [0, 0, 10, 10], "score": "9"},
             {"image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 10], "score": 10}]
    got = _ovdeval(subset, preds)
    assert got["NMS_AP"] == 0.0 and got["AP"] == pytest.approx(100)
    preds[0]["category_id"] = 0
    with pytest.raises(Exception, match="is text"):
        _ovdeval(subset, preds)


# -- randomised: the engine and the OVDEval pipeline against pycocotools ---------------------------
_ODD_SCORES = [NAN, INF, -INF, -0.0, 0.0, 5e-324, -0.25, True, False, BIG, BIG + 1, BIG - 1, 2**60,
               2**60 + 1, 3]
_ODD_COORDS = [NAN, INF, -INF]


def _odd_scene(rng: np.random.Generator, n_images: int = 4, n_categories: int = 2):
    anns, dets = [], []
    for image in range(n_images):
        for _ in range(int(rng.integers(0, 4))):
            x, y, w, h = (float(v) for v in (*rng.uniform(0, 60, 2), *rng.uniform(8, 40, 2)))
            anns.append({"image_id": image, "category_id": int(rng.integers(n_categories)),
                         "bbox": [x, y, w, h]})
    # files whose scores are all integers (int64 arrays officially)
    integer_only = rng.random() < 0.5
    for _ in range(int(rng.integers(1, 14))):
        base = (
            anns[int(rng.integers(len(anns)))]["bbox"]
            if anns and rng.random() < 0.7
            else [30, 30, 20, 20]
        )
        box = [float(v + rng.normal(0, 3)) for v in base]
        if rng.random() < 0.15:
            box[int(rng.integers(4))] = _ODD_COORDS[int(rng.integers(3))]
        r = rng.random()
        if integer_only:
            score = [BIG, BIG + 1, BIG - 1, 2**60, 2**60 + 1, 3, True, False][int(rng.integers(8))]
        elif r < 0.5:
            score = _ODD_SCORES[int(rng.integers(len(_ODD_SCORES)))]
        else:
            score = float(rng.uniform())
        dets.append({"image_id": int(rng.integers(n_images)),
                     "category_id": int(rng.integers(n_categories)), "bbox": box, "score": score})
    return anns, dets


def _pycocotools(images: list[int], categories: list[int], anns: list[dict],
                 dets: list[dict]) -> np.ndarray:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = {"images": [{"id": i} for i in images],
                        "categories": [{"id": c} for c in categories],
                        "annotations": [{"id": n + 1, "iscrowd": 0,
                                         "area": a["bbox"][2] * a["bbox"][3], **a}
                                        for n, a in enumerate(anns)]}
        coco.createIndex()
        run = COCOeval(coco, coco.loadRes([dict(d) for d in dets]), "bbox")
        run.evaluate()
        run.accumulate()
        run.summarize()
    return run.stats


def _eval_py_suppression(anns: list[dict], dets: list[dict]) -> list[dict]:
    """``eval.py``'s GT-guided suppression, restated: per image an ``np.array`` of its scores (numpy
    decides int64, float64 or text), candidates by a numpy IoU > 0.5, the top of the reversed
    ascending argsort kept. Candidate lists here stay under 16, where numpy's argsort is an
    insertion sort: stable, so reversed, the later wins."""
    removed: set[int] = set()
    for image in sorted({d["image_id"] for d in dets}):
        idx = [i for i, d in enumerate(dets) if d["image_id"] == image]
        boxes = np.array([dets[i]["bbox"] for i in idx], dtype=float)
        scores = np.array([dets[i]["score"] for i in idx])
        keep, drop = set(), []
        for a in (a for a in anns if a["image_id"] == image):
            gx, gy, gw, gh = a["bbox"]
            with np.errstate(invalid="ignore", over="ignore"):
                iw = np.maximum(
                    0, np.minimum(gx + gw, boxes[:, 0] + boxes[:, 2]) - np.maximum(gx, boxes[:, 0])
                )
                ih = np.maximum(
                    0, np.minimum(gy + gh, boxes[:, 1] + boxes[:, 3]) - np.maximum(gy, boxes[:, 1])
                )
                inter = iw * ih
                union = gw * gh + boxes[:, 2] * boxes[:, 3] - inter
                iou = np.where(union == 0, 0, inter / union)
            cand = np.where(iou > 0.5)[0].tolist()
            if cand:
                order = [cand[k] for k in np.argsort(scores[cand])[::-1].tolist()]
                keep.add(idx[order[0]])
                drop += [idx[k] for k in order[1:]]
        removed |= {i for i in drop if i not in keep}
    return [d for i, d in enumerate(dets) if i not in removed]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all((np.abs(a - b) <= 1e-12) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(60))
def test_unusual_values_score_as_pycocotools_and_eval_py_score_them(seed):
    """NaN / infinite / boolean / huge-integer scores and NaN / infinite coordinates: vlbench's
    NMS-AP and AP are pycocotools' stats on eval.py's suppression and on the raw list, all 24
    numbers."""
    rng = np.random.default_rng(seed)
    anns, dets = _odd_scene(rng)
    images, categories = [0, 1, 2, 3], [0, 1]
    subset = {"categories": [{"id": c, "name": f"c{c}"} for c in categories],
              "images": [{"id": i, "file_name": f"{i}.jpg", "height": 100, "width": 100, "text": [],
                          "neg_text": []}
                         for i in images],
              "annotations": [{"id": n + 1, "iscrowd": 0, "area": a["bbox"][2] * a["bbox"][3], **a}
                              for n, a in enumerate(anns)]}
    ours = _ovdeval(subset, dets)
    keys = ["AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large", "AR1", "AR10", "AR100",
            "AR_small", "AR_medium", "AR_large"]
    mine = np.array([-1.0 if ours[k] is None else ours[k] / 100 for k in keys])
    nms = np.array([-1.0 if ours["NMS_" + k] is None else ours["NMS_" + k] / 100 for k in keys])
    assert _close(mine, _pycocotools(images, categories, anns, dets))
    assert _close(nms, _pycocotools(images, categories, anns, _eval_py_suppression(anns, dets)))


def test_the_warnings_name_each_kind_of_unusual_value():
    subset = _subset([0], [{"image_id": 0, "bbox": [0, 0, 10, 10]}])
    preds = [{"image_id": 0, "category_id": 0, "bbox": [0, 0, 10, 10], "score": NAN},
             {"image_id": 0, "category_id": 0, "bbox": [1, 1, 10, INF], "score": True}]
    from vlbench.benchmarks.ovdeval.scorer import score

    warnings = score(parse_official(subset, "color"), preds).warnings
    assert any("non-finite" in w and "entries 0" in w for w in warnings)
    assert any("boolean" in w and "entries 1" in w for w in warnings)
    assert any("prediction box" in w and "non-finite" in w for w in warnings)
