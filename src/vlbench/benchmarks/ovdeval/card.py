"""OVDEval dataset card: YAML metadata and prose."""

from __future__ import annotations

from typing import Any

from ..benchmark import Release
from . import schema

CITATION = """@inproceedings{yao2024evaluate,
  title     = {How to Evaluate the Generalization of Detection? A Benchmark for Comprehensive Open-Vocabulary Detection},
  author    = {Yao, Yiyang and Liu, Peng and Zhao, Tiancheng and Zhang, Qianqian and Liao, Jiajia and Fang, Chunxin and Lee, Kyusong and Wang, Qing},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year      = {2024}
}"""


QUIRKS = (
    "The suppression is class-ignored and ground-truth guided: among all predictions of any label with IoU > 0.5 "
    "(strict) to a GT box only the top-scoring one survives.",
    "Among equal top scores the official order is numpy's unstable sort (CPU-dependent); vlbench keeps the later "
    "prediction and counts such decisions.",
    "Categories without ground truth drop out of the mean, so their false positives cost nothing in plain AP.",
    "A detection matched to the ground-truth box with annotation id 0 counts as a false positive (pycocotools); the "
    "published files start ids at 0.",
    "Small / medium / large use the file's area field, which is not w*h.",
    "Ground-truth annotations of images not listed in 'images' are ignored (pycocotools never looks them up).",
    "Annotations sharing an id are all evaluated as the last annotation with that id (pycocotools' id index); the "
    "suppression uses them as written.",
    "Ids given as integral floats (3.0) act as the integers.",
    "A category_id given as the category's name is no category id officially: such predictions take part in the "
    "suppression and are never scored (a loud warning names them); --protocol corrected resolves names to ids.",
    "Integer scores beyond 2^53 rank exactly where the official arrays are int64 (an image's scores, a pair's or a "
    "ranking's all integers) and as float64 where a float or an empty per-image list joins them.",
    "NaN scores rank first in the suppression (its reversed argsort) and last in COCOeval; a NaN coordinate fails the "
    "suppression's IoU test and takes pycocotools' fmin/fmax IoU, where a NaN IoU matches and hands the match to every "
    "later GT; booleans score 1 / 0; a text score compares as text in its image's suppression (and stops the official "
    "scorer if its category has GT). Each kind is named in a warning; --protocol corrected refuses them.",
)


def card_metadata() -> dict[str, Any]:
    """The dataset card's YAML metadata (license, names, task)."""
    return {
        "license": "openrail",
        "pretty_name": "OVDEval",
        "language": ["en"],
        "task_categories": ["object-detection", "zero-shot-object-detection"],
        "tags": ["open-vocabulary-detection", "hard-negatives", "vlbench"],
    }


def card_body(report: Any) -> str:
    """The dataset card's prose for a build (sizes from its report)."""
    fields = "\n".join(f"| `{k}` | {v} |" for k, v in schema.FIELD_DESCRIPTIONS.items())
    sizes = ", ".join(f"{name} {n:,}" for name, n in report.rows.items())
    aspects = "; ".join(f"{a}: {', '.join(m)}" for a, m in schema.ASPECTS.items())
    quirks = "\n".join(f"- {q}" for q in QUIRKS)
    return f"""
# OVDEval

OVDEval tests open-vocabulary detectors on nine sub-datasets with **hard negatives**: every image
lists positive labels (`text`) and labels that are close but wrong (`neg_text`, e.g. "blue car" on
a red car). One config per sub-dataset, split `test` (images: {sizes}), and the default config `all` holding
every sub-dataset's rows with a `sub_dataset` column: `load_dataset(<repo>, split="test")` loads them all,
`load_dataset(<repo>, "color", split="test")` one. Aspects: {aspects}.

## Fields

Boxes are in **pixels, `[x, y, w, h]`**.

| field | description |
|---|---|
{fields}

## Scoring

NMS-AP (the official `eval.py`): per image, for every ground-truth box, of all predictions of any
label with IoU > 0.5 only the highest-scoring one survives; then COCO AP. A detector that puts a
confident hard-negative label on an object loses the correct detection, which plain AP would not
punish. Use `evaluate.load(vlbench.metric_path("ovdeval"))` or
`vlbench score ovdeval --references <this folder> --predictions preds_dir/`.

## Known quirks of the official scorer (reproduced by vlbench's default protocol)

{quirks}

## License and citation

The Hub distribution `omlab/OVDEval` states license openrail; images keep the licenses of their
sources.

```bibtex
{CITATION}
```
"""


#: the official scorer the numbers reproduce, at the version the golden cases (tests/data) were scored with
OFFICIAL_SCORER = (
    "`om-ai-lab/OVDEval`'s `eval.py` (unchanged since commit 40c12fe8; read at 2ba0aa95) "
    "over pycocotools 2.0.11"
)

#: the official release: the authors' Hub dataset, flat (<sub-dataset>.json and <sub-dataset>.tar.gz), at the commit
#: whose files ../shared/realdata/ovdeval/PROVENANCE.md lists: eight annotation files, no coco.json (the COCO
#: sub-dataset's files are fetched if a revision has them, and their absence is said)
RELEASE = Release(
    home="hf://omlab/OVDEval",
    files=tuple(f"{name}.{ext}" for name in ("celebrity", "color", "landmark", "logo", "material", "negation",
                                             "position", "relationship") for ext in ("json", "tar.gz")),
    optional=("coco.json", "coco.tar.gz"),
    revision="cf64c13994be15ce6a982967db17f5def38822ed",
    license="OpenRAIL", size="several GB (e.g. material.tar.gz 642 MB)",
    by_hand="download the <sub-dataset>.json and <sub-dataset>.tar.gz files of the Hub dataset omlab/OVDEval "
            "into one folder and pass it as --raw")
