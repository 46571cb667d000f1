"""Ref-L4 dataset card: YAML metadata and prose (the full card comes with the publishing work)."""

from __future__ import annotations

from typing import Any

from ..benchmark import Release
from . import schema

CITATION = """@article{chen2024revisiting,
  title   = {Revisiting Referring Expression Comprehension Evaluation in the Era of Large Multimodal Models},
  author  = {Chen, Jierun and Wei, Fangyun and Zhao, Jinjing and Song, Sizhe and Wu, Bohuai and Peng, Zhuoxuan and Chan, S.-H. Gary and Zhang, Hongyang},
  journal = {arXiv preprint arXiv:2406.16866},
  year    = {2024}
}"""


QUIRKS = (
    "A hit is IoU strictly greater than the threshold, computed in float32 (an IoU of exactly 0.5 is a miss).",
    "mAcc averages over IoU 0.50:0.05:0.95 (ten thresholds), as the code and README do; the paper text says 0.9.",
    "Only the exact string \"xywh\" is read as xywh; any other format string (\"XYWH\" too) is read as xyxy.",
    "Ten entries of the RefCOCO -> Objects365 class table point one id too low (bird -> Bus, bowl -> Potted Plant, "
    "dining table -> Cake, ...): only the class-average metrics change; vlbench's protocol=\"corrected\" fixes them.",
    "A size bucket without ground truth crashes the official scorer; vlbench reports null for it.",
    "The class key is an exact look-up in the official table: \"refcoco_016\" or ids with non-ASCII digits are "
    "classes of their own.",
    "Prediction ids no row id can equal (strings, non-integral numbers) are ignored (vlbench counts them); reference "
    "rows sharing an id are each scored against that id's prediction.",
    "A predicted box with a NaN or infinite coordinate is a miss (the official IoU is NaN or 0), with a warning naming "
    "its id; --protocol corrected refuses it.",
)


def card_metadata() -> dict[str, Any]:
    """The dataset card's YAML metadata (license, names, task)."""
    return {
        "license": "cc-by-nc-4.0",
        "pretty_name": "Ref-L4",
        "language": ["en"],
        "task_categories": ["object-detection"],
        "tags": ["referring-expression-comprehension", "visual-grounding", "vlbench"],
    }


def card_body(report: Any) -> str:
    """The dataset card's prose for a build (sizes from its report)."""
    fields = "\n".join(f"| `{name}` | {text} |" for name, text in schema.FIELD_DESCRIPTIONS.items())
    sizes = ", ".join(f"{split}: {n:,} rows" for split, n in report.rows.items())
    quirks = "\n".join(f"- {q}" for q in QUIRKS)
    return f"""
# Ref-L4

Ref-L4 is a referring expression comprehension benchmark with long expressions (on average 24
words): given an image and an expression, predict the box of the one object it refers to. This
copy was built by `vlbench build ref_l4` from the official release (`ref-l4-val.parquet`,
`ref-l4-test.parquet`, `images.tar.gz` of `JierunChen/Ref-L4`) with the images embedded.

Sizes: {sizes}; {report.images:,} distinct images.

## Fields

Boxes are in **pixels, `[x, y, w, h]`** (x, y = top-left corner), float64.

| field | description |
|---|---|
{fields}

## Scoring

Accuracy at IoU > 0.5 / 0.75 / 0.9 (strict), mAcc over IoU 0.50:0.05:0.95, by size and by class,
exactly as the official `RefL4Evaluator`:

```python
import evaluate
import vlbench
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", split="val")
metric = evaluate.load(vlbench.metric_path("ref_l4"))  # installed with vlbench (pip install vlbench)
for row in ds:
    metric.add(prediction={{"pred_bbox": row["bbox"], "format": "xywh"}}, reference=row)
print(metric.compute())
```

or `vlbench score ref_l4 --references path/to/folder --predictions preds.json --split val`.

## Known quirks of the official scorer (reproduced by vlbench's default protocol)

{quirks}

## License and citation

Annotations: CC BY-NC 4.0. Images keep the licenses of their sources (COCO: CC BY 4.0;
Objects365: CC BY 4.0).

```bibtex
{CITATION}
```
"""


#: the official scorer the numbers reproduce, at the version the golden cases (tests/data) were scored with
OFFICIAL_SCORER = (
    "`JierunChen/Ref-L4`'s `ref_l4/evaluation.py` at commit bae942c8 (package `ref_l4` 1.1;"
    " scoring unchanged since 7476ccd9)"
)

#: the official release: the authors' Hub dataset (annotations updated after publication, so a number names the
#: commit it was scored on; `main` resolves to one, recorded in the build's card)
RELEASE = Release(
    home="hf://JierunChen/Ref-L4", files=("ref-l4-val.parquet", "ref-l4-test.parquet", "images.tar.gz"),
    license="CC BY-NC 4.0", size="about 3.5 GB (images.tar.gz)",
    by_hand="download ref-l4-val.parquet, ref-l4-test.parquet and images.tar.gz from the Hub dataset "
            "JierunChen/Ref-L4 into one folder and pass it as --raw")
