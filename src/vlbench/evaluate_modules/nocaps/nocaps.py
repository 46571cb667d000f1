"""nocaps metric for 🤗 Evaluate: BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE of the COCO caption
toolkit, overall and per domain. A thin face over ``vlbench`` (all logic lives in the engine)."""

from typing import Any

import datasets
import evaluate

from vlbench.benchmarks import get_benchmark
from vlbench.library.metric_support import RowInputs, compute

_CITATION = get_benchmark("nocaps").card.citation

_DESCRIPTION = """\
nocaps scores image captions against 10 references per image with the COCO caption toolkit
(pycocoevalcap), for the whole split and for the in-, near- and out-domain images. Captions are
tokenized like Stanford's PTBTokenizer (Java when present, else an exact Python port), then:
BLEU-1..4 (corpus statistics, closest reference length), METEOR 1.5 (corpus score; the jar's exact
Python re-implementation, or the jar), ROUGE-L
(beta 1.2, mean over images), CIDEr-D (tf-idf n-grams 1-4, sigma 6, x10; document frequencies over
the whole split, each domain the mean of its images' scores) and SPICE (optional Java backend).
Values in percent; SPICE is None when its Java backend is missing.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one caption (str) per image.
    references: rows of the nocaps Hub dataset (validation split): `image_id`, `domain` and
        `captions`, or dicts with those keys (`domain` as "in-domain" / "near-domain" /
        "out-domain" or its index).
    cider_idf: "global" (default: one CIDEr-D document-frequency table for all images) or "subset"
        (one per domain, as separate toolkit runs per domain would give).
    tokenizer: "auto" (Java if present), "java" or "python".
    meteor_backend: "auto" (default: the Python METEOR where proven equal to the jar, else the
        jar), "python" (no JVM) or "java".
    protocol: "official" (default: line breaks inside captions shift later captions, as in the
        toolkit) or "corrected" (such line breaks become spaces first).
    ci: a level such as 0.95 adds "confidence_intervals" {metric: (low, high)}, a percentile
        bootstrap over images recomputing each corpus metric per resample; `resamples` (1000) and
        `seed` (0).
    return_details: also return "breakdowns" (per-image scores), "counts" and "warnings".
    analysis: also return "analysis": why the model fails (error types with the headline each
        costs, slices, worst examples; not official; slower). See the card.
Returns:
    B1, B2, B3, B4, METEOR, ROUGE_L, CIDEr, SPICE, and the same with _in, _near, _out.
Examples:
    >>> import evaluate, vlbench
    >>> metric = evaluate.load(vlbench.metric_path("nocaps"))
    >>> refs = [{"image_id": 0, "domain": "in-domain",
    ...          "captions": ["A dog on a sofa.", "A brown dog lying on a couch."]},
    ...         {"image_id": 1, "domain": "out-domain",
    ...          "captions": ["An accordion on a table.", "A red accordion."]}]
    >>> captions = ["a dog lying on a sofa", "a red accordion on a table"]
    >>> result = metric.compute(predictions=captions, references=refs)
    >>> round(result["ROUGE_L"], 2), round(result["ROUGE_L_in"], 2)
    (87.71, 92.42)
"""


_DOMAIN_NAMES = ["in-domain", "near-domain", "out-domain"]


def _slim(reference: Any) -> Any:
    """The fields the metric needs; a Hub row's ClassLabel domain (an int) becomes its name (-1:
    none)."""
    if not isinstance(reference, dict):
        return reference
    domain = reference.get("domain")
    # ClassLabel: -1 is "no label" (no domain); an unknown index stays visible as text
    if isinstance(domain, int):
        domain = "" if domain == -1 else _DOMAIN_NAMES[domain] if 0 <= domain < 3 else str(domain)
    return {"image_id": reference.get("image_id"), "captions": reference.get("captions"),
            "domain": domain}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Nocaps(RowInputs, evaluate.Metric):
    """The metric module: ``evaluate.load(vlbench.metric_path(...))``; all logic in vlbench."""

    slim_reference = staticmethod(_slim)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("string"),
                "references": {"image_id": datasets.Value("int64"),
                               "domain": datasets.Value("string"),
                               "captions": datasets.List(datasets.Value("string"))},
            }),
            codebase_urls=["https://github.com/tylin/coco-caption",
                           "https://github.com/nocaps-org/updown-baseline"],
            reference_urls=["https://nocaps.org"],
        )

    def _compute(self, predictions, references, cider_idf="global", tokenizer="auto",
                 protocol="official",
                 meteor_backend="auto", return_details=False, ci=None, resamples=1000, seed=0,
                 analysis=False):
        return compute("nocaps", predictions, references, return_details=return_details, ci=ci,
                       resamples=resamples,
                       seed=seed, analysis=analysis, cider_idf=cider_idf, tokenizer=tokenizer,
                       protocol=protocol, meteor_backend=meteor_backend)
