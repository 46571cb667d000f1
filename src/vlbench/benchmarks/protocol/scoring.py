"""The scoring capability, which every benchmark has: references and predictions in, a ``Result``
out."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from ...engine.errors import PredictionError, UnsupportedError
from .options import Options

__all__ = ["Scorer", "check_examples"]

OptionsT = TypeVar("OptionsT", bound=Options)


class Scorer(ABC, Generic[OptionsT]):
    """References (official file, Hub folder, Hub rows) and predictions (official file) -> records
    and entries -> :class:`~vlbench.engine.result.Result`. ``score`` renders nothing and reads no
    input file (nocaps' keeps its text and paraphrase caches: ARCHITECTURE.md).

    ``options_type`` declares the benchmark's options; ``prediction_keys`` are keys every entry of
    its prediction files has (how a file of another benchmark is recognised); ``prediction_form``
    names an entry in messages.
    """

    options_type: type[OptionsT]
    prediction_keys: frozenset[str] = frozenset()
    prediction_form: str = "{...}"

    @abstractmethod
    def load_references(self, source: str | os.PathLike, split: str | None, /) -> Any:
        """Official annotation file, Hub folder or Hub id -> the benchmark's records."""

    @abstractmethod
    def score(self, references: Any, predictions: Any, options: OptionsT,
              source: str = "predictions", /) -> Any:
        """Records + parsed predictions -> :class:`~vlbench.engine.result.Result`."""

    def references_from_rows(self, rows: list[dict[str, Any]], /) -> Any:
        """Rows of the Hub dataset (the ``evaluate`` module's references) -> records."""
        raise UnsupportedError("this benchmark reads no Hub rows",
                               fix="pass an annotation file or folder")

    def read_predictions(self, source: str | os.PathLike, *, max_bytes: int | None = None,
                         max_values: int | None = None, typed: bool = False) -> Any:
        """A prediction file (official format) -> its parsed entries; the limits as
        :func:`vlbench.engine.io.read_json`. ``typed``: the caller only hands the entries to this
        scorer (``score``, the convention check), so a benchmark may return typed records for a file
        of the usual shape (no dict per entry); without it, dicts."""
        from ...engine.io import MAX_JSON_BYTES, read_json

        return read_json(source, what="prediction file", max_bytes=max_bytes or MAX_JSON_BYTES,
                         max_values=max_values)

    def entries_from_examples(self, references: list[dict[str, Any]], predictions: list[Any],
                              /) -> Any:
        """Per-example predictions of the ``evaluate`` module (aligned with ``references``) ->
        official entries."""
        raise UnsupportedError("this benchmark has no evaluate module",
                               fix="score its prediction files instead")


def check_examples(references: Any, predictions: Any) -> None:
    """An ``evaluate`` module's inputs: two lists of one length (``None`` or a mismatch is a clear
    error)."""
    for name, value in (("predictions", predictions), ("references", references)):
        if not isinstance(value, (list, tuple)):
            raise PredictionError(f"the {name} must be a list (one entry per example), got "
                                  f"{type(value).__name__}",
                                  file=name,
                                  fix="pass predictions=[...] and references=[...] of equal length")
    if len(references) != len(predictions):
        raise PredictionError(f"{len(predictions)} predictions but {len(references)} references",
                              file="predictions",
                              fix="give exactly one prediction per reference row")
