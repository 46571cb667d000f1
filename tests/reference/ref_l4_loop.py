"""The official Ref-L4 algorithm as a plain per-sample Python loop (one float32 scalar at a time).

Written from OFFICIAL-SCORERS.md section 3, independently of ``vlbench``: it is the yardstick for
the vectorised scorer in property tests and the baseline of ``bench/ref_l4.py``.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

F = np.float32
T10 = [i / 100 for i in range(50, 100, 5)]


def to_xyxy(box, fmt_is_xywh):
    x, y, a, b = box
    return [x, y, x + a, y + b] if fmt_is_xywh else [x, y, a, b]


def iou_f32(g, p):
    gx1, gy1, gx2, gy2 = (F(v) for v in g)
    px1, py1, px2, py2 = (F(v) for v in p)
    area_g = (gx2 - gx1) * (gy2 - gy1)
    area_p = (px2 - px1) * (py2 - py1)
    w = max(min(gx2, px2) - max(gx1, px1), F(0))
    h = max(min(gy2, py2) - max(gy1, py1), F(0))
    overlap = w * h
    union = max((area_g + area_p) - overlap, F(1e-6))
    return overlap / union


def evaluate(rows, predictions, mapping):
    """rows: dicts with id, bbox (xywh), ori_category_id; predictions: official entries; mapping:
    dict str->str."""
    by_id = {p["id"]: p for p in predictions}
    ious = []
    for row in rows:
        p = by_id[row["id"]]
        ious.append(iou_f32(to_xyxy(row["bbox"], True),
                            to_xyxy(p["pred_bbox"], p["format"] == "xywh")))
    n = len(ious)
    out = {}
    for key, t in (("Acc50", 0.5), ("Acc75", 0.75), ("Acc90", 0.9)):
        out[key] = sum(1 for v in ious if v > F(t)) / n * 100
    out["mAcc"] = statistics.mean([sum(1 for v in ious if v > F(t)) / n for t in T10]) * 100
    buckets = {"small": [], "medium": [], "large": []}
    for row, v in zip(rows, ious):
        s = math.sqrt(row["bbox"][2] * row["bbox"][3])
        buckets["small" if s < 128 else "medium" if s <= 256 else "large"].append(v)
    for name, vals in buckets.items():
        if not vals:
            out[f"{name}_Acc50"] = out[f"{name}_mAcc"] = None
            continue
        per_t = [sum(1 for v in vals if v > F(t)) / len(vals) * 100 for t in T10]
        out[f"{name}_Acc50"] = per_t[0]
        out[f"{name}_mAcc"] = statistics.mean(per_t)
    classes = {}
    for row, v in zip(rows, ious):
        key = mapping.get(row["ori_category_id"], row["ori_category_id"])
        classes.setdefault(key, []).append(v)
    per_t = []
    for t in T10:
        per_t.append(
            statistics.mean(
                [sum(1 for v in vals if v > F(t)) / len(vals) * 100 for vals in classes.values()]
            )
        )
    out["class_Acc50"] = per_t[0]
    out["class_mAcc"] = statistics.mean(per_t)
    return out
