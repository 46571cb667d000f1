"""OmniLabel renderings: per-source and per-description tables, the pooled precision-recall curves
and the images with most missed or spurious boxes, from the Result and the records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..protocol.views import Scene, Table, detection_badness
from .records import OmniLabelReferences

#: predictions below this score are not kept for the viewer (its slider starts at this value)
MIN_SCORE = 0.05


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
    out: dict[str, Table] = {
        "per source": (
            ["source"] + keys,
            [[s] + [_r(v[k]) for k in keys] for s, v in b["per_source"].items()],
        )
    }
    if "per_description" in b:
        pd = b["per_description"]
        rows = [[int(i), t, ty, int(n), int(g), _r(a), _r(a5)]
                for i, t, ty, n, g, a,
                a5 in zip(pd["id"], pd["text"], pd["type"], pd["images"], pd["num_gt"],
                                                 pd["AP"], pd["AP50"])]
        out["per description (worst first)"] = (
            ["id", "text", "type", "images", "num_gt", "AP", "AP50"],
            rows,
        )
    return out


def plots(result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
    """Pooled precision-recall of categories and descriptions, at IoU 0.5 and averaged over
    0.5:0.95."""
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


def scenes(refs: OmniLabelReferences, predictions: Any, result: Any) -> list[Scene]:
    """A scene per image, boxes by description (predictions only for descriptions of the image's
    label space); most missed or spurious boxes (at the default score threshold, IoU 0.5) first."""
    if not isinstance(predictions, list):
        return []
    index: dict[Any, int] = {refs.image_id(n): n for n in range(len(refs.image_ids))}
    space: dict[int, set[int]] = {}
    for img, descr in zip(refs.pair_image.tolist(), refs.pair_descr.tolist()):
        space.setdefault(img, set()).add(descr)
    gt: dict[int, list[tuple[list[float], str]]] = {}
    for pair, box in zip(refs.gt_pair.tolist(), refs.gt_box.tolist()):
        gt.setdefault(int(refs.pair_image[pair]), []).append(
            (box, refs.descr_text[int(refs.pair_descr[pair])])
        )
    pred: dict[int, list[tuple[list[float], str, float | None]]] = {}
    for p in predictions:
        img = index.get(p.get("image_id")) if isinstance(p, dict) else None
        if (
            img is None
            or not isinstance(p.get("scores"), list)
            or not isinstance(p.get("description_ids"), list)
        ):
            continue
        for written, score in zip(p["description_ids"], p["scores"]):
            descr = refs.description_code(written)
            if (
                descr is not None
                and descr in space.get(img, ())
                and isinstance(score, (int, float))
                and score >= MIN_SCORE
            ):
                pred.setdefault(img, []).append((p["bbox"], refs.descr_text[descr], float(score)))
    out = []
    for img in range(len(refs.image_ids)):
        errors = detection_badness(gt.get(img, []), pred.get(img, []))
        described = {text for _,
                     # a label-space description without a box: negative
                     text in gt.get(img, [])}
        negatives = frozenset(
            refs.descr_text[d] for d in space.get(img, ()) if refs.descr_text[d] not in described
        )
        out.append(Scene(image=refs.image_file[img], badness=errors, gt=gt.get(img, []),
                         predicted=pred.get(img, []),
                         title=f"image {refs.image_id(img)}: {errors} missed or spurious boxes",
                         keys=(refs.image_id(img),), negatives=negatives))
    return out
