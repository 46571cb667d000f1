"""METEOR 1.5's English normaliser (``-norm``: punctuation kept), rule for rule.

The jar's ``Normalizer.normalizeLine`` is a Moses-style tokenizer written as a sequence of
``java.util.regex`` replacements. Java's classes differ from Python's: ``\\s`` is ASCII whitespace,
``\\p{Digit}`` is ``[0-9]`` and ``\\p{Lower}`` is ``[a-z]`` (no Unicode classes), and the word
splitter (``StringTokenizer``) and ``trim`` have their own character sets. Every class below is
spelled out so that Python's ``re`` means the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..meteor_lines import java_trim

__all__ = ["normalize_line", "java_tokens"]

#: The letters the jar treats as alphabetic: ASCII, Latin-1 and Latin Extended-A letters, Cyrillic
#: (with its supplement and extensions) and the phonetic extensions.
_ALPHA = ("A-Za-z\u0160\u017d\u0161\u017e\u0178\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017e"
          "\u0400-\u04ff\u0500-\u0527\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f")
_ALNUM = "0-9" + _ALPHA
_JAVA_S = " \t\n\x0b\f\r"                        # java.util.regex \s

_SEP_OTHER = re.compile(f"([^{_ALNUM}{_JAVA_S}.'`,\\-\u2018\u2019])")
_MULTI_DOT = re.compile(r"\.([.]+)")
_MULTI_DOT2 = re.compile(r"DOTMULTI\.([^.])")
_COMMA = (re.compile(r"([^0-9]),([^0-9])"), re.compile(r"([0-9]),([^0-9])"),
          re.compile(r"([^0-9]),([0-9])"))
_QUOTE = re.compile("[`\u2018\u2019]")
_QUOTE2 = re.compile("[\u201c\u201d]|''")
_RM_DASH = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")
_CONTRACTIONS = (  # English splits contractions to the right: "it's" -> "it 's"
    (re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([{_ALPHA}])'([{_ALPHA}])"), r"\1 '\2"),
    (re.compile(r"([0-9])'(s)"), r"\1 '\2"),
)
_HAS_ALPHA = re.compile(f"[{_ALPHA}]")
_WHITE = re.compile("[ \u2000-\u200a\u202f\u205f\u3000\u00a0]+")
#: java.util.StringTokenizer's default delimiters.
_TOKEN_DELIMITERS = re.compile("[ \t\n\r\f]+")

NBP_ANY, NBP_NUMERIC_ONLY = 1, 2


def java_tokens(line: str) -> list[str]:
    """``new StringTokenizer(line)``'s tokens."""
    return [t for t in _TOKEN_DELIMITERS.split(line) if t]


def parse_prefixes(text: str) -> dict[str, int]:
    """The nonbreaking-prefix file (``nonbreaking/english.prefixes``): a word per line, ``#``
    comments, ``#NUMERIC_ONLY#`` after a word that keeps its dot only before a number."""
    out: dict[str, int] = {}
    for line in text.split("\n"):
        words = java_tokens(line.rstrip("\r"))
        if not words or words[0].startswith("#"):
            continue
        out[words[0]] = (
            NBP_NUMERIC_ONLY if len(words) > 1 and words[1] == "#NUMERIC_ONLY#" else NBP_ANY
        )
    return out


def normalize_line(line: str, prefixes: Mapping[str, int]) -> str:
    """``Normalizer.normalizeLine(line, English, keepPunctuation=true)``."""
    s = _SEP_OTHER.sub(r" \1 ", f" {line} ")
    s = _MULTI_DOT.sub(r" DOTMULTI\1", s)
    while "DOTMULTI." in s:
        s = _MULTI_DOT2.sub(r"DOTDOTMULTI \1", s)
        s = s.replace("DOTMULTI.", "DOTDOTMULTI")
    for pattern in _COMMA:
        s = pattern.sub(r"\1 , \2", s)
    s = _QUOTE.sub("'", s)
    s = _QUOTE2.sub(' " ', s)
    s = s.replace("\u2013", "-").replace("--", "-")
    s = _RM_DASH.sub(r"\1 \2", s)
    for pattern, replacement in _CONTRACTIONS:
        s = pattern.sub(replacement, s)
    s = _break_dots(java_tokens(s), prefixes)
    while "DOTDOTMULTI" in s:
        s = s.replace("DOTDOTMULTI", "DOTMULTI.")
    s = s.replace("DOTMULTI", ".")
    return java_trim(_WHITE.sub(" ", s))


def _break_dots(words: list[str], prefixes: Mapping[str, int]) -> str:
    """Rebuild the line a word at a time, splitting a final dot off unless the word is a nonbreaking
    prefix (or is followed by a lowercase word, or by a number for numeric-only prefixes); dotted
    abbreviations lose their dots (U.S. -> US)."""
    out = []
    for i, word in enumerate(words):
        if len(word) > 1 and word.endswith("."):
            pre = word[:-1]
            kind = prefixes.get(pre)
            following = words[i + 1] if i + 1 < len(words) else ""
            if "." in pre and _HAS_ALPHA.search(pre):
                word = word.replace(".", "")
            elif kind == NBP_ANY or following[:1] in _ASCII_LOWER:
                pass
            elif kind == NBP_NUMERIC_ONLY and following[:1] in _DIGITS:
                pass
            else:
                word = pre + " ."
        out.append(word + " ")
    return "".join(out)


_ASCII_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
