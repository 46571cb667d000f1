"""The conventions capability: how else the numbers of a prediction file's boxes are commonly meant
(xyxy or xywh, pixels, fractions of the image, a 0-1000 grid, y first), and what the file would
score read so. A wrong convention is the first cause of near-zero grounding scores; ``vlbench
score`` warns when another reading scores far better, and ``vlbench conventions`` prints them side
by side."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Conventions", "AS_WRITTEN"]

#: the reading the official scorer makes of the file
AS_WRITTEN = "as written"


class Conventions(Protocol):
    """``key``: the metric compared (a quick estimate of it, computed the same way for every
    reading). ``readings``: that metric under each reading the references allow, ``AS_WRITTEN``
    first; one reading per file, never per box. ``fix``: what to change so that a file in that
    convention is read right."""

    @property
    def key(self) -> str:
        """The metric compared, e.g. Acc50."""
        ...

    def readings(self, references: Any, predictions: Any, options: Any = None,
                 /) -> dict[str, float | None]:
        """Reading name -> the metric (percent; None where the file cannot be read so); ``options``
        are the scoring options (e.g. the sub-dataset scored)."""
        ...

    def fix(self, reading: str, /) -> str:
        """How to write or convert a file that is in convention ``reading``."""
        ...
