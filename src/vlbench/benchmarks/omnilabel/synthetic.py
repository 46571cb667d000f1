"""Seeded synthetic OmniLabel releases in the official JSON layout (sample data, tests, benchmarks).

Nothing here is real data: ids, label spaces, boxes and texts follow the official format and the
benchmark's statistics (10-40 label-space entries per image, positive and negative descriptions,
crowd regions), images are drawn rectangles.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["make_dataset", "make_predictions", "write_images"]

_CATEGORIES = ["Person", "Car", "Dog", "Chair", "Bottle", "Cup", "Handbag/Satchel", "Bicycle",
               "Bench", "Lamp",
               "Potted Plant", "Umbrella", "Trumpet", "Drum", "Moniter/TV", "Horse", "Bus", "Boat",
               "Book", "Clock"]
_CATEGORIES = _CATEGORIES + [f"Object Class {k}" for k in range(len(_CATEGORIES) + 1, 151)]
_ADJ = ["red", "small", "wooden", "striped", "old", "shiny", "blue", "broken", "tall", "white"]
_REL = ["next to the window", "on the left", "held by a child", "behind the table",
        "in the foreground", "partly hidden by a tree", "closest to the camera",
        "on top of the shelf"]
_SOURCES = [("coco/val2017/{:012d}.jpg", 0.3), ("object365/patch1/objects365_v1_{:08d}.jpg", 0.4),
            ("openimagesv5/val/{:016x}.jpg", 0.3)]


def _phrase(rng: np.random.Generator, cat: str) -> str:
    words = [str(rng.choice(_ADJ)), cat.split("/")[0].lower()]
    if rng.random() < 0.7:
        words.append(str(rng.choice(_REL)))
    if rng.random() < 0.3:
        words += ["that", "is", "slightly", "out", "of", "focus"]
    text = " ".join(words)
    return text[0].upper() + text[1:] if rng.random() < 0.5 else text


def make_dataset(n_images: int, *, seed: int = 0, labelspace: tuple[int, int] = (10, 40),
                 boxes_per_image: float = 2.0,
                 size: tuple[int, int] = (640, 480), first_ann_id: int = 1) -> dict[str, Any]:
    """An official-format validation JSON with ``n_images`` images."""
    rng = np.random.default_rng(seed)
    width, height = size
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    cat_descr = [{"id": i + 1, "text": c,
                  "anno_info": {"type": "object_category", "orig_id": i + 1}, "image_ids": []}
                 for i, c in enumerate(_CATEGORIES)]
    free: list[dict[str, Any]] = []
    next_descr = 1000
    for i in range(n_images):
        image_id = 100 + i
        pattern = _SOURCES[int(rng.choice(3, p=[s[1] for s in _SOURCES]))][0]
        images.append({"id": image_id, "file_name": pattern.format(image_id)})
        n_ls = int(rng.integers(labelspace[0], labelspace[1] + 1))
        n_own, n_neg = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        n_cats = max(2, n_ls - n_own - n_neg)
        cats = rng.choice(len(_CATEGORIES), n_cats, replace=False)
        for c in cats:
            cat_descr[c]["image_ids"].append(image_id)
        own: list[dict[str, Any]] = []
        for _ in range(n_neg if free else 0):  # descriptions of other images: negatives here
            d = free[int(rng.integers(max(0, len(free) - 2000), len(free)))]
            if image_id not in d["image_ids"]:
                d["image_ids"].append(image_id)
        for _ in range(n_own):
            c = int(rng.choice(cats))
            d = {"id": next_descr, "text": _phrase(rng, _CATEGORIES[c]),
                 "anno_info": {"type": "object_description", "orig_id": next_descr,
                               "llm_generated": bool(rng.random() < 0.5)},
                 "image_ids": [image_id], "_cat": c}
            next_descr += 1
            free.append(d)
            own.append(d)
        for _ in range(int(rng.poisson(boxes_per_image))):
            c = int(rng.choice(cats))
            w, h = float(rng.uniform(8, width / 2)), float(rng.uniform(8, height / 2))
            x, y = float(rng.uniform(0, width - w)), float(rng.uniform(0, height - h))
            refs = [d["id"] for d in own if d["_cat"] == c and rng.random() < 0.5][:3]
            annotations.append({"id": first_ann_id + len(annotations), "image_id": image_id,
                                "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                                "area": round(w * h, 2), "iscrowd": int(rng.random() < 0.06),
                                "isfake": 0, "isreflected": 0, "category_id": c + 1,
                                "description_ids": [c + 1] + refs})
    for d in free:
        d.pop("_cat")
    descriptions = [d for d in cat_descr if d["image_ids"]] + free
    return {"info": {"name": "synthetic OmniLabel-format set (vlbench)", "version": "0.1.3"},
            "images": images, "descriptions": descriptions, "annotations": annotations}


def make_predictions(data: dict[str, Any], *, seed: int = 1, quality: str = "good",
                     extra_per_box: int = 2,
                     background_per_image: float = 1.0) -> list[dict[str, Any]]:
    """Official-format predictions: jittered GT boxes scored for their descriptions and for other
    label-space entries (sometimes higher), background false positives, scores rounded to 3 decimals
    (ties)."""
    rng = np.random.default_rng(seed)
    jitter = {"good": 0.05, "poor": 0.25}[quality]
    labelspace: dict[int, list[int]] = {}
    for d in data["descriptions"]:
        for img in d["image_ids"]:
            labelspace.setdefault(img, []).append(d["id"])
    preds = []
    for a in data["annotations"]:
        x, y, w, h = a["bbox"]
        dx, dy, dw, dh = rng.normal(0, jitter, 4) * [w, h, w, h]
        true_ids = list(a["description_ids"])
        space = [d for d in labelspace.get(a["image_id"], []) if d not in true_ids]
        wrong = (
            [int(v) for v in rng.choice(space, min(extra_per_box, len(space)), replace=False)]
            if space
            else []
        )
        ids = true_ids + wrong
        scores = [round(float(s), 3) for s in np.r_[rng.uniform(0.4, 0.99, len(true_ids)),
                                                    rng.uniform(0.0, 0.7, len(wrong))]]
        preds.append({"image_id": a["image_id"], "bbox": [round(x + dx, 2), round(y + dy, 2),
                                                          round(max(1.0, w + dw), 2),
                                                          round(max(1.0, h + dh), 2)],
                      "description_ids": ids, "scores": scores})
    for img in data["images"]:
        space = labelspace.get(img["id"], [])
        for _ in range(int(rng.poisson(background_per_image))):
            if not space:
                break
            ids = [int(v) for v in rng.choice(space, min(2, len(space)), replace=False)]
            preds.append({"image_id": img["id"],
                          "bbox": [round(float(v), 2) for v in rng.uniform(0, 300, 2)]
                          + [round(float(v), 2) for v in rng.uniform(10, 200, 2)],
                          "description_ids": ids,
                          "scores": [round(float(s), 3) for s in rng.uniform(0, 0.6, len(ids))]})
    return preds


def write_images(data: dict[str, Any], root: str | Path, *,
                 size: tuple[int, int] = (640, 480)) -> Path:
    """Draw one JPEG per image under ``root/<file_name>`` (boxes as outlined rectangles)."""
    from PIL import Image, ImageDraw

    root = Path(root)
    by_image: dict[int, list[list[float]]] = {}
    for a in data.get("annotations", []):
        by_image.setdefault(a["image_id"], []).append(a["bbox"])
    for img in data["images"]:
        canvas = Image.new("RGB", size, (230, 230, 225))
        draw = ImageDraw.Draw(canvas)
        for x, y, w, h in by_image.get(img["id"], []):
            draw.rectangle([x, y, x + w, y + h], outline=(30, 60, 160), width=3)
        path = root / img["file_name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        canvas.save(buf, format="JPEG", quality=70)
        path.write_bytes(buf.getvalue())
    return root
