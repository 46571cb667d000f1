import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pycocotools import mask as mask_utils

from vlbench.engine.geometry import iou_aligned_xyxy, iou_matrix_xywh, xywh_to_xyxy, xyxy_to_xywh

coord = st.floats(-50, 500, allow_nan=False, allow_infinity=False, width=32)
size = st.floats(0, 300, allow_nan=False, allow_infinity=False, width=32)
box_xywh = st.tuples(coord, coord, size, size)


def test_format_round_trip():
    b = np.array([[10.5, 20.0, 30.25, 40.0], [0, 0, 1, 1]])
    assert np.array_equal(xywh_to_xyxy(b), [[10.5, 20.0, 40.75, 60.0], [0, 0, 1, 1]])
    assert np.array_equal(xyxy_to_xywh(xywh_to_xyxy(b)), b)


def test_aligned_iou_known_values():
    a = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10], [5, 5, 2, 2]], dtype=float)
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 10, 10]], dtype=float)
    iou = iou_aligned_xyxy(a, b)
    assert iou.dtype == np.float32
    assert iou[0] == 1.0
    assert iou[1] == np.float32(50 / 150)
    assert iou[2] == 0.0
    assert iou[3] == 0.0  # inverted box: overlap 0, union floored, no division by zero


def test_aligned_iou_float32_rounding_differs_from_float64():
    # A pair whose float64 IoU is 0.500000001 but whose float32 IoU is exactly 0.5.
    a = np.array([[0.0, 0.0, 100.0, 100.0]])
    b = np.array([[0.0, 0.0, 100.0, 50.0000001]])
    assert iou_aligned_xyxy(a, b, dtype=np.float64)[0] > 0.5
    assert iou_aligned_xyxy(a, b, dtype=np.float32)[0] == np.float32(0.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(box_xywh, min_size=1, max_size=8),
       st.lists(st.tuples(box_xywh, st.booleans()), min_size=1, max_size=8))
def test_iou_matrix_matches_pycocotools(dts, gts):
    d = np.array(dts, dtype=np.float64)
    g = np.array([b for b, _ in gts], dtype=np.float64)
    crowd = [int(c) for _, c in gts]
    expected = mask_utils.iou(d.tolist(), g.tolist(), crowd)
    got = iou_matrix_xywh(d, g, crowd)
    assert got.shape == (len(d), len(g))
    np.testing.assert_array_equal(got, np.asarray(expected).reshape(got.shape))


def test_aligned_iou_rejects_mismatched_shapes():
    with pytest.raises(ValueError):
        iou_aligned_xyxy(np.zeros((2, 4)), np.zeros((3, 4)))
