"""The Space capability: the bundled samples a visitor scores, and the bounds on what a visitor may
upload."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Showcase"]


class Showcase(ABC):
    """What the upload-and-score Space needs of a benchmark.

    ``subsets``: the choices of its "split / sub-dataset" dropdown. ``max_prediction_values``: the
    JSON values a prediction file for the largest real split holds at most (sized from the release's
    counts); the Space refuses bigger uploads (None: no bound of its own). ``boxes``: whether its
    scenes show boxes (else text only: the viewer hides its box controls).
    """

    subsets: tuple[str, ...] = ("default",)
    max_prediction_values: int | None = None
    boxes: bool = True

    @abstractmethod
    def sample_references(self, subset: str, /) -> str:
        """Path of the bundled sample references for a choice."""

    @abstractmethod
    def example_predictions(self, quality: str, subset: str, /) -> str:
        """Path of a bundled "good" / "poor" example prediction file (or folder) for a choice."""

    def options(self, subset: str, /) -> dict[str, Any]:
        """Scoring options a choice stands for (e.g. the split); none by default."""
        return {}

    def check(self, predictions: Any, /) -> None:
        """Refuse (FormatError) parsed predictions whose scoring time the Space cannot bound though
        their size is within its upload limits (e.g. captions far longer than any real one); none by
        default."""
        return None
