"""A Python re-implementation of Stanford CoreNLP 3.4.1's PTBTokenizer for one caption line, as
pycocoevalcap runs it (``-preserveLines``; lower-casing and the punctuation filter come after).

Written from the tokenizer's observable behaviour (OFFICIAL-SCORERS.md 4.3.2 and the golden
tokenizer corpus), not from its source. Like the JFlex lexer it imitates, it takes at each position
the longest match among its token patterns (ties to the earlier pattern). Whitespace-separated
chunks are tokenized independently, with a cache (captions reuse words), then sentence-final
periods and abbreviations are settled with a look at the next chunk.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ptb_tokenize"]

# Abbreviations that keep their period (the tokenizer's list, as far as captions need it).
_ABBREV = {
    "mr", "mrs", "ms", "dr", "st", "mt", "jr", "sr", "prof", "gen", "gov", "sen", "rep", "rev", "capt", "col",
    "lt", "sgt", "ave", "blvd", "rd", "inc", "ltd", "co", "corp", "dept", "univ", "assn", "bros", "vs", "etc",
    "ph.d", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "fig", "est", "ft",
}
#: Abbreviations that keep their period only before a number ("No. 5"); otherwise it splits off.
_ABBREV_BEFORE_NUMBER = {"no", "nos", "art", "pp", "p"}

_FUSED = {"cannot": 3, "gonna": 3, "gotta": 3, "wanna": 3, "gimme": 3, "lemme": 3}
_CLITICS = ("s", "re", "ve", "ll", "d", "m")

_L = r"[^\W\d_½¼¾]"          # a letter (Unicode)
_LD = r"[^\W_½¼¾]"            # a letter or digit
_D = r"\d"

_PATTERNS = [(name, re.compile(p, re.UNICODE)) for name, p in [
    ("url", r"https?://[^\s\"<>()\[\]{}]*[^\s\"<>()\[\]{}.,;:!?]"),
    ("email", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    ("www", r"www\.[\w-]+(?:\.[\w-]+)+"),
    ("tag", r"</?[A-Za-z][A-Za-z0-9]*>"),
    ("atword", rf"{_LD}*@{_LD}+"),
    ("entity", r"&(?:amp|lt|gt|quot|apos);"),
    ("hashword", rf"#{_L}{_LD}*"),
    ("ellipsis", r"\.{2,}|…"),
    ("excl", r"[!?]+"),
    ("dashes", r"-{2,}|[–—]"),
    ("number", rf"[+-]?(?:{_D}+(?:[,.:/]{_D}+)*|[.,]{_D}+(?:[,.:/]{_D}+)*)"),
    ("word", rf"(?:{_L}{_LD}*(?:\.{_L}{_LD}*)*|{_D}+{_L}{_LD}*)(?:\.(?!{_LD}))?"),
    ("hyphenated", rf"[\w.,]*{_LD}(?:-[\w.]*{_LD})+(?:\.(?!{_LD}))?"),
    ("slashed", r"[A-Za-z0-9]+(?:/[A-Za-z0-9]+)+"),
    ("amp", r"[A-Z]+&[A-Z]+"),
    ("plusplus", rf"{_L}\+\+"),
    # 'tis / 'twas split off a lower-case word that does not end in n ("a'tis" -> a 't is), as observed
    ("apos_word", r"(?:[A-Za-z]*[A-Z]|[A-Za-z]*n)['’](?:tis|twas)(?![A-Za-z])"
                  r"|[A-Za-z]*[nN]['’][tT][A-Za-z]*(?!['’])"
                  r"|[A-Za-z]+['’](?!(?:em|cause|tis|twas)(?![A-Za-z]))[A-Za-z]{2,}(?!['’])"
                  r"|[dD]['’](?![\w'’])"),
    ("apos_lead", rf"['’](?:(?:em|{_D}0[sS]|cause|s|re|ve|ll|d|m)(?![A-Za-z])|n['’]|t(?=(?:is|was)(?![A-Za-z])))"),
]]

_KEEP = "\x00"
#: Words that, following a single-letter initial at the end of a sentence, make its period sentence-final.
_SENTENCE_STARTERS = {"A", "An", "The"}

_QUOTES = "\"“”«»‘’‚‹›`'"
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_CURRENCY = {"£": "#", "€": "$", "$": "$", "¥": "¥"}


def _longest(text: str, pos: int) -> tuple[str, str] | None:
    best: tuple[str, str] | None = None
    for name, pattern in _PATTERNS:
        m = pattern.match(text, pos)
        if m and m.end() > pos and (best is None or len(m.group(0)) > len(best[1])):
            best = (name, m.group(0))
    return best


def _split_word(word: str) -> list[str]:
    """Fused forms (cannot -> can not) and clitics (don't -> do n't, it's -> it 's)."""
    low = word.lower()
    if low in _FUSED:
        n = _FUSED[low]
        return [word[:n], word[n:]]
    m = re.match(r"^(.+?)(n['’]t[A-Za-z]*)$", word, re.IGNORECASE)
    if m:
        return _split_word(m.group(1)) + [m.group(2).replace("’", "'")]
    m = re.match(r"^(.+?)(['’](?:%s))$" % "|".join(_CLITICS), word, re.IGNORECASE)
    if m:
        return _split_word(m.group(1)) + [m.group(2).replace("’", "'")]
    return [word]


@lru_cache(maxsize=200_000)
def _chunk(text: str) -> tuple[str, ...]:
    """Tokens of one whitespace-free chunk, before the sentence-final rules."""
    if text.lower() == "y'all":
        return (text[:2], text[2:])
    out: list[str] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch == "½":
            out.append("1/2")
            pos += 1
            continue
        if ch in _BRACKETS:
            out.append(_BRACKETS[ch])
            pos += 1
            continue
        if ch in _CURRENCY:
            out.append(_CURRENCY[ch])
            pos += 1
            continue
        found = _longest(text, pos)
        if found is None:
            # one character: quotes become (dropped) quote tokens, anything else stands alone
            out.append("''" if ch in _QUOTES else ("#" if ch == "#" else ch))
            pos += 1
            continue
        kind, tok = found
        # a word directly followed by a clitic or n't ("don't", "it's") takes it along, to be split off
        if kind in ("word", "hyphenated", "slashed") and pos + len(tok) < len(text):
            m = re.match(r"n['’]t(?![A-Za-z])|['’](?:s|re|ve|ll|d|m)(?![A-Za-z])", text[pos + len(tok):], re.IGNORECASE)
            if m:
                tok += m.group(0)
        pos += len(tok)
        if kind in ("word", "hyphenated", "number", "amp") and text[pos:pos + 2] in (".,", ".;", ".:"):
            tok += "."
            pos += 1
        if tok.endswith(".") and text[pos:pos + 1] in (",", ";", ":") and pos < len(text):
            tok += _KEEP  # a period before , ; : stays on its word ("street.," -> street. ,)
        if kind == "ellipsis":
            out.append("...")
        elif kind == "dashes":
            out.append("--")
        elif kind == "entity":
            out.append({"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "''", "&apos;": "'"}[tok])
        elif kind in ("word", "hyphenated", "slashed", "apos_word"):
            out.extend(_split_word(tok))
        else:
            out.append(tok)
    return tuple(out)


def _settle_period(tok: str, next_chunk: str) -> list[str]:
    """A word-final period stays only on abbreviations, acronyms and initials; else it splits off."""
    if tok.endswith(_KEEP):
        return [tok[:-1]]
    if not tok.endswith(".") or len(tok) < 2 or set(tok) <= {"."}:
        return [tok]
    stem = tok[:-1]
    low = stem.lower()
    initial = re.fullmatch(r"[^\W\d_]", low) is not None
    keep = (low in _ABBREV or (low in _ABBREV_BEFORE_NUMBER and next_chunk[:1].isdigit())
            or re.fullmatch(r"(?:[^\W\d_]\.)+[^\W\d_]", low) is not None
            or (initial and next_chunk not in _SENTENCE_STARTERS))
    return [tok] if keep else [stem, "."]


def ptb_tokenize(line: str, next_line: str = "") -> list[str]:
    """Tokens of one caption line (original case; the caller lower-cases). The tokenizer reads the
    captions as one stream, so the first word of the next line can decide a line-final period."""
    chunks = line.split()
    following = next_line.split()[:1]
    out: list[str] = []
    for i, chunk in enumerate(chunks):
        toks = _chunk(chunk)
        if not _has_period(toks):         # most chunks: nothing for the period rules to decide
            out.extend(toks)
            continue
        next_chunk = chunks[i + 1] if i + 1 < len(chunks) else (following[0] if following else "")
        for j, tok in enumerate(toks):
            out.extend(_settle_period(tok, next_chunk if j == len(toks) - 1 else ""))
    return out


@lru_cache(maxsize=200_000)
def _has_period(toks: tuple[str, ...]) -> bool:
    """Whether a token of the chunk ends with a period (or the kept-period mark) for :func:`_settle_period`."""
    return any(t.endswith((".", _KEEP)) for t in toks)
