"""The vectorised Ref-L4 scorer against a plain per-sample loop of the official algorithm, and its
extras."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from reference import ref_l4_loop
from vlbench.benchmarks.ref_l4 import schema
from vlbench.benchmarks.ref_l4.reader import references_from_rows
from vlbench.benchmarks.ref_l4.scorer import score

OFFICIAL_MAPPING = {f"refcoco_{c}": f"o365_{o}" for c, o in schema.OFFICIAL_REFCOCO_TO_O365.items()}
CATS = ["refcoco_16", "refcoco_6", "o365_56", "refcoco_51", "o365_26", "o365_5", "refcoco_37",
        "o365_100000"]

coord = st.floats(0, 600, allow_nan=False, width=32).map(lambda v: round(v, 2))
extent = st.floats(1, 700, allow_nan=False, width=32).map(lambda v: round(v, 2))


@st.composite
def dataset(draw):
    n = draw(st.integers(1, 40))
    rows, preds = [], []
    for i in range(n):
        box = [draw(coord), draw(coord), draw(extent), draw(extent)]
        rows.append({"id": i, "bbox": box, "ori_category_id": draw(st.sampled_from(CATS))})
        kind = draw(st.sampled_from(["same", "jitter", "random", "xyxy-int"]))
        if kind == "same":
            p, fmt = list(box), "xywh"
        elif kind == "jitter":
            d = draw(st.floats(-30, 30, allow_nan=False))
            p, fmt = [box[0] + d, box[1], box[2], box[3] - d / 2], "xywh"
        elif kind == "random":
            p, fmt = (
                [draw(coord), draw(coord), draw(extent), draw(extent)],
                draw(st.sampled_from(["xywh", "xyxy", "XYWH"])),
            )
        else:
            p, fmt = [int(box[0]), int(box[1]), int(box[0] + box[2]), int(box[1] + box[3])], "xyxy"
        preds.append({"id": i, "pred_bbox": p, "format": fmt})
    return rows, preds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset())
@pytest.mark.heavy
def test_matches_per_sample_loop(data):
    rows, preds = data
    expected = ref_l4_loop.evaluate(rows, preds, OFFICIAL_MAPPING)
    got = score(references_from_rows(rows), preds, with_samples=False).metrics
    assert got.keys() == expected.keys()
    for key, want in expected.items():
        assert got[key] == want, key  # bit-identical, not merely close


def _rows(boxes, cats=None):
    return references_from_rows([{"id": i, "bbox": b,
                                  "ori_category_id": (cats or ["o365_1"] * len(boxes))[i]}
                                 for i, b in enumerate(boxes)])


def test_hit_is_strictly_greater_than_threshold():
    refs = _rows([[0, 0, 100, 100]])
    half = [{"id": 0, "pred_bbox": [0, 0, 100, 50], "format": "xywh"}]  # IoU exactly 0.5
    assert score(refs, half).metrics["Acc50"] == 0.0
    more = [{"id": 0, "pred_bbox": [0, 0, 100, 51], "format": "xywh"}]
    assert score(refs, more).metrics["Acc50"] == 100.0


def test_size_buckets_follow_official_rule():
    # sqrt(w*h): 127.99 small, exactly 128 and 256 medium, 256.01 large.
    refs = _rows([[0, 0, 127.99, 127.99], [0, 0, 128, 128], [0, 0, 256, 256],
                  [0, 0, 256.01, 256.01]])
    preds = [{"id": i, "pred_bbox": [0, 0, 1, 1], "format": "xyxy"} for i in range(4)]
    sizes = score(refs, preds).breakdowns["per_size"]
    assert {k: v["n"] for k, v in sizes.items()} == {"small": 1, "medium": 2, "large": 1}


def test_empty_size_bucket_is_null_with_warning():
    refs = _rows([[0, 0, 10, 10], [0, 0, 20, 20]])
    preds = [{"id": i, "pred_bbox": [0, 0, 10, 10], "format": "xywh"} for i in range(2)]
    result = score(refs, preds)
    assert result.metrics["large_Acc50"] is None and result.metrics["large_mAcc"] is None
    assert result.metrics["medium_mAcc"] is None
    assert any("no large" in w for w in result.warnings)


def test_official_reads_unknown_format_as_xyxy_and_warns():
    refs = _rows([[10, 10, 20, 20]])
    preds = [{"id": 0, "pred_bbox": [10, 10, 20, 20], "format": "XYWH"}]
    official = score(refs, preds)
    assert official.metrics["Acc50"] == 0.0  # read as xyxy: a 10x10 box
    assert any("'XYWH'" in w for w in official.warnings)
    corrected = score(refs, preds, protocol="corrected")
    assert corrected.metrics["Acc50"] == 100.0


def test_breakdowns_per_source_and_class():
    # COCO row; O365 person (COCO has it); two others
    cats = ["refcoco_1", "o365_1", "o365_2", "o365_300"]
    refs = _rows([[0, 0, 50, 50]] * 4, cats)
    preds = [
        {"id": i, "pred_bbox": [0, 0, 50, 50] if i != 3 else [100, 100, 5, 5], "format": "xywh"}
        for i in range(4)
    ]
    result = score(refs, preds)
    src = result.breakdowns["per_source"]
    assert src["coco"]["n"] == 1 and src["objects365_coco_classes"]["n"] == 1
    assert src["objects365_other_classes"] == {"n": 2, "Acc50": 50.0, "Acc75": 50.0, "Acc90": 50.0,
                                               "mAcc": 50.0}
    by_class = {row["class"]: row for row in result.breakdowns["per_class"]}
    # refcoco_1 (person) and o365_1 (Person) share one bucket in the official table
    assert by_class["o365_1"]["n"] == 2 and by_class["o365_1"]["members"] == ["o365_1", "refcoco_1"]
    assert by_class["o365_1"]["name"] == "Person"
    assert result.breakdowns["samples"]["id"].tolist() == [0, 1, 2, 3]
    assert result.breakdowns["samples"]["iou"][3] == 0.0
    assert result.metrics["class_Acc50"] == pytest.approx((100 + 100 + 0) / 3)


def test_missing_as_miss_counts_zero():
    refs = _rows([[0, 0, 10, 10], [0, 0, 10, 10]])
    result = score(refs, [{"id": 0, "pred_bbox": [0, 0, 10, 10], "format": "xywh"}], missing="miss")
    assert result.metrics["Acc50"] == 50.0
    assert result.counts["missing_counted_as_miss"] == 1


def test_integral_float_ids_match_like_python_equality():
    refs = _rows([[0, 0, 10, 10]])
    result = score(refs, [{"id": 0.0, "pred_bbox": [0, 0, 10, 10], "format": "xywh"}])
    assert result.metrics["Acc50"] == 100.0


def test_mean_is_exact_rational_mean():
    """The official mAcc is statistics.mean of the per-threshold accuracies, which differs from
    sum()/n here. By hand: three rows; row 0 has IoU 0.62 (a hit at 0.50, 0.55, 0.60), rows 1 and 2
    IoU 0.1 (misses): the accuracies are [1/3] * 3 + [0] * 7, whose exact mean is
    0.09999999999999999 but whose sum()/10 is 0.1."""
    import statistics

    refs = _rows([[0, 0, 100, 100]] * 3)
    preds = [{"id": 0, "pred_bbox": [0, 0, 100, 62], "format": "xywh"},
             {"id": 1, "pred_bbox": [0, 0, 100, 10], "format": "xywh"},
             {"id": 2, "pred_bbox": [0, 0, 100, 10], "format": "xywh"}]
    accs = [1 / 3] * 3 + [0.0] * 7
    assert statistics.mean(accs) != sum(accs) / 10          # the case discriminates
    assert score(refs, preds).metrics["mAcc"] == statistics.mean(accs) * 100
