"""OmniLabel renderings: per-source and per-description tables, the pooled precision-recall curves and
the images with most missed or spurious boxes, from the Result and the records."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...benchmark import Sample, Table, mark_boxes
from .records import OmniLabelReferences

#: predictions below this score are not drawn
SHOW_SCORE = 0.3


def _r(v: Any) -> Any:
    if isinstance(v, float) or isinstance(v, np.floating):
        return None if v != v else round(float(v), 2)
    return v


def text(result: Any) -> None:
    """No layout of its own: the generic metric table."""
    return None


def tables(result: Any) -> dict[str, Table]:
    """The 13 numbers per image source, and AP per description (worst first) when computed."""
    b, keys = result.breakdowns, list(result.metrics)
    out: dict[str, Table] = {"per source": (["source"] + keys, [[s] + [_r(v[k]) for k in keys]
                                                                for s, v in b["per_source"].items()])}
    if "per_description" in b:
        pd = b["per_description"]
        rows = [[int(i), t, ty, int(n), int(g), _r(a), _r(a5)]
                for i, t, ty, n, g, a, a5 in zip(pd["id"], pd["text"], pd["type"], pd["images"], pd["num_gt"],
                                                 pd["AP"], pd["AP50"])]
        out["per description (worst first)"] = (["id", "text", "type", "images", "num_gt", "AP", "AP50"], rows)
    return out


def plots(result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
    """Pooled precision-recall of categories and descriptions, at IoU 0.5 and averaged over 0.5:0.95."""
    curves = result.breakdowns["pr_curves"]
    fig = figure(figsize=(5, 3.6))
    ax = fig.subplots()
    for group in ("categ", "descr"):
        curve = curves[group]
        if curve["iou50"] is not None:
            ax.plot(curves["recall"], curve["iou50"], label=f"{group} @0.5")
            ax.plot(curves["recall"], curve["mean"], linestyle="--", label=f"{group} @[.5:.95]")
    ax.set(xlabel="recall", ylabel="precision", title="pooled precision-recall", ylim=(0, 1.02))
    ax.legend()
    fig.tight_layout()
    return {"precision-recall": fig}


def _gt_by_image(refs: OmniLabelReferences) -> dict[int, list[tuple[list[float], str]]]:
    """Image index -> (box, label) per GT box; a box listed under several descriptions shows two of them."""
    out: dict[int, dict[int, tuple[list[float], list[str]]]] = {}
    image_of = refs.pair_image[refs.gt_pair]
    for img, gid, box, pair in zip(image_of.tolist(), refs.gt_id.tolist(), refs.gt_box.tolist(), refs.gt_pair.tolist()):
        entry = out.setdefault(img, {}).setdefault(gid, (box, []))
        entry[1].append(refs.descr_text[int(refs.pair_descr[pair])])
    return {img: [(box, " / ".join(labels[:2])) for box, labels in boxes.values()] for img, boxes in out.items()}


def samples(refs: OmniLabelReferences, predictions: Any, result: Any, k: int) -> list[Sample]:
    """The ``k`` images with most missed or spurious boxes (GT vs predictions scoring >= 0.3, IoU 0.5)."""
    if not isinstance(predictions, list):
        return []
    index = {int(i): n for n, i in enumerate(refs.image_ids.tolist())}
    gt = _gt_by_image(refs)
    pred: dict[int, list[tuple[list[float], str]]] = {}
    for p in predictions:
        scores = p.get("scores") if isinstance(p, dict) else None
        if not scores or p.get("image_id") not in index:
            continue
        best = int(np.argmax(scores))
        if scores[best] >= SHOW_SCORE:
            label = refs.descr_text.get(p["description_ids"][best], "")
            pred.setdefault(index[p["image_id"]], []).append((p["bbox"], f"{label} {scores[best]:.2f}"))
    shown = []
    for img in range(len(refs.image_ids)):
        boxes, errors = mark_boxes(gt.get(img, []), pred.get(img, []))
        shown.append((-errors, img, boxes, errors))
    out = []
    for _, img, boxes, errors in sorted(shown)[:k]:
        out.append(Sample(image=refs.image_file[img], boxes=boxes,
                          caption=f"image {int(refs.image_ids[img])}: {errors} missed or spurious boxes"))
    return out
