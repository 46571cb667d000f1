"""nocaps dataset card."""

from __future__ import annotations

from typing import Any

from ..benchmark import Release
from . import schema

CITATION = """@inproceedings{agrawal2019nocaps,
  title     = {nocaps: novel object captioning at scale},
  author    = {Agrawal, Harsh and Desai, Karan and Wang, Yufei and Chen, Xinlei and Jain, Rishabh and Johnson, Mark and Batra, Dhruv and Parikh, Devi and Lee, Stefan and Anderson, Peter},
  booktitle = {Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)},
  year      = {2019}
}"""


QUIRKS = (
    "The PTB tokenizer's lower-cased bracket tokens (-lrb-, -rrb-) are not in the toolkit's punctuation filter and "
    "stay in the text.",
    "CIDEr-D's document frequencies come from the images scored together, so per-domain CIDEr depends on the "
    "protocol (one table for the split, vlbench's default, or one per domain).",
    "A caption or reference holding a carriage return, U+2028, U+2029, VT or FF shifts every later caption onto the "
    "wrong image in the toolkit's tokenizer; vlbench reproduces the shifted numbers under protocol=\"official\" "
    "(with a warning naming the captions and the corrected CIDEr beside) and replaces them by spaces under "
    "\"corrected\".",
    "The toolkit tokenizes all captions as one stream, so where a caption holds such a line break the numbers "
    "depend on the order of the images: the official order is the file's, which a built dataset's rows keep; feed "
    "the evaluate module's add / add_batch in that order (vlbench's warning says when the order matters).",
    "With one toolkit run per domain (cider_idf=\"subset\"), each domain is tokenized on its own, which can change "
    "its tokens (a line-final initial depends on the next caption).",
    "Image ids given as integral floats (7.0) act as the integers.",
    "The tokenizer reads all captions as one stream: a line-final initial (\"letter S.\") loses its period when the "
    "next caption starts with A, An or The.",
    "SPICE needs Java and Stanford CoreNLP 3.6.0; the toolkit downloads it at run time, vlbench never does.",
)


def card_metadata() -> dict[str, Any]:
    """The dataset card's YAML metadata (license, names, task)."""
    return {"license": "cc-by-2.0", "pretty_name": "nocaps", "language": ["en"], "task_categories": ["image-to-text"],
            "tags": ["image-captioning", "novel-object-captioning", "vlbench"]}


def card_body(report: Any) -> str:
    """The dataset card's prose for a build (sizes from its report)."""
    fields = "\n".join(f"| `{k}` | {v} |" for k, v in schema.FIELD_DESCRIPTIONS.items())
    sizes = "; ".join(line for line in report.lines() if not line.startswith("missing"))
    quirks = "\n".join(f"- {q}" for q in QUIRKS)
    return f"""
# nocaps

Novel object captioning on Open Images: the validation split has 10 reference captions per image
and a `domain` label (in-domain: COCO classes only; near-domain: both; out-domain: novel classes
only), kept here as a class label so the per-domain breakdown is one `filter` away. The test
split's captions are private: it is there for inference, and scoring it goes through the official
nocaps evaluation server. Built by `vlbench build nocaps`; {sizes}.

## Fields

| field | description |
|---|---|
{fields}

## Scoring

BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE of the COCO caption toolkit, overall and per domain:
`evaluate.load(vlbench.metric_path("nocaps"))` or `vlbench score nocaps --references <this folder> --predictions captions.json`.

## Known quirks of the official scorer (reproduced by vlbench's default protocol)

{quirks}

## License and citation

Images: Open Images, CC BY 2.0. No separate license is stated for the captions.

```bibtex
{CITATION}
```
"""


#: the official scorer the numbers reproduce, at the version the golden cases (tests/data) were scored with
OFFICIAL_SCORER = (
    "the COCO caption toolkit, pycocoevalcap 1.2 with OpenJDK 17 (SPICE: its CoreNLP 3.6.0 "
    "backend, when installed)"
)

#: the official captions JSONs (nocaps.org's download page); each image is listed with its own URL
RELEASE = Release(
    home="https://nocaps.org/download",
    files=("https://nocaps.s3.amazonaws.com/nocaps_val_4500_captions.json",
           "https://nocaps.s3.amazonaws.com/nocaps_test_image_info.json"),
    license="CC BY 2.0 (captions); images under their Open Images licenses", size="about 10 MB (captions)",
    by_hand="download nocaps_val_4500_captions.json and nocaps_test_image_info.json from nocaps.org/download, "
            "and the images each entry's URL names (Open Images), then pass --raw <the JSONs> --images <folder>")
