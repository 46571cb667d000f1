"""The Python PTB tokenizer against Stanford's jar, as pycocoevalcap runs it (``-preserveLines
-lowerCase``, then the punctuation filter): the adversarial probes (the jar's tokens recorded in
data/adversarial/nocaps_tokenizer), the 3,200-caption golden corpus, and a generated corpus of
100,000+ captions run through the jar here, covering every class of difference the probes found and
every character
the Python path claims (all of Unicode but the capital sigma and lone surrogates). Any difference
fails; there is no tolerance."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from conftest import ADVERSARIAL
from vlbench.engine.captions import java
from vlbench.engine.captions.ptb import UNPROVEN, java_lower
from vlbench.engine.captions.tokenize import python_proven, tokenize

PROBES = next(f / "nocaps_tokenizer" / "probes.json" for f in ADVERSARIAL
              if (f / "nocaps_tokenizer").is_dir())
HAVE_JAVA = java.java_executable() is not None and java.tokenizer_jar() is not None
needs_java = pytest.mark.skipif(not HAVE_JAVA,
                                reason="needs Java (apt-get install default-jre-headless)")


def test_every_tokenizer_probe_gives_the_jar_s_tokens():
    probes = json.loads(PROBES.read_text())
    got, backend = tokenize([p["caption"] for p in probes], "python")
    assert backend == "python"
    assert [(p["caption"], g) for p, g in zip(probes, got) if g != p["expected_tokens"]] == []


# -- a generated corpus: each class the probes found, abbreviations, URLs, quotes, numbers, and
# every character
_WORDS = ["a", "the", "dog", "man", "red", "car", "two", "people", "on", "street", "with", "of",
          "in", "near", "Dog", "Man", "New", "York", "Taylor", "Swift", "I", "A", "The", "U", "S",
          "it", "is"]
_SPECIALS = [
    "Calif.", "Mass.", "Wash.", "Ind.", "Ill.", "Pa.", "Conn.", "Fig.", "fig.", "No.", "no.",
    "Nos.", "ca.", "art.",
    "Mr.", "Mrs.", "Dr.", "St.", "Mt.", "Jan.", "Sept.", "Inc.", "Co.", "Corp.", "Ltd.", "Pty.",
    "etc.", "vs.",
    "U.S.", "U.S.-based", "U.K.", "e.g.", "i.e.", "a.m.", "p.m.", "A.", "I.", "Z.", "Ph.D.", "Ed.D",
    "non-U.S",
    "http://x.com/a_b?c=1", "HTTP://WWW.EXAMPLE.COM/A", "www.site.org/p", "example.com",
    "mail@host.com",
    "<mail@host.com>", "@user_1", "#Tag", "file.jpg", "report.PDF", "-LRB-", "-RRB-", "-LSB-", "(",
    ")", "[", "]",
    "{", "}", "<", ">", "<<", ">>", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&nbsp;",
    "&mdash;", "&HT;",
    "&eacute;", "AT&T", "S&P-500", "S&Ls", "'Em", "'em", "'S", "'s", "'90S", "'90s", "'till",
    "'cause", "'twas",
    "'tis", "'n'", "rock'n'roll", "don't", "DON'T", "can't", "cannot", "gonna", "gotta", "wanna",
    "lemme", "gimme",
    "y'all", "Y'know", "o'clock", "O'Neil", "d'Artagnan", "l'eau", "c'mon", "Cap'n", "c'est", "ol'",
    "li'l",
    "nat'l", "e'er", "ev'ry", "cont'd", "nor'easter", "s'mores", "somethin'", "Dunkin'", "C++",
    "c#", "F#",
    "3-4", "1/2", "1 1/2", "3\\/4", "5\u20444", "\u00bc", "\u00bd", "\u00be", "\u2153", "\u2154",
    "\u2155",
    "\u00b2", "x\u00b2", "H\u2082O", "\u2074\u2075", "\u2167", "\u216b", "5\u00a2", "\u00a35",
    "\u20ac5", "\u00a55",
    "$5", "US$5", "#1", "5%", "1,000", "3.14", "10:30", "1.2.3.4", "555-1234", "(800) 555-1212",
    "+1 555 123 4567",
    "12/25/2020", "1-2-2003", "...", "..", ". . .", "\u2026", "\u0085", "--", "---", "----",
    "-----", "\u2013",
    "\u2014", "\u2015", "!", "!!", "?!", "a!b", "wait?what", "a_b", "__", "***", "\\*", "**", "@@",
    "##", "=",
    "/", ":", ";", ",", "\u3001", "\u3002", "\u00bf", "\u00a1", "\"", "\"Hi\"", "``", "''", "`",
    "\u2018q\u2019",
    "\u201cq\u201d", "\u201c\u201cq\u201d\u201d", "\u00abq\u00bb", "\u2039q\u203a", "\u201aq\u201e",
    ":)", ":-(",
    ";)", ":D", ":P", "=)", "^_^", "-_-", "o.O", "(^_^)", "<3", "\u300cq\u300d", "\u3010q\u3011",
    "\u00a0",
    "soft\u00adhyphen", "\u00ad", "zero\u200bwidth", "\u200e", "\ufeff", "a\u0301",
    "e\u0301te\u0301",
    "n\u0303", "\u00e9t\u00e9", "na\u00efve", "Stra\u00dfe", "\u0130stanbul", "\u0391\u0392\u0393",
    "\u0628\u064a\u062a", "\u05e9\u05dc\u05d5\u05dd", "\u4e2d\u6587", "\u65e5\u672c\u8a9e",
    "\ud55c\uad6d",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\u2764\ufe0f", "\u2605", "\u00a9", "\u00ae", "\u2122",
    "\u00b0C",
    "\u00d7", "\u00f7", "\u2192", "\u2248", "<b>", "</b>", "<a href='x'>", "<br/>", "<!DOCTYPE>",
    "<?xml?>",
    "\x7f", "\x00", "\t", "\u3000", "\u2000", "\u200a", "\u2028", "\u0096", "\u0097",
    "\u0091q\u0092",
    "\u0093q\u0094", "\u0080", "\u20a0", "\u00a4", "pre-war", "anti-", "pro-", "co-ed", "x-ray",
    "e-mail",
    "t-shirt", "T-SHIRT", "A-1", "Wi-Fi", "mid-1990s", "1990s", "'90s", "80's", "a+b", "a&b", "a|b",
    "a~b", "^",
    "\u00a6", "\u00a7", "\u00a8", "\u00ac", "\u00af", "\u00b4", "\u00b7", "\u0387", "\u2016",
    "\u2020", "\u2022",
    "\u2030", "\u2032", "\u203b", "\u2044", "\u2100", "\u2190", "\u2200", "\u2500", "\u25a0",
    "\u2600", "\u2700", "\uff01", "\uff08", "\uff1f", "\uff5e", "\uff65",
]


def _generated(seed: int = 0, n: int = 100_000) -> list[str]:
    """``n`` captions: words, specials and characters in varied neighbourhoods (glued to words,
    spaced, doubled, at caption ends before capitals), then one caption per character of Unicode in
    three contexts."""
    rng = random.Random(seed)
    captions = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 14)):
            r = rng.random()
            if r < 0.55:
                parts.append(rng.choice(_WORDS))
            elif r < 0.9:
                parts.append(rng.choice(_SPECIALS))
            else:
                parts.append(
                    rng.choice(_WORDS)
                    + rng.choice(_SPECIALS)
                    + rng.choice(["", rng.choice(_WORDS)])
                )
        glue = rng.choice([" ", " ", " ", "  ", "", "\u00a0"])
        captions.append(glue.join(parts).replace("\n", " "))
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or UNPROVEN.search(chr(c)) or c in (0x0A, 0x0D, 0x0B, 0x0C, 0x2028,
                                                                     0x2029):
            continue
        if (
            c < 0x3000
            or c % 7 == 0
            or 0xFF00 <= c <= 0xFFFF
            or 0x10570 <= c <= 0x105BF
            or 0x1F300 <= c <= 0x1FAFF
        ):
            ch = chr(c)
            captions.append(f"a{ch}b {ch} {ch}{ch}. Dog{ch} x")
    return captions


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return _generated()


@needs_java
def test_a_generated_corpus_of_every_class_and_character_equals_the_jar(corpus):
    """The jar (pycocoevalcap's command) and the Python tokenizer on the same captions, in one
    stream each."""
    assert len(corpus) >= 100_000 and python_proven(corpus)
    python, backend = tokenize(corpus, "python")
    assert backend == "python"
    jar, _ = tokenize(corpus, "java")
    differ = [(c, p, j) for c, p, j in zip(corpus, python, jar) if p != j]
    assert differ == [], differ[:20]


@pytest.mark.heavy
def test_the_lines_scanned_at_once_are_the_stream_scanned_one_match_at_a_time(corpus):
    """The line-parallel scan (``_scan_lines``) gives the sequential scan's matches on the generated
    corpus in one stream (every fifth caption) and on 5,000 random texts dense in line breaks,
    abbreviations and trailing contexts; where a match would run past its line (forced here), the
    stream is scanned match by match and the tokens are the same."""
    import numpy as np

    from vlbench.engine.captions import ptb

    dfa = ptb.automaton()

    def both(text: str) -> tuple[list, list]:
        units = np.frombuffer(text.encode("utf-16-le", errors="surrogatepass"), dtype=np.uint16)
        return list(zip(*(a.tolist() for a in ptb._scan_lines(dfa, units)))), ptb._scan(
            dfa, units.tolist()
        )

    fast, slow = both("\n".join(corpus[::5]))          # a fifth: the sequential scan is slow
    assert len(fast) > 200_000 and fast == slow
    rng = random.Random(1)
    alphabet = [*"ab .'-&;\n\r\t\u2028\u0085\u00a0", "U.S.", "Calif.", "I.", "&amp;", " \n", "\n ",
                "(800)", "555-1212", "...", ". . .", "--", "'s", "amp", "\U0001f600", "\ud800"]
    for _ in range(5_000):
        fast, slow = both("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))))
        assert fast == slow

    def crossing(*args):
        raise ptb._CrossedLine

    expected = ptb.tokenize_stream("\n".join(corpus[:3000]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ptb, "_scan_lines", crossing)
        assert ptb.tokenize_stream("\n".join(corpus[:3000])) == expected


@needs_java
def test_line_breaks_shift_later_captions_as_the_jar_does(corpus):
    """The official quirk (``shift_lines``): CR, U+2028, U+2029, VT and FF start new output
    lines."""
    caps = ["a dog\ron a sofa", "two cats\u2028sleeping", "a red\x0bcar", "a bus\x0cstop",
            "a plane\r\n", "x", "Calif.\rThe end", "U.S.\u2029A", "y"]
    assert (
        tokenize(caps, "python", shift_lines=True)[0] == tokenize(caps, "java", shift_lines=True)[0]
    )


@needs_java
def test_the_bundled_lower_case_table_is_the_jvm_s():
    """data/java17_lowercase.json equals String.toLowerCase(Locale.ENGLISH) of the Java found, for
    every code point (a JVM of another Unicode version would differ: the test says so rather than
    the tokenizer drifting)."""
    exe = java.java_executable()
    source = Path(__file__).parent / "java" / "LowerCase.java"
    out = subprocess.run(
        [str(exe), str(source)], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    java_table = {int(c, 16): "".join(chr(int(x, 16)) for x in lower.strip(",").split(","))
                  for c, lower in (line.split() for line in out.splitlines())}
    ours = {c: java_lower(chr(c)) for c in range(0x110000)
            if not 0xD800 <= c <= 0xDFFF and c != 0x3A3 and java_lower(chr(c)) != chr(c)}
    assert ours == {c: v for c, v in java_table.items() if c != 0x3A3}


def test_auto_uses_python_on_proven_text_even_with_java_and_the_jar_otherwise(monkeypatch):
    """No JVM starts for proven captions; a capital sigma (Java's word-boundary final-sigma rule)
    goes to the jar when one is there."""
    started = []
    real = subprocess.run

    def spy(cmd, *args, **kwargs):
        started.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    assert (
        tokenize(["A dog. U.S. flag", "\U0001f600 caf\u00e9"], "auto")[1] == "python"
        and not started
    )
    backend = tokenize(["\u039f\u0394\u039f\u03a3 sign"], "auto")[1]
    assert backend == ("java" if HAVE_JAVA else "python")
