"""nocaps' error analysis: how far each domain falls behind the whole split (the nocaps paper's
point: captions degrade on novel objects), and, per image, the words most of its references use that
the caption does not (the tokens the scorer compared). A word is *novel* when no in-domain image's
references use it (the in-domain images show COCO's classes, so such words name what COCO lacks);
novel words are listed first."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["analyze", "STOP_WORDS"]

#: function words never reported as missed
STOP_WORDS = frozenset(
    "a an the of on in at to with and or is are was were be being been it its this that these "
    "those there some two three one his her their its into onto for from by as near next up down "
    "over under while who which has have other another each".split())

EXAMPLES, TOP_WORDS = 10, 20


def _content(tokens: str) -> set[str]:
    return {w for w in tokens.split() if w.isalpha() and w not in STOP_WORDS}


def analyze(image_ids: list[int], domains: list[str | None], hyp_tokens: list[str],
            ref_tokens: list[list[str]],
            metrics: dict[str, float | None], captions: list[str], cider: Any) -> dict[str, Any]:
    """The analysis of one scored split from the scorer's tokens, metrics and per-image CIDEr-D
    (percent)."""
    from .schema import DOMAIN_SUFFIX, METRICS

    def gap(value: float | None, overall: float | None) -> float | None:
        return None if value is None or overall is None else value - overall

    gaps = {m: {d: gap(metrics.get(m + s), metrics.get(m)) for d, s in DOMAIN_SUFFIX.items()}
            for m in METRICS if m in metrics}
    in_domain: set[str] = set()
    for d, refs in zip(domains, ref_tokens):
        if d == "in-domain":
            for r in refs:
                in_domain |= _content(r)
    missed_per_image: list[list[str]] = []
    tally: Counter[str] = Counter()
    for hyp, refs in zip(hyp_tokens, ref_tokens):
        said = set(hyp.split())
        used = Counter(w for r in refs for w in _content(r))
        majority = (len(refs) + 1) // 2
        missed = [w for w, n in used.most_common() if n >= majority and w not in said]
        missed.sort(key=lambda w: (w in in_domain, -used[w], w))           # novel words first
        missed_per_image.append(missed)
        tally.update(missed)
    worst = sorted(range(len(image_ids)), key=lambda i: (float(cider[i]), i))[:EXAMPLES]
    return {
        "delta_key": "CIDEr", "as_scored": metrics.get("CIDEr"), "domain_gaps": gaps,
        "missed_words": {
            "novel": [[w, n] for w, n in tally.most_common() if w not in in_domain][:TOP_WORDS],
            "other": [[w, n] for w, n in tally.most_common() if w in in_domain][:TOP_WORDS]},
        "examples": {"lowest_CIDEr": [{"image_id": image_ids[i], "domain": domains[i],
                                       "caption": captions[i],
                                       "CIDEr": float(cider[i]),
                                       "missed_words": missed_per_image[i][:8]}
                                      for i in worst]},
        "note": "not official: domain gaps are each domain's metric minus the whole split's; a "
                "missed word is one at least half of the image's references use and the caption "
                "does not; novel: no in-domain image's references use it",
    }
