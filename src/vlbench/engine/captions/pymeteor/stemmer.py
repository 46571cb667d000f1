"""The English Snowball ("Porter2") stemmer as compiled into ``meteor-1.5.jar`` (the 2006 rules).

The stemmer of today's Snowball (and of the ``snowballstemmer`` package) has moved on: it keeps
``-ogist``, undoubles fewer consonants ("added" -> "add", the jar says "ad"), knows more R1 prefixes
("emerg", "univers", ...) and more exceptions ("evening"). METEOR's stem matches follow the jar, so
this module implements the older rules from the published algorithm: prelude (initial apostrophe,
``y`` -> ``Y`` after vowels), the R1/R2 regions (with the prefixes gener-, commun-, arsen-), steps
0-5 and the two exception lists.

Words are strings of UTF-16 code units (see :func:`utf16_units`): Java counts a character outside
the Basic Multilingual Plane as two, which changes "shorter than three letters" for such words.
"""

from __future__ import annotations

__all__ = ["stem", "utf16_units"]

_VOWELS = frozenset("aeiouy")
_NOT_SHORT_END = frozenset("aeiouywxY")        # what may not end a short syllable
_LI_ENDINGS = frozenset("cdeghkmnrt")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_R1_PREFIXES = ("commun", "gener", "arsen")

_EXCEPTIONS = {"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
               "idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
               "singly": "singl", "sky": "sky", "news": "news", "howe": "howe",
               "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes"}
_KEPT_AFTER_STEP_1A = frozenset(["inning", "outing", "canning", "herring", "earring", "proceed",
                                 "exceed", "succeed"])

# (suffix, replacement) per step; the longest suffix that ends the word is chosen *before* the
# region test, and a failed test means no change (no fall-back to a shorter suffix)
_STEP2 = {"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
          "izer": "ize",
          "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate", "alism": "al",
          "aliti": "al",
          "alli": "al", "fulness": "ful", "ousli": "ous", "ousness": "ous", "iveness": "ive",
          "iviti": "ive",
          "biliti": "ble", "bli": "ble", "ogi": "og", "fulli": "ful", "lessli": "less", "li": ""}
_STEP3 = {"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic",
          "ical": "ic", "ful": "", "ness": "", "ative": ""}
_STEP0 = ("'", "'s", "'s'")
_STEP1A = ("sses", "ied", "ies", "s", "us", "ss")
_STEP1B = ("eed", "eedly", "ed", "edly", "ing", "ingly")
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism",
          "ate", "iti", "ous", "ive", "ize", "ion")


def utf16_units(word: str) -> str:
    """``word`` with every character outside the BMP as its two surrogate code units (Java's
    view)."""
    if word.isascii() or all(ord(c) < 0x10000 for c in word):
        return word
    return "".join(
        c
        if ord(c) < 0x10000
        else chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF))
        for c in word
    )


def _by_length(suffixes) -> tuple[tuple[int, frozenset[str]], ...]:
    """Suffixes grouped by length, longest first (for :func:`_longest_suffix`)."""
    lengths = sorted({len(s) for s in suffixes}, reverse=True)
    return tuple((n, frozenset(s for s in suffixes if len(s) == n)) for n in lengths)


def _longest_suffix(word: str, groups: tuple[tuple[int, frozenset[str]], ...]) -> str | None:
    """The longest suffix of the groups (:func:`_by_length`) that ends ``word`` (Snowball's
    ``among``)."""
    for n, group in groups:
        if len(word) >= n and word[-n:] in group:
            return word[-n:]
    return None


_STEP0_GROUPS, _STEP1A_GROUPS, _STEP1B_GROUPS, _STEP2_GROUPS, _STEP3_GROUPS, _STEP4_GROUPS = (
    _by_length(s) for s in (_STEP0, _STEP1A, _STEP1B, _STEP2, _STEP3, _STEP4))


def _regions(w: str) -> tuple[int, int]:
    """(p1, p2): R1 starts after the first non-vowel that follows a vowel (or after a listed
    prefix), R2 the same within R1; the word's length when there is none."""
    n = len(w)

    def after_vc(start: int) -> int:
        i = start
        while i < n and w[i] not in _VOWELS:
            i += 1
        while i < n and w[i] in _VOWELS:
            i += 1
        return i + 1 if i < n else n

    prefix = next((p for p in _R1_PREFIXES if w.startswith(p)), None)
    p1 = len(prefix) if prefix is not None else after_vc(0)
    # a failed search leaves the cursor at the end: both are then the length
    return p1, after_vc(p1)


def _short_syllable_at(w: str, end: int) -> bool:
    """Whether ``w[:end]`` ends in a short syllable: non-vowel, vowel, non-vowel other than w, x, Y;
    or vowel, non-vowel at the very start of the word."""
    if (
        end >= 3
        and w[end - 1] not in _NOT_SHORT_END
        and w[end - 2] in _VOWELS
        and w[end - 3] not in _VOWELS
    ):
        return True
    return end == 2 and w[1] not in _VOWELS and w[0] in _VOWELS


def _step1a(w: str) -> str:
    suffix = _longest_suffix(w, _STEP0_GROUPS)
    if suffix:
        w = w[: len(w) - len(suffix)]
    suffix = _longest_suffix(w, _STEP1A_GROUPS)
    if suffix == "sses":
        return w[:-2]
    if suffix in ("ied", "ies"):
        return w[:-3] + ("i" if len(w) - 3 >= 2 else "ie")
    if suffix == "s":
        # a vowel somewhere before the letter that precedes the s
        if len(w) >= 2 and any(c in _VOWELS for c in w[: len(w) - 2]):
            return w[:-1]
    return w


def _step1b(w: str, p1: int) -> str:
    suffix = _longest_suffix(w, _STEP1B_GROUPS)
    if suffix is None:
        return w
    stem_end = len(w) - len(suffix)
    if suffix in ("eed", "eedly"):
        return w[:stem_end] + "ee" if stem_end >= p1 else w
    if not any(c in _VOWELS for c in w[:stem_end]):
        return w
    w = w[:stem_end]
    if w.endswith(("at", "bl", "iz")):
        return w + "e"
    if w.endswith(_DOUBLES):
        return w[:-1]
    if len(w) == p1 and _short_syllable_at(w, len(w)):
        return w + "e"
    return w


def _step1c(w: str) -> str:
    if len(w) >= 3 and w[-1] in "yY" and w[-2] not in _VOWELS:
        return w[:-1] + "i"
    return w


def _step2(w: str, p1: int) -> str:
    suffix = _longest_suffix(w, _STEP2_GROUPS)
    if suffix is None or len(w) - len(suffix) < p1:
        return w
    stem = w[: len(w) - len(suffix)]
    if suffix == "ogi":
        return stem + "og" if stem.endswith("l") else w
    if suffix == "li":
        return stem if stem and stem[-1] in _LI_ENDINGS else w
    return stem + _STEP2[suffix]


def _step3(w: str, p1: int, p2: int) -> str:
    suffix = _longest_suffix(w, _STEP3_GROUPS)
    if suffix is None or len(w) - len(suffix) < p1:
        return w
    stem = w[: len(w) - len(suffix)]
    if suffix == "ative":
        return stem if len(stem) >= p2 else w
    return stem + _STEP3[suffix]


def _step4(w: str, p2: int) -> str:
    suffix = _longest_suffix(w, _STEP4_GROUPS)
    if suffix is None or len(w) - len(suffix) < p2:
        return w
    stem = w[: len(w) - len(suffix)]
    if suffix == "ion":
        return stem if stem.endswith(("s", "t")) else w
    return stem


def _step5(w: str, p1: int, p2: int) -> str:
    if w.endswith("e"):
        at = len(w) - 1
        if at >= p2 or (at >= p1 and not _short_syllable_at(w, at)):
            return w[:-1]
    elif w.endswith("l"):
        at = len(w) - 1
        if at >= p2 and w[:-1].endswith("l"):
            return w[:-1]
    return w


def stem(word: str) -> str:
    """The jar's ``englishStemmer`` on one word given as UTF-16 code units (:func:`utf16_units`)."""
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    if len(word) < 3:
        return word
    w = word[1:] if word.startswith("'") else word
    y_found = False
    if "y" in w:
        chars = list(w)
        for i, c in enumerate(chars):     # left to right: a y made Y is no vowel for the next one
            if c == "y" and (i == 0 or chars[i - 1] in _VOWELS):
                chars[i], y_found = "Y", True
        w = "".join(chars)
    p1, p2 = _regions(w)
    w = _step1a(w)
    if w not in _KEPT_AFTER_STEP_1A:
        w = _step1b(w, p1)
        w = _step1c(w)
        w = _step2(w, p1)
        w = _step3(w, p1, p2)
        w = _step4(w, p2)
        w = _step5(w, p1, p2)
    return w.replace("Y", "y") if y_found else w
