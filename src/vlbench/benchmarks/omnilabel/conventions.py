"""OmniLabel's convention check (:mod:`vlbench.benchmarks.box_conventions`): the first images' GT
boxes per (image, description) against the file's boxes read as written (``[x, y, w, h]`` pixels)
and as xyxy pixels. The dataset JSON gives no image sizes, so the grid readings are not compared
(None). The official number stays the scorer's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.errors import VlbenchError
from .. import box_conventions
from .records import OmniLabelReferences

__all__ = ["key", "readings", "fix"]

key = box_conventions.KEY
fix = box_conventions.fix


def readings(refs: OmniLabelReferences, predictions: Any,
             options: Any = None) -> dict[str, float | None]:
    """R@0.5 (any score) as written and under every other reading, over the first images with GT."""
    from .scorer import parse_predictions

    gt_image = refs.pair_image[refs.gt_pair]                   # image indices
    images = box_conventions.sample_images(gt_image)
    written = {refs.image_id(i) for i in images}               # the ids as the files write them
    try:
        dets, _, _ = parse_predictions(box_conventions.entries_of_images(predictions, written),
                                       refs)
    except VlbenchError:        # the scorer has said what is wrong with the file
        return {}
    keep = ~refs.gt_ignore & np.isin(gt_image, list(images))
    return box_conventions.readings(refs.gt_pair[keep], refs.gt_box[keep], dets.pair, dets.box_xywh,
                                    None)
