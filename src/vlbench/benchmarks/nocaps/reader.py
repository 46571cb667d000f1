"""nocaps readers: the official captions JSON (COCO captions format + ``domain``) <-> scoring
records <-> Hub folder (splits validation and test)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...engine.errors import FormatError, InputError
from ...engine.images import ImageSource, image_cell
from ..validation import BuildReport, read_card_metadata, require_utf8
from . import schema
from .records import NocapsReferences

__all__ = ["NocapsReferences", "parse_official", "references_from_rows", "load_references", "build",
           "export", "BuildReport"]

_IMAGE_FIELDS = ("id", "open_images_id", "file_name", "height", "width", "domain", "coco_url",
                 "license", "date_captured")


def parse_official(data: Any, source: str = "references") -> NocapsReferences:
    """Official captions JSON -> records, with the toolkit's rules and clear errors."""
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise FormatError("a nocaps reference file is a COCO-captions object with 'images' (and "
                          "'annotations')",
                          file=source, fix="pass nocaps_val_4500_captions.json")
    if "descriptions" in data:
        raise FormatError("this is an OmniLabel dataset JSON, not nocaps captions", file=source,
                          fix="score it with 'vlbench score omnilabel'")
    images = data["images"]
    if not images:
        raise FormatError("the references hold no image", file=source,
                          fix="pass the captions JSON of a split")
    ids, domains, files = [], [], []
    for i, img in enumerate(images):
        if (
            not isinstance(img, dict)
            or isinstance(img.get("id"), bool)
            or not isinstance(img.get("id"), int)
        ):
            raise FormatError("an image needs an integer 'id'", file=source, entry=f"images[{i}]")
        d = img.get("domain")
        if d is not None and d not in schema.DOMAINS:
            raise FormatError(f"unknown domain {d!r}", file=source, entry=f"images[{i}]",
                              fix="use in-domain, near-domain or out-domain")
        ids.append(img["id"])
        domains.append(d)
        files.append(str(img.get("file_name") or ""))
    if len(set(ids)) != len(ids):
        raise FormatError("duplicate image ids", file=source)
    has_captions = "annotations" in data
    refs: dict[int, list[str]] = {i: [] for i in ids}
    for i, a in enumerate(data.get("annotations") or []):
        if (
            not isinstance(a, dict)
            or a.get("image_id") not in refs
            or not isinstance(a.get("caption"), str)
        ):
            raise FormatError("an annotation needs the 'image_id' of an image and a string "
                              "'caption'", file=source,
                              entry=f"annotations[{i}]")
        refs[a["image_id"]].append(a["caption"])
    require_utf8([a["caption"] for a in data.get("annotations") or []], source, "reference caption",
                 entry=lambda i: f"annotations[{i}]")
    if has_captions:
        empty = [i for i in ids if not refs[i]]
        if empty:
            raise FormatError(f"{len(empty)} image(s) have no reference caption, e.g. {empty[:5]} "
                              "(the toolkit asserts here)", file=source)
    return NocapsReferences(image_ids=ids, domains=domains, references=[refs[i] for i in ids],
                            has_captions=has_captions, source=source, file_names=files)


def references_from_rows(rows: list[dict[str, Any]],
                         source: str = "references") -> NocapsReferences:
    """Hub rows (``image_id``, ``domain`` as label or index, ``captions``) -> records."""
    if not rows:
        raise InputError("no reference rows were given", file=source)
    images, annotations = [], []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or "image_id" not in r or "captions" not in r:
            raise FormatError(f"reference {i} needs 'image_id' and 'captions'", file=source)
        d = r.get("domain")
        # a ClassLabel index; -1 is its "no label"
        if isinstance(d, int) and not isinstance(d, bool):
            if not -1 <= d < len(schema.DOMAINS):
                raise FormatError(f"domain index {d} is not a domain (0, 1, 2, or -1 for none)",
                                  file=source,
                                  entry=f"reference {i}",
                                  fix="use in-domain, near-domain or out-domain")
            d = schema.DOMAINS[d] if d >= 0 else None
        images.append({"id": r["image_id"], "domain": d or None})   # "" (no label) is no domain
        annotations += [{"image_id": r["image_id"], "caption": c} for c in r["captions"]]
    return parse_official({"images": images, "annotations": annotations}, source)


def load_references(ref: str | os.PathLike, split: str | None = None) -> NocapsReferences:
    """Official captions JSON or a Hub folder (``split``) -> records."""
    from ...engine.io import read_json

    path = Path(ref)
    if path.is_dir():
        split = split or "validation"
        if split not in schema.SPLITS:
            raise InputError(f"unknown split {split!r}", fix="use validation or test")
        return parse_official(export(path, split), source=f"{path} [{split}]")
    return parse_official(read_json(path, what="reference file"), source=str(path))


# --------------------------------------------------------------------------------------------
# Official JSON -> Hub folder, and back
# --------------------------------------------------------------------------------------------

def _rows(data: dict[str, Any], found: ImageSource | None, report: BuildReport,
          skip_bad_images: bool = False) -> Iterator[dict[str, Any]]:
    caps: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for pos, a in enumerate(data.get("annotations") or []):
        caps.setdefault(a["image_id"], []).append((pos, a))
    for pos, img in enumerate(data["images"]):
        path = found.get(img.get("file_name", "")) if found else None
        mine = caps.get(img["id"], [])
        rest = {k: v for k, v in img.items() if k not in _IMAGE_FIELDS}
        ann_extra = [{k: v for k, v in a.items() if k not in ("image_id", "id", "caption")} for _,
                     a in mine]
        if any(ann_extra):
            rest["__annotation_extra__"] = ann_extra
        cell = (
            image_cell(path, img["file_name"], skip_bad=skip_bad_images, report=report)[0]
            if path
            else None
        )
        yield {"image": cell,
               "image_id": img["id"], **{k: img.get(k) for k in _IMAGE_FIELDS if k != "id"},
               "captions": [a["caption"] for _, a in mine],
               "caption_ids": [a.get("id") for _, a in mine],
               "caption_positions": [p for p, _ in mine], "position": pos,
               "extra": json.dumps(rest, sort_keys=True) if rest else ""}


def build(raw: str | os.PathLike | list, out: str | os.PathLike, *,
          images: str | os.PathLike | None = None,
          allow_missing_images: bool = False, skip_bad_images: bool = False,
          max_shard_bytes: int | None = None) -> BuildReport:
    """Captions JSON(s) -> Hub folder: with annotations -> validation, without -> test."""
    from ...engine.hub import MAX_SHARD_BYTES, ShardedParquetWriter, card_yaml, write_card
    from ...engine.io import read_json
    from .card import card_body, card_metadata

    raws = [Path(p) for p in (raw if isinstance(raw, (list, tuple)) else [raw])]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report, summaries, headers = BuildReport(), [], {}
    features = schema.image_features()
    by_split: dict[str, dict] = {}
    for path in raws:
        data = read_json(path, what="nocaps captions JSON")
        parse_official(data, source=str(path))
        split = "validation" if "annotations" in data else "test"
        if split in by_split:
            raise InputError(f"two {split} files were given (the second is {path})", file=str(path),
                             fix="pass one captions JSON per split")
        by_split[split] = data
    for split in schema.SPLITS:
        if split not in by_split:
            continue
        data = by_split[split]
        needed = {os.path.basename(i["file_name"]) for i in data["images"] if i.get("file_name")}
        if not images and not allow_missing_images:
            raise FormatError(f"no images were given for the {len(needed)} {split} images: the "
                              "dataset would hold none", file=str(raws[0]),
                              fix="pass --images <folder of the split's images>, or "
                                  "--allow-missing-images to build the captions only")
        if not images:
            report.missing_images += sorted(needed)
        with tempfile.TemporaryDirectory(prefix=".vlbench-images-", dir=out) as tmp:
            found = ImageSource(Path(images), needed, Path(tmp)) if images else None
            if found and found.missing:
                report.missing_images += found.missing
                if not allow_missing_images:
                    raise FormatError(f"{len(found.missing)} of {len(needed)} {split} images are "
                                      "missing, e.g. "
                                      f"{', '.join(found.missing[:3])}", file=str(images),
                                      fix="point --images at the folder of the split's images, or "
                                          "pass --allow-missing-images")
            writer = ShardedParquetWriter(out, split, features,
                                          max_shard_bytes=max_shard_bytes or MAX_SHARD_BYTES)
            writer.write_all(_rows(data, found, report, skip_bad_images))
            summaries.append(writer.close())
        report.rows[split] = summaries[-1].num_examples
        counts: dict[str, int] = {}
        for img in data["images"]:
            if img.get("domain"):
                counts[img["domain"]] = counts.get(img["domain"], 0) + 1
        report.parts[split] = counts
        report.files += summaries[-1].files
        headers[split] = json.dumps(
            {k: v for k, v in data.items() if k not in ("images", "annotations")}, sort_keys=True
        )
    meta = card_yaml(features=features, splits=summaries,
                     extra={**card_metadata(), "vlbench": {"nocaps_headers": headers}})
    write_card(out, meta, card_body(report))
    report.files[:0] = ["README.md"]
    return report


def export(folder: str | os.PathLike, split: str = "validation") -> dict[str, Any]:
    """Hub folder -> the official captions JSON of ``split`` (inverse of :func:`build`, key order
    aside)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    files = sorted((folder / "data").glob(f"{split}-*.parquet"))
    if not files:
        raise FormatError(f"no {split} split in this folder", file=str(folder))
    columns = [c for c in schema.image_features() if c != "image"]
    rows = sorted((r for f in files for r in pq.ParquetFile(f).read(columns=columns).to_pylist()),
                  key=lambda r: r["position"])
    out = json.loads(
        (read_card_metadata(folder).get("vlbench") or {}).get("nocaps_headers", {}).get(split, "{}")
    )
    domain_names = list(schema.DOMAINS)
    images, anns = [], []
    for r in rows:
        extra = json.loads(r["extra"]) if r["extra"] else {}
        ann_extra = extra.pop("__annotation_extra__", None)
        img = {"id": r["image_id"]}
        for k in _IMAGE_FIELDS[1:]:
            v = r[k]
            if v is not None:
                img[k] = domain_names[v] if k == "domain" else v
        img.update(extra)
        images.append(img)
        for j, (cap, cid, pos) in enumerate(zip(r["captions"], r["caption_ids"],
                                                r["caption_positions"])):
            a = {"image_id": r["image_id"], "caption": cap}
            if cid is not None:
                a["id"] = cid
            if ann_extra:
                a.update(ann_extra[j])
            anns.append((pos, a))
    out["images"] = images
    if split == "validation":
        out["annotations"] = [a for _, a in sorted(anns, key=lambda t: t[0])]
    return out
