"""What a benchmark can offer, one small interface per capability, each in its own module:

- :mod:`.scoring`: :class:`Scorer` (every benchmark): references and predictions in, a ``Result``
  out;
- :mod:`.dataset`: :class:`DatasetBuilder`: the official release -> a Hub dataset folder, and back;
- :mod:`.views`: :class:`Views`: terminal layout, tables, plots, the sample viewer's scenes;
- :mod:`.predicting`: :class:`Predictor`: what ``vlbench predict`` asks a model and how answers
  become entries;
- :mod:`.showcase`: :class:`Showcase`: the Space's bundled samples and upload bounds;
- :mod:`.leaderboards`: :class:`Leaderboards`: the Hub's ``eval.yaml`` tasks and a result's number
  for each;
- :mod:`.conventions`: :class:`Conventions`: the other common readings of a file's box numbers and
  their scores.

:class:`vlbench.benchmarks.benchmark.Benchmark` composes them; the fronts ask it for the capability
they need.
"""

from __future__ import annotations

from .conventions import AS_WRITTEN, Conventions
from .dataset import DatasetBuilder
from .leaderboards import EvalTask, Leaderboards, SplitLeaderboards
from .options import PROTOCOLS, Options, option
from .predicting import DetectorAnswer, PredictData, PredictItem, Predictor
from .scoring import Scorer, check_examples
from .showcase import Showcase
from .views import (
    ALL_QUERIES,
    SHOW_SCORE,
    NoViews,
    Sample,
    Scene,
    Table,
    Views,
    detection_badness,
    mark_boxes,
)

__all__ = ["AS_WRITTEN", "Conventions", "DatasetBuilder", "EvalTask", "Leaderboards",
           "SplitLeaderboards",
           "PROTOCOLS", "Options", "option", "DetectorAnswer", "PredictData", "PredictItem",
           "Predictor", "Scorer",
           "check_examples", "Showcase", "ALL_QUERIES", "SHOW_SCORE", "NoViews", "Sample", "Scene",
           "Table", "Views", "detection_badness", "mark_boxes"]
