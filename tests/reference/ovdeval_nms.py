"""The OVDEval suppression as the straightforward per-image loop the official eval.py describes
(written from OFFICIAL-SCORERS.md section 2.3, independently of vlbench): the yardstick for the
vectorised suppression and the baseline of bench/ovdeval.py."""

from __future__ import annotations


def iou_xywh(a, b):
    xmin, ymin = max(a[0], b[0]), max(a[1], b[1])
    xmax, ymax = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, xmax - xmin) * max(0, ymax - ymin)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return 0 if union == 0 else inter / union


def suppress(annotations, predictions, threshold=0.5):
    """Return the surviving predictions (dicts), in input order."""
    gt_by_image, pred_by_image = {}, {}
    for a in annotations:
        gt_by_image.setdefault(a["image_id"], []).append(a)
    for i, p in enumerate(predictions):
        pred_by_image.setdefault(p["image_id"], []).append(i)
    removed = set()
    for image, indices in pred_by_image.items():
        keep, remove = set(), []
        for g in gt_by_image.get(image, []):
            cands = [i for i in indices if iou_xywh(g["bbox"], predictions[i]["bbox"]) > threshold]
            if not cands:
                continue
            # descending score; among equal scores the later prediction first
            ranked = sorted(cands, key=lambda i: (predictions[i]["score"], i), reverse=True)
            keep.add(ranked[0])
            remove.extend(ranked[1:])
        removed.update(i for i in remove if i not in keep)
    return [p for i, p in enumerate(predictions) if i not in removed]
