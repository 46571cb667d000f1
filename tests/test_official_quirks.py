"""Official behaviour found by the adversarial round (OFFICIAL-SCORERS.md section 5, issue #14), one
test per behaviour. Expected numbers come from golden cases, from pycocotools run here on the same
input (``reference`` marker: test-only comparisons with the official code's engine), or from a hand
derivation in the docstring."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from conftest import GOLDEN, agree
from vlbench.engine.cocoeval import evaluate_bbox
from vlbench.library import api


def _pycocotools_stats(images: list[int], categories: list[int], anns: list[dict],
                       dets: list[dict]) -> np.ndarray:
    """pycocotools 2.0.11 ``COCOeval(gt, dt, "bbox")``: evaluate, accumulate, summarize; its 12
    stats."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = {"images": [{"id": i} for i in images],
                        "annotations": json.loads(json.dumps(anns)),
                        "categories": [{"id": c, "name": str(c)} for c in categories]}
        coco.createIndex()
        run = COCOeval(coco, coco.loadRes(json.loads(json.dumps(dets))), "bbox")
        run.evaluate()
        run.accumulate()
        run.summarize()
    return run.stats


def _engine_stats(images: list[int], categories: list[int], anns: list[dict],
                  dets: list[dict]) -> np.ndarray:
    gt = {k: np.asarray([a[k] for a in anns]) for k in ("image_id", "category_id", "area",
                                                        "iscrowd", "id")}
    gt["bbox"] = np.asarray([a["bbox"] for a in anns], dtype=float)
    dt = {k: np.asarray([d[k] for d in dets]) for k in ("image_id", "category_id", "score")}
    dt["bbox"] = np.asarray([d["bbox"] for d in dets], dtype=float)
    return np.asarray(
        list(evaluate_bbox(np.asarray(images), np.asarray(categories), gt, dt).stats.values())
    )


def _random_scene(rng: np.random.Generator, n_images: int, image_of_ann,
                  id_of_ann) -> tuple[list, list]:
    anns, dets = [], []
    for j in range(12):
        x, y, w, h = *rng.uniform(0, 100, 2), *rng.uniform(10, 50, 2)
        anns.append({"id": int(id_of_ann(j)), "image_id": int(image_of_ann(j)),
                     "category_id": int(rng.integers(0, 3)),
                     "bbox": [float(x), float(y), float(w), float(h)], "area": float(w * h),
                     "iscrowd": 0})
    for a in anns:
        if a["image_id"] < n_images:
            dets.append({"image_id": a["image_id"], "category_id": a["category_id"],
                         "score": float(rng.uniform()),
                         "bbox": [float(v + rng.normal(0, 3)) for v in a["bbox"]]})
    return anns, dets


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(10))
def test_orphan_annotations_are_ignored_like_pycocotools(seed):
    """GT annotations of image ids not in 'images' (between and above the real ids) change
    nothing."""
    rng = np.random.default_rng(seed)
    images = [0, 2, 4, 6]                                   # odd ids and 8 are orphans
    anns, dets = _random_scene(rng, 9, lambda j: rng.integers(0, 9), lambda j: j + 1)
    dets = [d for d in dets if d["image_id"] in images]
    np.testing.assert_allclose(_engine_stats(images, [0, 1, 2], anns, dets),
                               _pycocotools_stats(images, [0, 1, 2], anns, dets), atol=1e-12)


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(10))
def test_duplicate_annotation_ids_resolve_to_the_last_like_pycocotools(seed):
    """Repeated annotation ids: every annotation with an id is evaluated as the last one with that
    id."""
    rng = np.random.default_rng(100 + seed)
    anns, dets = _random_scene(rng, 4, lambda j: rng.integers(0, 4), lambda j: rng.integers(1, 7))
    assert len({a["id"] for a in anns}) < len(anns)
    np.testing.assert_allclose(_engine_stats([0, 1, 2, 3], [0, 1, 2], anns, dets),
                               _pycocotools_stats([0, 1, 2, 3], [0, 1, 2], anns, dets), atol=1e-12)


def _floats(entries: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """The same entries with the ids written as integral floats (3 -> 3.0, lists element-wise)."""
    def f(v):
        return [float(x) for x in v] if isinstance(v, list) else float(v)
    return [{**e, **{k: f(e[k]) for k in keys if k in e}} for e in entries]


@pytest.mark.parametrize("bench, case, keys", [
    ("ovdeval", "edge_handmade_ids0", ("image_id", "category_id")),
    ("omnilabel", "edge_handmade", ("image_id", "description_ids")),
    ("nocaps", "edge_handmade", ("image_id",)),
])
def test_integral_float_ids_are_the_integers(bench, case, keys):
    """loadRes / the official dict look-ups treat 3.0 as 3: the golden numbers of the case are
    unchanged."""
    folder = GOLDEN / bench / case
    expected = json.loads((folder / "expected.json").read_text())["metrics"]
    preds = _floats(json.loads((folder / "predictions.json").read_text()), keys)
    got = api.score(bench, folder / "references.json", preds).metrics
    assert not agree(got, expected)


def test_ref_l4_class_keys_are_exact_look_ups():
    """``refcoco_¹`` (a superscript digit) and ``refcoco_01`` are classes of their own, as in the
    official dict. By hand: the row of each is a hit (IoU 1), the two ``refcoco_1`` rows are misses
    (IoU 0). Own classes: class_Acc50 = mean(100, 100, 0) = 66.67; folded into refcoco_1 it would be
    25 (1 of 4 rows, one class)."""
    from vlbench.benchmarks.ref_l4.reader import references_from_rows

    cats = ["refcoco_\u00b9", "refcoco_01", "refcoco_1", "refcoco_1"]
    refs = references_from_rows([{"id": i, "bbox": [0, 0, 100, 100], "ori_category_id": c} for i,
                                 c in enumerate(cats)])
    preds = [{"id": i, "pred_bbox": [0, 0, 100, 100] if i < 2 else [500, 500, 600, 600],
              "format": "xyxy"}
             for i in range(4)]
    result = api.score("ref_l4", refs, preds)
    assert result.metrics["class_Acc50"] == pytest.approx(200 / 3, abs=1e-9)
    assert result.counts["classes"] == 3


def test_omnilabel_descriptions_referred_to_by_more_than_1e5_boxes_drop_out():
    """The groups' filter ``"boxes": [0, 1e5]`` (descrIdToNumRefBoxes, inclusive). By hand: category
    7 has 100,001 GT boxes and no prediction, category 8 one GT box and a perfect prediction.
    Category 7 drops out of every group, so AP_categ = 100 (with 100,000 boxes it would stay in: 1
    of 100,001 GT found, AP near 0)."""
    def data(n7: int) -> dict:
        anns = [{"id": k + 1, "image_id": 1, "bbox": [k % 300, k // 300, 2, 2], "area": 4,
                 "iscrowd": 0, "description_ids": [7]} for k in range(n7)]
        anns.append({"id": n7 + 1, "image_id": 1, "bbox": [10, 10, 50, 50], "area": 2500,
                     "iscrowd": 0, "description_ids": [8]})
        descr = [{"id": d, "text": t, "anno_info": {"type": "object_category"}, "image_ids": [1]}
                 for d, t in ((7, "Dot"), (8, "Cup"))]
        return {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"}], "descriptions": descr,
                "annotations": anns}

    preds = [{"image_id": 1, "bbox": [10, 10, 50, 50], "description_ids": [8], "scores": [0.9]}]
    assert api.score("omnilabel", _parsed(data(100_001)), preds, details=False).metrics[
        "AP_categ"
    ] == pytest.approx(100)
    assert (
        api.score("omnilabel", _parsed(data(100_000)), preds, details=False).metrics["AP_categ"]
        < 1.0
    )


def _parsed(data: dict):
    from vlbench.benchmarks.omnilabel.reader import parse_official

    return parse_official(data)


@pytest.mark.parametrize("tokenizer", ["python", "java"])
@pytest.mark.parametrize("expected_file, cider_idf",
                         [("expected.json", "global"), ("expected_subset.json", "subset")])
def test_nocaps_line_breaks_shift_captions_as_the_official_tokenizer(tokenizer, expected_file,
                                                                     cider_idf):
    """A CR inside a caption starts a new tokenizer line: the official numbers of the golden case,
    with both tokenizer backends and both domain protocols (subset: each domain tokenized on its
    own)."""
    folder = GOLDEN / "nocaps" / "adv_crlf_in_prediction"
    expected = json.loads((folder / expected_file).read_text())["metrics"]
    result = api.score("nocaps", folder / "references.json", folder / "predictions.json",
                       tokenizer=tokenizer, cider_idf=cider_idf, spice=False)
    assert not agree(result.metrics, expected)
    assert any("official protocol" in w and "--protocol corrected" in w for w in result.warnings)


def test_nocaps_corrected_protocol_replaces_line_breaks_by_spaces():
    """Under corrected the breaks are spaces: the same numbers as the official protocol on cleaned
    captions."""
    folder = GOLDEN / "nocaps" / "adv_crlf_in_prediction"
    preds = json.loads((folder / "predictions.json").read_text())
    cleaned = [{**p, "caption": p["caption"].replace("\r", " ").replace("\n", " ")} for p in preds]
    refs = folder / "references.json"
    corrected = api.score("nocaps", refs, preds, protocol="corrected", tokenizer="python",
                          meteor=False, spice=False)
    official_clean = api.score("nocaps", refs, cleaned, tokenizer="python", meteor=False,
                               spice=False)
    official = api.score("nocaps", refs, preds, tokenizer="python", meteor=False, spice=False)
    assert (
        corrected.metrics == official_clean.metrics
        and corrected.metrics["B1"] != official.metrics["B1"]
    )


@pytest.mark.parametrize("iscrowd, want", [("0", 50.0), (0, 51 / 101 * 50), (1, 100.0)])
def test_omnilabel_iscrowd_strings_ignore_by_truthiness_and_match_by_int(iscrowd, want):
    """The official evaluator sets ``ignore`` from the truthiness of ``iscrowd`` and computes IoU
    and matching with ``int(iscrowd)``. By hand: G1 (100x100, iscrowd as given) and G2 (normal); D3
    a 10x10 box inside G1 (score 0.95, normal IoU 0.01, crowd IoU 1), D2 exactly on G2 (0.8).
    "0": G1 ignored but not a crowd, so D3 matches nothing: FP then TP over 1 GT -> precision 1/2
    everywhere, 50. 0: G1 counts and D3 is a FP: FP, TP over 2 GT -> precision 1/2 up to recall 1/2,
    then 0: 51 of 101 points at 1/2 -> 51/101 * 50. 1: G1 is an ignored crowd absorbing D3: one TP
    over 1 GT -> 100."""
    data = {"images": [{"id": 1, "file_name": "coco/val2017/1.jpg"}],
            "descriptions": [{"id": 7, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": [0, 0, 100, 100], "area": 10000,
                             "iscrowd": iscrowd, "description_ids": [7]},
                            {"id": 2, "image_id": 1, "bbox": [200, 200, 50, 50], "area": 2500,
                             "iscrowd": 0, "description_ids": [7]}]}
    preds = [{"image_id": 1, "bbox": [40, 40, 10, 10], "description_ids": [7], "scores": [0.95]},
             {"image_id": 1, "bbox": [200, 200, 50, 50], "description_ids": [7], "scores": [0.8]}]
    got = api.score("omnilabel", _parsed(data), preds, details=False).metrics["AP_categ"]
    assert got == pytest.approx(want, abs=1e-9)


def test_ref_l4_duplicate_reference_ids_each_row_scored_against_its_id():
    """Rows 0 and 1 share id 7: both are scored against the prediction of id 7 (a hit for the row it
    fits, a miss for the other); row 2 (id 8) is a hit. By hand: Acc50 = 2 of 3 = 66.67, and a
    warning."""
    from vlbench.benchmarks.ref_l4.reader import references_from_rows

    refs = references_from_rows([{"id": 7, "bbox": [0, 0, 100, 100], "ori_category_id": "o365_1"},
                                 {"id": 7, "bbox": [500, 500, 100, 100],
                                  "ori_category_id": "o365_1"},
                                 {"id": 8, "bbox": [0, 0, 50, 50], "ori_category_id": "o365_1"}])
    preds = [{"id": 7, "pred_bbox": [0, 0, 100, 100], "format": "xywh"},
             {"id": 8, "pred_bbox": [0, 0, 50, 50], "format": "xywh"}]
    result = api.score("ref_l4", refs, preds)
    assert result.metrics["Acc50"] == pytest.approx(200 / 3, abs=1e-9)
    assert any("repeat the id" in w for w in result.warnings)


@pytest.mark.parametrize("as_int, want", [(True, 100.0), (False, 0.0)])
def test_ref_l4_integer_boxes_have_exact_areas(as_int, want):
    """All-integer predicted boxes make the official tensor int64, so their areas are exact;
    coordinates above 2^24 are then not rounded to float32 for the area. By hand: GT xywh [2^24, 0,
    8, 10] (xyxy 16777216..16777224, area 80); prediction xyxy [16777217, 0, 16777219, 10]. In
    float32 its corners round (ties to even) to 16777216 and 16777220: overlap 4 x 10 = 40. Float
    path: area 40, union 80 + 40 - 40 = 80, IoU 0.5: a miss (strict >). Int64 path: area 2 x 10 =
    20, union 60, IoU 0.667: a hit at 0.5."""
    from vlbench.benchmarks.ref_l4.reader import references_from_rows

    refs = references_from_rows([{"id": 0, "bbox": [16777216.0, 0.0, 8.0, 10.0],
                                  "ori_category_id": "o365_1"}])
    box = [16777217, 0, 16777219, 10] if as_int else [16777217.0, 0.0, 16777219.0, 10.0]
    result = api.score("ref_l4", refs, [{"id": 0, "pred_bbox": box, "format": "xyxy"}])
    assert result.metrics["Acc50"] == want and result.metrics["Acc75"] == 0.0


@pytest.mark.parametrize("gt_id, want, warned", [(0, 0.0, True), (1, 100.0, False)])
def test_ovdeval_id0_warning_only_when_it_changes_nms_ap(gt_id, want, warned):
    """By hand: one image, one category, one GT box and a perfect prediction. With annotation id 0
    pycocotools counts the match as a false positive: NMS-AP 0 (100 corrected), and the warning
    gives both numbers; with id 1 the match counts, NMS-AP 100, and there is nothing to warn
    about."""
    from vlbench.benchmarks.ovdeval.reader import parse_official
    from vlbench.benchmarks.ovdeval.scorer import score

    data = {"images": [{"id": 1, "file_name": "1.jpg"}], "categories": [{"id": 0, "name": "cup"}],
            "annotations": [{"id": gt_id, "image_id": 1, "category_id": 0, "bbox": [10, 10, 50, 50],
                             "area": 2500, "iscrowd": 0}]}
    result = score(parse_official(data, "x"),
                   [{"image_id": 1, "category_id": 0, "bbox": [10, 10, 50, 50], "score": 0.9}])
    assert result.metrics["NMS_AP"] == pytest.approx(want, abs=1e-9)
    assert any("to 0.00 from 100.00" in w for w in result.warnings) == warned
