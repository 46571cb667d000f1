"""Seeded synthetic nocaps sets in the official captions format (sample data, tests, benchmarks).
Nothing here is real data: captions are built from templates over common and "novel" objects."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["make_dataset", "make_predictions", "write_images"]

_COMMON = ["dog", "cat", "car", "bus", "pizza", "bench", "horse", "boat", "clock", "umbrella"]
_NOVEL = ["accordion", "jellyfish", "tortoise", "harp", "lighthouse", "cannon", "koala",
          "waffle iron"]
_PLACES = ["on a sandy beach", "in a busy street", "next to a wooden table", "in a green field",
           "at night", "inside a small room", "near the water"]
_ADJ = ["small", "large", "old", "red", "white", "wooden", "shiny", "dirty"]
_STYLES: list[Callable[[str], str]] = [str, str.lower, str.upper, lambda s: s + ".",
                                       lambda s: s.replace(" a ", " a  "),
                                        lambda s: s + " ."]


def _caption(rng: np.random.Generator, obj: str) -> str:
    text = f"A {rng.choice(_ADJ)} {obj} {rng.choice(_PLACES)}"
    if rng.random() < 0.3:
        text += f" with a {rng.choice(_ADJ)} {rng.choice(_COMMON)}"
    return _STYLES[int(rng.integers(len(_STYLES)))](text)


def make_dataset(n_images: int, *, seed: int = 0, refs_per_image: int = 10,
                 first_id: int = 0) -> dict[str, Any]:
    """A validation-style captions JSON: images with a domain, ``refs_per_image`` captions each."""
    rng = np.random.default_rng(seed)
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    domains = rng.choice(["in-domain", "near-domain", "out-domain"], n_images, p=[0.15, 0.65, 0.2])
    for i in range(n_images):
        oid = f"{int(rng.integers(1 << 60)):016x}"
        domain = str(domains[i])
        images.append({"id": first_id + i, "open_images_id": oid, "height": 480, "width": 640,
                       "coco_url": f"https://example.invalid/nocaps/{oid}.jpg",
                       "file_name": f"{oid}.jpg",
                       "license": 0, "date_captured": "2018-11-06 10:00:00", "domain": domain})
        obj = str(rng.choice(_COMMON if domain == "in-domain" else _NOVEL if domain == "out-domain"
                             else _COMMON + _NOVEL))
        for _ in range(refs_per_image):
            annotations.append({"image_id": first_id + i, "id": len(annotations),
                                "caption": _caption(rng, obj)})
    return {"licenses": [{"url": "https://creativecommons.org/licenses/by/2.0/", "id": 0,
                          "name": "Attribution 2.0 Generic (CC BY 2.0)"}],
            "info": {"description": "synthetic nocaps-format set (vlbench)", "version": "0.1"},
            "images": images, "annotations": annotations}


def make_predictions(data: dict[str, Any], *, seed: int = 1,
                     quality: str = "good") -> list[dict[str, Any]]:
    """One caption per image: a paraphrase of a reference (``good``) or a generic one (``poor``)."""
    rng = np.random.default_rng(seed)
    refs: dict[int, list[str]] = {}
    for a in data["annotations"]:
        refs.setdefault(a["image_id"], []).append(a["caption"])
    out = []
    for img in data["images"]:
        if quality == "good" and rng.random() < 0.9:
            words = str(rng.choice(refs[img["id"]])).lower().rstrip(" .").split()
            if len(words) > 4 and rng.random() < 0.5:
                words = words[:-2]
            caption = " ".join(words)
        else:
            caption = f"a {rng.choice(_ADJ)} {rng.choice(_COMMON)} {rng.choice(_PLACES)}"
        out.append({"image_id": img["id"], "caption": caption})
    return out


def write_images(data: dict[str, Any], folder: str | Path) -> Path:
    """Write a small JPEG for every image of ``data`` into ``folder``."""
    from PIL import Image

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for img in data["images"]:
        canvas = Image.new("RGB", (img["width"] // 4, img["height"] // 4),
                           tuple(int(v) for v in rng.integers(60, 220, 3)))
        buf = io.BytesIO()
        canvas.save(buf, format="JPEG", quality=60)
        (folder / img["file_name"]).write_bytes(buf.getvalue())
    return folder
