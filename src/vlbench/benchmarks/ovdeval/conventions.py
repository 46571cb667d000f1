"""OVDEval's convention check (:mod:`vlbench.benchmarks.box_conventions`): each sub-dataset's first
images, their GT boxes per (image, category) against the file's boxes read as written (COCO ``[x, y,
w, h]`` pixels) and as the other common conventions (the grid readings use the images' ``width`` /
``height``). A folder of sub-dataset files is read as one. The official number stays the
scorer's."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...engine.errors import VlbenchError
from .. import box_conventions
from .records import OVDEvalReferences, PredictionFolder

__all__ = ["key", "readings", "fix"]

key = box_conventions.KEY
fix = box_conventions.fix


def _lists(refs: OVDEvalReferences, predictions: Any, options: Any) -> list[tuple[Any, Any]]:
    """(sub-dataset records, its prediction list) pairs, as the scorer pairs them."""
    subsets = refs.subsets
    name = getattr(options, "sub_dataset", None)
    if name in subsets:
        subsets = {name: subsets[name]}
    if isinstance(predictions, PredictionFolder):
        predictions = predictions.entries
    if isinstance(predictions, dict):
        return [(subsets[n], predictions[n]) for n in subsets if n in predictions]
    return [(next(iter(subsets.values())), predictions)] if len(subsets) == 1 else []


def _row_keys(rows: NDArray[np.int64]) -> NDArray[np.int64]:
    """One integer per row, equal exactly for equal rows: the columns' dense ranks in mixed radix
    (replaces ``np.unique(rows, axis=0)``, which sorts the rows as byte strings). The product
    of the columns' distinct counts must fit int64: here sub-datasets x sampled images x
    categories."""
    key = np.zeros(len(rows), dtype=np.int64)
    for column in rows.T:
        values, rank = np.unique(column, return_inverse=True)
        key = key * len(values) + rank.reshape(-1)
    return key


def readings(refs: OVDEvalReferences, predictions: Any,
             options: Any = None) -> dict[str, float | None]:
    """R@0.5 (any score) as written and under every other reading, over each sub-dataset's first
    images."""
    from .scorer import parse_predictions

    g_keys, g_boxes, d_keys, d_numbers, d_sizes = [], [], [], [], []
    for s, (gt, entries) in enumerate(_lists(refs, predictions, options)):
        images = box_conventions.sample_images(gt.ann_image)
        try:
            preds = parse_predictions(box_conventions.entries_of_images(entries, images), gt)
        except VlbenchError:        # the scorer has said what is wrong with the file
            return {}
        chosen = np.isin(gt.ann_image, list(images)) & ~gt.ann_iscrowd
        g_keys.append(np.column_stack([np.full(chosen.sum(), s), gt.ann_image[chosen],
                                       gt.ann_category[chosen]]))
        g_boxes.append(gt.ann_box[chosen])
        d_keys.append(np.column_stack([np.full(len(preds.image_id), s), preds.image_id,
                                       preds.category_id]))
        d_numbers.append(preds.box_xywh)
        row = np.searchsorted(gt.image_ids, preds.image_id)
        d_sizes.append(gt.image_wh[row] if gt.image_wh is not None else np.full((len(row), 2),
                                                                                np.nan))
    if not g_keys:
        return {}
    key_index = _row_keys(np.concatenate(g_keys + d_keys))
    n_gt = sum(len(k) for k in g_keys)
    sizes = np.concatenate(d_sizes)
    return box_conventions.readings(key_index[:n_gt], np.concatenate(g_boxes), key_index[n_gt:],
                                    np.concatenate(d_numbers),
                                    None if np.isnan(sizes).all() else sizes)
