"""The reporting layer: renderings of a :class:`~vlbench.engine.result.Result` for people and for
the Hub.

Terminal text, headline rows, breakdown tables and CSV, plots, samples drawn on their images (the
model card and the Hub's entries are :mod:`vlbench.library.model_card`). Every function works for
any registered benchmark: what differs comes from the benchmark's views. matplotlib and PIL are
imported only here, and only through their object APIs (no pyplot state: safe in worker threads).
"""

from __future__ import annotations

import csv
import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..benchmarks.protocol.views import Sample, Table
from ..engine.result import Result

__all__ = ["Table", "text", "headline", "tables", "tie_bounds", "tie_orders", "threshold_line",
           "analysis_tables", "analysis_text", "analysis_plot", "plots", "draw", "image_reader",
           "to_csv"]


def _round(value: Any, digits: int) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def text(result: Result) -> str:
    """The terminal rendering: the benchmark's own layout where it has one, else the generic table;
    then the threshold metrics' line when the result has them."""
    out = get_benchmark(result.benchmark).views.text(result) or result.table()
    line = threshold_line(result)
    return f"{out}\n{line}" if line else out


def threshold_line(result: Result) -> str | None:
    """One line of the result's ``threshold_metrics`` (precision, recall, F1 at one IoU over every
    box, and the share of boxes naming a negative on an object), marked as not official; None
    without them."""
    t = result.breakdowns.get("threshold_metrics")
    if not t:
        return None
    shown = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    parts = [f"precision {shown(t.get('precision'))}, recall {shown(t.get('recall'))}, F1 "
             f"{shown(t.get('F1'))}"]
    for key, value in t.items():
        if key.endswith("_share"):
            what = key[:-len("_share")]
            parts.append(f"{what.replace('_', ' ')} boxes on an object: {t.get(what + '_boxes')} "
                         f"({shown(value)}%)")
    return f"Not official, every box counted at IoU {t.get('iou', 0.5)}: " + "; ".join(parts)


def analysis_tables(result: Result) -> dict[str, Table]:
    """The result's ``analysis`` as tables (none without one): the error types with their count, the
    headline they cost and their definition; every slice (rows: its values; columns: what each value
    holds); the domain gaps, the IoU histogram and the most missed words where the benchmark gives
    them."""
    a = result.analysis
    if not a:
        return {}
    out: dict[str, Table] = {}
    key = a.get("delta_key", "AP")
    if "errors" in a:
        rows = [[t, e.get("count"), _round(e.get(f"delta_{key}"), 2), e.get("definition", "")]
                for t, e in a["errors"].items()]
        out[f"errors ({key} as scored: {_shown(a.get('as_scored'))}; not official)"] = (
            ["error", "count", f"{key} gained when fixed", "definition"], rows)
    for name, mapping in {
        **a.get("slices", {}),
        **({"domain gaps": a["domain_gaps"]} if "domain_gaps" in a else {}),
    }.items():
        columns = list(dict.fromkeys(c for row in mapping.values() for c in row))
        out[name if name == "domain gaps" else f"by {name}"] = (
            [name, *columns],
            [[v, *[_round(row.get(c, 0 if name != "domain gaps" else None), 2) for c in columns]]
                               for v, row in mapping.items()])
    if "iou_histogram" in a:
        edges, counts = a["iou_histogram"]["edges"], a["iou_histogram"]["counts"]
        out["IoU histogram"] = (["IoU", "rows"],
                                [[f"{lo:.1f}-{hi:.1f}", n] for lo, hi,
                                 n in zip(edges, edges[1:], counts)])
    if "missed_words" in a:
        words = [[w, n, kind] for kind in ("novel", "other") for w,
                 n in a["missed_words"].get(kind, [])]
        out["most missed words"] = (["word", "images", "kind"], words)
    return out


def analysis_text(result: Result) -> str:
    """:func:`analysis_tables` as aligned terminal text, then the analysis' note."""
    blocks = []
    for title, (headers, rows) in analysis_tables(result).items():
        cells = [list(map(_cell, headers))] + [list(map(_cell, r)) for r in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        blocks.append("\n".join([title, "-" * len(title), *lines]))
    note = (result.analysis or {}).get("note")
    return "\n\n".join(blocks + ([f"note: {note}"] if note else []))


def _cell(value: Any) -> str:
    return "" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _shown(value: Any) -> str:
    return "null" if value is None else f"{value:.2f}"


def headline(result: Result) -> list[list[Any]]:
    """[metric, value] rows of the benchmark's headline metrics present in the result (else every
    metric)."""
    keys = [k for k in get_benchmark(result.benchmark).headline if k in result.metrics] or list(
        result.metrics
    )
    return [[k, _round(result.metrics[k], 4)] for k in keys]


def tables(result: Result) -> dict[str, Table]:
    """Every metric, the benchmark's breakdown tables, then the tie bounds when scores tied, the
    threshold metrics and the error analysis' tables (both not official), as (headers, rows)."""
    out: dict[str, Table] = {"all metrics": (["metric", "value"],
                                             [[k, _round(v, 2)] for k,
                                              v in result.metrics.items()])}
    out.update(get_benchmark(result.benchmark).views.tables(result))
    bounds, orders = tie_bounds(result), tie_orders(result)
    # detections shared scores: each key over every order of the ties, and over random orders
    if bounds or orders:
        none = {"low": None, "high": None, "mean": None}
        out["tie orders (the official number, every order's extremes, random orders' mean and "
            "5-95%)"] = (
            ["metric", "official", "lowest", "highest", "random mean", "random 5%", "random 95%"],
            [[k, _round(result.metrics.get(k), 2), _round(b["low"], 2), _round(b["high"], 2),
              _round(o["mean"], 2), _round(o["low"], 2), _round(o["high"], 2)]
             for k in dict.fromkeys([*bounds, *orders]) for b,
             o in [(bounds.get(k, none), orders.get(k, none))]])
    t = result.breakdowns.get("threshold_metrics")
    if t:               # not official: the answer-set view (every box counted) beside AP
        out["threshold metrics (not official, every box counted)"] = (
            ["quantity", "value"],
            [[k, _round(v, 2)] for k, v in t.items() if isinstance(v, (int, float))])
    out.update(analysis_tables(result))
    return out


def tie_bounds(result: Result) -> dict[str, dict[str, Any]]:
    """The result's ``tie_bounds`` when the tie order changes some AP key (else ``{}``: ties that
    change nothing are not worth a column)."""
    bounds = result.breakdowns.get("tie_bounds") or {}
    moves = any(
        b["low"] is not None and b["high"] is not None and b["high"] - b["low"] > 1e-9
        for b in bounds.values()
    )
    return bounds if moves else {}


def tie_orders(result: Result) -> dict[str, dict[str, Any]]:
    """Per key, the mean and 5-95% interval over random orders of tied scores
    (``breakdowns["tie_orders"]``), when the orders move some key (else ``{}``)."""
    keys = (result.breakdowns.get("tie_orders") or {}).get("keys", {})
    moves = any(
        o["low"] is not None and o["high"] is not None and o["high"] - o["low"] > 1e-9
        for o in keys.values()
    )
    return keys if moves else {}


def to_csv(table: Table) -> str:
    """A table as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(table[0])
    writer.writerows(table[1])
    return buf.getvalue()


def plots(result: Result) -> dict[str, Any]:
    """The benchmark's matplotlib figures (object API: each figure is independent of any global
    state)."""
    from matplotlib.figure import Figure

    return get_benchmark(result.benchmark).views.plots(result, lambda **kwargs: Figure(**kwargs))


def analysis_plot(result: Result) -> Any:
    """A horizontal bar per error type: what fixing it alone gains (the analysis' costs), with its
    count; None without an analysis that costs its errors (a captioning analysis has none)."""
    from matplotlib.figure import Figure

    a = result.analysis or {}
    key = a.get("delta_key", "AP")
    rows = [(t, e.get(f"delta_{key}"), e.get("count")) for t, e in a.get("errors", {}).items()]
    rows = [(t, v, n) for t, v, n in rows if v is not None]
    if not rows:
        return None
    fig = Figure(figsize=(6, 0.45 * len(rows) + 1.2))
    ax = fig.subplots()
    names, values, counts = zip(*rows[::-1])
    bars = ax.barh(
        names,
        values,
        color=[
            "#1f77b4" if n not in ("false_positives", "false_negatives") else "#999999"
            for n in names
        ],
    )
    # the bar is the points; say both, each with its unit
    for bar, value, count in zip(bars, values, counts):
        label = f" {value:+.2f} pts" + (f" ({count} boxes)" if count is not None else "")
        ax.annotate(label, (max(bar.get_width(), 0), bar.get_y() + bar.get_height() / 2),
                    va="center", fontsize=8)
    ax.margins(x=0.35)  # room for the labels past the longest bar
    ax.set(
        xlabel=f"{key} gained when fixed alone (points; as scored: {_shown(a.get('as_scored'))})",
        title="what each error costs (not official)",
    )
    fig.tight_layout()
    return fig


# -- samples ---------------------------------------------------------------------------------------

def image_reader(references: str | os.PathLike) -> Callable[[str], bytes | None]:
    """file name -> image bytes, looked up next to a reference file or folder (``images/``,
    ``*.tar.gz``)."""
    root = Path(references)
    base = root if root.is_dir() else root.parent
    folders = [f for f in (base / "images", base, base.parent / "images") if f.is_dir()]
    archives = [a for f in folders for a in sorted(f.glob("*.tar.gz"))]

    def read(name: str) -> bytes | None:
        wanted = os.path.basename(name)
        for folder in folders:
            for candidate in (folder / name, *folder.rglob(wanted)):
                if candidate.is_file():
                    return candidate.read_bytes()
        for archive in archives:          # streamed: only the wanted member is kept
            with tarfile.open(archive, mode="r|*") as tar:
                for member in tar:
                    if member.isfile() and os.path.basename(member.name) == wanted:
                        data = tar.extractfile(member)
                        return data.read() if data is not None else None
        return None

    return read


#: outline colours of the box kinds of :class:`~vlbench.benchmarks.benchmark.Sample`
COLOURS = {"gt": (20, 170, 60), "miss": (240, 150, 0), "match": (40, 110, 230), "fp": (220, 40, 40),
           "negative": (150, 40, 200), "wrong_label": (230, 60, 170), "suppressed": (130, 130, 130)}


#: the shorter side of a drawn sample, in pixels: small images are enlarged so that boxes and labels
#: are readable
MIN_SIDE = 640


def layout(sample: Sample, image_size: tuple[int, int] | None) -> tuple[tuple[int, int], float,
                                                                        tuple[float, float],
                                                                       list[tuple[list[float], str,
                                                                                  str]]]:
    """Where :func:`draw` puts things: the canvas size, the image's scale and top-left corner on it,
    and each drawable box as (xyxy canvas pixels, label, kind). The canvas holds the whole image and
    every box whole (grown, grey, where a box reaches beyond the image), enlarged to a readable size
    and capped at 4096 pixels a side."""
    w0, h0 = image_size or (0, 0)
    # NaN boxes: nothing
    boxes = [(b, label, kind) for b, label, kind in sample.boxes if all(v == v for v in b)]
    left = min([0.0] + [b[0] for b, _, _ in boxes])
    top = min([0.0] + [b[1] for b, _, _ in boxes])
    right = max([float(w0 or 320)] + [b[0] + max(b[2], 0) for b, _, _ in boxes])
    bottom = max([float(h0 or 240)] + [b[1] + max(b[3], 0) for b, _, _ in boxes])
    pad = 4                                                    # room for the outline itself
    scale = max(1.0, MIN_SIDE / max(1.0, min(right - left, bottom - top)))
    # a huge stray box must not blow memory up
    scale = min(scale, 4096 / max(right - left, bottom - top, 1.0))
    size = (round((right - left) * scale) + 2 * pad, round((bottom - top) * scale) + 2 * pad)
    corner = (-left * scale + pad, -top * scale + pad)
    placed = [([(x - left) * scale + pad, (y - top) * scale + pad,
                (x - left + max(w, 0)) * scale + pad,
                (y - top + max(h, 0)) * scale + pad], label, kind) for (x, y, w, h), label,
              kind in boxes]
    return size, scale, corner, placed


def draw(sample: Sample, image_bytes: bytes | None) -> Any:
    """The sample's boxes (xywh pixels) on its whole image, placed by :func:`layout`; each label on
    a filled band of its colour, kept on the canvas."""
    return draw_placed(sample, image_bytes)[0]


def draw_placed(sample: Sample,
                image_bytes: bytes | None) -> tuple[Any, list[tuple[list[float], str, str]]]:
    """:func:`draw`, and where it put each box: (xyxy canvas pixels, label, kind), as :func:`layout`
    gives them."""
    from PIL import Image, ImageDraw

    image = Image.open(io.BytesIO(image_bytes)).convert("RGB") if image_bytes is not None else None
    size, scale, corner, placed = layout(sample, image.size if image is not None else None)
    img = Image.new("RGB", size, (200, 200, 200))
    if image is not None:
        img.paste(image.resize((max(1, round(image.width * scale)),
                                max(1, round(image.height * scale)))),
                  (round(corner[0]), round(corner[1])))
    canvas = ImageDraw.Draw(img)
    width = max(2, round(min(img.size) / 200))
    for (x0, y0, x1, y1), label, kind in placed:
        colour = COLOURS.get(kind, COLOURS["fp"])
        canvas.rectangle([x0, y0, x1, y1], outline=colour, width=width)
        if label:
            text = label[:40]
            t_left, t_top, t_right, t_bottom = canvas.textbbox((0, 0), text)
            ty = y0 - (t_bottom - t_top) - 4 if y0 >= (t_bottom - t_top) + 4 else y0 + width
            # a label never leaves the canvas
            tx = max(0, min(x0, img.width - (t_right - t_left) - 4))
            canvas.rectangle([tx, ty, tx + t_right - t_left + 4, ty + t_bottom - t_top + 4],
                             fill=colour)
            canvas.text((tx + 2, ty + 2 - t_top), text, fill=(255, 255, 255))
    return img, placed
