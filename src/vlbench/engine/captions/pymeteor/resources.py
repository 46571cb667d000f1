"""The English data of ``meteor-1.5.jar``, read from the jar pycocoevalcap installs (nothing is
copied into vlbench): function words, nonbreaking prefixes, WordNet synsets with its exception list
and morphology, and the paraphrase table (through the reduced index of ``captions.paraphrase``).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .normalizer import java_tokens, parse_prefixes

__all__ = ["EnglishData", "english_data", "java_string_hash"]

# WordNet 3's morphological rules as METEOR's SynonymDictionary applies them (noun, verb, adjective
# suffixes and what replaces them), tried in this order.
_MORPH_RULES = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
                ("men", "man"), ("ies", "y"), ("s", ""), ("ies", "y"), ("es", "e"), ("es", ""),
                ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""), ("er", ""), ("est", ""),
                ("er", "e"), ("est", "e"))


def java_string_hash(units: str) -> int:
    """``String.hashCode()`` of a string given as UTF-16 code units: s[0]*31^(n-1) + ... + s[n-1],
    as a signed 32-bit int. METEOR compares words (and stems) by this hash, collisions included."""
    h = 0
    for c in units:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


@dataclass(frozen=True)
class EnglishData:
    """What the English aligner reads from the jar."""

    function_words: frozenset[str]
    prefixes: dict[str, int]
    synset_lines: dict[str, str]               # word -> its synset numbers as the file lists them
    exceptions: dict[str, tuple[str, ...]]     # inflected form -> its base forms, in file order

    def synsets(self, word: str) -> frozenset[int]:
        """``getSynSets(word)``: the WordNet synsets of exactly this word."""
        line = self.synset_lines.get(word)
        # ASCII digits and spaces
        return frozenset(map(int, line.split())) if line else frozenset()

    def synonym_sets(self, word: str) -> frozenset[int]:
        """``getSynSets(word)`` united with ``getStemSynSets(word)``, as ``SynonymMatcher`` builds
        them."""
        bases = self.exceptions.get(word)
        if bases is not None:
            stem_sets = frozenset().union(*(self.synsets(b) for b in bases))
        else:
            stem_sets = self.synsets(self._morph(word))
        return self.synsets(word) | stem_sets

    def _morph(self, word: str) -> str:
        """WordNet's morphy as ``SynonymDictionary.morph`` codes it: the first rule whose result is
        a known word; a word ending in "ful" gets "ful" back on the result; "" when no rule gives a
        known word."""
        end = "ful" if word.endswith("ful") else ""
        if word.endswith("ss") or len(word) <= 2:
            # (Java counts UTF-16 units; a word this differs for is non-ASCII: no synsets)
            return word
        for suffix, replacement in _MORPH_RULES:
            if word.endswith(suffix):
                candidate = word[: len(word) - len(suffix)] + replacement
                if candidate in self.synset_lines:
                    return candidate + end
        return ""


def _lines(data: bytes, encoding: str) -> list[str]:
    """``BufferedReader.readLine`` over the whole file (\\n, \\r and \\r\\n end lines)."""
    text = data.decode(encoding)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@lru_cache(maxsize=2)
def english_data(jar: Path) -> EnglishData:
    """Read (once per jar) the English function words, prefixes and WordNet data from ``jar``."""
    with zipfile.ZipFile(jar) as z:
        function_words = frozenset(_lines(z.read("function/english.words"), "utf-8"))
        prefixes = parse_prefixes(z.read("nonbreaking/english.prefixes").decode("utf-8"))
        exc = _lines(z.read("synonym/english.exceptions"), "utf-8")
        # the jar reads the synsets in the platform charset; the file is ASCII, so any charset
        # agrees
        syn = _lines(z.read("synonym/english.synsets"), "ascii")
    exceptions: dict[str, list[str]] = {}
    for base, forms in zip(exc[0::2], exc[1::2]):
        for form in java_tokens(forms):
            exceptions.setdefault(form, []).append(base)
    return EnglishData(function_words, prefixes, dict(zip(syn[0::2], syn[1::2])),
                       {k: tuple(v) for k, v in exceptions.items()})
