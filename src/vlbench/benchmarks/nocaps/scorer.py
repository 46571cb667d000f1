"""nocaps scorer: the COCO caption toolkit's BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE, for the
whole split and per domain (OFFICIAL-SCORERS.md 4.3).

Default domain protocol (``cider_idf="global"``): tokenize once, CIDEr-D once over the whole split
(one document-frequency table) with each domain the mean of its images' scores; BLEU and METEOR are
corpus scores over the domain's images; ROUGE-L and SPICE means of per-image scores.
``cider_idf="subset"`` recomputes CIDEr-D per domain on that domain's images only (what a separate
toolkit run per domain gives); every other number is the same under both.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ...engine.captions import bleu as bleu_mod
from ...engine.captions.cider import CiderDResampler, cider_d
from ...engine.captions.meteor import METEOR_BACKENDS, index_ahead, meteor_available, meteor_stats
from ...engine.captions.meteor_lines import meteor_from_stats, parse_stats, summable_stats
from ...engine.captions.ngrams import count_ngrams
from ...engine.captions.paraphrase import ParaphraseIndex
from ...engine.captions.rouge import rouge_l
from ...engine.captions.spice import spice_available, spice_scores
from ...engine.captions.tokenize import SHIFTING_LINE_BREAK, sanitize, tokenize
from ...engine.errors import CoverageError, InputError, PredictionError
from ...engine.result import Result
from .. import expect_prediction_list
from ..benchmark import Scorer, check_examples
from ..validation import describe as _describe, require_utf8
from . import reader, schema
from .records import NocapsReferences
from .schema import NocapsOptions

__all__ = ["NocapsScorer", "parse_predictions", "score"]

def parse_predictions(entries: Any, gt: NocapsReferences, *, missing: str = "error",
                      source: str = "predictions") -> tuple[list[str], dict[str, int], list[str]]:
    """One caption per GT image, in GT order; every problem named (the toolkit only asserts)."""
    expect_prediction_list(entries, "nocaps", source, schema.PREDICTION_FORM)
    warnings: list[str] = []
    by_id: dict[Any, str] = {}
    duplicates = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "image_id" not in e or "caption" not in e:
            raise PredictionError("each entry needs 'image_id' and 'caption'", file=source,
                                  entry=f"entry {i}")
        img, cap = e["image_id"], e["caption"]
        if isinstance(img, float) and img.is_integer():
            img = int(img)  # loadRes accepts 7.0: the dict look-up finds image 7
        if isinstance(img, bool) or not isinstance(img, int):
            hint = (f"the id is the string {img!r} but nocaps image ids are integers; write {img} "
                    "without quotes"
                    if isinstance(img, str) and img.strip().isdigit() else "image ids are the "
                                                                           "integer 'id' of the "
                                                                           "images")
            raise PredictionError(f"'image_id' has type {type(img).__name__} ({img!r})",
                                  file=source, entry=f"entry {i}", fix=hint)
        if not isinstance(cap, str):
            raise PredictionError(f"'caption' must be a string, got {type(cap).__name__} ({cap!r})",
                                  file=source, entry=f"entry {i} (image {img})")
        if img in by_id:
            duplicates.append(img)
        by_id[img] = cap
    if duplicates:
        raise PredictionError(f"{len(duplicates)} image id(s) have more than one caption: "
                              f"{_describe(duplicates)}",
                              file=source, fix="keep exactly one caption per image")
    known = set(gt.image_ids)
    unknown = [i for i in by_id if i not in known]
    if unknown:
        raise PredictionError(f"{len(unknown)} caption(s) are for image ids that are not in the "
                              f"references: {_describe(unknown)}", file=source,
                              fix="score against the split these captions were made for")
    absent = [i for i in gt.image_ids if i not in by_id]
    if absent and missing != "empty":
        raise CoverageError(f"{len(absent)} of the {len(gt.image_ids)} images have no caption, "
                            f"e.g. {_describe(absent)}",
                            file=source,
                            fix="caption every image of the split, or pass --missing empty to "
                                "score them as empty captions")
    if absent:
        warnings.append(f"{len(absent)} image(s) without a caption were scored as empty captions")
    require_utf8(list(by_id.values()), source, "caption",
                 entry=lambda i: f"the caption of image {list(by_id)[i]}")
    return (
        [by_id.get(i, "") for i in gt.image_ids],
        {"predictions": len(entries), "missing_scored_empty": len(absent)},
        warnings,
    )


def _toolkit_call(hyps: list[str], refs_per_image: list[list[str]]) -> tuple:
    """The n-gram layout of one toolkit call over these images: (table, hypothesis sentences,
    reference sentences, image of each reference, images), the arguments of BLEU's and CIDEr-D's
    statistics."""
    n = len(hyps)
    k = [len(rs) for rs in refs_per_image]
    table = count_ngrams(list(hyps) + [r for rs in refs_per_image for r in rs])
    return table, np.arange(n), n + np.arange(sum(k)), np.repeat(np.arange(n), k), n


def _domain_metrics(masks: dict[str, NDArray[np.bool_]], stats: Any,
                    meteor_corpus: dict[str, float],
                    rouge: NDArray[np.float64], cider: NDArray[np.float64],
                    spice_per: NDArray[np.float64] | None) -> dict[str, float | None]:
    """Every metric overall and per domain (percent) from one tokenization and one CIDEr-D run:
    corpus BLEU / METEOR over the domain's images, means of per-image ROUGE-L / CIDEr-D / SPICE."""
    metrics: dict[str, float | None] = {}
    for d, mask in masks.items():
        suffix = schema.DOMAIN_SUFFIX.get(d, "")
        if not mask.any():
            metrics.update({m + suffix: None for m in schema.METRICS})
            continue
        bleus = bleu_mod.corpus_bleu(stats.subset(mask))
        for k in range(4):
            metrics[f"B{k + 1}{suffix}"] = bleus[k] * 100
        metrics["METEOR" + suffix] = meteor_corpus[d] * 100 if d in meteor_corpus else None
        metrics["ROUGE_L" + suffix] = float(np.mean(rouge[mask])) * 100
        metrics["CIDEr" + suffix] = float(np.mean(cider[mask])) * 100
        metrics["SPICE" + suffix] = (
            float(np.mean(spice_per[mask])) * 100 if spice_per is not None else None
        )
    metrics = {k: metrics[k] for k in schema.metric_keys()}
    return metrics


def _meteor_summaries(lines: list[str] | None,
                      masks: dict[str, NDArray[np.bool_]]) -> tuple[Any, dict[str, float], Any]:
    """Per-image METEOR, the corpus METEOR of every domain and the summable statistics, from the
    jar's lines.

    The corpus scores come from summed per-image statistics, as the jar's EVAL computes them (equal
    to the jar's own aggregates on every golden case, tested), without one more round trip per
    domain."""
    if lines is None:
        return None, {}, None
    raw = parse_stats(lines)
    sums = summable_stats(raw)
    corpus = {d: float(meteor_from_stats(sums[mask].sum(axis=0))) for d,
              mask in masks.items() if mask.any()}
    return meteor_from_stats(raw), corpus, sums


def _per_domain_runs(gt: NocapsReferences, predictions: Any, masks: dict[str, NDArray[np.bool_]],
                     **kwargs: Any) -> dict[str, float | None]:
    """The subset protocol's per-domain keys: each domain scored alone, as a separate
    ``COCOEvalCap`` run (own tokenization, whose line-final periods and line breaks depend on the
    domain's captions only)."""
    out: dict[str, float | None] = {}
    for d in schema.DOMAINS:
        keep = np.flatnonzero(masks[d])
        if not len(keep):
            continue
        ids = {gt.image_ids[i] for i in keep}
        sub = NocapsReferences(image_ids=[gt.image_ids[i] for i in keep],
                               domains=[gt.domains[i] for i in keep],
                               references=[gt.references[i] for i in keep], has_captions=True,
                               source=gt.source,
                               file_names=[gt.file_names[i] for i in keep] if gt.file_names else [])
        entries = [e for e in predictions if isinstance(e, dict) and e.get("image_id") in ids]
        part = score(sub, entries, cider_idf="global", **kwargs).metrics
        out.update({m + schema.DOMAIN_SUFFIX[d]: part[m] for m in schema.METRICS})
    return out


def _line_break_warning(gt: NocapsReferences, predictions: Any, broken: list[int], n_refs: int,
                        shifted: bool,
                        official: dict[str, float | None], source: str,
                        **options: Any) -> list[str]:
    """Name the captions holding the tokenizer's line breaks; under official, give the corrected
    CIDEr / B4 beside (no warning when the shift changes no number, e.g. a break at the very end of
    the last caption)."""
    what = (f"{len(broken)} caption(s) (image ids {_describe(broken)}) and {n_refs} reference(s) "
            "hold a line break of the PTB tokenizer (CR, U+2028, U+2029, VT, FF)")
    if not shifted:
        return [what + ": replaced by spaces (corrected protocol)"]
    fixed = score(
        gt, predictions, protocol="corrected", meteor=False, spice=False, source=source, **options
    ).metrics
    if all(fixed[k] == official[k] for k in fixed if not k.startswith(("METEOR", "SPICE"))):
        return []
    return [f"official protocol: {what}; the official tokenizer starts a new line there, so every "
            "later caption is scored against the wrong image's references. These numbers are the "
            "official ones; with the breaks replaced by spaces (--protocol corrected) CIDEr would "
            f"be {fixed['CIDEr']:.4f} and B4 {fixed['B4']:.4f}. The official numbers then depend "
            "on the order of the images: the official order is the file's (a built dataset's rows "
            "keep it; feed the metric's add / add_batch in that order)"]


def _check_choices(**chosen: str) -> None:
    """An :class:`InputError` naming the option and its choices for a value outside them (the scorer
    is public: a direct call gets the same check as
    :class:`~vlbench.benchmarks.protocol.Options`)."""
    choices = {"cider_idf": ("global", "subset"), "meteor_backend": METEOR_BACKENDS}
    for name, value in chosen.items():
        if value not in choices[name]:
            raise InputError(f"unknown {name} {value!r}",
                             fix="use " + ", ".join(map(repr, choices[name])))


class _Tokens(NamedTuple):
    """The texts as the toolkit scores them: the captions (cleaned unless the official line shift
    applies), their tokens, the references' tokens per image, the tokenizer used, and the line-break
    facts of the official quirk."""

    hyps: list[str]
    hyp_tokens: list[str]
    ref_tokens: list[list[str]]
    backend: str
    broken_captions: list[Any]
    broken_references: int
    n_references: int


def _tokenize_all(gt: NocapsReferences, hyps: list[str], protocol: str, tokenizer: str) -> _Tokens:
    """PTBTokenizer over captions and references; a line break shifts the toolkit's lines under
    ``official``."""
    refs_flat = [c for rs in gt.references for c in rs]
    broken_h = [gt.image_ids[i] for i, h in enumerate(hyps) if SHIFTING_LINE_BREAK.search(h)]
    changed_r = (sum(bool(SHIFTING_LINE_BREAK.search(r)) for r in refs_flat)
                 # one scan when there is none
                 if SHIFTING_LINE_BREAK.search(" ".join(refs_flat)) else 0)
    shift = protocol == "official" and bool(broken_h or changed_r)
    if not shift:
        hyps, _ = sanitize(hyps)
        refs_flat, _ = sanitize(refs_flat)
    tok_refs, backend = tokenize(refs_flat, tokenizer, shift_lines=shift, cache=True)
    tok_hyps, _ = tokenize(hyps, backend, shift_lines=shift)
    # the flat references back per image
    bounds = np.cumsum([0] + [len(rs) for rs in gt.references])
    refs_per_image = [tok_refs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return _Tokens(hyps, tok_hyps, refs_per_image, backend, broken_h, changed_r, len(refs_flat))


def _meteor_ready(meteor: bool, backend: str, n_references: int) -> tuple[bool, str,
                                                                          ParaphraseIndex | None]:
    """(whether METEOR can run with this backend, why not, the paraphrase index if opened here). A
    first run on a machine with few references builds METEOR's whole paraphrase index here, in a
    worker thread while the main thread tokenizes (pure Python on one core; the build's numpy work
    takes the other), before the other metrics' arrays exist (the peak memory is the larger of the
    build's and the metrics', not their sum); a whole split's first run leaves METEOR to read its
    references' own sub-table (:func:`index_ahead`). A failure here is left to METEOR itself to
    report."""
    ok, why = meteor_available(backend)
    index = None
    if meteor and ok:
        with contextlib.suppress(Exception):
            index = index_ahead(n_references)
    return ok, why, index


def _sentence_metrics(t: _Tokens, meteor_backend: str | None, index: ParaphraseIndex | None
                      ) -> tuple[Any, NDArray[np.float64], NDArray[np.float64],
                                 tuple[list[str] | None, str | None]]:
    """BLEU statistics, CIDEr-D and ROUGE-L per image, and METEOR's statistics lines and backend
    (none without a backend). METEOR runs in a worker thread (its alignments are numpy work, which
    mostly releases the GIL, or the jar's processes) beside the others' string work."""
    def others() -> tuple[Any, NDArray[np.float64], NDArray[np.float64]]:
        call = _toolkit_call(t.hyp_tokens, t.ref_tokens)
        stats, cider = bleu_mod.bleu_stats(*call), cider_d(*call)
        # its n-gram table (~80 MB on a whole split) is not held through METEOR's peak
        del call
        return stats, cider, rouge_l(t.hyp_tokens, t.ref_tokens)

    if not meteor_backend:
        return (*others(), (None, None))
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(meteor_stats, t.hyp_tokens, t.ref_tokens, backend=meteor_backend,
                            index=index)
        # an error here is raised first; the worker is still waited for
        stats, cider, rouge = others()
        return stats, cider, rouge, later.result()


def score(gt: NocapsReferences, predictions: Any, *, protocol: str = "official",
          cider_idf: str = "global",
          tokenizer: str = "auto", missing: str = "error", meteor: bool = True,
          meteor_backend: str = "auto",
          spice: bool = True, split: str | None = None, source: str = "predictions",
          analysis: bool = False) -> Result:
    """Score official-format nocaps captions against ``gt``; with ``analysis`` the error analysis
    too."""
    _check_choices(cider_idf=cider_idf, meteor_backend=meteor_backend)
    if not gt.has_captions:
        raise InputError("these references have no captions (the nocaps test split): there is "
                         "nothing to score against",
                         file=gt.source,
                         fix="submit test captions to the official nocaps evaluation server "
                             "(EvalAI)")
    hyps, counts, warnings = parse_predictions(predictions, gt, missing=missing, source=source)
    # a first run's index build beside the tokenizer
    with ThreadPoolExecutor(max_workers=1) as pool:
        ready = pool.submit(_meteor_ready, meteor, meteor_backend, sum(map(len, gt.references)))
        t = _tokenize_all(gt, hyps, protocol, tokenizer)
        ok, why, index = ready.result()
    stats, cider, rouge, (meteor_lines, meteor_how) = _sentence_metrics(
        t, meteor_backend if meteor and ok else None, index
    )
    domains = np.asarray([d or "" for d in gt.domains], dtype=object)
    masks = {"": np.ones(len(hyps), dtype=bool), **{d: domains == d for d in schema.DOMAINS}}
    meteor_scores, meteor_corpus, meteor_sums = _meteor_summaries(meteor_lines, masks)
    if meteor and meteor_lines is None:
        warnings.append(f"METEOR is null: {why}")
    spice_per = None
    ok, why = spice_available()
    if spice and ok:
        spice_per = np.asarray(spice_scores(t.hyp_tokens, t.ref_tokens))
    elif spice:
        warnings.append(f"SPICE is null: {why}")
    metrics = _domain_metrics(masks, stats, meteor_corpus, rouge, cider, spice_per)
    if t.broken_captions or t.broken_references:
        warnings.extend(_line_break_warning(gt, predictions, t.broken_captions, t.broken_references,
                                            protocol == "official", metrics, source,
                                            cider_idf=cider_idf, tokenizer=t.backend))
    # one independent toolkit run per domain, its own tokenization included
    if cider_idf == "subset":
        metrics.update(_per_domain_runs(gt, predictions, masks, protocol=protocol,
                                        tokenizer=t.backend,
                                        missing=missing, meteor=meteor,
                                        meteor_backend=meteor_backend, spice=spice, source=source))
    counts.update(_counts(t, masks))
    per_image = {"image_id": gt.image_ids, "domain": list(gt.domains), "caption": t.hyps,
                 "B4": bleu_mod.image_bleu(stats)[:, 3] * 100, "ROUGE_L": rouge * 100,
                 "CIDEr": cider * 100,
                 **({} if meteor_scores is None else {"METEOR": meteor_scores * 100}),
                 **({} if spice_per is None else {"SPICE": spice_per * 100})}
    bleu_feats = np.column_stack([stats.correct, stats.guess, stats.testlen, stats.reflen]).astype(
        np.float64
    )

    def resampler() -> NocapsReplicator:
        parts = _subset_resamplers(t, masks) if cider_idf == "subset" else None
        domain_masks = np.stack([masks[d] for d in ("",) + schema.DOMAINS]).astype(np.float64)
        return NocapsReplicator(bleu_feats, meteor_sums, rouge, spice_per, domain_masks,
                                CiderDResampler(*_toolkit_call(t.hyp_tokens, t.ref_tokens)), parts)

    from .analysis import analyze

    return Result(benchmark="nocaps", protocol=protocol, metrics=metrics, resampler=resampler,
                  breakdowns={"per_image": per_image}, counts=counts, warnings=warnings,
                  analysis=analyze(gt.image_ids, list(gt.domains), t.hyp_tokens, t.ref_tokens,
                                   metrics, t.hyps, cider * 100) if analysis else None,
                  options={"split": split or "validation", "cider_idf": cider_idf,
                           "tokenizer": t.backend,
                           "meteor": meteor_how if meteor_corpus else None,
                           "spice": "java" if spice_per is not None else None})


def _counts(t: _Tokens, masks: dict[str, NDArray[np.bool_]]) -> dict[str, int]:
    """Images and references, images per domain, texts with a line break."""
    return {"images": len(t.hyps), "references": t.n_references,
            **{f"images{schema.DOMAIN_SUFFIX[d]}": int(masks[d].sum()) for d in schema.DOMAINS},
            "captions_with_line_breaks": len(t.broken_captions),
            "references_with_line_breaks": t.broken_references}


def _subset_resamplers(t: _Tokens, masks: dict[str, NDArray[np.bool_]]) -> dict[str, Any]:
    """``cider_idf="subset"``: each domain's CIDEr-D resampler over its own images (its own document
    frequencies)."""
    return {d: (sub, CiderDResampler(*_toolkit_call([t.hyp_tokens[i] for i in sub],
                                                    [t.ref_tokens[i] for i in sub])))
            for d in schema.DOMAINS if len(sub := np.flatnonzero(masks[d]))}


class NocapsReplicator:
    """Every nocaps metric under image weights (:mod:`vlbench.engine.uncertainty`): corpus BLEU and
    METEOR from weighted sums of per-image statistics, CIDEr-D with reweighted document frequencies
    (per domain under ``cider_idf="subset"``), ROUGE-L and SPICE as weighted means of per-image
    scores."""

    unit = "image"

    def __init__(self, bleu_feats, meteor_sums, rouge, spice, domain_masks, cider,
                 cider_subsets) -> None:
        self.bleu_feats, self.meteor_sums, self.rouge, self.spice = (
            bleu_feats,
            meteor_sums,
            rouge,
            spice,
        )
        self.domain_masks, self.cider, self.cider_subsets = domain_masks, cider, cider_subsets
        self.strata = (len(rouge),)

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        cider = self.cider(weights)                                            # (R, images)
        out: dict[str, NDArray[np.float64]] = {}
        for d, mask in zip(("",) + schema.DOMAINS, self.domain_masks):
            suffix = schema.DOMAIN_SUFFIX.get(d, "")
            w = weights * mask
            n = w.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                sums = w @ self.bleu_feats
                bleus = bleu_mod.bleu_from_totals(sums[:, :4], sums[:, 4:8], sums[:, 8], sums[:, 9])
                for k in range(4):
                    out[f"B{k + 1}{suffix}"] = np.where(n > 0, bleus[:, k] * 100, np.nan)
                if self.meteor_sums is not None:
                    out["METEOR" + suffix] = np.where(
                        n > 0, meteor_from_stats(w @ self.meteor_sums) * 100, np.nan
                    )
                out["ROUGE_L" + suffix] = w @ self.rouge / n * 100
                if self.cider_subsets is not None and d in self.cider_subsets:
                    sub, res = self.cider_subsets[d]
                    out["CIDEr" + suffix] = (
                        (res(weights[:, sub]) * weights[:, sub]).sum(axis=1) / n * 100
                    )
                else:
                    out["CIDEr" + suffix] = (cider * w).sum(axis=1) / n * 100
                if self.spice is not None:
                    out["SPICE" + suffix] = w @ self.spice / n * 100
        return out


class NocapsScorer(Scorer[NocapsOptions]):
    """BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, SPICE overall and per domain."""

    options_type = NocapsOptions
    prediction_keys = schema.PREDICTION_KEYS
    prediction_form = schema.PREDICTION_FORM

    def load_references(self, source: str | os.PathLike, split: str | None) -> Any:
        """The official captions JSON or a Hub folder -> records."""
        return reader.load_references(source, split)

    def references_from_rows(self, rows: list[dict[str, Any]]) -> Any:
        """Rows of the Hub dataset -> records."""
        return reader.references_from_rows(rows, source="references")

    def entries_from_examples(self, references: list[dict[str, Any]],
                              predictions: list[Any]) -> list[Any]:
        """One caption string per row -> official entries."""
        check_examples(references, predictions)
        return [{"image_id": r["image_id"], "caption": p} for r, p in zip(references, predictions)]

    def score(self, references: Any, predictions: Any, options: NocapsOptions,
              source: str = "predictions") -> Any:
        """The toolkit's metrics overall and per domain."""
        return score(references, predictions, protocol=options.protocol,
                     cider_idf=options.cider_idf,
                     tokenizer=options.tokenizer, missing=options.missing, meteor=options.meteor,
                     meteor_backend=options.meteor_backend, spice=options.spice,
                     split=options.split, source=source, analysis=options.analysis)
