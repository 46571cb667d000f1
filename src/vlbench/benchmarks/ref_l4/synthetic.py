"""Seeded synthetic Ref-L4 releases in the official layout, for the bundled sample, tests and
benchmarks.

Nothing here is real data: rows follow the official columns and value ranges, images are drawn.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

from . import schema

__all__ = ["make_rows", "make_predictions", "make_release"]

_COLOURS = ["red", "blue", "green", "yellow", "white", "black", "orange", "purple", "brown", "grey"]
_PLACES = ["on the left", "on the right", "in the middle", "near the top", "at the bottom",
           "in the corner"]


def make_rows(n_rows: int, *, seed: int = 0, n_images: int | None = None, val_fraction: float = 0.3,
              image_size: tuple[int, int] = (1024, 768)) -> list[dict[str, Any]]:
    """``n_rows`` official-format rows over ``n_images`` images (val rows first, ids 0..n-1)."""
    rng = np.random.default_rng(seed)
    n_images = n_images or max(1, n_rows // 4)
    width, height = image_size
    image_of_row = np.sort(rng.integers(0, n_images, size=n_rows))
    # every image used once
    image_of_row[: min(n_images, n_rows)] = np.arange(min(n_images, n_rows))
    image_of_row.sort()
    n_val_images = int(round(n_images * val_fraction))
    coco_ids = sorted(schema.COCO_NAMES)
    # RefCOCO rows sit on COCO images, the rest on Objects365
    image_from_coco = rng.random(n_images) < 0.35
    rows = []
    for i, img in enumerate(image_of_row.tolist()):
        from_coco = bool(image_from_coco[img])
        cat = (f"refcoco_{coco_ids[rng.integers(len(coco_ids))]}" if from_coco
               else f"o365_{int(rng.integers(1, 366))}")
        side = float(np.exp(rng.uniform(np.log(12), np.log(min(width, height) * 0.95))))
        aspect = float(np.exp(rng.uniform(-0.6, 0.6)))
        w = min(width - 1.0, side * aspect)
        h = min(height - 1.0, side / aspect)
        x = float(rng.uniform(0, width - w))
        y = float(rng.uniform(0, height - h))
        x, y, w, h = (round(v, 2) for v in (x, y, w, h))
        name = schema.category_name(cat)
        caption = (f"The {_COLOURS[rng.integers(len(_COLOURS))]} {name.lower()} "
                   f"{_PLACES[rng.integers(len(_PLACES))]} of the picture, next to the "
                   f"{_COLOURS[rng.integers(len(_COLOURS))]} one, which is partly hidden.")
        prefix = "coco" if from_coco else "o365"
        rows.append({
            "id": i, "caption": caption, "bbox": [x, y, w, h], "bbox_area": w * h,
            "bbox_id": f"{prefix}_{1000 + i}", "ori_category_id": cat,
            "image_id": f"{prefix}_{img}", "height": height, "width": width,
            "file_name": f"{'COCO_train2014_' if from_coco else 'objects365_v2_'}{img:012d}.jpg",
            "is_rewrite": bool(rng.random() < 0.5),
            "split": "val" if img < n_val_images else "test",
        })
    return rows


def make_predictions(rows: list[dict[str, Any]], *, quality: str = "good",
                     seed: int = 1) -> list[dict[str, Any]]:
    """Official-format predictions: jittered GT boxes (``good``) or loose / wrong ones (``poor``),
    mixed formats."""
    rng = np.random.default_rng(seed)
    jitter = {"good": 0.06, "poor": 0.18}[quality]
    out = []
    for row in rows:
        x, y, w, h = row["bbox"]
        if quality == "poor" and rng.random() < 0.25:  # another object entirely
            x, y = x + w * rng.uniform(1, 2), y + h * rng.uniform(-1, 1)
        dx, dy, dw, dh = rng.normal(0, jitter, 4) * [w, h, w, h]
        box = [round(float(v), 2) for v in (x + dx, y + dy, max(1.0, w + dw), max(1.0, h + dh))]
        if rng.random() < 0.5:
            out.append({"id": row["id"], "pred_bbox": box, "format": "xywh"})
        else:
            out.append({"id": row["id"], "pred_bbox": [box[0], box[1], round(box[0] + box[2], 2),
                                                        round(box[1] + box[3], 2)],
                        "format": "xyxy"})
    return out


def _draw(rows_of_image: list[dict[str, Any]], *, noise: bool, rng: np.random.Generator) -> bytes:
    from PIL import Image, ImageDraw

    width, height = rows_of_image[0]["width"], rows_of_image[0]["height"]
    if noise:  # incompressible pixels: a realistic byte size per image for memory tests
        img = Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))
    else:
        img = Image.new("RGB", (width, height), (225, 228, 232))
    draw = ImageDraw.Draw(img)
    for row in rows_of_image:
        x, y, w, h = row["bbox"]
        colour = tuple(int(c) for c in rng.integers(40, 220, 3))
        draw.rectangle([x, y, x + w, y + h], fill=None if noise else colour, outline=(20, 20, 20),
                       width=2)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=85 if noise else 70)
    return buf.getvalue()


def make_release(out_dir: str | Path, rows: list[dict[str, Any]], *, archive: bool = True,
                 noise: bool = False, seed: int = 0) -> Path:
    """Write ``ref-l4-val.parquet``, ``ref-l4-test.parquet`` and ``images.tar.gz`` (or
    ``images/``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    schema_pa = pa.schema([("id", pa.int64()), ("caption", pa.string()),
                           ("bbox", pa.list_(pa.float64())),
                           ("bbox_area", pa.float64()), ("bbox_id", pa.string()),
                           ("ori_category_id", pa.string()),
                           ("image_id", pa.string()), ("height", pa.int64()), ("width", pa.int64()),
                           ("file_name", pa.string()), ("is_rewrite", pa.bool_()),
                           ("split", pa.string())])
    for split in schema.SPLITS:
        part = [r for r in rows if r["split"] == split]
        pq.write_table(pa.Table.from_pylist(part, schema=schema_pa),
                       out / f"ref-l4-{split}.parquet")
    rng = np.random.default_rng(seed)
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_file.setdefault(row["file_name"], []).append(row)
    if archive:
        with tarfile.open(out / "images.tar.gz", "w:gz") as tar:
            for name, group in by_file.items():
                data = _draw(group, noise=noise, rng=rng)
                info = tarfile.TarInfo(f"images/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    else:
        (out / "images").mkdir(exist_ok=True)
        for name, group in by_file.items():
            (out / "images" / name).write_bytes(_draw(group, noise=noise, rng=rng))
    return out
