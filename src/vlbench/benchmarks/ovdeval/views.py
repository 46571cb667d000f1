"""OVDEval renderings: the paper's Table 3 (several sub-datasets) or the per-category table (one),
the aspect radar or the precision-recall curve, and the images with most errors, from the Result and
the records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..protocol.views import Scene, Table, detection_badness
from . import schema
from .records import OVDEvalReferences, OVDEvalSubset

#: predictions below this score are not kept for the viewer (its slider starts at this value)
MIN_SCORE = 0.05


def _r(v: Any) -> Any:
    return round(v, 2) if isinstance(v, float) else v


def text(result: Any) -> str | None:
    """The paper's Table 3 layout for a multi-sub-dataset result (NMS-AP / AP, aspects, Total
    Average)."""
    table = result.breakdowns.get("table")
    if not table:
        return None
    fmt = lambda v: "   null" if v is None else f"{v:7.2f}"  # noqa: E731
    lines = [f"ovdeval (protocol={result.protocol}): NMS-AP / AP per sub-dataset (percent)",
             f"{'aspect':<14}{'sub-dataset':<14}{'NMS-AP':>8}{'AP':>8}{'AP-NMS':>8}"]
    for row in table:
        lines.append(
            f"{row['aspect'] or '-':<14}{row['sub_dataset']:<14}"
            f"{fmt(row['NMS_AP']):>8}{fmt(row['AP']):>8}"
            f"{fmt(row['inflation']):>8}"
        )
    lines.append("-" * 52)
    for aspect, values in result.breakdowns["aspects"].items():
        lines.append(f"{aspect:<28}{fmt(values['NMS_AP']):>8}{fmt(values['AP']):>8}")
    lines.append(f"{'Total Average':<28}{fmt(result.breakdowns['Total_Average']):>8}"
                 f"{fmt(result.breakdowns['Total_Average_AP']):>8}")
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def tables(result: Any) -> dict[str, Table]:
    """Table 3 and the aspects (several sub-datasets), or NMS-AP / AP per category (one)."""
    b = result.breakdowns
    if "table" in b:
        return {"Table 3": (["aspect", "sub-dataset", "NMS-AP", "AP", "AP - NMS-AP"],
                            [[r["aspect"], r["sub_dataset"], _r(r["NMS_AP"]), _r(r["AP"]),
                              _r(r["inflation"])]
                             for r in b["table"]]),
                "aspects": (["aspect", "NMS-AP", "AP"],
                            [[a, _r(v["NMS_AP"]), _r(v["AP"])] for a, v in b["aspects"].items()]
                            + [["Total Average", _r(b["Total_Average"]),
                                _r(b["Total_Average_AP"])]])}
    nms, plain = b["per_category"]["NMS"], b["per_category"]["plain"]
    rows = [[int(c), n, int(g), _r(a), _r(p)] for c, n, g, a, p in
            zip(nms["category_id"], nms["name"], nms["num_gt"], nms["AP"], plain["AP"])]
    return {"per category": (["category_id", "name", "num_gt", "NMS-AP", "AP"],
                             sorted(rows, key=lambda r: (-r[2], r[0])))}  # categories with GT first


def plots(result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
    """The six-aspect radar (several sub-datasets) or the mean precision-recall curve (one)."""
    b = result.breakdowns
    if "aspects" in b:
        aspects = list(schema.ASPECTS)  # all six axes always; unscored aspects sit at 0 and say so
        values = [(b["aspects"].get(a) or {}).get("NMS_AP") or 0 for a in aspects]
        labels = [a if a in b["aspects"] else f"{a}\n(not scored)" for a in aspects]
        fig = figure(figsize=(4.5, 4.5))
        ax = fig.add_subplot(projection="polar")
        angles = np.linspace(0, 2 * np.pi, len(aspects), endpoint=False).tolist()
        ax.plot(angles + angles[:1], values + values[:1], marker="o")
        ax.fill(angles + angles[:1], values + values[:1], alpha=0.25)
        ax.set_xticks(angles, labels)
        ax.set_title("NMS-AP per aspect")
        fig.tight_layout()
        return {"aspects": fig}
    fig = figure(figsize=(5, 3.6))
    ax = fig.subplots()
    pr = b["pr_curve"]
    for key, label in (("NMS_iou50", "NMS-AP @0.5"), ("iou50", "AP @0.5")):
        if pr[key] is not None:
            ax.plot(pr["recall"], pr[key], label=label)
    ax.set(xlabel="recall", ylabel="precision", title="precision-recall (mean over categories)",
           ylim=(0, 1.02))
    ax.legend()
    fig.tight_layout()
    return {"precision-recall": fig}


def scenes(refs: OVDEvalReferences, predictions: Any, result: Any) -> list[Scene]:
    """One sub-dataset: a scene per image, boxes by category; most missed or spurious boxes (at the
    default score threshold, IoU 0.5) first."""
    name = result.options.get("sub_dataset")
    if name not in refs.subsets or not isinstance(predictions, list):
        return []
    gt = refs.subsets[name]
    gt_by: dict[Any, list[tuple[list[float], str]]] = {}
    for img, cat, box in zip(gt.ann_image.tolist(), gt.ann_category.tolist(), gt.ann_box.tolist()):
        gt_by.setdefault(img, []).append((box, gt.category_names.get(cat, str(cat))))
    pred_by: dict[Any, list[tuple[list[float], str, float | None]]] = {}
    for p in predictions:
        if (
            isinstance(p, dict)
            and isinstance(p.get("score"), (int, float))
            and p["score"] >= MIN_SCORE
        ):
            category: Any = p.get("category_id")
            code: Any = category if gt.category_table is None else gt.category_table.get(category)
            label = gt.category_names.get(code, str(category))
            image = p.get("image_id") if gt.id_table is None else gt.id_table.get(p.get("image_id"))
            pred_by.setdefault(image, []).append((p["bbox"], label, float(p["score"])))
    removed = _suppressed_boxes(gt, predictions, result.protocol)
    out = []
    for img in gt.image_ids.tolist():
        gone = removed.get(img, frozenset())
        errors = detection_badness(gt_by.get(img, []), pred_by.get(img, []), removed=gone)
        out.append(Scene(image=gt.image_file.get(img) or None,
                         title=f"image {img}: {errors} missed or spurious boxes",
                         badness=errors, gt=gt_by.get(img, []), predicted=pred_by.get(img, []),
                         keys=(img,), negatives=gt.image_negatives.get(img, frozenset()),
                         removed=gone))
    return out


def _suppressed_boxes(gt: OVDEvalSubset, predictions: list[Any], protocol: str
                      ) -> dict[int, frozenset[tuple[float, ...]]]:
    """Per image, the boxes (xywh tuples) the GT-guided suppression removes before NMS-AP is
    computed (the scorer's own :func:`~.scorer.suppress`, so the picture is the metric's)."""
    from ...engine.errors import VlbenchError
    from .scorer import parse_predictions, suppress

    try:
        preds = parse_predictions(predictions, gt, protocol=protocol)
    except VlbenchError:            # the score already said what is wrong with the file
        return {}
    keep, _ = suppress(gt, preds)
    out: dict[int, set[tuple[float, ...]]] = {}
    for img, box in zip(preds.image_id[~keep].tolist(), preds.box_xywh[~keep].tolist()):
        out.setdefault(img, set()).add(tuple(box))
    return {img: frozenset(boxes) for img, boxes in out.items()}
