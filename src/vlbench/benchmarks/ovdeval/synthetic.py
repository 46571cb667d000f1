"""Seeded synthetic OVDEval sub-datasets in the official layout (sample data, tests, benchmarks).

Nothing here is real data. Each image has positive labels (``text``) and hard negatives
(``neg_text``: the same object with another attribute); predictions put the true label on a
jittered box, hard-negative labels on the same object (outscoring it about a third of the time),
same-class duplicates and background false positives. Scores are distinct within an image, as in
the golden cases (the official suppression is platform-dependent on exact ties).
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["make_subset", "make_predictions", "write_release"]

_OBJECTS = ["car", "chair", "cup", "bag", "shirt", "vase", "table", "bicycle", "lamp", "bottle",
            "hat", "bench"]
_ATTRS = ["red", "blue", "green", "white", "black", "wooden", "metal", "glass", "plastic",
          "leather"]


def make_subset(n_images: int, *, seed: int = 0, boxes_per_image: float = 4.0,
                first_ann_id: int = 0, size: tuple[int, int] = (640, 480)) -> dict[str, Any]:
    """One attribute-style sub-dataset: categories "<attribute> <object>", 0-based ids, file
    ``area`` != w*h."""
    rng = np.random.default_rng(seed)
    names = [f"{a} {o}" for o in _OBJECTS for a in _ATTRS]
    categories = [{"supercategory": "object", "id": i, "name": n} for i, n in enumerate(names)]
    width, height = size
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for i in range(n_images):
        n_boxes = int(rng.poisson(boxes_per_image)) if rng.random() > 0.05 else 0
        labels = sorted({int(v) for v in rng.integers(0, len(names), max(1, n_boxes // 2 + 1))})
        text = [names[c] for c in labels]
        neg = sorted({f"{_ATTRS[(_ATTRS.index(names[c].split()[0]) + k) % len(_ATTRS)]} "
                      f"{names[c].split(' ', 1)[1]}"
                      for c in labels for k in (1, 3)} - set(text))
        images.append({"file_name": f"{i:024x}.jpg", "id": i, "height": height, "width": width,
                       "text": text, "neg_text": neg})
        for _ in range(n_boxes):
            w, h = float(rng.integers(8, width // 2)), float(rng.integers(8, height // 2))
            x, y = float(rng.integers(0, int(width - w))), float(rng.integers(0, int(height - h)))
            annotations.append({"id": first_ann_id + len(annotations), "bbox": [x, y, w, h],
                                "category_id": labels[int(rng.integers(len(labels)))],
                                "image_id": i,
                                "iscrowd": 0, "area": round(w * h * float(rng.uniform(0.55, 1.1)))})
    return {"categories": categories, "annotations": annotations, "images": images}


def make_predictions(data: dict[str, Any], *, seed: int = 1, quality: str = "good",
                     hard_negatives: int = 2,
                     duplicates: int = 1, background: float = 2.0) -> list[dict[str, Any]]:
    """COCO-results predictions with hard-negative labels on true boxes; distinct scores within an
    image."""
    rng = np.random.default_rng(seed)
    jitter = {"good": 0.04, "poor": 0.2}[quality]
    names = {c["name"]: c["id"] for c in data["categories"]}
    by_image: dict[int, list[dict[str, Any]]] = {}
    for a in data["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    preds: list[dict[str, Any]] = []
    for img in data["images"]:
        mine: list[dict[str, Any]] = []
        negatives = [names[n] for n in img["neg_text"] if n in names]
        for a in by_image.get(img["id"], []):
            x, y, w, h = a["bbox"]
            def near(scale: float = 1.0, x=x, y=y, w=w, h=h) -> list[float]:
                dx, dy, dw, dh = rng.normal(0, jitter * scale, 4) * [w, h, w, h]
                return [round(x + dx, 1), round(y + dy, 1), round(max(1.0, w + dw), 1),
                        round(max(1.0, h + dh), 1)]
            true_score = float(rng.uniform(0.3, 0.95))
            mine.append({"category_id": a["category_id"], "bbox": near(), "score": true_score})
            for c in (
                rng.choice(negatives, min(hard_negatives, len(negatives)), replace=False)
                if negatives
                else []
            ):
                outscore = rng.random() < 1 / 3
                mine.append(
                    {
                        "category_id": int(c),
                        "bbox": near(),
                        "score": float(
                            rng.uniform(true_score, 1.0)
                            if outscore
                            else rng.uniform(0.05, true_score)
                        ),
                    }
                )
            for _ in range(duplicates):
                mine.append({"category_id": a["category_id"], "bbox": near(2.0),
                             "score": float(rng.uniform(0.05, 0.6))})
        for _ in range(int(rng.poisson(background))):
            mine.append({"category_id": int(rng.integers(len(data["categories"]))),
                         "bbox": [round(float(v), 1) for v in rng.uniform(0, 300, 2)]
                         + [round(float(v), 1) for v in rng.uniform(5, 150, 2)],
                         "score": float(rng.uniform(0.05, 0.7))})
        scores = np.round(np.array([m["score"] for m in mine]) + rng.uniform(0, 1e-6, len(mine)), 8)
        for m, s in zip(mine, scores):
            preds.append({"image_id": img["id"], "score": float(s), "category_id": m["category_id"],
                          "bbox": m["bbox"]})
    return preds


def write_release(root: str | Path, subsets: dict[str, dict[str, Any]], *,
                  archive: bool = True) -> Path:
    """``annotations/<name>.json`` and ``images/<name>.tar.gz`` (or ``images/<name>/``) with drawn
    images."""
    from PIL import Image, ImageDraw

    root = Path(root)
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(exist_ok=True)
    for name, data in subsets.items():
        (root / "annotations" / f"{name}.json").write_text(json.dumps(data))
        by_image: dict[int, list[list[float]]] = {}
        for a in data["annotations"]:
            by_image.setdefault(a["image_id"], []).append(a["bbox"])
        files = {}
        for img in data["images"]:
            canvas = Image.new("RGB", (img["width"], img["height"]), (225, 225, 230))
            draw = ImageDraw.Draw(canvas)
            for x, y, w, h in by_image.get(img["id"], []):
                draw.rectangle([x, y, x + w, y + h], outline=(160, 30, 30), width=2)
            buf = io.BytesIO()
            canvas.save(buf, format="JPEG", quality=70)
            files[img["file_name"]] = buf.getvalue()
        if archive:
            with tarfile.open(root / "images" / f"{name}.tar.gz", "w:gz") as tar:
                for fname, blob in files.items():
                    info = tarfile.TarInfo(f"{name}/{fname}")
                    info.size = len(blob)
                    tar.addfile(info, io.BytesIO(blob))
        else:
            (root / "images" / name).mkdir(exist_ok=True)
            for fname, blob in files.items():
                (root / "images" / name / fname).write_bytes(blob)
    return root
