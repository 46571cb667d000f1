"""nocaps schema: domains, metric keys and the Hub dataset's features."""

from __future__ import annotations

from dataclasses import dataclass

from ..benchmark import Options, option

__all__ = ["NocapsOptions", "DOMAINS", "DOMAIN_SUFFIX", "METRICS", "SPLITS", "image_features",
           "metric_keys"]

#: a prediction entry, for messages; keys every entry has (how a file of another benchmark is
#: recognised)
PREDICTION_FORM = '{"image_id", "caption"}'
PREDICTION_KEYS = frozenset({"caption"})

SPLITS = ("validation", "test")
DOMAINS = ("in-domain", "near-domain", "out-domain")
DOMAIN_SUFFIX = {"in-domain": "_in", "near-domain": "_near", "out-domain": "_out"}
METRICS = ("B1", "B2", "B3", "B4", "METEOR", "ROUGE_L", "CIDEr", "SPICE")


def metric_keys() -> list[str]:
    """The contract's keys: the eight metrics for the whole split, then for each domain."""
    return list(METRICS) + [m + DOMAIN_SUFFIX[d] for d in DOMAINS for m in METRICS]


METRIC_KEYS = tuple(metric_keys())


def image_features():
    """The Hub dataset's :class:`datasets.Features` (one row per image)."""
    from datasets import ClassLabel, Features, Image, List, Value

    return Features({
        "image": Image(),
        "image_id": Value("int64"),
        "open_images_id": Value("string"),
        "file_name": Value("string"),
        "height": Value("int64"),
        "width": Value("int64"),
        "domain": ClassLabel(names=list(DOMAINS)),
        "captions": List(Value("string")),
        "caption_ids": List(Value("int64")),
        "caption_positions": List(Value("int64")),
        "coco_url": Value("string"),
        "license": Value("int64"),
        "date_captured": Value("string"),
        "position": Value("int64"),
        "extra": Value("string"),
    })


FIELD_DESCRIPTIONS = {
    "image": "the image, embedded",
    "image_id": "nocaps image id (0-4499 validation, 4500-15099 test)",
    "open_images_id": "the Open Images id of the image",
    "file_name": "image file name", "height": "pixels", "width": "pixels",
    "domain": "in-domain, near-domain or out-domain (class label; null on the test split, whose "
              "domains are private)",
    "captions": "the 10 reference captions, as released (empty on the test split)",
    "caption_ids": "annotation ids of the captions",
    "caption_positions": "index of each caption in the official annotations array (for lossless "
                         "export)",
    "coco_url": "download address of the image", "license": "license id (see the card)",
    "date_captured": "as released", "position": "index of the image in the official images array",
    "extra": "further keys of the official image entry, as JSON",
}


@dataclass(frozen=True)
class NocapsOptions(Options):
    """nocaps options: the domain protocol, the tokenizer and METEOR backends, missing images, the
    optional metrics."""

    cider_idf: str = option("global",
                            "CIDEr-D document frequencies over the whole split (global) or per "
                            "domain (subset)", ("global", "subset"))
    tokenizer: str = option("auto", "PTB tokenizer backend: the Stanford jar (java), the exact "
                                    "Python "
                            "re-implementation (python), or java when present (auto)",
                            ("auto", "java", "python"))
    missing: str = option("error", "images without a caption: 'error', or 'empty' to score them as "
                                   "empty captions",
                          ("error", "empty"))
    meteor_backend: str = option("auto", "METEOR 1.5 backend: the jar (java), its exact Python "
                                         "re-implementation, no JVM (python), or python where "
                                         "proven equal to the jar, else java (auto)",
                                 ("auto", "python", "java"))
    meteor: bool = option(True, "compute METEOR", cli=False)
    spice: bool = option(True, "compute SPICE (needs Java and Stanford CoreNLP 3.6.0)", cli=False)
