"""Stanford CoreNLP 3.4.1's PTBTokenizer as pycocoevalcap runs it (``-preserveLines -lowerCase``),
without a JVM.

The tokenizer is a JFlex 1.5.1 scanner (``PTBLexer.flex``): a DFA over UTF-16 code units, longest
match first, ties to the earlier rule, some rules with trailing context (``r1/r2``), each rule an
action that may normalize its text. This module runs the jar's own automaton: its tables (character
classes, transitions, accepting states, the action of each state) are read from the jar
pycocoevalcap installs (:mod:`vlbench.engine.captions.jvmclass`), so character classes such as
``[:letter:]`` are the jar's, not today's Unicode. Written here, from the published
``PTBLexer.flex`` of the 3.4.1 release and JFlex's scanning rules: the scanner loop, the
trailing-context resolution, and what each of the automaton's 54 actions does under the options the
command line sets (PTB3 escaping, ``tokenizeNLs`` from ``-preserveLines``, untokenizable characters
deleted), then ``PTBTokenizer``'s output: tokens joined by spaces, a line per newline token, each
token lower-cased as Java's ``toLowerCase(Locale.ENGLISH)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from os import PathLike

import numpy as np
from numpy.typing import NDArray

__all__ = ["Automaton", "automaton", "tokenize_stream", "tokens", "java_lower", "UNPROVEN"]

LEXER_CLASS = "edu/stanford/nlp/process/PTBLexer"
#: ZZ_LEXSTATE[YyTraditionalTreebank3]: the start state the lexer uses without the strictTreebank3
#: option
_START_STATE = 2
_NEWLINE = object()

#: actions whose rule has trailing context of varying length: (start of the forward DFA of r1, start
#: of the backward DFA of r2), as JFlex resolves ``r1/r2`` (the end of r1 is the last position where
#: both accept)
_GENERAL_LOOKAHEAD = {24: (13, 14), 30: (3, 4), 40: (5, 6), 41: (16, 17), 43: (15, 14), 44: (9, 10),
                      47: (7, 8), 49: (11, 12)}
#: actions whose trailing context has a fixed length (given back), and one whose r1 has a fixed
#: length
_PUSHBACK = {25: 1, 26: 1, 32: 1, 34: 1, 36: 1, 42: 2, 46: 1, 48: 2, 50: 3, 51: 1, 53: 4}
_FIXED_BASE = {35: 1}
#: actions that emit nothing: untokenizable characters (deleted, logged once), spaces and
#: zero-widths, DEL
_SKIP = {1, 7, 23}
#: actions that emit a fixed text: '<' '>' and brackets (PTB escapes), em/en dashes, an ellipsis
_CONSTANT = {2: "<", 10: ">", 11: "--", 13: "...", 16: "-RCB-", 17: "-LRB-", 18: "-RRB-",
             20: "-LCB-", 21: "-RSB-", 22: "-LSB-"}
#: actions that remove soft hyphens (words, numbers, hyphenated things)
_SOFT_HYPHENS = {6, 12, 29, 30, 32, 40, 46}


@dataclass(frozen=True)
class Automaton:
    """The lexer's tables: code unit -> character class, DFA state -> action / row / attributes,
    transitions."""

    cmap: list[int]
    action: list[int]
    rowmap: list[int]
    trans: list[int]
    attribute: list[int]

    @cached_property
    def dense(self) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.uint8],
                             NDArray[np.int16]]:
        """The tables as arrays for :func:`_scan_lines`: code unit -> class, a (states, classes + 1)
        transition matrix whose extra last class (the end of the input) goes nowhere, the
        attributes, and the actions."""
        cmap = np.asarray(self.cmap, dtype=np.int32)
        classes = int(cmap.max()) + 1
        trans = np.asarray(self.trans, dtype=np.int32)
        rows = trans[np.asarray(self.rowmap, dtype=np.int64)[:, None] + np.arange(classes)]
        table = np.concatenate([rows, np.full((len(rows), 1), -1, dtype=np.int32)], axis=1)
        return (cmap, table, np.asarray(self.attribute, dtype=np.uint8),
                np.asarray(self.action, dtype=np.int16))


def _pairs(units: list[int], offset: int = 0) -> list[int]:
    """JFlex's run-length packing: (count, value) pairs; ``offset`` is added to each value (one
    repeat replaces the loop over pairs)."""
    packed = np.asarray(units, dtype=np.int64)
    return np.repeat(packed[1::2] + offset, packed[0::2]).tolist()


@lru_cache(maxsize=2)
def automaton(jar: str | PathLike | None = None) -> Automaton:
    """The PTBLexer tables of ``jar`` (default: pycocoevalcap's), unpacked as JFlex's generated code
    does."""
    from ..errors import VlbenchError
    from . import java
    from .jvmclass import string_constants

    jar = jar or java.tokenizer_jar()
    if jar is None:
        raise VlbenchError("the Python PTB tokenizer reads its tables from pycocoevalcap's "
                           "stanford-corenlp-3.4.1.jar, which is not installed")
    packed = string_constants(jar, LEXER_CLASS)

    def joined(name: str) -> list[int]:
        return [u for key in sorted(k for k in packed if k.startswith(name)) for u in packed[key]]

    rows = joined("ZZ_ROWMAP_PACKED_")
    return Automaton(cmap=_pairs(packed["ZZ_CMAP_PACKED"]),
                     action=_pairs(joined("ZZ_ACTION_PACKED_")),
                     rowmap=[(rows[i] << 16) | rows[i + 1] for i in range(0, len(rows), 2)],
                     trans=_pairs(joined("ZZ_TRANS_PACKED_"), -1),
                     attribute=_pairs(joined("ZZ_ATTRIBUTE_PACKED_")))


# -- the actions' normalizations (PTBLexer.flex, default options) ----------------------------------
def _remove_soft_hyphens(text: str) -> str:
    """U+00AD dropped (a line-breaking hint); a token of soft hyphens only becomes '-'."""
    return (text.replace("\u00ad", "") or "-") if "\u00ad" in text else text


def _quotes(text: str, probably_left: bool) -> str:
    """LaTeX quotes: ' " (and &apos; &quot;) opening or closing by position; curly and CP1252 quotes
    by shape."""
    single, double = ("`", "``") if probably_left else ("'", "''")
    text = re.sub("&apos;|'", single, text)
    text = re.sub('"|&quot;', double, text)
    text = re.sub("[\u0091\u2018\u201b\u2039]", "`", text)
    text = re.sub("[\u0092\u2019\u203a]", "'", text)
    text = re.sub("[\u0093\u201c\u00ab]", "``", text)
    return re.sub("[\u0094\u201d\u00bb]", "''", text)


_FRACTIONS = {"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3", "\u2154": "2/3"}
_CURRENCY = {"\u00a2": "cents", "\u00a3": "#", "\u0080": "$", "\u00a4": "$", "\u20a0": "$",
             "\u20ac": "$"}


def _translate(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in text)


def _parens(text: str) -> str:
    return text.replace("(", "-LRB-").replace(")", "-RRB-")


def _amp(text: str) -> str:
    return re.sub("(?i)&amp;", "&", text)


_TRANSFORMS = {
    4: lambda t: "--" if 3 <= len(t) <= 4 else t,           # hyphens: 3 or 4 make an em dash
    8: lambda t: _quotes(t, False), 36: lambda t: _quotes(t, False),
    26: lambda t: _quotes(t, True), 35: lambda t: _quotes(t, True),
    14: lambda t: _translate(t, _FRACTIONS), 15: lambda t: _translate(t, _CURRENCY),
    27: lambda t: t.replace(" ", "\u00a0"), 38: lambda t: t.replace(" ", "\u00a0"),
    39: lambda t: t.replace(" ", "\u00a0"), 28: _parens, 34: _parens,
    54: lambda t: _parens(t.replace(" ", "\u00a0")), 37: _amp, 51: _amp,
}
#: the whitespace the lexer's own work-around strips from the end of a trailing-context match
_TRAILING_SPACE = {0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85}


# -- the scanner -----------------------------------------------------------------------------------
def _lookahead(dfa: Automaton, units: Sequence[int] | NDArray[np.uint16], start: int, marked: int,
               forward: int, backward: int) -> int:
    """The end of r1 in an ``r1/r2`` match ending at ``marked``: mark where r1's DFA accepts walking
    forward, then walk r2's reversed DFA back from the end to the first position both accept
    (JFlex's general lookahead)."""
    cmap, trans, rowmap, attribute = dfa.cmap, dfa.trans, dfa.rowmap, dfa.attribute
    final = [False] * (marked - start + 1)
    state, pos = forward, start
    while state != -1 and pos < marked:
        final[pos - start] = bool(attribute[state] & 1)
        state = trans[rowmap[state] + cmap[units[pos]]]
        pos += 1
    if state != -1:
        final[pos - start] = bool(attribute[state] & 1)
    state, pos = backward, marked
    while not final[pos - start] or not attribute[state] & 1:
        pos -= 1
        state = trans[rowmap[state] + cmap[units[pos]]]
    return pos


def _scan(dfa: Automaton, units: list[int]) -> list[tuple[int, int, int]]:
    """Every match of the stream as (action, start, end of its token's text); the next match starts
    where the action leaves the input (an abbreviation's token keeps its period and gives the period
    back as well)."""
    cmap, trans, rowmap, attribute, action_of = (
        dfa.cmap,
        dfa.trans,
        dfa.rowmap,
        dfa.attribute,
        dfa.action,
    )
    n, start, out = len(units), 0, []
    while start < n:
        state, pos, action, marked = _START_STATE, start, -1, start
        while pos < n:
            state = trans[rowmap[state] + cmap[units[pos]]]
            if state == -1:
                break
            pos += 1
            flags = attribute[state]
            if flags & 1:
                action, marked = state, pos
                if flags & 8:
                    break
        number = action_of[action]
        if number in _GENERAL_LOOKAHEAD:
            marked = _lookahead(dfa, units, start, marked, *_GENERAL_LOOKAHEAD[number])
        elif number in _PUSHBACK:
            marked -= _PUSHBACK[number]
        elif number in _FIXED_BASE:
            marked = start + _FIXED_BASE[number]
        end = marked
        # the rule's own removal of whitespace the trailing context left behind
        if number in (44, 47):
            while marked > start and units[marked - 1] in _TRAILING_SPACE:
                marked -= 1
            end = marked
        # "I." before a sentence start: the letter, then the period
        if number == 47 and marked - start == 2:
            marked = end = marked - 1
        # "U.S.", "Calif." at a sentence end: the word with its
        elif number in (33, 47, 49):
            # period, and the period again as a token of its own
            marked -= 1
        out.append((number, start, end))
        start = marked
    return out


class _CrossedLine(Exception):
    """A match of :func:`_scan_lines` ran past the end of its line (the lines are then not
    independent)."""


#: per action: code units given back (the fixed-length trailing contexts of ``_PUSHBACK``)
_GIVE_BACK = np.zeros(64, dtype=np.int64)
_GIVE_BACK[list(_PUSHBACK)] = list(_PUSHBACK.values())


def _scan_lines(dfa: Automaton, units: NDArray[np.uint16]) -> tuple[NDArray[np.int64], ...]:
    """:func:`_scan` of the stream with every line (ended by ``\n``) scanned at once, in lock step:
    one numpy step moves each line's scanner one code unit (the loop over the stream's units becomes
    a loop over one line's). Each line is scanned from its own start, so the matches are the
    sequential scan's as long as every line's matches end within it; :class:`_CrossedLine`
    otherwise. Returns (action, start, end) arrays in stream order."""
    cmap, table, attribute, action_of = dfa.dense
    n, width = len(units), table.shape[1]
    # the end of the input: the dead class
    classes = np.r_[cmap[units], width - 1].astype(np.int64)
    flat = table.ravel()
    line_end = np.r_[np.flatnonzero(units == 10) + 1, n]
    # no empty line after a final \n
    line_end = line_end[np.r_[True, line_end[1:] > line_end[:-1]]]
    start = np.r_[0, line_end[:-1]].astype(np.int64)
    pos, marked = start.copy(), start.copy()
    state = np.full(len(start), _START_STATE, dtype=np.int64)
    accepted = np.full(len(start), -1, dtype=np.int64)
    live = np.flatnonzero(start < line_end)
    found: list[tuple[NDArray[np.int64], ...]] = []
    while len(live):
        nxt = flat[state[live] * width + classes[pos[live]]].astype(np.int64)
        moved = nxt >= 0
        going, to = live[moved], nxt[moved]
        pos[going] += 1
        state[going] = to
        flags = attribute[to]
        accepting = (flags & 1) != 0
        accepted[going[accepting]] = to[accepting]
        marked[going[accepting]] = pos[going[accepting]]
        final = accepting & ((flags & 8) != 0)
        done = np.concatenate([live[~moved], going[final]])
        live = going[~final]
        if len(done):
            restarted = _finish(dfa, units, done, start, marked, accepted, line_end, found)
            pos[restarted], marked[restarted] = start[restarted], start[restarted]
            state[restarted], accepted[restarted] = _START_STATE, -1
            live = np.concatenate([live, restarted])
    if not found:
        return (np.zeros(0, dtype=np.int64),) * 3
    line, number, first, last = (np.concatenate(part) for part in zip(*found))
    # each line's matches were found in order: a stable sort by line, as two 16-bit radix passes
    # (numpy would merge-sort 64-bit keys)
    low = np.argsort((line & 0xFFFF).astype(np.uint16), kind="stable")
    order = low[np.argsort((line[low] >> 16).astype(np.uint16), kind="stable")]
    return number[order], first[order], last[order]


def _finish(dfa: Automaton, units: NDArray[np.uint16], done: NDArray[np.int64],
            start: NDArray[np.int64],
            marked: NDArray[np.int64], accepted: NDArray[np.int64], line_end: NDArray[np.int64],
            found: list[tuple[NDArray[np.int64], ...]]) -> NDArray[np.int64]:
    """The matches that ended in this step, resolved as :func:`_scan` resolves one (trailing
    contexts, the abbreviation rules); records (line, action, start, end) and moves each line's
    start to where its action leaves the input. Returns the lines that go on."""
    if (accepted[done] < 0).any():
        # no rule matched (the lexer's catch-all rule makes this unreachable)
        raise _CrossedLine
    number = dfa.dense[3][accepted[done]].astype(np.int64)
    first, mark = start[done], marked[done] - _GIVE_BACK[number]
    mark = np.where(number == 35, first + _FIXED_BASE[35], mark)
    # rare: one at a time
    for k in np.flatnonzero(np.isin(number, [*_GENERAL_LOOKAHEAD, 44, 47])).tolist():
        at, m = int(first[k]), int(marked[done[k]])
        if int(number[k]) in _GENERAL_LOOKAHEAD:
            m = _lookahead(dfa, units, at, m, *_GENERAL_LOOKAHEAD[int(number[k])])
        if int(number[k]) in (44, 47):
            while m > at and int(units[m - 1]) in _TRAILING_SPACE:
                m -= 1
        mark[k] = m
    end = mark.copy()
    letter_period = (number == 47) & (mark - first == 2)     # "I." before a sentence start
    mark[letter_period] -= 1
    end[letter_period] -= 1
    mark[~letter_period & np.isin(number, (33, 47, 49))] -= 1
    found.append((done, number, first, end))
    if (mark > line_end[done]).any():
        raise _CrossedLine
    start[done] = mark
    return done[mark < line_end[done]]


def _text(units: list[int], start: int, end: int) -> str:
    """Code units -> text (a surrogate without its pair is written as '?', as Java's UTF-8 writer
    does)."""
    raw = b"".join(u.to_bytes(2, "little") for u in units[start:end])
    return (
        raw.decode("utf-16-le", errors="surrogatepass")
        .encode("utf-8", errors="replace")
        .decode("utf-8")
    )


def _matches(text: str, dfa: Automaton) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                 NDArray[np.int64], bool]:
    """The stream's matches (action, start, end, in code units) and whether code units index
    ``text`` itself (no character beyond the BMP, no lone surrogate): the lines at once where they
    are independent, else one by one."""
    units = np.frombuffer(text.encode("utf-16-le", errors="surrogatepass"), dtype=np.uint16)
    try:
        number, start, end = _scan_lines(dfa, units)
    except _CrossedLine:
        found = _scan(dfa, units.tolist())
        number, start, end = (np.array([m[k] for m in found], dtype=np.int64) for k in range(3))
    return number, start, end, len(units) == len(text) and not _SURROGATE.search(text)


_SURROGATE = re.compile("[\ud800-\udfff]")
#: actions whose token is the matched text as it is (no constant, no normalization, no soft hyphen
#: to remove)
_PLAIN = np.setdiff1d(np.arange(64), [*_CONSTANT, *_SOFT_HYPHENS, *_TRANSFORMS, *_SKIP, 5])


def tokens(text: str, dfa: Automaton | None = None) -> list[object]:
    """The lexer's tokens of ``text`` (original case), a newline token as :data:`_NEWLINE`."""
    number, start, end, direct = _matches(text, dfa or automaton())
    units = (
        None
        if direct
        else np.frombuffer(text.encode("utf-16-le", errors="surrogatepass"), np.uint16).tolist()
    )
    out: list[object] = []
    for k, a, b in zip(number.tolist(), start.tolist(), end.tolist()):
        if k in _SKIP:
            continue
        if k == 5:
            out.append(_NEWLINE)
            continue
        out.append(_action(k, text[a:b] if units is None else _text(units, a, b)))
    return out


def _action(number: int, text: str) -> str:
    """The token one action makes of its matched text."""
    if number in _CONSTANT:
        return _CONSTANT[number]
    if number in _SOFT_HYPHENS:
        return _remove_soft_hyphens(text)
    transform = _TRANSFORMS.get(number)
    return transform(text) if transform else text


@lru_cache(maxsize=1)
def _lower_table() -> dict[int, str]:
    """Java 17's ``toLowerCase(Locale.ENGLISH)`` of every code point it changes
    (data/java17_lowercase.json)."""
    import json
    from importlib import resources

    rows = json.loads(
        resources.files("vlbench").joinpath("data/java17_lowercase.json").read_text()
    )["rows"]
    table: dict[int, str] = {}
    for row in rows:
        if len(row) == 2:
            table[row[0]] = row[1]
        else:
            first, last, step, delta = row
            table.update((c, chr(c + delta)) for c in range(first, last + 1, step))
    return table


def _java_lower_text(text: str) -> str:
    """:func:`java_lower` of every character of ``text`` in one piece where that equals the tokens'
    lower cases sliced out of it: Java lower-cases code point by code point but for the capital
    sigma (then "" is returned), and a slice needs each character's lower case to be one character.
    Python's ``str.lower`` where it agrees with Java on the text's characters, else the table."""
    if "\u03a3" in text:
        return ""
    lower = text.lower()
    if not text.isascii() and any(
        java_lower(c) != c.lower() for c in set(_NON_ASCII.findall(text))
    ):
        lower = text.translate(_lower_translation())
    return lower if len(lower) == len(text) else ""


_NON_ASCII = re.compile("[^\x00-\x7f]")


@lru_cache(maxsize=1)
def _lower_translation() -> dict[int, str]:
    """:func:`java_lower` of every character as a ``str.translate`` table (ASCII letters
    included)."""
    return {**{c: chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}, **_lower_table()}


#: characters whose lower case depends on their context or on the JVM: the Greek capital sigma (Java
#: decides a final sigma by word boundaries, Python by case-ignorable neighbours); texts holding it
#: go to the jar
UNPROVEN = re.compile("[\u03a3\ud800-\udfff]")


def java_lower(token: str) -> str:
    """``token.toLowerCase(Locale.ENGLISH)`` as Java 17 computes it, code point by code point (ASCII
    directly); the capital sigma's context rule is Python's (see :data:`UNPROVEN`)."""
    if token.isascii():
        return token.lower()
    if "\u03a3" in token:
        return token.lower()
    table = _lower_table()
    return "".join(table.get(ord(c), c) for c in token)


def tokenize_stream(text: str, dfa: Automaton | None = None) -> list[str]:
    """``PTBTokenizer -preserveLines -lowerCase`` on ``text``: its output lines (tokens joined by
    spaces)."""
    number, start, end, direct = _matches(text, dfa or automaton())
    newline = number == 5
    kept = ~(newline | np.isin(number, list(_SKIP)))
    # a line per newline token, and one after the last
    line = np.cumsum(newline)[kept]
    n_lines = int(newline.sum()) + 1
    number, start, end = number[kept].tolist(), start[kept].tolist(), end[kept].tolist()
    lower = _java_lower_text(text) if direct else ""
    if len(lower) == len(text):     # each plain token's lower case is a slice of the text's
        plain = set(_PLAIN.tolist()) | (set() if "\u00ad" in text else _SOFT_HYPHENS)
        words = [lower[a:b] if k in plain else java_lower(_action(k, text[a:b]))
                 for k, a, b in zip(number, start, end)]
    else:
        units = (
            None
            if direct
            else np.frombuffer(text.encode("utf-16-le", errors="surrogatepass"), np.uint16).tolist()
        )
        words = [java_lower(_action(k, text[a:b] if units is None else _text(units, a, b)))
                 for k, a, b in zip(number, start, end)]
    bounds = np.searchsorted(line, np.arange(n_lines + 1)).tolist()
    return [" ".join(words[x:y]) for x, y in zip(bounds[:-1], bounds[1:])]
