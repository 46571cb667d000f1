"""Plain COCO bbox evaluation of two files, as pycocotools' ``COCO``, ``loadRes`` and
``COCOeval(..., "bbox")`` read and score them: the twelve stats, the precision and recall arrays.

The engine (:func:`vlbench.engine.cocoeval.evaluate_bbox`) reproduces ``COCOeval`` on arrays; this
module reads an instances file and a results file straight into those arrays: a file of the usual
shape decoded once into typed records (msgspec: no dict per detection; a results file's values
checked by their types while decoding, then one ``np.fromiter`` per column), any other file parsed
as plain JSON (orjson) so that what is wrong in it can be named. Whatever pycocotools would refuse
(a results entry on an image the instances file lacks: ``loadRes``' assertion; a missing key: its
KeyError) is an error naming the file, the entry and the fix. Example::

    from vlbench.library.coco import evaluate_files
    result = evaluate_files("instances_val2017.json", "detections.json")
    print(result.stats["AP"], result.stats["AP50"])
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from ..benchmarks.validation import (
    TypedCocoResult,
    coded_ids,
    integral_ids,
    read_boxes,
    read_scores,
    sorted_id_codes,
    typed_coco_columns,
)
from ..engine.cocoeval import CocoEvalResult, Params, evaluate_bbox
from ..engine.errors import FormatError
from ..engine.io import read_json

__all__ = ["read_instances", "read_results", "evaluate_files"]

#: the keys ``COCOeval(..., "bbox")`` reads from a ground-truth annotation and from a result
ANNOTATION_KEYS = ("id", "image_id", "category_id", "bbox", "area", "iscrowd")
RESULT_KEYS = ("image_id", "category_id", "bbox", "score")


Number = int | float


class _Id(msgspec.Struct, gc=False):
    id: int


class _Annotation(msgspec.Struct, gc=False):
    id: int
    image_id: int
    category_id: int
    bbox: list[Number]
    area: Number
    iscrowd: int


class _Instances(msgspec.Struct, gc=False):
    """The parts of an instances file ``COCO`` and ``COCOeval(..., "bbox")`` read."""

    images: list[_Id]
    annotations: list[_Annotation]
    categories: list[_Id]


def _fields(records: list[Any], keys: tuple[str, ...]) -> dict[str, list[Any]]:
    """Typed records -> one list per key, the values as ``[e[key] for e in entries]`` gives them."""
    return {key: [getattr(r, key) for r in records] for key in keys}


def _column(entries: list[Any], key: str, path: str, what: str, fix: str) -> list[Any]:
    """``[e[key] for e in entries]``, or an error naming the first entry without it."""
    try:
        return [e[key] for e in entries]
    except (KeyError, TypeError, IndexError):
        for i, e in enumerate(entries):
            if not isinstance(e, dict) or key not in e:
                raise FormatError(f"{what} {i} has no {key!r} (pycocotools reads it)", file=path,
                                  entry=f"{what} {i}", fix=fix) from None
        raise


def _list_of(data: Any, key: str | None, path: str, fix: str) -> list[Any]:
    """``data[key]`` (or ``data``) as a list, or an error saying what the file should hold."""
    value = (
        data.get(key)
        if key is not None and isinstance(data, dict)
        else (data if key is None else None)
    )
    if not isinstance(value, list):
        where = f"a list under {key!r}" if key else "a list of detections"
        raise FormatError(f"this file should hold {where}", file=path, fix=fix)
    return value


def read_instances(path: str | os.PathLike
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64], dict[str, NDArray],
                              dict[Any, int] | None]:
    """A COCO instances file -> (image ids, category ids, the annotations as ``evaluate_bbox``'s GT
    columns, the table of image ids written as text). Image ids that are not plain integers
    (``"000123"``) are coded in the order ``COCOeval`` sorts them
    (:func:`~vlbench.benchmarks.validation.sorted_id_codes`: text as text, so ``"10"`` before
    ``"9"``); an image listed twice is one image, as ``COCO`` keys its images by id."""
    source = str(path)
    data = read_json(path, what="instances file", typed=_Instances)
    fix = (
        "pass a COCO instances file (images, annotations, categories), e.g. instances_val2017.json"
    )
    if isinstance(data, _Instances):
        listed = _fields(data.images, ("id",))["id"]
        category_list = _fields(data.categories, ("id",))["id"]
        columns = _fields(data.annotations, ANNOTATION_KEYS)
    else:
        images, anns = _list_of(data, "images", source, fix), _list_of(data, "annotations", source,
                                                                       fix)
        categories = _list_of(data, "categories", source, fix)
        listed = _column(images, "id", source, "image", fix)
        category_list = _column(categories, "id", source, "category", fix)
        columns = {key: _column(anns, key, source, "annotation", fix) for key in ANNOTATION_KEYS}
    image_ids, table = sorted_id_codes(listed, source, "image id", "images")
    category_ids = integral_ids(category_list, source, "id", error=FormatError)
    image_of_annotation, known = coded_ids(columns["image_id"], table, source, "image_id",
                                           error=FormatError)
    gt = {"image_id": np.where(known, image_of_annotation,
                               -1),     # an unlisted image is never evaluated
          "category_id": integral_ids(columns["category_id"], source, "category_id",
                                      error=FormatError),
          "id": integral_ids(columns["id"], source, "id", error=FormatError)}
    boxes, _ = read_boxes(columns["bbox"], source, protocol="official")
    gt.update(bbox=boxes, area=np.asarray(columns["area"], dtype=np.float64),
              iscrowd=np.asarray(columns["iscrowd"]) != 0)
    return np.unique(image_ids), category_ids, gt, table


def read_results(path: str | os.PathLike, image_ids: NDArray[np.int64],
                 id_table: dict[Any, int] | None = None) -> dict[str, NDArray]:
    """A COCO results file (``[{image_id, category_id, bbox, score}, ...]``) -> ``evaluate_bbox``'s
    detection columns. Every result must be on an image of ``image_ids`` (``loadRes`` asserts it);
    ``id_table``: the instances file's table of text image ids (:func:`read_instances`), through
    which results name their images."""
    source = str(path)
    fix = ('write the detections as COCO results: [{"image_id", "category_id", '
           '"bbox": [x, y, w, h], "score"}]')
    dets = _list_of(read_json(path, what="results file", typed=list[TypedCocoResult]), None, source,
                    fix)
    if not dets:
        raise FormatError("the results file holds no detections (pycocotools' loadRes cannot read "
                          "an empty list)",
                          file=source, fix="score a file with at least one detection")
    # the usual shape, every value already checked while decoding
    if isinstance(dets[0], TypedCocoResult):
        image, category, boxes, score = typed_coco_columns(dets)
        dt = {"image_id": image, "category_id": category, "bbox": boxes, "score": score}
        written: list[Any] = image.tolist()
    else:
        dt = _result_columns(dets, source, fix, id_table)
        written = [d["image_id"] for d in dets]
    if id_table is not None:
        codes, known = coded_ids(written, id_table, source, "image_id")
        dt["image_id"] = np.where(known, codes, -1)
    unknown = np.flatnonzero(~np.isin(dt["image_id"], image_ids))
    if len(unknown):
        shown = written[unknown[0]]
        raise FormatError(f"{len(unknown)} result(s) are on images the instances file does not "
                          f"have (e.g. image_id {shown!r}); pycocotools' loadRes refuses such a "
                          "file", file=source,
                          entry=f"result {int(unknown[0])}",
                          fix="score it against the instances file of its split")
    return dt


def _result_columns(dets: list[Any], source: str, fix: str,
                    id_table: dict[Any, int] | None) -> dict[str, NDArray]:
    """The detection columns of results parsed as dicts, every value checked: the first bad one is
    named (image ids are coded by the caller where the instances file writes them as text)."""
    columns = {key: _column(dets, key, source, "result", fix) for key in RESULT_KEYS}
    image = (integral_ids(columns["image_id"], source, "image_id") if id_table is None
             else np.zeros(len(dets), dtype=np.int64))
    boxes, _ = read_boxes(columns["bbox"], source, protocol="official")
    scores = read_scores(columns["score"], source, protocol="official")
    if scores.text.any():
        first = int(np.flatnonzero(scores.text)[0])
        raise FormatError(f"score {columns['score'][first]!r} is text (pycocotools cannot rank it)",
                          file=source, entry=f"result {first}", fix="write scores as numbers")
    dt = {"image_id": image,
          "category_id": integral_ids(columns["category_id"], source, "category_id"),
          "bbox": boxes, "score": scores.value}
    # integers beyond 2^53, which numpy ranks exactly in an all-integer list
    if scores.exact is not None:
        dt.update(score_exact=scores.exact, score_is_int=scores.is_int)
    return dt


def evaluate_files(instances: str | os.PathLike, results: str | os.PathLike,
                   params: Params | None = None) -> CocoEvalResult:
    """``COCOeval(COCO(instances), COCO(instances).loadRes(results), "bbox")``: evaluate,
    accumulate, summarize (``params``: COCOeval's defaults unless given)."""
    image_ids, category_ids, gt, id_table = read_instances(instances)
    return evaluate_bbox(image_ids, category_ids, gt, read_results(results, image_ids, id_table),
                         params or Params())
