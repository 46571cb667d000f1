"""The Python METEOR's run over a corpus (:func:`python_stats`): the texts the jar reads from each
line, their normal forms and word data (references' kept on disk), the paraphrase entries the corpus
can use, every distinct pair aligned at once (:mod:`.batch`) and the best reference's statistics
printed as the jar prints them."""


from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import VlbenchError
from .. import paraphrase, textcache
from ..meteor_lines import java_trim, meteor_from_stats, score_lines, split_like_jar
from ..paraphrase import ParaphraseIndex
from .aligner import Sentence
from .batch import Corpus, WordInfo, stats_many
from .normalizer import java_tokens, normalize_line
from .resources import EnglishData, english_data, java_string_hash
from .stemmer import stem, utf16_units

__all__ = ["python_eligible", "python_stats", "PROVEN_CHARACTERS"]

#: Characters whose lowercasing is the same in Python and in every Java that runs the jar (8 to 25),
#: and that the tests cover: Latin (Basic to Extended-B), IPA, combining marks, Greek without the
#: final-sigma capital (its lowercase depends on context) and U+037F, Cyrillic up to U+0527, general
#: punctuation, currency, letterlike symbols, number forms, arrows to miscellaneous symbols, CJK
#: punctuation, kana, CJK ideographs, Hangul, full-width forms and emoji. U+0130 is left out (Java
#: and Python agree, but the paraphrase reduction does not trust it).
PROVEN_CHARACTERS = re.compile(
    "[\t\x0b\f \x21-\x7e\u00a0-\u012f\u0131-\u024f\u0250-\u036f\u0370-\u037e\u0380-\u03a2"
    "\u03a4-\u03ff"
    "\u0400-\u0527\u2000-\u2027\u202a-\u206f\u20a0-\u20cf\u2100-\u2bff\u3000-\u30ff\u4e00-\u9fff"
    "\uac00-\ud7a3\uff00-\uffef\U0001f000-\U0001faff]*"
)
_ERROR_LINE = "Error: specify hypothesis and at least one reference"


def _pieces(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[list[str]]:
    """The texts the jar reads from each pycocoevalcap ``SCORE`` line: the references, then the
    hypothesis."""
    # (a space cannot complete a "|||")
    if "|||" in " ".join((*hyps, *(r for rs in refs for r in rs))):
        return [split_like_jar(line) for line in score_lines(hyps, refs)]
    # without "|||" in a text the line splits back into its texts (pycocoevalcap's hypothesis
    # clean-up kept)
    return [[java_trim(r) for r in rs] + [java_trim(h.replace("  ", " "))] for h,
            rs in zip(hyps, refs)]


def python_eligible(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> tuple[bool, str]:
    """(True, "") when the Python METEOR is proven equal to the jar on these texts, else (False,
    why)."""
    texts = (*hyps, *(r for rs in refs for r in rs))
    # one scan: the set is a class of characters, space in it
    if PROVEN_CHARACTERS.fullmatch(" ".join(texts)):
        return True, ""
    for text in texts:
        if not PROVEN_CHARACTERS.fullmatch(text):
            bad = next(c for c in text if not PROVEN_CHARACTERS.fullmatch(c))
            return False, f"a character outside the proven set (U+{ord(bad):04X})"
    return True, ""


def _words(line: str) -> list[str]:
    """The words the jar's ``StringTokenizer`` finds in a line (``str.split`` where that is the
    same)."""
    return line.split() if line.isascii() and line.isprintable() else java_tokens(line)


def _lines_words(lines: list[str]) -> list[list[str]]:
    """:func:`_words` of every line (one check of all the text where it is printable ASCII)."""
    text = "".join(lines)
    return (
        [line.split() for line in lines]
        if text.isascii() and text.isprintable()
        else list(map(_words, lines))
    )


def _normal_lower(text: str, data: EnglishData) -> str:
    """``normalizeLine(text).toLowerCase()``: the text the jar aligns."""
    if text.isascii() and text.replace(" ", "").isalnum() and "DOTMULTI" not in text:
        return " ".join(text.split()).lower()          # what every rule leaves of such a text
    return normalize_line(text, data.prefixes).lower()


def _java_double(v: float) -> str:
    """``Double.toString`` of a whole number, as the statistics line prints it."""
    if v < 1e7:
        return f"{int(v)}.0"
    digits = str(int(v)).rstrip("0") or "0"
    exponent = len(str(int(v))) - 1
    return f"{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _word_info(w: str, data: EnglishData) -> WordInfo:
    """What the aligner knows of a word: ``hashCode`` of it and of its stem, its synsets, whether a
    function word."""
    units = utf16_units(w)
    return (java_string_hash(units), java_string_hash(stem(units)), data.synonym_sets(w),
            w.lower() in data.function_words)


def _reference_side(refs: list[str], data: EnglishData, jar: Path) -> tuple[dict[str, str],
                                                                            dict[str, WordInfo]]:
    """Each reference's aligned text and the :func:`_word_info` of their words: the same for every
    model scored on a split, so kept on disk by content (:mod:`..textcache`). Their n-gram hashes
    are not: computed here, beside the other metrics' n-gram table, they raise a cold run's peak
    memory (bench/HISTORY.md)."""
    def compute() -> textcache.Entry:
        low = [_normal_lower(t, data) for t in refs]
        words = dict.fromkeys(w for line in dict.fromkeys(low) for w in _words(line))
        infos = {w: _word_info(w, data) for w in words}
        return [low, [[w, h, s, sorted(syn), fn] for w, (h, s, syn, fn) in infos.items()]], ()

    here = Path(__file__).parent
    code = textcache.code_digest([*sorted(here.glob("*.py")), jar])
    (low, words), _ = textcache.cached("meteor-references", code, refs, compute,
                                       _reference_side_valid(len(refs)))
    return dict(zip(refs, low)), {w: (h, s, frozenset(syn), fn) for w, h, s, syn, fn in words}


def _usable_entries(index: ParaphraseIndex, lines: list[str], line_words: list[list[str]],
                    reference_lines: set[str],
                    jar: Path,
                    reference_phrases: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """The paraphrase entries ``lines`` (their words: ``line_words``) can use
    (:meth:`ParaphraseIndex.kept_entries_for_words`). The phrases found in the references' lines are
    the same at every run on a split and kept on disk (hashing every n-gram of a split's lines is
    not free; ``reference_phrases``: those numbers where the caller has them already); the other
    lines' phrases are looked up at each run. n-grams never cross a line, so the two sets together
    are the whole corpus's."""
    is_ref = [line in reference_lines for line in lines]
    refs = [line for line, r in zip(lines, is_ref) if r]

    def phrases(words: list[list[str]]) -> NDArray[np.int64]:
        return index.phrases_in(index.ngram_hashes(words)).astype(np.int64)

    def in_references() -> NDArray[np.int64]:
        if reference_phrases is not None:
            return reference_phrases
        return phrases([w for w, r in zip(line_words, is_ref) if r])

    if index.key:       # an index read from its cache folder: the phrase numbers are that index's
        code = textcache.code_digest([*sorted(Path(__file__).parent.glob("*.py")), jar,
                                      Path(paraphrase.__file__)])
        _, (found,) = textcache.cached(
            "meteor-phrases",
            f"{code}\0{index.key}",
            refs,
            lambda: (None, (in_references(),)),
            lambda v, arrays: (
                v is None
                and len(arrays) == 1
                and arrays[0].ndim == 1
                and arrays[0].dtype == np.int64
            ),
        )
    else:
        found = in_references()
    others = phrases([w for w, r in zip(line_words, is_ref) if not r])
    return index.entries_among(np.concatenate([found, others]))


def _reference_side_valid(n: int) -> Callable[[Any, tuple], bool]:
    """Whether a stored entry has the shape :func:`_reference_side` computes (``n`` texts, 5 fields
    per word)."""
    return lambda v, arrays: (
        isinstance(v, list)
        and len(v) == 2
        and isinstance(v[0], list)
        and len(v[0]) == n
        and all(isinstance(t, str) for t in v[0])
        and isinstance(v[1], list)
        and all(isinstance(r, list) and len(r) == 5 and isinstance(r[0], str) for r in v[1])
        and not arrays
    )


def python_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], *, jar: Path,
                 index: ParaphraseIndex | None = None, cache_dir: Path | None = None) -> list[str]:
    """The jar's statistics line of every (hypothesis, references) pair, computed in Python: the
    texts' words, word data and paraphrase phrases, then every distinct (hypothesis, reference) pair
    aligned at once. ``index``: the paraphrase table's; by default
    :meth:`ParaphraseIndex.for_references` of these references (in ``cache_dir``)."""
    data = english_data(Path(jar))
    pieces = _pieces(hyps, refs)
    if any("\n" in t or "\r" in t for p in pieces for t in p):
        raise VlbenchError("a caption contains a line break: the METEOR jar would read it as two "
                           "lines")
    distinct = list(dict.fromkeys(t for p in pieces for t in p))
    known, infos = _reference_side(list(dict.fromkeys(t for p in pieces for t in p[:-1])), data,
                                   Path(jar))
    lowered = {t: known[t] if t in known else _normal_lower(t, data) for t in distinct}
    lines = list(dict.fromkeys(lowered.values()))
    line_words = _lines_words(lines)

    def info(w: str) -> WordInfo:
        if w not in infos:
            infos[w] = _word_info(w, data)
        return infos[w]

    paraphrases, found = (index, None) if index is not None else ParaphraseIndex.for_references(
        Path(jar).parent / "data" / "paraphrase-en.gz", list(dict.fromkeys(known.values())),
        cache_dir, _words)
    usable = _usable_entries(paraphrases, lines, line_words, set(known.values()), Path(jar), found)
    corpus = Corpus.build(line_words, info, paraphrases, usable)
    built: dict[int, Sentence] = {}

    # the per-pair aligner's input, for the rare long line
    def sentence(k: int) -> Sentence:
        if k not in built:
            table, phrases = corpus.line_table(k)
            words = line_words[k]
            got = [info(w) for w in words]
            built[k] = Sentence.build(words, [g[0] for g in got], [g[1] for g in got],
                                      [g[2] for g in got],
                                      [g[3] for g in got], table, phrases,
                                      int(paraphrases.max_words))
        return built[k]

    number = {line: k for k, line in enumerate(lines)}
    owner = np.asarray([k for k, p in enumerate(pieces) if len(p) >= 2 for _ in p[:-1]], np.int64)
    hyp = np.asarray([number[lowered[p[-1]]] for p in pieces if len(p) >= 2 for _ in p[:-1]],
                     np.int64)
    ref = np.asarray([number[lowered[r]] for p in pieces if len(p) >= 2 for r in p[:-1]], np.int64)
    # each distinct (hypothesis, reference) pair aligned once
    distinct, inverse = np.unique(hyp * len(lines) + ref, return_inverse=True)
    aligned = (
        stats_many(corpus, distinct // len(lines), distinct % len(lines), sentence)
        if len(distinct)
        else np.zeros((0, 23))
    )
    # a run that built the index: its check is remembered for the next runs
    paraphrases.settle()
    return _best_lines(aligned[inverse.ravel()], owner, len(pieces))


def _best_lines(rows: np.ndarray, owner: np.ndarray, n_lines: int) -> list[str]:
    """Per SCORE line, the statistics of its first reference with the highest score (the jar keeps a
    reference only when its score is strictly higher), printed as the jar prints them."""
    out = [_ERROR_LINE] * n_lines
    if not len(rows):
        return out
    # computeMetrics of each alignment, the jar's order of operations
    scores = meteor_from_stats(rows)
    # per line: best score, then first
    order = np.lexsort((np.arange(len(rows)), -scores, owner))
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    best = rows[first]
    # every count prints as "<int>.0" (_java_double): joined per row
    if (np.abs(best) < 1e7).all():
        texts = [".0 ".join(map(str, row)) + ".0" for row in best.astype(np.int64).tolist()]
    else:
        texts = [" ".join(_java_double(v) for v in row) for row in best.tolist()]
    for k, text in zip(owner[first].tolist(), texts):
        out[k] = text
    return out
