"""One validation kit for readers and builders: raising clear errors, describing offending values,
keeping unknown fields for lossless round trips, percent conversion, the build report, and the
dataset card's metadata read through ``huggingface_hub``'s card API."""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import msgspec

from ..engine.errors import FormatError, InputError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["fail", "refuse_text_ids_in_build", "refuse_repeated_images_in_build",
           "require", "describe", "integral_ids", "sorted_id_codes", "coded_ids", "looked_up_ids",
           "require_utf8", "aligned_lists", "extra_fields", "percent",
           "BuildReport", "read_card_metadata", "Scores", "read_scores", "read_boxes",
           "unusual_warning", "FLOAT_EXACT",
           "tie_bounds", "TIE_SPREAD_POINTS", "TypedId", "TypedNumber", "typed_column",
           "typed_boxes", "TypedCocoResult", "typed_coco_columns", "degenerate_box_warning"]

#: integers of larger magnitude lose precision as float64: the official int64 arrays order them
#: differently
FLOAT_EXACT = 2**53


def fail(message: str, source: str, entry: str | None = None, fix: str | None = None,
         error: type[InputError] = FormatError) -> NoReturn:
    """Raise ``error`` naming the file (``source``), the entry and the fix."""
    raise error(message, file=source, entry=entry, fix=fix)


def refuse_text_ids_in_build(what: str, found: Any, source: str,
                             entry: str | None = None) -> NoReturn:
    """A build's refusal of ids written as text: the Hub dataset stores ids as int64, where Arrow
    would read the text "17" as 17 without a word and change what the file says (the official
    scorers tell "17" and 17 apart)."""
    fail(
        f"{what} is {found!r}, not an integer: the Hub dataset stores ids as integers, which would "
        "change what the file says",
        source,
        entry,
        "write the ids as integers (scoring reads text ids as the official scorer does; "
        "building needs integers)",
    )


def refuse_repeated_images_in_build(images: Any, source: str) -> None:
    """A build's refusal of an image listed twice in a file's ``images``: the official code keys its
    images by id (the last entry stands) and scores the file, while a Hub row per entry would give
    the image twice; the refusal names the first repeated id."""
    seen: set[Any] = set()
    for n, image in enumerate(images if isinstance(images, list) else []):
        key = image.get("id") if isinstance(image, dict) else None
        if key in seen:
            fail(f"image id {key!r} is listed a second time", source, f"images[{n}]",
                 "list each image once (scoring reads the file as the official code does, the last "
                 "entry standing; a Hub dataset holds one row per image)")
        seen.add(key)


def require(condition: bool, message: str, source: str, entry: str | None = None,
            fix: str | None = None, error: type[InputError] = FormatError) -> None:
    """:func:`fail` unless ``condition`` holds."""
    if not condition:
        fail(message, source, entry, fix, error)


def describe(values: Iterable[Any], limit: int = 5) -> str:
    """``1, 2, 3 (and 7 more)``: the first ``limit`` values of a list, for messages."""
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" (and {len(values) - limit} more)" if len(values) > limit else "")


def integral_ids(values: list[Any], source: str, key: str, start: int = 0,
                 kinds: set[type] | None = None,
                 error: type[InputError] | None = None) -> np.ndarray:
    """Ids as int64. An integral float (``3.0``) is the integer, as in the official loaders' dict
    look-ups (equal hashes); booleans, strings, ``3.5`` and ids outside int64 are a
    :class:`PredictionError` (or ``error``, for a ground-truth file) naming the entry (``values[i]``
    is entry ``start + i``). ``kinds``: the values' types, where the caller has already collected
    them (a pass over a million ids is not free)."""
    import numpy as np

    from ..engine.errors import PredictionError

    error = error or PredictionError
    kinds = set(map(type, values)) if kinds is None else kinds
    if kinds <= {int}:
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            pass
    for i, v in enumerate(values):
        ok = (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, float) and v.is_integer()
        )
        if not ok:
            raise error(f"{key!r} must be an integer id, got {v!r}", file=source,
                        entry=f"entry {start + i}",
                                  fix=f"write the {key} of the references as a plain integer")
        if not -2**63 <= v < 2**63:
            raise error(f"{key!r} {v!r} is beyond the 64-bit integer range, so no reference has it",
                                  file=source, entry=f"entry {start + i}",
                        fix=f"write the {key} of the references")
    return np.asarray([int(v) for v in values], dtype=np.int64)


def sorted_id_codes(
    values: list[Any], source: str, key: str, where: str = ""
) -> tuple[np.ndarray, dict[Any, int] | None]:
    """Ids of any JSON scalar type -> (int64 codes, the table value -> code, or None where the ids
    are plain integers and are their own codes). Codes follow the order ``sorted()`` gives the
    distinct values, which is the order ``COCOeval`` evaluates images in (``sorted(getImgIds())``):
    ids written as text compare as text, so ``"10" < "9"``, and that order decides which of two tied
    detections on different images ranks first. Values a Python dict takes for one key (``3`` and
    ``3.0``) get one code. Ids ``sorted()`` cannot order (``3`` beside ``"3"``) or that cannot be
    dict keys are a :class:`FormatError`: the official code stops there too."""
    import numpy as np

    kinds = set(map(type, values))
    if kinds <= {int, float} and all(type(v) is int or v.is_integer() for v in values):
        return integral_ids(values, source, key, kinds=kinds, error=FormatError), None
    try:
        table = {v: code for code, v in enumerate(sorted(dict.fromkeys(values)))}
    except TypeError:
        # one example of each type, the first
        first_of_type = {type(v): v for v in reversed(values)}
        shown = ", ".join([f"{type(v).__name__} {v!r}" for v in first_of_type.values()][:3])
        raise FormatError(f"the {key}s are of types Python cannot sort together ({shown}); the "
                          "official scorer sorts them and fails", file=source, entry=where or None,
                          fix=f"write every {key} the same way: all integers or all text") from None
    return np.fromiter((table[v] for v in values), dtype=np.int64, count=len(values)), table


def coded_ids(values: list[Any], table: dict[Any, int] | None, source: str, key: str,
              error: type[InputError] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The codes of ``values`` under ``table`` (:func:`sorted_id_codes`; None: integer ids, their
    own codes) and which values the table has: a value equal to no id (``"5"`` where the ids are
    ``5``) gets code -1."""
    import numpy as np

    if table is None:
        codes = integral_ids(values, source, key, error=error)
        return codes, np.ones(len(codes), dtype=bool)
    try:
        codes = np.fromiter((table.get(v, -1) for v in values), dtype=np.int64, count=len(values))
    except TypeError:
        bad = next(i for i, v in enumerate(values) if not isinstance(v, (str, int, float,
                                                                         type(None))))
        raise FormatError(f"{key!r} {values[bad]!r} cannot be an id", file=source,
                          entry=f"entry {bad}", fix=f"write the {key} of the references") from None
    return codes, codes >= 0


def looked_up_ids(values: list[Any], table: dict[Any, int] | None, source: str, key: str,
                  error: type[InputError] | None = None,
                  entry: Callable[[int], str] = "entry {}".format,
                  kinds: set[type] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``values`` joined to the references' ids by Python equality, as a dict look-up that never
    asserts joins them (omnilabeltools keys images and descriptions by id and looks up only the
    references' ids): (codes, which values equal an id). ``table``: text ids' codes
    (:func:`sorted_id_codes`); None: integer ids, their own codes, which an integral float or a
    boolean equals (``3.0 == 3``, ``True == 1``). Text where the ids are integers, a number where
    they are text, ``3.5`` and null equal none (code -1): never looked up. A value that cannot be a
    dict key (a list) is a :class:`PredictionError` (or ``error``) naming its entry (``entry(i)`` of
    ``values[i]``): the official look-up fails there. ``kinds``: the values' types, where the caller
    has already collected them."""
    import numpy as np

    from ..engine.errors import PredictionError

    kinds = set(map(type, values)) if kinds is None else kinds
    if table is None and kinds <= {int}:
        # an id beyond int64 equals none: the general way below
        with contextlib.suppress(OverflowError):
            codes = np.asarray(values, dtype=np.int64)
            return codes, np.ones(len(codes), dtype=bool)
    for i, v in enumerate(values) if kinds - {int, float, bool, str, type(None)} else ():
        try:
            hash(v)
        except TypeError:
            raise (error or PredictionError)(f"{key!r} {v!r} cannot be an id (the official scorer "
                                             "fails on it)",
                                             file=source, entry=entry(i), fix=f"write the {key} as "
                                                                              "ids") from None
    if table is not None:
        codes = np.fromiter((table.get(v, -1) for v in values), dtype=np.int64, count=len(values))
        return codes, codes >= 0
    known = np.fromiter(
        (
            isinstance(v, (int, float)) and float(v).is_integer() and -(2**63) <= v < 2**63
            for v in values
        ),
        dtype=bool,
        count=len(values),
    )
    codes = np.fromiter((int(v) if k else -1 for v, k in zip(values, known)), dtype=np.int64,
                        count=len(values))
    return codes, known


#: msgspec types for typed decoding (:func:`vlbench.engine.io.read_json`'s ``typed``): an integer id
#: within int64, and a number whose float64 value is exact (``|v| < 2^53``; msgspec reads a JSON
#: integer as its float). JSON booleans, strings, nulls, integral floats as ids and integers beyond
#: 2^53 fail them, so a file holding any of those is read the general way, where each is named, kept
#: or warned about as the official code treats it.
TypedId = Annotated[int, msgspec.Meta(ge=-2**63, le=2**63 - 1)]
TypedNumber = Annotated[float, msgspec.Meta(gt=-float(FLOAT_EXACT), lt=float(FLOAT_EXACT))]


def typed_column(records: list[Any], name: str, dtype: type) -> np.ndarray:
    """One field of every typed record (:data:`TypedId` / :data:`TypedNumber`, already checked) as
    an array, in one pass with no per-value test."""
    import numpy as np

    return np.fromiter(map(operator.attrgetter(name), records), dtype=dtype, count=len(records))


def typed_boxes(records: list[Any], name: str = "bbox") -> np.ndarray:
    """(n, 4) float64 of every typed record's box (a tuple of four :data:`TypedNumber`): the numbers
    in one flat pass, twice as fast as ``np.array`` of the n tuples."""
    import numpy as np

    flat = itertools.chain.from_iterable(map(operator.attrgetter(name), records))
    return np.fromiter(flat, dtype=np.float64, count=4 * len(records)).reshape(len(records), 4)


class TypedCocoResult(msgspec.Struct, gc=False):
    """A COCO result (``loadRes``' entry) of the usual shape, decoded without a dict: integer image
    and category ids, four exact numbers, an exact score (other keys are not read). A file holding
    anything else (a label as text, a boolean, NaN, a box of three numbers) fails the type and is
    read as dicts, where each is named."""

    image_id: TypedId
    category_id: TypedId
    bbox: tuple[TypedNumber, TypedNumber, TypedNumber, TypedNumber]
    score: TypedNumber


def typed_coco_columns(records: list[TypedCocoResult]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                np.ndarray]:
    """(image ids, category ids, (n, 4) xywh boxes, scores) of typed COCO results, whose types are
    already checked: one pass per column, no per-value test."""
    import numpy as np

    return (typed_column(records, "image_id", np.int64),
            typed_column(records, "category_id", np.int64),
            typed_boxes(records), typed_column(records, "score", np.float64))


@dataclass(frozen=True)
class Scores:
    """A file's scores as the official code's arrays see them.

    ``value`` is float64 (JSON true/false as 1/0, text as NaN); ``is_int`` marks JSON integers and
    booleans, which numpy puts in int64 arrays when a list holds nothing else; ``exact`` holds the
    integers exactly when some are beyond 2^53 (else None: float64 orders them alike); ``text``
    marks scores written as strings, which a numpy array of mixed values compares as text.
    ``unusual`` counts, per kind, the entries whose value the official code handles in a way worth a
    warning (NaN, infinities, booleans, text, integers beyond 2^53).
    """

    value: np.ndarray
    is_int: np.ndarray
    exact: np.ndarray | None
    text: np.ndarray
    unusual: dict[str, list[int]]

    @classmethod
    def of_typed(cls, value: np.ndarray) -> Scores:
        """Scores that typed decoding (:data:`TypedNumber`) has read: finite, exact in float64, none
        text, none unusual; whether one was a JSON integer only matters beyond 2^53, which typed
        decoding leaves to dicts."""
        import numpy as np

        return cls(value, np.zeros(len(value), dtype=bool), None, np.zeros(len(value), dtype=bool),
                   {})


def read_scores(values: list[Any], source: str, *, protocol: str, entry_of: Any = None,
                key: str = "score") -> Scores:
    """Scores as numbers the official code sorts. Under ``protocol="official"`` every value the
    official scorers accept is kept (NaN, infinities, booleans, huge integers, text: each kind is
    listed in ``unusual``); under ``corrected`` anything but a finite number is a clear error.
    ``entry_of[i]``: the entry of value ``i``."""
    import itertools
    import math

    import numpy as np

    from ..engine.errors import PredictionError

    def entry(i: int) -> str:
        return f"entry {int(entry_of[i]) if entry_of is not None else i}"

    kinds = set(map(type, values))
    if kinds <= {float} or (
        kinds <= {int, float}
        and all(-FLOAT_EXACT <= v <= FLOAT_EXACT for v in values if type(v) is int)
    ):
        value = np.asarray(values, dtype=np.float64)
        finite = bool(np.isfinite(value).all())
        if finite or protocol == "official":
            flagged = {} if finite else {"non-finite": np.flatnonzero(~np.isfinite(value)).tolist()}
            is_int = (np.fromiter(map(isinstance, values, itertools.repeat(int)), dtype=bool,
                                  count=len(values))
                      if int in kinds else np.zeros(len(values),
                                                    dtype=bool))       # no booleans here
            return Scores(value, is_int, None, np.zeros(len(values), dtype=bool), flagged)
    value = np.empty(len(values), dtype=np.float64)
    is_int = np.zeros(len(values), dtype=bool)
    text = np.zeros(len(values), dtype=bool)
    exact = np.zeros(len(values), dtype=np.int64)
    unusual: dict[str, list[int]] = {}
    for i, v in enumerate(values):
        if isinstance(v, bool) or (isinstance(v, int) and abs(v) > FLOAT_EXACT):
            if protocol != "official":
                raise PredictionError(f"{key!r} must be a number below 2^53, got {v!r}",
                                      file=source, entry=entry(i),
                                      fix="write scores as plain numbers (--protocol official "
                                          "scores them as the official code does)")
            if not isinstance(v, bool) and not -2**63 <= v < 2**63:
                raise PredictionError(f"{key!r} {v!r} is beyond 64 bits: the official code cannot "
                                      "sort it",
                                      file=source, entry=entry(i),
                                      fix="write scores as plain numbers")
            unusual.setdefault(
                "boolean" if isinstance(v, bool) else "integer beyond 2^53", []
            ).append(i)
            value[i], is_int[i], exact[i] = float(v), True, int(v)
        elif isinstance(v, (int, float)):
            value[i], is_int[i], exact[i] = (
                float(v),
                isinstance(v, int),
                int(v) if isinstance(v, int) else 0,
            )
            if not math.isfinite(value[i]):
                if protocol != "official":
                    raise PredictionError(f"{key!r} {v!r} is not a finite number", file=source,
                                          entry=entry(i),
                                          fix="write scores as finite numbers (--protocol official "
                                              "scores NaN and "
                                              "infinities as the official code does)")
                unusual.setdefault("non-finite", []).append(i)
        elif isinstance(v, str) and protocol == "official":
            value[i], text[i] = math.nan, True
            unusual.setdefault("text", []).append(i)
        else:
            raise PredictionError(f"{key!r} must be a number, got {v!r}", file=source,
                                  entry=entry(i), fix="write scores as numbers")
    big = "integer beyond 2^53" in unusual
    return Scores(value, is_int, exact if big else None, text, unusual)


def read_boxes(boxes: list[Any], source: str, *, protocol: str, key: str = "bbox",
               fix: str = "write [x, y, w, h] in pixels") -> tuple[np.ndarray,
                                                                   dict[str, list[int]]]:
    """Boxes of four numbers as float64 (N, 4). Under ``protocol="official"`` NaN / infinite
    coordinates and JSON booleans (1 / 0 in the official arrays) are kept and listed in the second
    value by kind; under ``corrected`` they are a clear error."""
    from itertools import chain

    import numpy as np

    from ..engine.errors import PredictionError

    try:
        # numbers only when numpy makes a numeric (N, 4) array of them and no coordinate is a JSON
        # boolean (numpy would cast it); one pass over the values' types, not a Python loop per box
        arr = np.array(boxes)
        ok = arr.shape == (len(boxes), 4) and arr.dtype.kind in "fiu" and \
            set(map(type, chain.from_iterable(boxes))) <= {int, float}
        arr = arr.astype(np.float64) if ok else arr
    except (TypeError, ValueError, OverflowError):
        ok = False
    unusual: dict[str, list[int]] = {}
    for i, b in enumerate(boxes) if not ok else ():
        if not (
            isinstance(b, list) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b)
        ):
            raise PredictionError(f"{key!r} must be [x, y, w, h] (four numbers), got {b!r}",
                                  file=source, entry=f"entry {i}", fix=fix)
        if any(isinstance(v, bool) for v in b):
            if protocol != "official":
                raise PredictionError(f"{key!r} {b!r} holds a boolean, not a coordinate",
                                      file=source, entry=f"entry {i}", fix=fix)
            unusual.setdefault("boolean", []).append(i)
    if not ok:
        arr = np.asarray([[float(v) for v in b] for b in boxes], dtype=np.float64).reshape(
            len(boxes), 4
        )
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if len(bad):
        if protocol != "official":
            raise PredictionError(f"{key!r} {boxes[int(bad[0])]!r} is not four finite numbers "
                                  f"({len(bad)} such boxes)",
                                  file=source, entry=f"entry {int(bad[0])}",
                                  fix="replace NaN / Infinity by real coordinates (--protocol "
                                      "official scores them as the official code does)")
        unusual["non-finite"] = bad.tolist()
    return arr, unusual


def degenerate_box_warning(width: np.ndarray, height: np.ndarray, entry: np.ndarray,
                           consequence: str) -> list[str]:
    """The warning for predicted boxes of zero or negative width or height (a random detector writes
    them), which the official scorers score (IoU 0 with every GT box): how many, the first one's
    entry (``entry``: each box's), and what the official scorer makes of them (``consequence``). The
    same words on every detection benchmark."""
    import numpy as np

    degenerate = (width <= 0) | (height <= 0)
    if not degenerate.any():
        return []
    return [f"{int(degenerate.sum())} predicted box(es) have zero or negative width or height, "
            f"e.g. entry {int(entry[np.flatnonzero(degenerate)[0]])}: scored as the official "
            f"scorer does ({consequence})"]


def unusual_warning(what: str, unusual: dict[str, list[int]], how: dict[str, str],
                    entry_of: Any = None) -> list[str]:
    """One warning per kind of unusual value kept under the official protocol: how many, which
    entries, and how the official code treats them (``how[kind]``), with the protocol that refuses
    them."""
    out = []
    for kind, rows in unusual.items():
        entries = sorted({int(entry_of[i]) if entry_of is not None else i for i in rows})
        out.append(f"official protocol: {len(rows)} {what}(s) {'are' if len(rows) > 1 else 'is'} "
                   f"{kind} (entries {describe(entries)}): "
                   f"{how.get(kind, 'scored as the official code does')}; --protocol corrected "
                   "refuses them")
    return out


def require_utf8(texts: list[str], source: str, what: str, entry: Any = None) -> None:
    """Every text encodes as UTF-8 (a lone surrogate such as ``\\ud800``, legal in JSON, does not:
    the official toolkit crashes writing it for Java); ``entry(i)`` names entry i in the error."""
    from ..engine.errors import PredictionError

    try:
        "\n".join(texts).encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    for i, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PredictionError(f"the {what} holds a character that is not valid Unicode text "
                                  f"({text[exc.start:exc.end]!r} at position {exc.start})",
                                  file=source, entry=entry(i) if entry else f"entry {i}",
                                  fix="remove it (a lone surrogate is half of an emoji or a broken "
                                      "escape)") from None


def aligned_lists(prediction: Any, keys: tuple[str, ...], index: int,
                  source: str = "predictions") -> list[tuple]:
    """The per-box lists ``keys`` of one ``evaluate`` example zipped, after checking they are lists
    of equal length (``zip`` would silently drop the boxes of the longer ones)."""
    from ..engine.errors import PredictionError

    form = "{" + ", ".join(f'"{k}": [...]' for k in keys) + "}"
    if not isinstance(prediction, dict):
        raise PredictionError(f"expected {form}, got {type(prediction).__name__}", file=source,
                              entry=f"example {index}")
    lists = []
    for key in keys:
        value = prediction.get(key)
        if not isinstance(value, (list, tuple)):
            raise PredictionError(
                f"{key!r} is {'missing' if value is None else type(value).__name__}, not a list",
                file=source,
                entry=f"example {index}",
                fix=f"each prediction is {form}",
            )
        lists.append(value)
    lengths = {k: len(v) for k, v in zip(keys, lists)}
    if len(set(lengths.values())) > 1:
        raise PredictionError(
            "the per-box lists differ in length ("
            + ", ".join(f"{k}: {n}" for k, n in lengths.items())
            + ")",
            file=source,
            entry=f"example {index}",
            fix="give one entry per box in each list",
        )
    return list(zip(*lists))


def extra_fields(entry: dict[str, Any], known: Iterable[str]) -> str:
    """The fields of ``entry`` outside ``known`` as sorted JSON ("" when none): kept so export is
    lossless."""
    known = set(known)
    rest = {k: v for k, v in entry.items() if k not in known}
    return json.dumps(rest, sort_keys=True) if rest else ""


def percent(values: dict[str, float], prefix: str = "") -> dict[str, float | None]:
    """Official fractions -> percent points, the very last step; the official ``-1`` (undefined) ->
    None."""
    return {prefix + k: (None if v == -1 else float(v) * 100) for k, v in values.items()}


@dataclass
class BuildReport:
    """What a build read, wrote and found wrong: nothing is dropped silently.

    ``rows``: rows per split (or config); ``parts``: rows per split and source / domain; ``counts``:
    named counts of things kept as released but worth a warning, with their ``messages``.
    """

    rows: dict[str, int] = field(default_factory=dict)
    parts: dict[str, dict[str, int]] = field(default_factory=dict)
    images: int = 0
    missing_images: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def count(self, key: str, message: str, n: int = 1, example: str | None = None) -> None:
        """Add ``n`` to the count ``key``, shown as ``warning: <n> <message>``."""
        self.counts[key] = self.counts.get(key, 0) + n
        self.messages[key] = message
        if example is not None and example not in self.examples.setdefault(key, []):
            self.examples[key].append(example)

    def lines(self) -> list[str]:
        """The report as lines for the terminal."""
        out = []
        for split, n in self.rows.items():
            parts = self.parts.get(split)
            out.append(
                f"{split}: {n} rows"
                + (f" ({', '.join(f'{k} {v}' for k, v in parts.items())})" if parts else "")
            )
        if self.images:
            out.append(f"images: {self.images}")
        if self.missing_images:
            out.append(f"missing images: {len(self.missing_images)} (e.g. "
                       f"{', '.join(self.missing_images[:3])})")
        for key, n in self.counts.items():
            if n:
                examples = self.examples.get(key)
                out.append(
                    f"warning: {n} {self.messages[key]}"
                    + (f": {', '.join(examples[:5])}" if examples else "")
                )
        return out


def read_card_metadata(folder: str | os.PathLike) -> dict[str, Any]:
    """The YAML metadata of a Hub folder's ``README.md``, parsed by ``huggingface_hub``'s card
    API."""
    from huggingface_hub import DatasetCard

    path = Path(folder) / "README.md"
    if not path.is_file():
        raise FormatError("the folder has no README.md (dataset card)", file=str(folder),
                          fix="build it with 'vlbench build'")
    try:
        return DatasetCard.load(path).data.to_dict()
    except Exception as exc:  # the card API raises several types for a broken header
        raise FormatError(
            f"the dataset card's metadata cannot be read ({exc})", file=str(path)
        ) from None


#: a tie-bound spread (percent points) worth a warning
TIE_SPREAD_POINTS = 1.0


def tie_bounds(metrics: dict[str, float | None], low: dict[str, float | None],
               high: dict[str, float | None],
               tied: int) -> tuple[dict[str, dict[str, float | None]], list[str]]:
    """The ``tie_bounds`` breakdown (per AP key: the lowest and highest value over every order of
    the tied detections, percent) and a warning when some key's bounds are more than
    TIE_SPREAD_POINTS apart."""
    bounds = {key: {"low": low.get(key), "high": high.get(key)} for key in low}
    wide = [k for k, b in bounds.items() if b["low"] is not None and b["high"] is not None
            and b["high"] - b["low"] > TIE_SPREAD_POINTS]
    if not wide:
        return bounds, []
    shown = "; ".join(f"{k} {_points(metrics.get(k))} lies in [{_points(bounds[k]['low'])}, "
                      f"{_points(bounds[k]['high'])}]" for k in wide[:3])
    return bounds, [
        f"{tied:,} detections share their score with another (e.g. a model that gives every box "
        "the same confidence), so the AP depends on how the ties are ordered, which the official "
        f"code does by position: over every order of the ties, {shown}"
        + (f" (and {len(wide) - 3} more key(s))" if len(wide) > 3 else "")
        + " (result breakdowns 'tie_bounds'; over random file orders: 'tie_orders'); the number "
          "reported is the official order's. Scores that rank the boxes remove the ambiguity."
    ]


def _points(value: float | None) -> str:
    return "null" if value is None else f"{value:.2f}"
