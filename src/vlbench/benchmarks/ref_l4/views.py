"""Ref-L4 renderings: breakdown tables, plots and the worst samples, from the Result and the
records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine.geometry import xyxy_to_xywh
from ..protocol.views import Scene, Table
from .records import RefL4References


def _r(v: Any) -> Any:
    return round(v, 2) if isinstance(v, float) else v


def text(result: Any) -> None:
    """No layout of its own: the generic metric table."""
    return None


def tables(result: Any) -> dict[str, Table]:
    """Per size, per source (the paper's Fig. 6 subsets) and per class."""
    b = result.breakdowns
    return {
        "per size": (["size", "n", "Acc50", "mAcc"],
                     [[s, v["n"], _r(v["Acc50"]), _r(v["mAcc"])] for s,
                      v in b["per_size"].items()]),
        "per source": (["source", "n", "Acc50", "Acc75", "Acc90", "mAcc"],
                       [[s, v["n"], _r(v["Acc50"]), _r(v["Acc75"]), _r(v["Acc90"]), _r(v["mAcc"])]
                        for s, v in b["per_source"].items()]),
        "per class": (["class", "name", "n", "Acc50", "mAcc", "members"],
                      [[r["class"], r["name"], r["n"], _r(r["Acc50"]), _r(r["mAcc"]),
                        " ".join(r["members"])]
                       for r in b["per_class"]]),
    }


def plots(result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
    """Accuracy against the IoU threshold, and Acc50 / mAcc per size bucket."""
    b = result.breakdowns
    fig = figure(figsize=(9, 3.2))
    ax = fig.subplots(1, 2)
    acc = b["acc_by_threshold"]
    ax[0].plot(acc["thresholds"], acc["acc"], marker="o")
    ax[0].set(xlabel="IoU threshold", ylabel="accuracy (%)", title="Accuracy vs IoU threshold",
              ylim=(0, 100))
    sizes = [s for s, v in b["per_size"].items() if v["Acc50"] is not None]
    ax[1].bar(sizes, [b["per_size"][s]["Acc50"] for s in sizes], label="Acc@0.5")
    ax[1].bar(sizes, [b["per_size"][s]["mAcc"] for s in sizes], alpha=0.6, label="mAcc")
    ax[1].set(title="per size", ylim=(0, 100))
    ax[1].legend()
    fig.tight_layout()
    return {"accuracy": fig}


def scenes(refs: RefL4References, predictions: Any, result: Any) -> list[Scene]:
    """One scene per image: each expression's GT box and predicted box; the worst IoU of the image
    ranks it."""
    if "samples" not in result.breakdowns or not isinstance(predictions, list):
        return []
    iou = np.asarray(result.breakdowns["samples"]["iou"], dtype=float)
    by_id = {p.get("id"): p for p in predictions if isinstance(p, dict)}
    image_of = refs.image if refs.image is not None else np.arange(len(refs.ids))
    rows_of: dict[int, list[int]] = {}
    for i, img in enumerate(image_of.tolist()):
        rows_of.setdefault(img, []).append(i)
    out = []
    for img, rows in rows_of.items():
        gt: list[tuple[list[float], str]] = []
        predicted: list[tuple[list[float], str, float | None]] = []
        for i in rows:
            rid = refs.row_id(i)
            text = refs.expressions[i] if refs.expressions else ""
            query = (
                f"{rid}: {text[:80]}" + ("..." if len(text) > 80 else "") + f" (IoU {iou[i]:.2f})"
            )
            gt.append((refs.bbox_xywh[i].tolist(), query))
            p = by_id.get(rid)
            if p is not None:
                box = np.asarray(p["pred_bbox"], dtype=float)
                box = box if p.get("format") == "xywh" else xyxy_to_xywh(box[None])[0]
                predicted.append((box.tolist(), query, None))
        worst = float(iou[rows].min())
        name = refs.image_names[img] if refs.image is not None and refs.image_names else None
        out.append(Scene(image=name,
                         title=f"{name or 'id ' + str(refs.row_id(rows[0]))}: {len(rows)} "
                                           f"expression(s), lowest IoU {worst:.3f}",
                         badness=1.0 - worst, gt=gt, predicted=predicted,
                         keys=tuple(refs.row_id(i) for i in rows)))
    return out
