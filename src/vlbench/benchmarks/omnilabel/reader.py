"""OmniLabel readers: the official dataset JSON <-> scoring records <-> Hub folder.

- :func:`parse_official` turns the official JSON (``images``, ``descriptions``, ``annotations``)
  into :class:`OmniLabelReferences`, the arrays the scorer needs, with the official loader's rules.
- :func:`build` writes the Hub folder (image rows by source, plus a ``descriptions`` config);
  :func:`export` writes the official JSON back from it, losslessly.
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from ...engine.errors import FormatError, InputError
from ...engine.images import image_cell
from ...engine.lookup import find_ids
from ...engine.sorting import stable_argsort
from ..validation import (
    BuildReport,
    TypedId,
    TypedNumber,
    coded_ids,
    extra_fields,
    looked_up_ids,
    read_card_metadata,
    refuse_repeated_images_in_build,
    refuse_text_ids_in_build,
    require as _require,
    sorted_id_codes,
)
from . import schema
from .records import OmniLabelReferences

__all__ = ["parse_official", "references_from_rows", "load_references", "build", "export",
           "TypedDataset"]

_BOX_FIELDS = ("id", "image_id", "bbox", "description_ids", "iscrowd", "area", "category_id",
               "isfake", "isreflected")
#: the fields a Hub row's box holds (its image id is the row's)
_ROW_BOX_FIELDS = tuple(k for k in _BOX_FIELDS if k != "image_id")


@dataclass
class _Parts:
    """What the scorer needs, as read from the official JSON or from Hub rows, before assembly."""

    image_ids: list[int]
    file_names: list[str]
    # description id -> text (a repeated id: the last entry's, as a dict)
    descr_text: dict[int, str]
    # label-space entries: image id, description id, a rank that
    ls_image: list[int] | NDArray[np.int64]
    # orders the entries within an image, and the entry's own type
    ls_descr: NDArray[np.int64]
    # (TYPE_C or TYPE_DP, refined into DP / DN per image later)
    ls_rank: NDArray[np.int64]
    ls_type: NDArray[np.int8]
    box_image: list[int] = field(default_factory=list)
    box_id: list[int] = field(default_factory=list)
    box_xywh: list[Any] = field(default_factory=list)
    box_crowd: list[bool] = field(default_factory=list)    # int(iscrowd): crowd IoU and matching
    # truthiness of iscrowd: the box is ignored
    box_ignore: list[bool] = field(default_factory=list)
    box_refs: list[list[Any]] = field(default_factory=list)    # description ids as written
    has_annotations: bool = True
    missing_iscrowd: int = 0
    notes: list[str] = field(default_factory=list)
    id_table: dict[Any, int] | None = None      # image id as written -> code, where ids are text


def _add_crowd(parts: _Parts, value: Any, source: str, entry: str) -> None:
    """``iscrowd`` as the official evaluator reads it: ``ignore`` from its truthiness (the string
    "0" is truthy), crowd IoU and matching from ``int(iscrowd)`` (which must work: the official
    evaluator crashes otherwise)."""
    try:
        crowd = bool(int(value))
    except (TypeError, ValueError):
        raise FormatError(f"'iscrowd' is {value!r}, not an integer", file=source, entry=entry,
                          fix="write iscrowd as 0 or 1") from None
    parts.box_crowd.append(crowd)
    parts.box_ignore.append(bool(value))


def _version_notes(info: Any) -> list[str]:
    """A note when the file says it is another OmniLabel version than the one the official evaluator
    expects."""
    if isinstance(info, dict) and "omnilabel" in str(info.get("name", "")).lower() \
            and str(info.get("version")) not in ("0.1.3", "None"):
        return [f"the ground truth is version {info.get('version')}; the official evaluator "
                "expects 0.1.3"]
    return []


def _descr_type(kind: Any) -> int:
    """TYPE_DP for a free-form description (its ``anno_info.type`` is "object_description"), else
    TYPE_C."""
    return schema.TYPE_DP if kind == "object_description" else schema.TYPE_C


def _parts_from_official(data: Any, source: str) -> _Parts:
    _require(isinstance(data, dict),
             "an OmniLabel dataset JSON is an object with 'images' and 'descriptions'",
             source, fix="pass dataset_all_val_v0.1.3.json (or a Hub folder built by vlbench)")
    if "categories" in data and "descriptions" not in data:
        raise FormatError("this looks like a COCO-style file (OVDEval?), not an OmniLabel dataset "
                          "JSON", file=source,
                          fix="score it with 'vlbench score ovdeval'")
    for key in ("images", "descriptions"):
        _require(isinstance(data.get(key), list), f"the key {key!r} is missing or not a list",
                 source)
    notes = _version_notes(data.get("info"))
    for i, img in enumerate(data["images"]):
        _require(isinstance(img, dict) and "id" in img, "an image is an object with an 'id'",
                 source, f"images[{i}]")
    # Image ids as the official loader keys them (a dict) and orders them (sorted): integers as
    # themselves, text as codes in text order ("10" before "9"), which decides the order of tied
    # scores across images
    image_codes, id_table = sorted_id_codes([img["id"] for img in data["images"]], source,
                                            "image id", "images")
    # Label spaces: descriptions in array order, each listing its images; the rank is the array
    # position.
    descriptions = data["descriptions"]
    descr_ids, descr_text, kinds = _descriptions(descriptions, source, notes)
    ls_count = [len(d["image_ids"]) for d in descriptions]
    parts = _Parts(image_ids=image_codes.tolist(),
                   file_names=[str(img.get("file_name", "")) for img in data["images"]],
                   descr_text=descr_text,
                   ls_image=_image_keys([i for d in descriptions for i in d["image_ids"]],
                                        image_codes, id_table, source, "descriptions' image_ids",
                                        notes),
                   ls_descr=np.repeat(descr_ids, ls_count),
                   ls_rank=np.repeat(np.arange(len(ls_count)), ls_count),
                   ls_type=np.repeat(np.asarray(kinds, dtype=np.int8), ls_count),
                   has_annotations="annotations" in data, notes=notes, id_table=id_table)
    anns = data.get("annotations") or []
    _require(isinstance(anns, list), "'annotations' must be a list", source)
    for i, a in enumerate(anns):
        try:
            b, refs = a["bbox"], a["description_ids"]
            ok = len(b) == 4 and isinstance(refs, list)
            parts.box_image.append(a["image_id"])
            parts.box_id.append(a["id"])
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise FormatError("an annotation needs 'id', 'image_id', 'bbox' ([x, y, w, h]) and "
                              "'description_ids' (a list)", file=source, entry=f"annotations[{i}]")
        if "iscrowd" not in a:
            parts.missing_iscrowd += 1
        parts.box_xywh.append(b)
        _add_crowd(parts, a.get("iscrowd", 0), source, f"annotations[{i}]")
        parts.box_refs.append(refs)
    parts.box_image = _image_keys(
        parts.box_image, image_codes, id_table, source, "annotations' image_ids", parts.notes
    ).tolist()
    return parts


def _descriptions(descriptions: list[Any], source: str, notes: list[str]
                  ) -> tuple[NDArray[np.int64], dict[int, str], list[int]]:
    """(each entry's id, id -> text, each entry's type) of the ``descriptions`` array, as
    omnilabeltools keys them: by value, a repeated id keeping the last entry's text (a dict) while
    each entry keeps its own images and type. Ids must be integers: its get_description asserts
    isinstance(id, int) for every id (True and False pass, as 1 and 0)."""
    for pos, d in enumerate(descriptions):
        if not (isinstance(d, dict) and "id" in d and isinstance(d.get("text"), str)
                and isinstance(d.get("image_ids"), list)):
            raise FormatError("a description needs 'id', 'text' and 'image_ids' (a list)",
                              file=source, entry=f"descriptions[{pos}]")
        if not isinstance(d["id"], int):
            raise FormatError(f"description id {d['id']!r} is not an integer: omnilabeltools "
                              "asserts that every description id is an int (get_description) and "
                              "stops", file=source,
                              entry=f"descriptions[{pos}]", fix="write description ids as integers")
    ids = np.asarray([int(d["id"]) for d in descriptions], dtype=np.int64)
    text = dict(zip(ids.tolist(), (d["text"] for d in descriptions)))
    if len(text) < len(descriptions):
        notes.append(f"{len(descriptions) - len(text)} description(s) repeat an earlier "
                     "description's id: each keeps its own images and type, and the id's word "
                     "count is the last one's text, as the official loader keys descriptions by id")
    kinds = [
        _descr_type(d["anno_info"].get("type") if isinstance(d.get("anno_info"), dict) else None)
        for d in descriptions
    ]
    return ids, text, kinds


def _image_keys(values: list[Any], image_codes: NDArray[np.int64], id_table: dict[Any, int] | None,
                source: str, key: str, notes: list[str]) -> NDArray[np.int64]:
    """Image ids written in descriptions and annotations, as the images' keys: where the images' ids
    are text, their codes; else the integers (``3.0`` and ``True`` as ``3`` and ``1``, which a dict
    takes for the same key). A value equal to no image id gets a key no image has, and a note: the
    official loader never looks such an entry up."""
    if id_table is not None:
        codes, known = coded_ids(values, id_table, source, key, error=FormatError)
    else:
        known = np.fromiter(
            (
                isinstance(v, (int, float)) and float(v).is_integer() and -(2**63) <= v < 2**63
                for v in values
            ),
            dtype=bool,
            count=len(values),
        )
        codes = np.fromiter((int(v) if k else 0 for v, k in zip(values, known)), dtype=np.int64,
                            count=len(values))
        low = int(image_codes.min(initial=0))
        # below every image id
        codes[~known] = low - 1 if low > -2**63 else int(image_codes.max()) + 1
    if not known.all():
        shown = [values[i] for i in np.flatnonzero(~known)[:3].tolist()]
        notes.append(f"{int((~known).sum())} of the {key} are no image's id (e.g. {shown}): those "
                     "entries are never looked up, as in the official loader")
    return codes


# -- typed reading: the usual shape of the official file, decoded without a dict per object --------
# A file msgspec decodes into these holds only what the dict path accepts without a word (integer
# ids, four exact numbers per box, an integer iscrowd on every box, strings for texts and file
# names). Anything else (a boolean id, a string iscrowd, a box without iscrowd, a null) fails the
# decoding and the file is read as dicts, where it is named, noted or kept as the official loader
# treats it; so both paths give equal records wherever both apply.

class _TypedAnnoInfo(msgspec.Struct, gc=False):
    type: str | None = None


class _TypedImage(msgspec.Struct, gc=False):
    id: TypedId
    file_name: str = ""


class _TypedDescription(msgspec.Struct, gc=False):
    id: TypedId
    text: str
    image_ids: list[TypedId]
    anno_info: _TypedAnnoInfo | None = None


class _TypedAnnotation(msgspec.Struct, gc=False):
    id: TypedId
    image_id: TypedId
    bbox: tuple[TypedNumber, TypedNumber, TypedNumber, TypedNumber]
    description_ids: list[TypedId]
    iscrowd: int


class TypedDataset(msgspec.Struct, gc=False):
    """An official dataset JSON of the usual shape (:func:`load_references` reads it this way
    first)."""

    images: list[_TypedImage]
    descriptions: list[_TypedDescription]
    annotations: list[_TypedAnnotation] | msgspec.UnsetType = msgspec.UNSET
    info: Any = None


def _parts_from_typed(data: TypedDataset) -> _Parts | None:
    """:func:`_parts_from_official` for a typed file, or None where the dict path must speak (a
    duplicate description id)."""
    descrs = data.descriptions
    descr_text = {d.id: d.text for d in descrs}
    if len(descr_text) != len(descrs):
        return None
    ls_lists = [d.image_ids for d in descrs]
    ls_count = np.fromiter(map(len, ls_lists), dtype=np.int64, count=len(descrs))
    total = int(ls_count.sum())
    anns = data.annotations if isinstance(data.annotations, list) else []
    crowd = [a.iscrowd != 0 for a in anns]      # an integer: int(v) and bool(v) agree
    return _Parts(
        image_ids=[img.id for img in data.images],
        file_names=[img.file_name for img in data.images],
        descr_text=descr_text,
        ls_image=np.fromiter(itertools.chain.from_iterable(ls_lists), dtype=np.int64, count=total),
        ls_descr=np.repeat(
            np.fromiter(descr_text, dtype=np.int64, count=len(descr_text)), ls_count
        ),
        ls_rank=np.repeat(np.arange(len(descrs)), ls_count),
        ls_type=np.repeat(
            np.asarray(
                [_descr_type(d.anno_info and d.anno_info.type) for d in descrs], dtype=np.int8
            ),
            ls_count,
        ),
        box_image=[a.image_id for a in anns],
        box_id=[a.id for a in anns],
        box_xywh=[a.bbox for a in anns],
        box_crowd=crowd,
        box_ignore=list(crowd),
        box_refs=[a.description_ids for a in anns],
        has_annotations=isinstance(data.annotations, list),
        notes=_version_notes(data.info),
    )


def _label_space_pairs(parts: _Parts, image_ids: NDArray[np.int64], source: str
                       ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int8]]:
    """(image index, description id, the entry's type) of every label-space entry of a known image,
    in the official order (image id, then label-space rank); a description listed twice for one
    image (one entry's image_ids, or two entries with one id) is refused as the official evaluator
    asserts."""
    ls_image_a = np.asarray(parts.ls_image, dtype=np.int64)
    img_idx, known = find_ids(image_ids, ls_image_a)
    # Labels of images that are not in 'images' are never evaluated by the official code.
    # lexsort((rank, image)) as one stable sort of image * ranks + rank (a radix sort below 2^32)
    rank = parts.ls_rank[known]
    order = stable_argsort(img_idx[known] * (int(rank.max(initial=0)) + 1) + rank)
    pair_image = img_idx[known][order]
    pair_descr = parts.ls_descr[known][order]
    if len(pair_image) > 1:
        by_pair = np.lexsort((pair_descr, pair_image))
        same = (np.diff(pair_image[by_pair]) == 0) & (np.diff(pair_descr[by_pair]) == 0)
        if same.any():
            j = int(by_pair[np.flatnonzero(same)[0]])
            code = int(image_ids[pair_image[j]])
            # the table is in code order
            written = code if parts.id_table is None else list(parts.id_table)[code]
            raise FormatError(f"description {int(pair_descr[j])} is listed twice for image "
                              f"{written!r} (the official evaluator asserts here)", file=source,
                              fix="list each image once per description id (remove the duplicate "
                                  "from image_ids, or give the repeated description its own id)")
    return pair_image, pair_descr, parts.ls_type[known][order]


def _descr_keys(parts: _Parts, rows: NDArray[np.int64], source: str) -> tuple[NDArray[np.int64],
                                                                              NDArray[np.bool_]]:
    """The description ids the boxes list (``description_ids`` flattened; ``rows``: the box of
    each), by equality as the official look-up finds them (``6.0`` is 6, ``true`` is 1), and which
    equal an id: the text "5" equals none."""
    flat = [d for refs in parts.box_refs for d in refs]
    return looked_up_ids(flat, None, source, "description_ids", error=FormatError,
                         entry=lambda i: f"annotations[{rows[i]}]")


def _box_array(parts: _Parts, source: str) -> NDArray[np.float64]:
    """The GT boxes (xywh) as an (N, 4) array; a box that is not four numbers is named."""
    try:
        return np.asarray(parts.box_xywh, dtype=np.float64).reshape(-1, 4)
    except (TypeError, ValueError):
        bad = next(
            i
            for i, b in enumerate(parts.box_xywh)
            if not (
                isinstance(b, (list, tuple))
                and len(b) == 4
                and all(isinstance(v, (int, float)) for v in b)
            )
        )
        raise FormatError(f"'bbox' must be four numbers, got {parts.box_xywh[bad]!r}", file=source,
                          entry=f"annotations[{bad}]") from None


def _unequal_refs_note(parts: _Parts, equal: NDArray[np.bool_]) -> list[str]:
    """A note on the boxes' description_ids that equal no description's id (:func:`_descr_keys`)."""
    if equal.all():
        return []
    flat = [d for refs in parts.box_refs for d in refs]
    shown = list(dict.fromkeys(repr(flat[i]) for i in np.flatnonzero(~equal)[:200].tolist()))[:3]
    return [f"{int((~equal).sum())} of the annotations' description_ids equal no description's id "
            f"(e.g. {', '.join(shown)}; description ids are integers): those box copies are never "
            "looked up, as in the official evaluator"]


def _gt_copy_pairs(box_image: NDArray[np.int64], descr: NDArray[np.int64], equal: NDArray[np.bool_],
                   skeleton: OmniLabelReferences) -> NDArray[np.int64]:
    """The pair of each (box, description it lists) copy (its image, the description and whether
    that equals an id, :func:`_descr_keys`), -1 where the image is unknown or the description not in
    that image's label space."""
    if not len(descr):
        return np.zeros(0, dtype=np.int64)
    idx, img_known = find_ids(skeleton.image_ids, box_image)
    return np.where(img_known & equal, skeleton.pair_of(idx, descr), -1)


def _assemble(parts: _Parts, source: str) -> OmniLabelReferences:
    """Pairs in the official order (image id, then label-space rank), GT copies per pair, pair
    types."""
    image_ids = np.unique(np.asarray(parts.image_ids, dtype=np.int64))
    file_of = dict(zip(parts.image_ids,
                       # an image listed twice: the last entry, as a dict keeps
                       parts.file_names))
    descr_text = parts.descr_text
    pair_image, pair_descr, entry_type = _label_space_pairs(parts, image_ids, source)
    descr_ids = np.asarray(sorted(descr_text), dtype=np.int64)
    words = np.asarray([len(descr_text[d].split()) for d in descr_ids.tolist()], dtype=np.int64)
    # every pair's description is one of descr_ids
    descr_pos = find_ids(descr_ids, pair_descr)[0]
    pair_words = words[descr_pos]
    box_arr = _box_array(parts, source)
    rows = np.repeat(np.arange(len(parts.box_xywh)), [len(r) for r in parts.box_refs]).astype(
        np.int64
    )
    ref_image = np.asarray(parts.box_image, dtype=np.int64)[rows]
    ref_descr, ref_equal = _descr_keys(parts, rows, source)
    notes = list(parts.notes) + _unequal_refs_note(parts, ref_equal)
    # descrIdToNumRefBoxes: every description_ids entry of every box of an evaluated image counts
    # (repeats too)
    at, hit = find_ids(descr_ids, ref_descr[find_ids(image_ids, ref_image)[1] & ref_equal])
    pair_ref_boxes = np.bincount(at[hit], minlength=len(descr_ids)).astype(np.int64)[descr_pos]
    if len(image_ids) < len(parts.image_ids):
        repeated = Counter(parts.image_ids)
        notes.append(f"{len(parts.image_ids) - len(image_ids)} entry(ies) of 'images' repeat an "
                     f"image id (e.g. {[i for i, n in repeated.items() if n > 1][:5]}): each image "
                     "is evaluated once, as the official code keys its images by id")
    if parts.missing_iscrowd:
        notes.append(f"{parts.missing_iscrowd} ground-truth box(es) have no 'iscrowd' and were "
                     "read as 0 (the official evaluator raises KeyError there)")
    n_pairs = len(pair_image)
    if not n_pairs and len(image_ids):
        raise FormatError(f"no image has a label space: none of the {len(descr_text)} "
                          f"description(s) lists any of the {len(image_ids)} image(s), so there is "
                          "nothing to evaluate",
                          file=source,
                          fix="pass the OmniLabel dataset JSON (descriptions with their "
                              "image_ids), e.g. dataset_all_val_v0.1.3.json")
    skeleton = OmniLabelReferences(
        image_ids=image_ids,
        image_source=[schema.source_of(file_of[i]) for i in image_ids.tolist()],
        image_file=[file_of[i] for i in image_ids.tolist()],
        descr_ids=descr_ids,
        descr_text=descr_text,
        pair_image=pair_image,
        pair_descr=pair_descr,
        pair_type=np.zeros(n_pairs, np.int8),
        pair_words=pair_words,
        pair_ref_boxes=np.asarray(pair_ref_boxes, dtype=np.int64),
        gt_pair=np.zeros(0, np.int64),
        gt_box=np.zeros((0, 4)),
        gt_iscrowd=np.zeros(0, bool),
        gt_ignore=np.zeros(0, bool),
        gt_id=np.zeros(0, np.int64),
        has_annotations=parts.has_annotations,
        source=source,
        id_table=parts.id_table,
    )
    pair = _gt_copy_pairs(ref_image, ref_descr, ref_equal, skeleton)
    inside = pair >= 0
    # Pair type: a description is positive in an image when any box of that image lists it (crowd
    # included).
    pair_type = np.where(entry_type == schema.TYPE_C, schema.TYPE_C, schema.TYPE_DN).astype(np.int8)
    positive = np.zeros(n_pairs, dtype=bool)
    positive[pair[inside]] = True
    pair_type[(pair_type == schema.TYPE_DN) & positive] = schema.TYPE_DP
    counts = {"images": len(image_ids), "descriptions": len(descr_text),
              "gt_boxes": len(parts.box_xywh),
              "labelspace_entries": n_pairs, "gt_copies": int(inside.sum()),
              "gt_copies_outside_labelspace": int((~inside).sum())}
    kept = rows[inside]
    return OmniLabelReferences(
        **{
            **skeleton.__dict__,
            "pair_type": pair_type,
            "gt_pair": pair[inside],
            "gt_box": box_arr[kept],
            "gt_iscrowd": np.asarray(parts.box_crowd, dtype=bool).reshape(-1)[kept],
            "gt_ignore": np.asarray(parts.box_ignore, dtype=bool).reshape(-1)[kept],
            "gt_id": np.asarray(parts.box_id, dtype=np.int64).reshape(-1)[kept],
            "counts": counts,
            "notes": notes,
        }
    )


def parse_official(data: Any, source: str = "references") -> OmniLabelReferences:
    """Official dataset JSON -> :class:`OmniLabelReferences` (the ``OmniLabel`` loader's rules, with
    clear errors)."""
    return _assemble(_parts_from_official(data, source), source)


def references_from_rows(rows: list[dict[str, Any]],
                         source: str = "references") -> OmniLabelReferences:
    """Rows of the Hub dataset (``image_id``, ``labelspace``, ``boxes``; ``file_name`` optional) ->
    records.

    The label-space order inside each row is the official one, which is all the pooled ranking
    needs.
    """
    if not rows:
        raise InputError("no reference rows were given", file=source)
    descr_text: dict[int, str] = {}
    ls_image: list[int] = []
    ls_descr: list[int] = []
    ls_rank: list[int] = []
    ls_type: list[int] = []
    parts = _Parts(image_ids=[], file_names=[], descr_text=descr_text, ls_image=ls_image,
                   ls_descr=np.zeros(0, np.int64), ls_rank=np.zeros(0, np.int64),
                   ls_type=np.zeros(0, np.int8))
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or any(row.get(k) is None for k in ("image_id", "labelspace",
                                                                         "boxes")):
            raise FormatError(f"reference {i} needs 'image_id', 'labelspace' and 'boxes'",
                              file=source,
                              fix="pass rows of the OmniLabel Hub dataset (validation split)")
        parts.image_ids.append(row["image_id"])
        parts.file_names.append(str(row.get("file_name") or ""))
        for rank, entry in enumerate(row["labelspace"]):
            kind = entry.get("type")
            is_descr = kind in (1, "description", "object_description")
            if descr_text.get(entry["id"], entry["text"]) != entry["text"]:
                raise FormatError(f"description {entry['id']} has two different texts", file=source,
                                  entry=f"reference {i}")
            descr_text[entry["id"]] = entry["text"]
            ls_type.append(schema.TYPE_DP if is_descr else schema.TYPE_C)
            ls_image.append(row["image_id"])
            ls_descr.append(entry["id"])
            ls_rank.append(rank)
        for box in row["boxes"]:
            parts.box_image.append(row["image_id"])
            parts.box_id.append(box["id"])
            parts.box_xywh.append(box["bbox"])
            if box.get("iscrowd") is None:
                parts.missing_iscrowd += 1
            _add_crowd(parts, box.get("iscrowd") or 0, source, f"reference {i}")
            parts.box_refs.append(list(box["description_ids"]))
    parts.ls_descr = np.asarray(ls_descr, dtype=np.int64)
    parts.ls_rank = np.asarray(ls_rank, dtype=np.int64)
    parts.ls_type = np.asarray(ls_type, dtype=np.int8)
    return _assemble(parts, source)


def load_references(ref: str | os.PathLike, split: str | None = None) -> OmniLabelReferences:
    """Official dataset JSON (``.json`` / ``.json.gz``) or a Hub folder built by vlbench ->
    records."""
    from ...engine.io import read_json

    path = Path(ref)
    if path.is_dir():
        split = split or "validation"
        if split not in schema.SPLITS:
            raise InputError(f"unknown split {split!r}", fix="use validation or test")
        return parse_official(export(path, split=split), source=f"{path} [{split}]")
    data = read_json(path, what="reference file", typed=TypedDataset)
    if isinstance(data, TypedDataset):
        parts = _parts_from_typed(data)
        if parts is not None:
            return _assemble(parts, str(path))
        data = read_json(path, what="reference file")
    return parse_official(data, source=str(path))


# --------------------------------------------------------------------------------------------
# Official JSON -> Hub folder, and back
# --------------------------------------------------------------------------------------------

def _image_rows(data: dict[str, Any], images_root: Path | None, report: BuildReport,
                split: str, skip_bad_images: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    """One Hub row per image (in file order) with its label space and boxes; yields (source,
    row)."""
    labelspace: dict[int, list[dict[str, Any]]] = {}
    for d in data["descriptions"]:
        for img in d["image_ids"]:
            labelspace.setdefault(img, []).append(d)
    boxes: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for pos, a in enumerate(data.get("annotations") or []):
        boxes.setdefault(a["image_id"], []).append((pos, a))
    for pos, img in enumerate(data["images"]):
        own = boxes.get(img["id"], [])
        listed = {d for _, a in own for d in a["description_ids"]}
        name = str(img.get("file_name") or "")
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise FormatError(f"file_name {name!r} points outside the images root",
                              file=str(images_root),
                              entry=f"image {img['id']}",
                              fix="file names are relative, as in the official release")
        path = images_root / name if images_root else None
        image = None
        if path is not None and path.is_file():
            image = image_cell(path, name, skip_bad=skip_bad_images, report=report)[0]
        else:
            report.missing_images.append(img["file_name"])
        source = schema.source_of(img.get("file_name", ""))
        yield (
            source,
            {
                "image": image,
                "image_id": img["id"],
                "file_name": img.get("file_name"),
                "source": source,
                "labelspace": [
                    {
                        "id": d["id"],
                        "text": d["text"],
                        "type": "description"
                        if (d.get("anno_info") or {}).get("type") == "object_description"
                        else "category",
                        "positive": d["id"] in listed,
                        "num_words": len(d["text"].split()),
                    }
                    for d in labelspace.get(img["id"], [])
                ],
                "boxes": [
                    {
                        **{k: a.get(k) for k in _ROW_BOX_FIELDS},
                        "position": p,
                        "extra": extra_fields(a, _BOX_FIELDS),
                    }
                    for p, a in own
                ],
                "position": pos,
                "extra": extra_fields(img, ("id", "file_name")),
            },
        )


def _description_rows(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for d in data["descriptions"]:
        anno = dict(d.get("anno_info") or {})
        rest = {k: v for k, v in d.items() if k not in ("id", "text", "image_ids", "anno_info")}
        anno_rest = {k: v for k, v in anno.items() if k not in ("type", "orig_id", "llm_generated")}
        if anno_rest:
            rest["anno_info"] = anno_rest
        if "anno_info" not in d:
            rest["__no_anno_info__"] = True
        yield {"id": d["id"], "text": d["text"], "type": anno.get("type"),
               "orig_id": anno.get("orig_id"),
               "llm_generated": anno.get("llm_generated"), "image_ids": d["image_ids"],
               "extra": json.dumps(rest, sort_keys=True) if rest else ""}


def build(raw: str | os.PathLike | list, out: str | os.PathLike, *,
          images: str | os.PathLike | None = None,
          allow_missing_images: bool = False, skip_bad_images: bool = False,
          max_shard_bytes: int | None = None) -> BuildReport:
    """Official dataset JSON(s) -> Hub folder. A JSON with ``annotations`` is the validation split,
    one without the test split."""
    from ...engine.hub import (
        MAX_SHARD_BYTES,
        ConfigSpec,
        ShardedParquetWriter,
        SplitSummary,
        card_yaml,
        write_card,
    )
    from .card import card_body, card_metadata

    raws = [Path(p) for p in (raw if isinstance(raw, (list, tuple)) else [raw])]
    out = Path(out)
    images_root = Path(images) if images else None
    if images_root is not None and not images_root.is_dir():
        raise FormatError("the images root does not exist", file=str(images_root))
    if images_root is None and not allow_missing_images:
        raise FormatError("no images root was given: the dataset would hold no image",
                          file=str(raws[0]),
                          fix="pass --images <folder holding coco/, object365/, openimagesv5/>, or "
                              "--allow-missing-images to build the annotations only")
    by_split = _files_by_split(raws)
    if images_root is not None and not allow_missing_images:
        _refuse_missing_images(by_split, images_root)
    report = BuildReport()
    img_feat, descr_feat = schema.image_features(), schema.description_features()
    source_summaries: dict[str, dict[str, SplitSummary]] = {s: {} for s in schema.SOURCES}
    all_summaries, descr_summaries, headers = [], [], {}
    for split in schema.SPLITS:
        if split not in by_split:
            continue
        path, data = by_split[split]
        refuse_repeated_images_in_build(data.get("images"), str(path))
        total = SplitSummary(split)
        report.parts[split] = {}
        for source, summary in _write_images(out, split, data, images_root, report, skip_bad_images,
                                             max_shard_bytes or MAX_SHARD_BYTES, str(path)).items():
            source_summaries[source][split] = summary
            total.num_examples += summary.num_examples
            total.num_bytes += summary.num_bytes
            total.files += summary.files
            report.parts[split][source] = summary.num_examples
            report.files.extend(summary.files)
        all_summaries.append(total)
        report.rows[split] = total.num_examples
        dw = ShardedParquetWriter(out, split, descr_feat, subdir="descriptions", source=str(path))
        dw.write_all(_description_rows(data))
        descr_summaries.append(dw.close())
        report.files.extend(descr_summaries[-1].files)
        headers[split] = json.dumps({k: v for k,
                                     v in data.items() if k not in ("images", "descriptions",
                                                                    "annotations")},
                                    sort_keys=True)
    if report.missing_images and not allow_missing_images:
        raise FormatError(f"{len(report.missing_images)} image file(s) are missing under the "
                          "images root, e.g. "
                          f"{', '.join(report.missing_images[:5])}", file=str(images_root),
                          fix="check --images (the folder holding coco/, object365/, "
                              "openimagesv5/), or pass --allow-missing-images")
    configs = [ConfigSpec("all", img_feat, all_summaries, default=True)]
    configs += [ConfigSpec(source, img_feat, list(by.values())) for source,
                by in source_summaries.items() if by]
    configs.append(ConfigSpec("descriptions", descr_feat, descr_summaries))
    meta = card_yaml(configs=configs,
                     extra={**card_metadata(), "vlbench": {"omnilabel_headers": headers}})
    write_card(out, meta, card_body(report))
    report.files[:0] = ["README.md"]
    return report


#: where each source collection's images come from (the OmniLabel release does not ship them)
_IMAGE_HOMES = {"coco": "COCO val2017 (cocodataset.org)",
                "objects365": "Objects365 (objects365.org)",
                "openimages": "OpenImages v5 (storage.googleapis.com/openimages)",
                "other": "the release's own list"}


def _refuse_missing_images(by_split: dict[str, tuple[Path, dict]], images_root: Path) -> None:
    """Before any shard is written: every image a split names must be under ``images_root``;
    otherwise the missing ones are counted per source collection (with an example and where that
    collection is fetched)."""
    missing: dict[str, list[str]] = {}
    total: dict[str, int] = {}
    for _, data in by_split.values():
        for img in data.get("images") or []:
            name = str(img.get("file_name") or "")
            source = schema.source_of(name)
            total[source] = total.get(source, 0) + 1
            if (
                not name
                or Path(name).is_absolute()
                or ".." in Path(name).parts
                or not (images_root / name).is_file()
            ):
                missing.setdefault(source, []).append(name)
    if missing:
        parts = "; ".join(f"{source}: {len(names):,} of {total[source]:,} (e.g. {names[0]}; from "
                          f"{_IMAGE_HOMES[source]})" for source, names in missing.items())
        raise FormatError(f"{sum(map(len, missing.values())):,} image file(s) are missing under "
                          f"the images root: {parts}", file=str(images_root),
                          fix="fetch them from their collections under their own terms into coco/, "
                              "object365/ and openimagesv5/ of the images root, or pass "
                              "--allow-missing-images")


def _write_images(out: Path, split: str, data: dict, images_root: Path | None, report: BuildReport,
                  skip_bad_images: bool, max_shard_bytes: int, raw: str) -> dict[str, Any]:
    """One split's image rows (from the file ``raw``), one series of shards per image source: source
    -> its ``SplitSummary``."""
    from ...engine.hub import ShardedParquetWriter

    writers: dict[str, ShardedParquetWriter] = {}
    for source, row in _image_rows(data, images_root, report, split, skip_bad_images):
        if source not in writers:
            writers[source] = ShardedParquetWriter(out, split, schema.image_features(),
                                                   subdir=f"data/{split}",
                                                   prefix=source, max_shard_bytes=max_shard_bytes,
                                                   source=raw)
        writers[source].write(row)
    return {source: writer.close() for source, writer in writers.items()}


def _files_by_split(raws: list[Path]) -> dict[str, tuple[Path, dict]]:
    """split -> (file, its JSON), each validated: a JSON with ``annotations`` is the validation
    split, one without it the test split; two files of one split are refused."""
    from ...engine.io import read_json

    by_split: dict[str, tuple[Path, dict]] = {}
    for path in raws:
        data = read_json(path, what="OmniLabel dataset JSON")
        parse_official(data, source=str(path))  # validates; raises on bad input
        _require_integer_ids(data, str(path))
        split = "validation" if "annotations" in data else "test"
        if split in by_split:
            raise InputError(f"two {split} files were given ({by_split[split][0]} and {path})")
        by_split[split] = (path, data)
    return by_split


def _require_integer_ids(data: dict[str, Any], source: str) -> None:
    """A build takes integer image and description ids only
    (:func:`~vlbench.benchmarks.validation.refuse_text_ids_in_build`), and one entry per description
    id: a Hub row keys a label-space entry by its id, so a repeated id could not be told apart from
    its first entry."""
    anns = data.get("annotations") or []
    places = [("an image id", "images", "id", [img["id"] for img in data["images"]]),
              ("an image id", "descriptions", "image_ids",
               [i for d in data["descriptions"] for i in d["image_ids"]]),
              ("an image id", "annotations", "image_id", [a["image_id"] for a in anns]),
              ("a description id", "descriptions", "id", [d["id"] for d in data["descriptions"]]),
              ("a description id", "annotations", "description_ids",
               [i for a in anns for i in a["description_ids"]])]
    for what, where, key, values in places:
        odd = [v for v in values if not isinstance(v, int) or isinstance(v, bool)]
        if odd:
            refuse_text_ids_in_build(f"{what} in '{where}' ('{key}')", odd[0], source, where)
    repeated = [(i, n) for i, n in Counter(d["id"] for d in data["descriptions"]).items() if n > 1]
    if repeated:
        raise FormatError(f"description id {repeated[0][0]} is given to {repeated[0][1]} "
                          "descriptions: a build "
                          "needs one entry per description id", file=source, entry="descriptions",
                          fix="give each description its own id (scoring reads repeated ids as the "
                              "official loader does; building needs them distinct)")


def _read_rows(files: list[Path], columns: list[str] | None = None) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for f in files:
        parquet = pq.ParquetFile(f)
        cols = [
            c for c in (columns or parquet.schema_arrow.names) if c in parquet.schema_arrow.names
        ]
        rows.extend(parquet.read(columns=cols).to_pylist())
    return rows


def _card_headers(folder: Path) -> dict[str, str]:
    """The official JSON headers (everything but images, descriptions, annotations) kept in the
    card, per split."""
    return (read_card_metadata(folder).get("vlbench") or {}).get("omnilabel_headers") or {}


def export(folder: str | os.PathLike, split: str = "validation") -> dict[str, Any]:
    """Hub folder -> the official dataset JSON of ``split`` (inverse of :func:`build`, key order
    aside)."""
    folder = Path(folder)
    image_files = sorted((folder / "data" / split).glob("*.parquet"))
    descr_files = sorted((folder / "descriptions").glob(f"{split}-*.parquet"))
    if not image_files or not descr_files:
        raise FormatError(f"no {split} data in this folder", file=str(folder),
                          fix="build it with 'vlbench build omnilabel'")
    columns = ["image_id", "file_name", "boxes", "position", "extra"]
    images = sorted(_read_rows(image_files, columns), key=lambda r: r["position"])
    header = json.loads(_card_headers(folder).get(split, "{}"))
    out: dict[str, Any] = dict(header)
    out["images"] = [{"id": r["image_id"], "file_name": r["file_name"],
                      **(json.loads(r["extra"]) if r["extra"] else {})}
                     for r in images]
    descriptions = []
    for d in _read_rows(descr_files):
        rest = json.loads(d["extra"]) if d["extra"] else {}
        anno = {"type": d["type"]} if d["type"] is not None else {}
        for key in ("orig_id", "llm_generated"):
            if d[key] is not None:
                anno[key] = d[key]
        anno.update(rest.pop("anno_info", {}))
        entry = {"id": d["id"], "text": d["text"], "image_ids": d["image_ids"], **rest}
        if not rest.pop("__no_anno_info__", False):
            entry["anno_info"] = anno
        entry.pop("__no_anno_info__", None)
        descriptions.append(entry)
    out["descriptions"] = descriptions
    if split == "validation":
        boxes = []
        for r in images:
            for b in r["boxes"]:
                entry = {k: b[k] for k in _ROW_BOX_FIELDS if b[k] is not None}
                entry["image_id"] = r["image_id"]
                entry.update(json.loads(b["extra"]) if b["extra"] else {})
                boxes.append((b["position"], entry))
        out["annotations"] = [entry for _, entry in sorted(boxes, key=lambda t: t[0])]
    return out
