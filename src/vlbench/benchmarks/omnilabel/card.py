"""OmniLabel dataset card: YAML metadata and prose."""

from __future__ import annotations

from typing import Any

from ..benchmark import Release
from . import schema

CITATION = """@inproceedings{schulter2023omnilabel,
  title     = {OmniLabel: A Challenging Benchmark for Language-Based Object Detection},
  author    = {Schulter, Samuel and Kumar B G, Vijay and Suh, Yumin and Dafnis, Konstantinos M. and Zhang, Zhixing and Zhao, Shiyu and Metaxas, Dimitris},
  booktitle = {Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)},
  year      = {2023}
}"""


QUIRKS = (
    "AP is pooled per description group (one ranking for all (image, description) pairs), not averaged per description.",
    "A confident detection for a negative description is a false positive that lowers the whole group's precision.",
    "A detection matched to a ground-truth box whose annotation id is 0 counts as a false positive (pycocotools).",
    "The harmonic mean carries +1e-5 in its denominator, so perfect predictions give 99.9995, not 100.",
    "Predictions for unknown images or for descriptions outside the image's label space are dropped silently "
    "(vlbench counts them and warns).",
    "Predicted boxes with zero or negative width or height are scored: IoU 0 with every ground-truth box, so false "
    "positives (vlbench counts them and warns).",
    "Ids are joined by equality, as the official dict look-ups join them: integral floats (1.0) and booleans (true) "
    "act as the integers 1; a text id (\"1\") where the references write integers, 1.5 or null equals no id, so the "
    "entry (a prediction, or a box's copy for that description) is never looked up (vlbench counts such drops and "
    "warns). Description ids in the references must be integers (omnilabeltools asserts it); a repeated description "
    "id keeps each entry's images and type, and the last entry's text gives the word count. An iscrowd given as a "
    "string marks the box ignored by its truthiness (\"0\" is truthy) but is read with int() for IoU and matching.",
    "A description referred to by more than 100,000 ground-truth boxes drops out of every group (the groups' "
    "\"boxes\": [0, 1e5] filter).",
    "Integer scores beyond 2^53 rank exactly where the official arrays are int64 (a pair's or a group's scores all "
    "integers) and as float64 where a float or an empty per-image list joins them.",
    "NaN scores rank last; a NaN coordinate takes pycocotools' fmin/fmax IoU (a NaN IoU matches and hands the match to "
    "every later GT) and area max(0, w*h) = 0; booleans score 1 / 0; text scores outside the label space are never "
    "compared. Each kind is named in a warning; --protocol corrected refuses them.",
)


def card_metadata() -> dict[str, Any]:
    """The dataset card's YAML metadata (license, names, task)."""
    return {
        "license": "other",
        "license_name": "omnilabel-annotations-unspecified",
        "pretty_name": "OmniLabel",
        "language": ["en"],
        "task_categories": ["object-detection", "zero-shot-object-detection"],
        "tags": ["language-based-object-detection", "referring-expressions", "open-vocabulary", "vlbench"],
    }


def card_body(report: Any) -> str:
    """The dataset card's prose for a build (sizes from its report)."""
    fields = "\n".join(f"| `{k}` | {v} |" for k, v in schema.FIELD_DESCRIPTIONS.items())
    sizes = "; ".join(f"{split}: {n:,} images" for split, n in report.rows.items())
    quirks = "\n".join(f"- {q}" for q in QUIRKS)
    return f"""
# OmniLabel

OmniLabel evaluates language-based object detection: every image comes with its own label space of
plain category names and free-form object descriptions, some of which refer to nothing in the image
(negative descriptions). Built by `vlbench build omnilabel` from the official dataset JSON; {sizes}.

Configs: `all` (default), one per image source (`coco`, `objects365`, `openimages`), and
`descriptions` (the official `descriptions` array, one row each, for lossless export).

## Fields

Boxes are in **pixels, `[x, y, w, h]`**.

| field | description |
|---|---|
{fields}

## Scoring

AP is computed COCO-style per (image, description) pair but **pooled**: all pairs of a group
(`categ`, `descr`, `descr-pos`, `descr-s/m/l`) share one score ranking. The headline AP is the
harmonic mean of AP_categ and AP_descr. Use `evaluate.load(vlbench.metric_path("omnilabel"))` or
`vlbench score omnilabel --references <this folder> --predictions preds.json`.
The test split has no public boxes (the OmniLabel test server never launched): it can be used for
inference, not scored.

## Known quirks of the official scorer (reproduced by vlbench's default protocol)

{quirks}

## License and citation

The annotation license is not stated by the OmniLabel release; images keep the licenses of COCO,
Objects365 and OpenImages v5.

```bibtex
{CITATION}
```
"""


#: the official scorer the numbers reproduce, at the version the golden cases (tests/data) were scored with
OFFICIAL_SCORER = (
    "`samschulter/omnilabeltools` at commit bfd742a9 (package `omnilabeltools` 0.1) over "
    "pycocotools 2.0.11"
)

#: the official dataset JSONs (omnilabel.org); the images come from COCO val2017, Objects365 and OpenImages v5
RELEASE = Release(
    home="https://www.omnilabel.org/dataset/download",
    license="the annotations' terms on omnilabel.org; images under COCO, Objects365 and OpenImages terms",
    size="about 30 MB (the validation JSON); images from three collections",
    by_hand="download dataset_all_val_v0.1.3.json from omnilabel.org, fetch the images from COCO val2017, "
            "Objects365 and OpenImages v5 under their own terms into coco/, object365/ and openimagesv5/, then pass "
            "--raw <the JSON> --images-root <folder>")
