"""The Python METEOR (``vlbench.engine.captions.pymeteor``) against ``meteor-1.5.jar`` run exactly
as pycocoevalcap runs it (``java -jar meteor-1.5.jar - - -stdio -l en -norm``, the whole paraphrase
table): every statistics line must be equal, byte for byte, on every golden case, on the 45,000 real
nocaps references with the released ViECap captions, and on a stress corpus generated here. Any
difference fails; there is no tolerance. The jar's own ``Normalizer`` and ``Stemmer`` classes check
the two components directly."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED
from vlbench.engine.captions import java
from vlbench.engine.captions.meteor import (
    _UTF8,
    _run_jar,
    _stock,
    meteor_available,
    meteor_stats,
    normalize,
)
from vlbench.engine.captions.meteor_lines import score_lines
from vlbench.engine.captions.paraphrase import ParaphraseIndex
from vlbench.engine.captions.pymeteor import python_eligible
from vlbench.engine.captions.pymeteor.normalizer import normalize_line, parse_prefixes
from vlbench.engine.captions.pymeteor.resources import java_string_hash
from vlbench.engine.captions.pymeteor.stemmer import stem, utf16_units
from vlbench.engine.captions.tokenize import tokenize
from vlbench.engine.errors import InputError

GOLDEN = SHARED / "golden" / "nocaps"
needs_java = pytest.mark.skipif(not meteor_available("java")[0],
                                reason="the METEOR jar needs Java and pycocoevalcap")


def _jar(hyps: list[str], refs: list[list[str]]) -> list[str]:
    """pycocoevalcap's one-step jar run (``-norm``, full paraphrase table) on these pairs."""
    lines, _ = _stock(score_lines(hyps, refs), "the reference run")
    return lines


def _assert_same_lines(hyps: list[str], refs: list[list[str]]) -> list[list[float]]:
    want = _jar(hyps, refs)
    got, how = meteor_stats(hyps, refs, backend="python")
    assert how == "python"
    bad = [k for k, (g, w) in enumerate(zip(got, want)) if g != w]
    report = "\n".join(
        f"{hyps[k]!r} vs {refs[k][:2]!r}:\n  jar    {want[k]}\n  python {got[k]}" for k in bad[:5]
    )
    assert not bad and len(got) == len(want), (
        f"{len(bad)} of {len(want)} statistics lines differ:\n{report}"
    )
    assert len(set(want)) > len(want) // 10     # not a degenerate corpus
    return [[float(v) for v in line.split()] for line in want]


def _case(case: Path, tokenized: bool) -> tuple[list[str], list[list[str]]]:
    """A golden case's (hypothesis, references) per image: raw captions, or tokenized as the scorer
    does."""
    data = json.loads((case / "references.json").read_text())
    preds = {
        p["image_id"]: p["caption"] for p in json.loads((case / "predictions.json").read_text())
    }
    by_image: dict[int, list[str]] = {im["id"]: [] for im in data["images"]}
    for a in data["annotations"]:
        by_image[a["image_id"]].append(a["caption"])
    ids = [i for i in by_image if by_image[i]]
    hyps = [preds.get(i, "") for i in ids]
    flat = [c for i in ids for c in by_image[i]]
    if tokenized:
        hyps, _ = tokenize(hyps, "python")
        flat, _ = tokenize(flat, "python")
    refs, start = [], 0
    for i in ids:
        refs.append(flat[start:start + len(by_image[i])])
        start += len(by_image[i])
    return hyps, refs


def _golden_cases() -> list[Path]:
    return sorted(
        p
        for p in GOLDEN.iterdir()
        if (p / "references.json").exists() and p.name != "real_viecap_val"
    )


@needs_java
def test_every_golden_pair_raw_and_tokenized():
    hyps, refs = [], []
    for case in _golden_cases():
        for tokenized in (True, False):
            h, r = _case(case, tokenized)
            # raw captions with line breaks would split the jar's input line: only the tokenized
            # form there
            keep = [
                k for k in range(len(h)) if not any("\n" in t or "\r" in t for t in (h[k], *r[k]))
            ]
            hyps += [h[k] for k in keep]
            refs += [r[k] for k in keep]
    assert len(hyps) > 2000
    _assert_same_lines(hyps, refs)


@needs_java
def test_the_45000_real_nocaps_references_with_viecap_captions():
    hyps, refs = _case(GOLDEN / "real_viecap_val", tokenized=True)
    assert sum(map(len, refs)) == 45_000
    _assert_same_lines(hyps, refs)


#: Pieces the stress captions are made of: punctuation the normaliser splits or keeps, numbers,
#: dotted abbreviations and prefixes, hyphens and dashes, quotes, contractions, non-ASCII letters
#: and spaces.
PIECES = ["a", "the", "man", "U.S.", "e.g.", "Mr.", "No.", "No. 5", "1,000", "3.5", "...", "..",
          "--", "-", "\u2013",
          "\u2014", "'s", "n't", "''", "``", "\u2018", "\u2019", "\u201c", "\u201d", '"', "'", "`",
          ",", ".", "!", "?",
          ";", ":", "(", ")", "[", "]", "&", "@", "#", "$", "%", "*", "+", "=", "/", "\\", "|", "<",
          ">", "~",
          "caf\u00e9", "na\u00efve", "\u00c4rger", "stra\u00dfe", "\u03c3\u03bf\u03c6\u03cc\u03c2",
          "\u039c\u039f\u03a5",
          "\u041c\u043e\u0441\u043a\u0432\u0430", "\u6771\u4eac", "\U0001f600", "\u00a0", "\u2009",
          "\u3000", "\t",
          "x-ray", "self-driving", "2-3", "U.S.-based", "it's", "1990's", "dogs'", "'em", "o'clock",
          "rock'n'roll",
          "A.", "b.", "Inc.", "Jan.", "a.m.", "pp.", "Fig.", "end.", "1.", "10.5.", "DOTMULTI",
          "ab.cd", "A.B.C",
          "K", "\u00c5", "\u2126", "\u00df", "\u0149", "\u2160", "\u24b6", "\uff21", "a\u00ff",
          "b\u00e0",
          "sitting", "sits", "riding", "rides", "children", "child", "women", "woman", "bikes",
          "bicycle",
          "cycling", "near", "close", "big", "large", "huge", "generously", "happily", "dying",
          "skies", "news",
          "hopeful", "hopefulness", "boxes", "geese", "mice", "ran", "running", "better", "best"]


def _stress_corpus(index: ParaphraseIndex, n: int = 1500, seed: int = 0) -> tuple[list[str],
                                                                                  list[list[str]]]:
    """Seeded captions of every kind the normaliser and matchers treat specially; paraphrase-rich
    pairs made of phrase pairs of the jar's own table; long (past the 63-word search masks) and
    repetitive captions; words whose Java hashes collide ("a\u00ff" and "b\u00e0": the jar matches
    them exactly)."""
    rng = random.Random(seed)
    entries = rng.sample(range(len(index.entry_first)), 3000)
    pairs = [(" ".join(index.phrase_words(int(index.entry_first[e]))),
              " ".join(index.phrase_words(int(index.entry_second[e])))) for e in entries]

    def caption(kind: int) -> str:
        if kind == 0:
            return " ".join(rng.choice(PIECES) for _ in range(rng.choice([1, 3, 8, 15])))
        if kind == 1:
            return rng.choice(["", " ", "".join(rng.choice(PIECES) for _ in range(4))])
        if kind == 2:
            return " ".join(
                rng.choice(PIECES[:40] + ["a", "the", "dog"]) for _ in range(rng.randint(60, 90))
            )
        return " ".join([rng.choice(["a", "the", "dog", "a dog"])] * rng.randint(5, 30))

    hyps, refs = [], []
    for k in range(n):
        # paraphrase-rich: one side's phrases, the other side's paraphrases, some filler
        if k % 3 == 0:
            chosen = rng.sample(pairs, rng.randint(1, 4))
            hyps.append(" ".join(a + " " + rng.choice(PIECES) for a, _ in chosen))
            refs.append([" ".join(b for _, b in chosen),
                         " ".join(rng.choice(PIECES) for _ in range(6))])
        else:
            hyps.append(caption(rng.randrange(4)))
            refs.append([caption(rng.randrange(4)) for _ in range(rng.randint(1, 5))])
    return hyps, refs


@needs_java
def test_generated_stress_corpus():
    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index)
    # long lines take the per-pair search
    assert any(len(h.split()) > 63 for h in hyps)
    assert java_string_hash("a\u00ff") == java_string_hash("b\u00e0")
    # "|||" in texts: the jar splits there
    hyps.append("a ||| b  c")
    refs.append(["x|||y", "a b|||", "c"])
    hyps.append("a\u00ff dog")
    # one hash: an exact match to the jar
    refs.append(["b\u00e0 dog"])
    stats = _assert_same_lines(hyps, refs)
    # every matcher took part
    for module, name in ((1, "stem"), (2, "synonym"), (3, "paraphrase")):
        assert sum(1 for s in stats if s[4 + 4 * module] > 0) > 5, name
    assert stats[-1][4] == 2.0     # exact content matches: "dog", and the two words with one hash


@needs_java
def test_normaliser_equals_the_jars_on_the_stress_texts():
    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index, n=600, seed=1)
    texts = list(dict.fromkeys([*hyps, *(r for rs in refs for r in rs)]))
    prefixes = parse_prefixes(
        zipfile.ZipFile(java.meteor_jar()).read("nonbreaking/english.prefixes").decode()
    )
    want = normalize(texts)
    assert want is not None
    assert [normalize_line(t, prefixes) for t in texts] == want


@needs_java
def test_stemmer_equals_the_jars_snowball_stemmer(tmp_path):
    """The jar's ``Stemmer en`` class (Snowball English of the jar, not today's) on WordNet's words
    and exceptions, the paraphrase table's vocabulary and generated words; it leaves numbers
    alone."""
    with zipfile.ZipFile(java.meteor_jar()) as z:
        words = set(z.read("synonym/english.synsets").decode().split("\n")[0::2])
        words.update(z.read("synonym/english.exceptions").decode().split())
    words.update(
        ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz").vocabulary()
    )
    rng = random.Random(2)
    letters = "abcdefghijklmnopqrstuvwxyz'y\u00e9\u00fc\u00df\u0131\u03c3\U0001d431"
    words.update(
        "".join(rng.choice(letters) for _ in range(rng.randint(1, 12))) for _ in range(20_000)
    )
    words = sorted(
        w for w in words if w and w.split() == [w] and not all(c in "0123456789,.-" for c in w)
    )
    got = _run_jar((*_UTF8, "-cp", java.meteor_jar().name, "Stemmer", "en"), words, tmp_path)
    ours = [
        stem(utf16_units(w)).encode("utf-16-le", "surrogatepass").decode("utf-16-le") for w in words
    ]
    bad = [(w, g, o) for w, g, o in zip(words, got, ours) if g != o]
    assert not bad, bad[:10]
    assert stem("added") == "ad" and stem("emergency") == "emerg"   # where today's Snowball differs


def test_backend_choice_and_eligibility():
    assert python_eligible(
        ["a caf\u00e9 \u2019s \u201cview\u201d \U0001f600"], [["\u6771\u4eac 1,000"]]
    ) == (True, "")
    ok, why = python_eligible(["\u0130stanbul"], [["x"]])
    assert not ok and "U+0130" in why
    # lowercased only since Unicode 14
    assert not python_eligible(["\u2c2f"], [["x"]])[0]
    assert not python_eligible(["two\nlines"], [["x"]])[0]
    with pytest.raises(InputError, match="unknown METEOR backend"):
        meteor_stats(["a"], [["a"]], backend="perl")


@needs_java
def test_auto_keeps_the_jar_where_python_is_unproven():
    hyps, refs = ["\u0130stanbul at night", "a dog"], [["istanbul by night"], ["a dog"]]
    lines, how = meteor_stats(hyps, refs, backend="auto")
    assert how.startswith("java, ") and "U+0130" in how
    assert lines == _jar(hyps, refs)
    lines, how = meteor_stats(["a dog"], [["a dog"]], backend="auto")
    assert how == "python" and lines == ["2.0 2.0 1.0 1.0 1.0 1.0 1.0 1.0 0.0 0.0 0.0 0.0 0.0 0.0 "
                                         "0.0 0.0 0.0 0.0 0.0 0.0 1.0 2.0 2.0"]


def test_python_backend_starts_no_process(monkeypatch):
    """No JVM: any subprocess during a Python METEOR run fails the test. Hand-derived statistics: "a
    dog" against "a dog": 2 words each, 1 function word ("a"), exact matches: 1 content and 1
    function word on each side, one chunk, 2 matched words each side."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    lines, how = meteor_stats(["a dog"], [["a dog", "a cat"]], backend="python")
    assert how == "python"
    assert lines == ["2.0 2.0 1.0 1.0 1.0 1.0 1.0 1.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 "
                     "0.0 1.0 2.0 2.0"]


def test_cli_meteor_backend_python_gives_the_official_number(tmp_path):
    """``vlbench score nocaps --meteor-backend python`` on a golden case: METEOR as the official
    toolkit."""
    case = GOLDEN / "random_small"
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "vlbench", "score", "nocaps", "--references",
                           str(case / "references.json"),
                           "--predictions", str(case / "predictions.json"), "--meteor-backend",
                           "python",
                           "--tokenizer", "python", "--quiet", "--output", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    want = json.loads((case / "expected.json").read_text())["metrics"]
    assert got["options"]["meteor"] == "python"
    for key in ("METEOR", "METEOR_in", "METEOR_near", "METEOR_out"):
        assert got["metrics"][key] == pytest.approx(want[key], abs=1e-9), key


@pytest.mark.heavy
def test_per_pair_aligner_equals_the_batch_on_the_stress_corpus(monkeypatch):
    """The loop-for-loop aligner (``pymeteor.aligner``, the reference implementation and the path
    for long lines) and the array version (``batch`` + ``beam``) give the same statistics on every
    stress pair; no Java needed, so this holds the two together wherever the jar tests cannot
    run."""
    from vlbench.engine.captions.pymeteor import batch

    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index, n=400, seed=3)
    arrays, _ = meteor_stats(hyps, refs, backend="python")
    # every pair with words takes the per-pair aligner
    monkeypatch.setattr(batch, "MAX_WORDS", 0)
    per_pair, _ = meteor_stats(hyps, refs, backend="python")
    assert per_pair == arrays


@needs_java
def test_cached_reference_side_gives_the_same_lines(tmp_path, monkeypatch):
    """The references' METEOR data read back from the disk cache (#32) give the statistics the jar
    gives."""
    import vlbench.engine.captions.pymeteor.stats as pymeteor
    from vlbench.engine.captions import textcache

    monkeypatch.setattr(textcache, "folder", lambda: tmp_path / "texts")
    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index, n=600, seed=2)
    assert len({r for rs in refs for r in rs}) >= textcache.MIN_TEXTS
    calls: list[str] = []
    real = pymeteor._word_info
    monkeypatch.setattr(pymeteor, "_word_info", lambda w, data: calls.append(w) or real(w, data))
    first = _assert_same_lines(hyps, refs)              # computed, compared with the jar, stored
    (stored,) = (tmp_path / "texts").glob("meteor-references-*.bin")
    # the JSON line after the file's own header
    header = stored.read_bytes().split(b"\n", 2)[1]
    reference_words = {row[0] for row in json.loads(header)["value"][1]}
    looked_up, calls[:] = set(calls), []
    again = _assert_same_lines(hyps, refs)              # read back, compared with the jar again
    assert again == first
    # the references' words came from the file
    assert reference_words and not reference_words & set(calls)
    assert looked_up == reference_words | set(calls)


def test_the_references_phrases_read_back_give_the_reduction_of_all_lines(tmp_path, monkeypatch):
    """The paraphrase entries a corpus can use, with the phrases of the references' lines kept on
    disk (#32): the same entries as the reduction of all lines at once, whether the references'
    phrases were just found, read back from the cache (their n-grams not hashed again: only the
    other lines' are) or found without a cache (an index not read from its cache folder has no key
    to store them under)."""
    import dataclasses

    import vlbench.engine.captions.pymeteor.stats as pymeteor
    from vlbench.engine.captions import textcache

    monkeypatch.setattr(textcache, "folder", lambda: tmp_path / "texts")
    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index, n=600, seed=2)
    reference_lines = {r.lower() for rs in refs for r in rs}
    lines = list(dict.fromkeys([h.lower() for h in hyps] + [r.lower() for rs in refs for r in rs]))
    line_words = [pymeteor._words(line) for line in lines]
    whole = index.kept_entries_for_words(line_words)
    assert len(reference_lines) >= textcache.MIN_TEXTS and len(whole) > 100
    hashed: list[int] = []
    real = ParaphraseIndex.ngram_hashes
    monkeypatch.setattr(ParaphraseIndex, "ngram_hashes", lambda self,
                        words: hashed.append(len(words)) or real(self, words))
    jar = java.meteor_jar()
    for _ in range(2):
        assert np.array_equal(
            pymeteor._usable_entries(index, lines, line_words, reference_lines, jar), whole
        )
    others = len(set(lines) - reference_lines)
    # the second call read the references' phrases
    assert hashed == [len(reference_lines), others, others]
    assert len(list((tmp_path / "texts").glob("meteor-phrases-*.bin"))) == 1
    keyless = dataclasses.replace(index, folder="")
    assert np.array_equal(
        pymeteor._usable_entries(keyless, lines, line_words, reference_lines, jar), whole
    )


@needs_java
def test_kept_entries_from_parts_of_the_lines_equal_those_of_all_lines():
    """n-grams never cross a line: the paraphrase reduction from the references' cached hashes
    united with the hypotheses' is the reduction of all lines."""
    index = ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    hyps, refs = _stress_corpus(index, n=400, seed=3)
    a = [h.lower().split() for h in hyps]
    b = [r.lower().split() for rs in refs for r in rs]
    whole = index.kept_entries_for_words(a + b)
    assert len(whole) > 100
    assert np.array_equal(
        index.kept_entries_for_grams(index.ngram_hashes(b), index.ngram_hashes(a)), whole
    )
    assert np.array_equal(index.kept_entries_for_grams(index.ngram_hashes(a + b)), whole)


def test_best_lines_print_the_counts_as_javas_double_to_string():
    """The statistics line keeps, per SCORE line, its first reference with the highest score and
    prints each count as Java's ``Double.toString``: "<n>.0" below 10^7, "d.dddE<k>" from there
    (hand-written expectations: 0 -> "0.0", 12345678 -> "1.2345678E7", 10^7 -> "1.0E7"). Rows: two
    references of line 0 (the second scores higher: more matches), one of line 1, none of line 2
    (the jar's error line)."""
    from vlbench.engine.captions.pymeteor.stats import _ERROR_LINE, _best_lines

    def row(matches: int, other: float = 0.0) -> list[float]:
        r = [4.0, 4.0, 1.0, 1.0] + [0.0] * 19
        # exact matches of content words, hypothesis and reference side
        r[4] = r[5] = float(matches)
        r[19] = other
        r[20] = 1.0 if matches else 0.0     # one chunk
        r[21] = r[22] = float(matches)      # matches per side
        return r

    rows = np.array([row(1), row(3), row(2, 12345678.0)])
    owner = np.array([0, 0, 1])
    head = "4.0 4.0 1.0 1.0 "
    assert _best_lines(rows, owner, 3) == [
        head + "3.0 3.0 " + "0.0 " * 13 + "0.0 1.0 3.0 3.0",
        head + "2.0 2.0 " + "0.0 " * 13 + "1.2345678E7 1.0 2.0 2.0",
        _ERROR_LINE]
    rows[2, 19] = 1e7
    assert " 1.0E7 1.0 2.0 2.0" in _best_lines(rows, owner, 3)[1]
    rows[2, 19] = 9999999.0
    assert " 9999999.0 1.0 2.0 2.0" in _best_lines(rows, owner, 3)[1]
