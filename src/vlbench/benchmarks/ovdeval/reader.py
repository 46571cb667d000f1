"""OVDEval readers: sub-dataset JSON (COCO format + per-image ``text`` / ``neg_text``) <-> scoring
records <-> Hub folder (one config per sub-dataset, split ``test``)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.errors import FormatError, InputError
from ...engine.images import ImageSource, image_cell
from ..validation import (
    BuildReport,
    coded_ids,
    extra_fields,
    fail as _fail,
    read_card_metadata,
    refuse_repeated_images_in_build,
    refuse_text_ids_in_build,
    sorted_id_codes,
)
from . import schema
from .records import OVDEvalReferences, OVDEvalSubset, PredictionFolder

__all__ = ["parse_official", "references_from_rows", "load_references", "find_subsets", "build",
           "export"]

_ANN_FIELDS = ("id", "image_id", "category_id", "bbox", "area", "iscrowd")


def parse_official(data: Any, name: str, source: str = "references") -> OVDEvalSubset:
    """Sub-dataset JSON -> :class:`OVDEvalSubset`, with the fields pycocotools needs checked up
    front."""
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in ("images",
                                                                                     "annotations",
                                                                                     "categories")):
        if isinstance(data, dict) and "descriptions" in data:
            _fail("this is an OmniLabel dataset JSON, not an OVDEval sub-dataset", source,
                  fix="score it with 'vlbench score omnilabel'")
        _fail("an OVDEval sub-dataset is a COCO-style object with 'images', 'annotations' and "
              "'categories' lists",
              source, fix="pass annotations/<sub-dataset>.json of the OVDEval release")
    notes: list[str] = []
    for i, c in enumerate(data["categories"]):
        if not (
            isinstance(c, dict)
            and isinstance(c.get("id"), (int, float, str))
            and not isinstance(c["id"], bool)
            and "name" in c
        ):
            found = f" (found {c.get('id')!r})" if isinstance(c, dict) and "id" in c else ""
            _fail(f"a category needs an 'id' (an integer, or text) and a 'name'{found}", source,
                  f"categories[{i}]")
    for i, img in enumerate(data["images"]):
        if not (
            isinstance(img, dict)
            and isinstance(img.get("id"), (int, float, str))
            and not isinstance(img["id"], bool)
        ):
            _fail("an image needs an 'id' (an integer, or text)", source, f"images[{i}]")
    # ids as pycocotools keys and orders them (text ids as text); an image listed twice is one
    # image, the last entry
    listed, id_table = sorted_id_codes([img["id"] for img in data["images"]], source, "image id",
                                       "images")
    image_ids = np.unique(listed)
    if len(image_ids) != len(listed):
        notes.append(f"{len(listed) - len(image_ids)} entry(ies) of 'images' repeat an image id: "
                     "each image is evaluated once, as pycocotools keys its images by id (the last "
                     "entry's fields are kept)")
    # category ids likewise: pycocotools sorts them (getCatIds) and the predictions join on them by
    # value
    cat_codes, category_table = sorted_id_codes([c["id"] for c in data["categories"]], source,
                                                "category id", "categories")
    category_ids = np.unique(cat_codes)
    anns = data["annotations"]
    missing_crowd = 0
    for i, a in enumerate(anns):
        if not isinstance(a, dict) or any(k not in a for k in ("id", "image_id", "category_id",
                                                               "bbox", "area")):
            _fail("an annotation needs 'id', 'image_id', 'category_id', 'bbox' and 'area' "
                  "(pycocotools reads them "
                  "all; 'area' decides small/medium/large)", source, f"annotations[{i}]")
        b = a["bbox"]
        if not (
            isinstance(b, list) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b)
        ):
            _fail(f"'bbox' must be [x, y, w, h], got {b!r}", source, f"annotations[{i}]")
        missing_crowd += "iscrowd" not in a
    if missing_crowd:
        notes.append(f"{missing_crowd} annotation(s) have no 'iscrowd' and were read as 0 "
                     "(pycocotools raises KeyError there)")
    ids = [a["id"] for a in anns]
    if len(set(ids)) != len(ids):
        repeated = len(ids) - len(set(ids))
        notes.append(f"{repeated} annotation(s) repeat the id of another annotation: as in "
                     "pycocotools, the COCO evaluation uses the last annotation with each id "
                     "wherever that id occurs (the GT-guided suppression uses the annotations as "
                     "written, as the official script does)")
    box = np.asarray([a["bbox"] for a in anns], dtype=np.float64).reshape(-1, 4)
    return OVDEvalSubset(
        name=name, image_ids=image_ids, category_ids=category_ids,
        category_names={int(code): str(c["name"]) for code,
                        c in zip(cat_codes, data["categories"])},
        ann_image=_annotation_images([a["image_id"] for a in anns], id_table, source),
        ann_category=_annotation_categories([a["category_id"] for a in anns], category_table,
                                            source),
        ann_box=box, ann_area=np.asarray([a["area"] for a in anns], dtype=np.float64),
        ann_iscrowd=np.asarray([bool(a.get("iscrowd", 0)) for a in anns], dtype=bool),
        ann_id=np.asarray(ids, dtype=np.int64), notes=notes, source=source,
        image_file={int(code): str(img.get("file_name") or "") for code,
                    img in zip(listed, data["images"])},
        image_negatives={int(code): frozenset(map(str, img["neg_text"])) for code,
                         img in zip(listed, data["images"])
                         if isinstance(img.get("neg_text"), list) and img["neg_text"]},
        image_wh=_image_sizes(data["images"], listed, image_ids), id_table=id_table,
        category_table=category_table)


def _annotation_images(values: list[Any], table: dict[Any, int] | None,
                       source: str) -> NDArray[np.int64]:
    """Each annotation's image as its code; an id no image has keeps a code of its own that no image
    has (its boxes are never evaluated, as ``COCOeval`` evaluates only listed images)."""
    if table is None:
        return coded_ids(values, None, source, "image_id", error=FormatError)[0]
    codes, known = coded_ids(values, table, source, "image_id")
    return np.where(known, codes, -1 - np.arange(len(codes)))


def _annotation_categories(values: list[Any], table: dict[Any, int] | None,
                           source: str) -> NDArray[np.int64]:
    """Each annotation's category as its code; where the ids are text, an id no category has gets -1
    (no code): ``COCOeval`` evaluates only the listed categories, and the class-agnostic suppression
    still uses the box."""
    if table is None:
        return coded_ids(values, None, source, "category_id", error=FormatError)[0]
    codes, known = coded_ids(values, table, source, "category_id")
    return np.where(known, codes, -1)


def _image_sizes(images: list[dict[str, Any]], listed: NDArray[np.int64],
                 image_ids: NDArray[np.int64] ) -> NDArray[np.float64] | None:
    """(width, height) per id of ``image_ids`` (sorted), NaN where an image gives none; None when
    none does. ``listed``: each entry's id; of an id listed twice the last entry counts (numpy's
    assignment keeps the last)."""
    def number(value: Any) -> float:
        return (
            float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else np.nan
        )

    wh = np.full((len(image_ids), 2), np.nan)
    rows = np.searchsorted(image_ids, listed)
    wh[rows] = np.asarray([(number(img.get("width")), number(img.get("height"))) for img in images],
                          dtype=np.float64).reshape(-1, 2)
    return None if np.isnan(wh).all() else wh


#: file names a sub-dataset's prediction file may have, ``{}`` the sub-dataset's name
PREDICTION_STEMS = ("{}", "{}_results", "{}_preds", "{}_predictions")
_PREDICTION_SUFFIXES = tuple(s.removeprefix("{}") for s in PREDICTION_STEMS if s != "{}")


def read_predictions(source: str | os.PathLike, *, max_bytes: int | None = None,
                     max_values: int | None = None, typed: bool = False) -> Any:
    """A prediction file -> its entries; a folder -> a :class:`PredictionFolder` of its
    ``<name>.json`` / ``<name>_results.json`` files (``.json.gz`` too), one per sub-dataset; the
    limits apply to each file. With ``typed``, a file of the usual shape as
    :class:`~vlbench.benchmarks.validation.TypedCocoResult` records (others as dicts)."""
    from ...engine.io import MAX_JSON_BYTES, read_json
    from ..validation import TypedCocoResult

    limit = max_bytes or MAX_JSON_BYTES
    shape = list[TypedCocoResult] if typed else None
    path = Path(source)
    if not path.is_dir():
        return read_json(path, what="prediction file", max_bytes=limit, max_values=max_values,
                         typed=shape)
    found: dict[str, Path] = {}
    for f in sorted(path.iterdir()):
        if not f.is_file() or not f.name.endswith((".json", ".json.gz")):
            continue
        stem = f.name.removesuffix(".gz").removesuffix(".json")
        name = next(
            (stem.removesuffix(suffix) for suffix in _PREDICTION_SUFFIXES if stem.endswith(suffix)),
            stem,
        )
        if name in found:
            raise FormatError(f"two prediction files for sub-dataset {name!r}: {found[name].name} "
                              f"and {f.name}",
                              file=str(path), fix="keep one file per sub-dataset")
        found[name] = f
    entries = {n: read_json(f, what="prediction file", max_bytes=limit, max_values=max_values,
                            typed=shape)
               for n, f in found.items()}
    return PredictionFolder(entries=entries,
                            files={n: str(f) for n, f in found.items()}, folder=str(path))


def find_subsets(folder: Path) -> dict[str, Path]:
    """Sub-dataset name -> annotation JSON in a release (``annotations/*.json``) or a plain folder
    of JSONs."""
    root = folder / "annotations" if (folder / "annotations").is_dir() else folder
    files = {p.name.split(".")[0]: p for p in sorted(root.iterdir())
             if p.is_file() and (p.name.endswith(".json") or p.name.endswith(".json.gz"))}
    if not files:
        raise FormatError("no sub-dataset JSON (annotations/<name>.json) found", file=str(folder),
                          fix="point at the OVDEval release or its annotations/ folder")
    return files


def load_references(ref: str | os.PathLike, split: str | None = None) -> OVDEvalReferences:
    """One sub-dataset JSON, a folder of them (or a release), or a Hub folder -> every sub-dataset's
    records.

    ``split`` is the Hub split (``test``); the sub-dataset is chosen when scoring.
    """
    from ...engine.io import read_json

    path = Path(ref)
    if path.is_dir() and (path / "README.md").exists() and (path / "data").is_dir():
        names = sorted(p.name for p in (path / "data").iterdir() if p.is_dir())
        subsets = {n: parse_official(export(path, n), n, source=f"{path} [{n}]") for n in names}
    elif path.is_dir():
        subsets = {n: parse_official(read_json(f, what="OVDEval sub-dataset"), n, source=str(f))
                   for n, f in find_subsets(path).items()}
    else:
        name = path.name.split(".")[0]
        subsets = {name: parse_official(read_json(path, what="OVDEval sub-dataset"), name,
                                        source=str(path))}
    return OVDEvalReferences(subsets=subsets, source=str(path))


# --------------------------------------------------------------------------------------------
# Official release -> Hub folder, and back
# --------------------------------------------------------------------------------------------

def _image_source(raw: Path, name: str, images: Path | None) -> Path | None:
    candidates = (
        [images / name, images / f"{name}.tar.gz", images / f"{name}.tar", images] if images else []
    ) + [
        raw / "images" / name,
        raw / "images" / f"{name}.tar.gz",
        raw / f"{name}.tar.gz",
        raw / "images" / f"{name}.tar",
        raw / name,
    ]
    return next(
        (
            c
            for c in candidates
            if c.exists() and (c.is_dir() or c.suffix in (".gz", ".tar", ".tgz"))
        ),
        None,
    )


def _rows(name: str, data: dict[str, Any], found: ImageSource | None, names: dict[int, str],
          report: BuildReport, skip_bad_images: bool = False) -> Iterator[dict[str, Any]]:
    by_image: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for pos, a in enumerate(data["annotations"]):
        by_image.setdefault(a["image_id"], []).append((pos, a))
    for pos, img in enumerate(data["images"]):
        path = found.get(img["file_name"]) if found and img.get("file_name") else None
        yield {
            "sub_dataset": name,
            "image": image_cell(path, img["file_name"], skip_bad=skip_bad_images, report=report)[0]
            if path
            else None,
            "image_id": img["id"],
            "file_name": img.get("file_name"),
            "height": img.get("height"),
            "width": img.get("width"),
            "text": img.get("text"),
            "neg_text": img.get("neg_text"),
            "boxes": [
                {
                    "id": a["id"],
                    "bbox": a["bbox"],
                    "category_id": a["category_id"],
                    "label": names.get(a["category_id"]),
                    "area": a.get("area"),
                    "iscrowd": a.get("iscrowd"),
                    "position": p,
                    "extra": extra_fields(a, _ANN_FIELDS),
                }
                for p, a in by_image.get(img["id"], [])
            ],
            "position": pos,
            "extra": extra_fields(img, ("id", "file_name", "height", "width", "text", "neg_text")),
        }


def _sub_dataset_files(raw: Path, config: str | None) -> dict[str, Path]:
    """Sub-dataset name -> its JSON: a release folder's, or one file's under ``config`` (default:
    its name)."""
    if config is not None and (raw.is_dir() or not re.fullmatch(r"[A-Za-z0-9][\w-]*", config)):
        raise InputError(f"--config {config!r} names the sub-dataset of one annotation file",
                         fix="pass one sub-dataset JSON with --config NAME (letters, digits, '_' "
                             "or '-'), or a release folder without --config")
    return find_subsets(raw) if raw.is_dir() else {config or raw.name.split(".")[0]: raw}


def _refuse_what_rows_cannot_hold(data: dict[str, Any], gt: OVDEvalSubset, source: str) -> None:
    """A build's refusals: an image listed twice, ids written as text (a Hub row per image, integer
    ids)."""
    refuse_repeated_images_in_build(data.get("images"), source)
    for what, table in (("image", gt.id_table), ("category", gt.category_table)):
        if table is not None:
            refuse_text_ids_in_build(f"a {what} id (the {what} ids are written as text)",
                                     next(iter(table)), source)


def build(raw: str | os.PathLike, out: str | os.PathLike, *,
          images: str | os.PathLike | None = None,
          allow_missing_images: bool = False, skip_bad_images: bool = False,
          max_shard_bytes: int | None = None, config: str | None = None) -> BuildReport:
    """The release (``annotations/<sub>.json`` + ``<sub>.tar.gz`` or image folders) -> Hub folder,
    one config each. One sub-dataset JSON becomes the config ``config``, by default the file's name
    (``color.json`` -> color)."""
    if isinstance(raw, (list, tuple)):
        raise InputError("OVDEval is built from one release folder (or one sub-dataset JSON)",
                         fix="pass one --raw")
    from ...engine.hub import (
        MAX_SHARD_BYTES,
        ConfigSpec,
        ShardedParquetWriter,
        SplitSummary,
        card_yaml,
        write_card,
    )
    from ...engine.io import read_json
    from .card import card_body, card_metadata

    raw_path, out = Path(raw), Path(out)
    files = _sub_dataset_files(raw_path, config)
    image_root = Path(images) if images else None
    report = BuildReport()
    configs, headers = [], {}
    out.mkdir(parents=True, exist_ok=True)
    for name, path in files.items():
        data = read_json(path, what="OVDEval sub-dataset")
        gt = parse_official(data, name, source=str(path))
        _refuse_what_rows_cannot_hold(data, gt, str(path))
        names = gt.category_names
        source = _image_source(raw_path if raw_path.is_dir() else raw_path.parent, name, image_root)
        needed = {
            os.path.basename(img["file_name"]) for img in data["images"] if img.get("file_name")
        }
        known = set(gt.image_ids.tolist())
        orphans = sum(a["image_id"] not in known for a in data["annotations"])
        if orphans:
            report.count(f"orphans_{name}",
                         f"annotation(s) of {name} belong to images not in 'images' and cannot be "
                                            "carried over", orphans)
        with tempfile.TemporaryDirectory(prefix=".vlbench-images-", dir=out) as tmp:
            found = ImageSource(source, needed, Path(tmp)) if source else None
            missing = found.missing if found else sorted(needed)
            report.missing_images += [f"{name}/{m}" for m in missing]
            if missing and not allow_missing_images:
                raise FormatError(f"{len(missing)} of {len(needed)} images of {name} are missing"
                                  + (f", e.g. {', '.join(missing[:3])}" if found else
                                     " (no image folder or archive found)"),
                                  file=str(source or raw_path),
                                  fix=f"provide images/{name}/ or {name}.tar.gz, or pass "
                                      "--allow-missing-images")
            features = schema.image_features(data["categories"])
            writer = ShardedParquetWriter(out, "test", features, subdir=f"data/{name}",
                                          source=str(path),
                                          max_shard_bytes=max_shard_bytes or MAX_SHARD_BYTES)
            writer.write_all(_rows(name, data, found, names, report, skip_bad_images))
            summary = writer.close()
        report.rows[name] = summary.num_examples
        report.files.extend(summary.files)
        configs.append(ConfigSpec(name, features, [summary]))
        headers[name] = json.dumps(
            {k: v for k, v in data.items() if k not in ("images", "annotations")}, sort_keys=True
        )
    # the default config: load_dataset(folder) without a name gets every sub-dataset
    if len(configs) > 1:
        every = SplitSummary("test", sum(c.splits[0].num_examples for c in configs),
                             sum(c.splits[0].num_bytes for c in configs),
                             [f for c in configs for f in c.splits[0].files])
        configs.insert(0, ConfigSpec(schema.ALL_CONFIG, schema.image_features(None), [every],
                                     default=True))
    meta = card_yaml(configs=configs,
                     extra={**card_metadata(), "vlbench": {"ovdeval_headers": headers}})
    write_card(out, meta, card_body(report))
    report.files[:0] = ["README.md"]
    return report


def sub_dataset_header(folder: Path, name: str) -> dict[str, Any]:
    """The official JSON header of sub-dataset ``name`` (everything but images and annotations),
    kept in the card."""
    headers = (read_card_metadata(folder).get("vlbench") or {}).get("ovdeval_headers") or {}
    if name not in headers:
        raise FormatError(f"the card has no header for sub-dataset {name!r}",
                          file=str(folder / "README.md"),
                          fix="build the folder with 'vlbench build ovdeval'")
    return json.loads(headers[name])


def export(folder: str | os.PathLike, split: str | None = None, *,
           name: str | None = None) -> dict[str, Any]:
    """Hub folder -> the official JSON of one sub-dataset (``split`` or ``name`` names it; inverse
    of build)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    name = name or split
    if not name or name in ("test",):
        raise InputError("name the sub-dataset to export",
                         fix="pass --split <sub-dataset>, e.g. --split material")
    files = sorted((folder / "data" / name).glob("test-*.parquet"))
    if not files:
        raise FormatError(f"no sub-dataset {name!r} in this folder", file=str(folder))
    columns = ["image_id", "file_name", "height", "width", "text", "neg_text", "boxes", "position",
               "extra"]
    rows = sorted((r for f in files for r in pq.ParquetFile(f).read(columns=columns).to_pylist()),
                  key=lambda r: r["position"])
    out = sub_dataset_header(folder, name)
    images, boxes = [], []
    for r in rows:
        img = {"id": r["image_id"]}
        for key in ("file_name", "height", "width", "text", "neg_text"):
            if r[key] is not None:
                img[key] = r[key]
        img.update(json.loads(r["extra"]) if r["extra"] else {})
        images.append(img)
        for b in r["boxes"]:
            entry = {"id": b["id"], "bbox": b["bbox"], "category_id": b["category_id"],
                     "image_id": r["image_id"]}
            for key in ("area", "iscrowd"):
                if b[key] is not None:
                    entry[key] = b[key]
            entry.update(json.loads(b["extra"]) if b["extra"] else {})
            boxes.append((b["position"], entry))
    out["images"] = images
    out["annotations"] = [e for _, e in sorted(boxes, key=lambda t: t[0])]
    return out


def references_from_rows(rows: list[dict[str, Any]], name: str = "references",
                         source: str = "references") -> OVDEvalSubset:
    """Rows of an OVDEval Hub config (``image_id`` and ``boxes``) -> records. The categories are
    those of the boxes (a category without ground truth drops out of COCO AP anyway), less those of
    boxes the file did not list under a category (a built row's box whose ``label`` is null, or
    ``listed`` False): as in the official code, such a box guides the suppression and is never
    evaluated."""
    if not rows:
        raise InputError("no reference rows were given", file=source)
    data: dict[str, list[dict[str, Any]]] = {"images": [], "annotations": [], "categories": []}
    cats: dict[int, str] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "image_id" not in row or "boxes" not in row:
            raise FormatError(f"reference {i} needs 'image_id' and 'boxes'", file=source,
                              fix="pass rows of an OVDEval Hub config")
        data["images"].append({"id": row["image_id"],
                               **{k: row.get(k) for k in ("neg_text", "width", "height")}})
        for b in row["boxes"]:
            data["annotations"].append({**{k: b.get(k) for k in ("id", "bbox", "category_id",
                                                                 "area")},
                                        "image_id": row["image_id"],
                                        "iscrowd": b.get("iscrowd") or 0})
            if schema.category_listed(b):
                cats.setdefault(b["category_id"], str(b.get("label") or b["category_id"]))
    data["categories"] = [{"id": c, "name": n} for c, n in sorted(cats.items())]
    return dataclasses.replace(parse_official(data, name, source=source), categories_listed=False)
