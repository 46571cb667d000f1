"""Human-facing renderings of a :class:`~vlbench.result.Result`: breakdown tables, plots, the worst
samples drawn on their images, CSV. Used by the Space and the CLI; matplotlib and PIL are imported
only here."""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np

from .result import Result

__all__ = ["Table", "headline", "tables", "plots", "to_csv"]

Table = tuple[list[str], list[list[Any]]]


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 2)
    return v


def headline(result: Result) -> list[list[Any]]:
    """[metric, value] rows of the headline metrics (the benchmark's main numbers first)."""
    keys = {"ref_l4": ["Acc50", "Acc75", "Acc90", "mAcc", "class_Acc50", "class_mAcc"],
            "omnilabel": ["AP", "AP_categ", "AP_descr", "AP_descr_pos", "AR_descr", "AR_categ"],
            "nocaps": ["CIDEr", "SPICE", "B4", "METEOR", "ROUGE_L", "CIDEr_in", "CIDEr_near", "CIDEr_out"]}
    if result.benchmark == "ovdeval":
        wanted = ["Total_Average"] + [k for k in result.metrics if k.startswith("NMS_AP_")] \
            if "Total_Average" in result.metrics else ["NMS_AP", "AP", "NMS_AP50", "AP50", "NMS_AR100", "AR100"]
    else:
        wanted = keys[result.benchmark]
    return [[k, None if result.metrics.get(k) is None else round(result.metrics[k], 4)] for k in wanted
            if k in result.metrics]


def tables(result: Result) -> dict[str, Table]:
    """The benchmark's breakdown tables, as (headers, rows)."""
    b, m = result.breakdowns, result.metrics
    out: dict[str, Table] = {"all metrics": (["metric", "value"], [[k, _fmt(v)] for k, v in m.items()])}
    if result.benchmark == "ref_l4":
        out["per size"] = (["size", "n", "Acc50", "mAcc"],
                           [[s, v["n"], _fmt(v["Acc50"]), _fmt(v["mAcc"])] for s, v in b["per_size"].items()])
        out["per source"] = (["source", "n", "Acc50", "Acc75", "Acc90", "mAcc"],
                             [[s, v["n"], _fmt(v["Acc50"]), _fmt(v["Acc75"]), _fmt(v["Acc90"]), _fmt(v["mAcc"])]
                              for s, v in b["per_source"].items()])
        out["per class"] = (["class", "name", "n", "Acc50", "mAcc", "members"],
                            [[r["class"], r["name"], r["n"], _fmt(r["Acc50"]), _fmt(r["mAcc"]), " ".join(r["members"])]
                             for r in b["per_class"]])
    elif result.benchmark == "omnilabel":
        keys = list(m)
        out["per source"] = (["source"] + keys, [[s] + [_fmt(v[k]) for k in keys] for s, v in b["per_source"].items()])
        if "per_description" in b:
            pd = b["per_description"]
            rows = [[int(i), t, ty, int(n), int(g), _fmt(float(a)) if a == a else None, _fmt(float(a5)) if a5 == a5 else None]
                    for i, t, ty, n, g, a, a5 in zip(pd["id"], pd["text"], pd["type"], pd["images"], pd["num_gt"],
                                                     pd["AP"], pd["AP50"])]
            out["per description (worst first)"] = (["id", "text", "type", "images", "num_gt", "AP", "AP50"], rows)
    elif result.benchmark == "ovdeval":
        if "table" in b:
            out["Table 3"] = (["aspect", "sub-dataset", "NMS-AP", "AP", "AP - NMS-AP"],
                              [[r["aspect"], r["sub_dataset"], _fmt(r["NMS_AP"]), _fmt(r["AP"]), _fmt(r["inflation"])]
                               for r in b["table"]])
            out["aspects"] = (["aspect", "NMS-AP", "AP"], [[a, _fmt(v["NMS_AP"]), _fmt(v["AP"])]
                                                          for a, v in b["aspects"].items()]
                              + [["Total Average", _fmt(b["Total_Average"]), _fmt(b["Total_Average_AP"])]])
        else:
            nms, plain = b["per_category"]["NMS"], b["per_category"]["plain"]
            rows = [[int(c), n, int(g), _fmt(a), _fmt(p)] for c, n, g, a, p in
                    zip(nms["category_id"], nms["name"], nms["num_gt"], nms["AP"], plain["AP"])]
            out["per category"] = (["category_id", "name", "num_gt", "NMS-AP", "AP"],
                                   sorted(rows, key=lambda r: (-r[2], r[0])))  # categories with GT first
    elif result.benchmark == "nocaps":
        cols = [("overall", ""), ("in", "_in"), ("near", "_near"), ("out", "_out")]
        out["per domain"] = (["metric"] + [c for c, _ in cols],
                             [[k] + [_fmt(m[k + s]) for _, s in cols] for k in
                              ("B1", "B2", "B3", "B4", "METEOR", "ROUGE_L", "CIDEr", "SPICE")])
        pi = b["per_image"]
        order = np.argsort(np.asarray(pi["CIDEr"], dtype=float), kind="stable")
        out["per image (worst CIDEr first)"] = (["image_id", "domain", "CIDEr", "caption"],
                                                [[pi["image_id"][i], pi["domain"][i], _fmt(float(pi["CIDEr"][i])),
                                                  pi["caption"][i]] for i in order])
    return out


def to_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(table[0])
    writer.writerows(table[1])
    return buf.getvalue()


def plots(result: Result) -> dict[str, Any]:
    """matplotlib figures where people would rather look than read."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs: dict[str, Any] = {}
    b, m = result.breakdowns, result.metrics
    if result.benchmark == "ref_l4":
        fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
        acc = b["acc_by_threshold"]
        ax[0].plot(acc["thresholds"], acc["acc"], marker="o")
        ax[0].set(xlabel="IoU threshold", ylabel="accuracy (%)", title="Accuracy vs IoU threshold", ylim=(0, 100))
        sizes = [s for s, v in b["per_size"].items() if v["Acc50"] is not None]
        ax[1].bar(sizes, [b["per_size"][s]["Acc50"] for s in sizes], label="Acc@0.5")
        ax[1].bar(sizes, [b["per_size"][s]["mAcc"] for s in sizes], alpha=0.6, label="mAcc")
        ax[1].set(title="per size", ylim=(0, 100))
        ax[1].legend()
        figs["accuracy"] = fig
    elif result.benchmark == "omnilabel":
        fig, ax = plt.subplots(figsize=(5, 3.6))
        rec = b["pr_curves"]["recall"]
        for group in ("categ", "descr"):
            curve = b["pr_curves"][group]
            if curve["iou50"] is not None:
                ax.plot(rec, curve["iou50"], label=f"{group} @0.5")
                ax.plot(rec, curve["mean"], linestyle="--", label=f"{group} @[.5:.95]")
        ax.set(xlabel="recall", ylabel="precision", title="pooled precision-recall", ylim=(0, 1.02))
        ax.legend()
        figs["precision-recall"] = fig
    elif result.benchmark == "ovdeval":
        if "aspects" in b:
            from .benchmarks.ovdeval.schema import ASPECTS

            aspects = list(ASPECTS)  # all six axes always; unscored aspects sit at 0 and say so
            values = [(b["aspects"].get(a) or {}).get("NMS_AP") or 0 for a in aspects]
            aspects = [a if a in b["aspects"] else f"{a}\n(not scored)" for a in aspects]
            fig = plt.figure(figsize=(4.5, 4.5))
            ax = fig.add_subplot(projection="polar")
            angles = np.linspace(0, 2 * np.pi, len(aspects), endpoint=False).tolist()
            ax.plot(angles + angles[:1], values + values[:1], marker="o")
            ax.fill(angles + angles[:1], values + values[:1], alpha=0.25)
            ax.set_xticks(angles, aspects)
            ax.set_title("NMS-AP per aspect")
            figs["aspects"] = fig
        else:
            fig, ax = plt.subplots(figsize=(5, 3.6))
            pr = b["pr_curve"]
            for key, label in (("NMS_iou50", "NMS-AP @0.5"), ("iou50", "AP @0.5")):
                if pr[key] is not None:
                    ax.plot(pr["recall"], pr[key], label=label)
            ax.set(xlabel="recall", ylabel="precision", title="precision-recall (mean over categories)", ylim=(0, 1.02))
            ax.legend()
            figs["precision-recall"] = fig
    elif result.benchmark == "nocaps":
        metrics = [k for k in ("B4", "METEOR", "ROUGE_L", "CIDEr", "SPICE") if m.get(k) is not None]
        fig, ax = plt.subplots(figsize=(8, 3.4))
        width = 0.2
        for j, (name, suf) in enumerate((("overall", ""), ("in", "_in"), ("near", "_near"), ("out", "_out"))):
            ax.bar(np.arange(len(metrics)) + j * width, [m.get(k + suf) or 0 for k in metrics], width, label=name)
        ax.set_xticks(np.arange(len(metrics)) + 1.5 * width, metrics)
        ax.set(title="metrics per domain")
        ax.legend()
        figs["per domain"] = fig
    return figs


# -- the sample viewer --------------------------------------------------------------------------------

def _image_reader(benchmark: str, references: str) -> Any:
    """file name -> image bytes for the releases laid out as the bundled samples (folder, tar, images/)."""
    import os
    import tarfile
    from pathlib import Path

    root = Path(references)
    base = root if root.is_dir() else root.parent
    folders = [base / "images", base, base.parent / "images"]
    archives = [a for folder in (base, base / "images", base.parent / "images") if folder.is_dir()
                for a in sorted(folder.glob("*.tar.gz"))]
    cache: dict[str, bytes] = {}

    def read(name: str) -> bytes | None:
        for folder in folders:
            for candidate in (folder / name, *folder.rglob(os.path.basename(name))) if folder.is_dir() else ():
                if candidate.is_file():
                    return candidate.read_bytes()
        if not cache and archives:
            for archive in archives:
                with tarfile.open(archive) as tar:
                    for member in tar:
                        if member.isfile():
                            cache[os.path.basename(member.name)] = tar.extractfile(member).read()
        return cache.get(os.path.basename(name))

    return read


def _draw(image_bytes: bytes | None, gt: list[tuple[list[float], str]], pred: list[tuple[list[float], str]]) -> Any:
    """GT boxes in green, predictions in red (xywh pixels), labels drawn above each box."""
    from PIL import Image, ImageDraw

    if image_bytes is None:
        w = int(max([b[0] + b[2] for b, _ in gt + pred] + [320]))
        h = int(max([b[1] + b[3] for b, _ in gt + pred] + [240]))
        img = Image.new("RGB", (w, h), (200, 200, 200))
    else:
        img = Image.open(io.BytesIO(image_bytes)).convert("RGB")
    draw = ImageDraw.Draw(img)
    for boxes, colour in ((gt, (20, 170, 60)), (pred, (220, 40, 40))):
        for (x, y, w, h), label in boxes:
            draw.rectangle([x, y, x + w, y + h], outline=colour, width=3)
            if label:
                draw.text((x + 3, max(0, y - 12)), label[:40], fill=colour)
    return img


def samples(benchmark: str, references: str, predictions: Any, result: Result, k: int = 6) -> list[tuple[Any, str]]:
    """The ``k`` worst samples as (image, caption): boxes drawn for detection, captions for nocaps."""
    from .geometry import iou_matrix_xywh
    from .io import read_json

    preds = read_json(predictions, what="prediction file") if isinstance(predictions, str) else predictions
    read = _image_reader(benchmark, references)
    out: list[tuple[Any, str]] = []
    if benchmark == "ref_l4":
        from .benchmarks.ref_l4.reader import load_references

        import pyarrow.parquet as pq
        from pathlib import Path

        refs = load_references(references, result.options.get("split", "all"))
        files = {}
        for f in (sorted(Path(references).glob("ref-l4-*.parquet")) if Path(references).is_dir() else [Path(references)]):
            t = pq.ParquetFile(f).read(columns=["id", "file_name", "caption"]).to_pylist()
            files.update({r["id"]: r for r in t})
        iou = np.asarray(result.breakdowns["samples"]["iou"])
        by_id = {p["id"]: p for p in preds}
        for i in np.argsort(iou, kind="stable")[:k]:
            rid = int(refs.ids[i])
            p = by_id.get(rid)
            box = p["pred_bbox"] if p else None
            if box and p.get("format") != "xywh":
                box = [box[0], box[1], box[2] - box[0], box[3] - box[1]]
            info = files.get(rid, {})
            out.append((_draw(read(info.get("file_name", "")), [(refs.bbox_xywh[i].tolist(), "GT")],
                              [(box, "prediction")] if box else []),
                        f"id {rid}: IoU {iou[i]:.3f} - {info.get('caption', '')[:120]}"))
    elif benchmark in ("omnilabel", "ovdeval"):
        data = read_json(references, what="reference file") if not str(references).endswith("/") else {}
        if benchmark == "ovdeval" and "images" not in data:
            return out
        names = ({d["id"]: d["text"] for d in data.get("descriptions", [])} if benchmark == "omnilabel"
                 else {c["id"]: c["name"] for c in data.get("categories", [])})
        gt_by: dict[int, list] = {}
        for a in data.get("annotations", []):
            labels = a.get("description_ids") or [a.get("category_id")]
            gt_by.setdefault(a["image_id"], []).append((a["bbox"], " / ".join(str(names.get(d, d)) for d in labels[:2])))
        pr_by: dict[int, list] = {}
        for p in preds:
            if benchmark == "omnilabel":
                best = int(np.argmax(p["scores"])) if p["scores"] else 0
                score, label = (p["scores"][best], names.get(p["description_ids"][best], "")) if p["scores"] else (0, "")
            else:
                score, label = p["score"], names.get(p["category_id"], str(p["category_id"]))
            if score >= 0.3:
                pr_by.setdefault(p["image_id"], []).append((p["bbox"], f"{label} {score:.2f}"))
        def misses(img_id: int) -> int:
            g, pr = gt_by.get(img_id, []), pr_by.get(img_id, [])
            if not g:
                return len(pr)
            if not pr:
                return len(g)
            iou = iou_matrix_xywh([b for b, _ in pr], [b for b, _ in g])
            return int((iou.max(axis=0) < 0.5).sum()) + int((iou.max(axis=1) < 0.5).sum())
        images = sorted(data["images"], key=lambda im: -misses(im["id"]))[:k]
        for im in images:
            out.append((_draw(read(im.get("file_name", "")), gt_by.get(im["id"], []), pr_by.get(im["id"], [])),
                        f"image {im['id']}: {misses(im['id'])} missed or spurious boxes (green GT, red predictions)"))
    elif benchmark == "nocaps":
        data = read_json(references, what="reference file")
        files = {im["id"]: im.get("file_name", "") for im in data["images"]}
        refs: dict[int, list[str]] = {}
        for a in data.get("annotations", []):
            refs.setdefault(a["image_id"], []).append(a["caption"])
        pi = result.breakdowns["per_image"]
        for i in np.argsort(np.asarray(pi["CIDEr"], dtype=float), kind="stable")[:k]:
            img_id = pi["image_id"][i]
            raw = read(files.get(img_id, ""))
            from PIL import Image

            img = Image.open(io.BytesIO(raw)).convert("RGB") if raw else _draw(None, [], [])
            out.append((img, f"image {img_id} ({pi['domain'][i]}), CIDEr {float(pi['CIDEr'][i]):.1f}: "
                             f"\"{pi['caption'][i]}\" | references: " + " / ".join(refs.get(img_id, [])[:3])))
    return out
