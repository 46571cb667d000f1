"""nocaps renderings: the leaderboard layout, the per-domain and per-image tables, the per-domain
bars and the worst-CIDEr images with their references, from the Result and the records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..protocol.views import Scene, Table
from . import schema
from .records import NocapsReferences

_COLUMNS = (("overall", ""), ("in", "_in"), ("near", "_near"), ("out", "_out"))


def _r(v: Any) -> Any:
    return round(v, 2) if isinstance(v, float) else v


def text(result: Any) -> str:
    """Metrics x (overall, in, near, out), as the nocaps leaderboard shows them."""
    fmt = lambda v: "null" if v is None else f"{v:.2f}"  # noqa: E731
    signature = ", ".join(f"{k}={v}" for k, v in result.options.items())
    lines = [f"nocaps (protocol={result.protocol}, {signature})",
             f"{'metric':<9}" + "".join(f"{name:>10}" for name, _ in _COLUMNS)]
    for m in schema.METRICS:
        lines.append(f"{m:<9}" + "".join(f"{fmt(result.metrics[m + suf]):>10}" for _,
                                         suf in _COLUMNS))
    lines.append(
        "images   "
        + "".join(
            f"{result.counts.get('images' + suf, result.counts['images']):>10}"
            for _, suf in _COLUMNS
        )
    )
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def tables(result: Any) -> dict[str, Table]:
    """Every metric per domain, and every image worst CIDEr first."""
    m, pi = result.metrics, result.breakdowns["per_image"]
    order = np.argsort(np.asarray(pi["CIDEr"], dtype=float), kind="stable")
    return {
        "per domain": (
            ["metric"] + [c for c, _ in _COLUMNS],
            [[k] + [_r(m[k + s]) for _, s in _COLUMNS] for k in schema.METRICS],
        ),
        "per image (worst CIDEr first)": (
            ["image_id", "domain", "CIDEr", "caption"],
            [
                [pi["image_id"][i], pi["domain"][i], _r(float(pi["CIDEr"][i])), pi["caption"][i]]
                for i in order
            ],
        ),
    }


def plots(result: Any, figure: Callable[..., Any]) -> dict[str, Any]:
    """B4, METEOR, ROUGE-L, CIDEr and SPICE overall and per domain."""
    m = result.metrics
    metrics = [k for k in ("B4", "METEOR", "ROUGE_L", "CIDEr", "SPICE") if m.get(k) is not None]
    fig = figure(figsize=(8, 3.4))
    ax = fig.subplots()
    width = 0.2
    for j, (name, suf) in enumerate(_COLUMNS):
        ax.bar(np.arange(len(metrics)) + j * width, [m.get(k + suf) or 0 for k in metrics], width,
               label=name)
    ax.set_xticks(np.arange(len(metrics)) + 1.5 * width, metrics)
    ax.set(title="metrics per domain")
    ax.legend()
    fig.tight_layout()
    return {"per domain": fig}


def scenes(refs: NocapsReferences, predictions: Any, result: Any) -> list[Scene]:
    """One scene per image: the caption and its references; the lowest CIDEr-D first."""
    pi = result.breakdowns["per_image"]
    row = {img: n for n, img in enumerate(refs.image_ids)}
    out = []
    for i, img in enumerate(pi["image_id"]):
        n = row.get(img)
        file_name = refs.file_names[n] if n is not None and refs.file_names else None
        cider = float(pi["CIDEr"][i])
        references = refs.references[n] if n is not None else []
        out.append(Scene(image=file_name or None,
                         title=f"image {img} ({pi['domain'][i]}), CIDEr {cider:.1f}",
                         badness=-cider, text=f"caption: \"{pi['caption'][i]}\" | references: "
                                              + " / ".join(references), keys=(img,)))
    return out
