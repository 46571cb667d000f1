"""A toy fifth benchmark, written only against the public protocol (ARCHITECTURE.md, "How to add a
benchmark"): count the objects in an image. References ``{"images": [{"id", "count", "file_name"}]}``,
predictions ``[{"image_id", "count"}]``; ``accuracy`` = 100 * share of exact counts, ``MAE`` = mean
absolute error (in objects, not percent: a toy)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlbench import Result
from vlbench.benchmark import Benchmark, Card, EvalTask, Options, Scene, Scorer, Showcase, SplitLeaderboards
from vlbench.errors import FormatError, PredictionError

HERE = Path(__file__).parent


@dataclass(frozen=True)
class CountRecords:
    """Step 1: the records: image ids, true counts and file names."""

    image_ids: np.ndarray
    counts: np.ndarray
    file_names: list[str]


class CountScorer(Scorer[Options]):
    """Step 2: the scorer: read the references, score a prediction list."""

    options_type = Options
    prediction_keys = frozenset({"count"})
    prediction_form = '{"image_id", "count"}'

    def load_references(self, source, split):
        """Read the references."""
        data = json.loads(Path(source).read_text())
        if not isinstance(data, dict) or "images" not in data:
            raise FormatError("references need 'images'", file=str(source))
        images = data["images"]
        return CountRecords(np.array([i["id"] for i in images]), np.array([i["count"] for i in images]),
                            [i.get("file_name", "") for i in images])

    def score(self, references, predictions, options, source="predictions"):
        """A pure scorer."""
        by_id = {}
        for n, p in enumerate(predictions):
            if not isinstance(p, dict) or "image_id" not in p or "count" not in p:
                raise PredictionError("needs 'image_id' and 'count'", file=source, entry=f"entry {n}")
            by_id[p["image_id"]] = p["count"]
        pred = np.array([by_id.get(int(i), -1) for i in references.image_ids])
        error = np.abs(pred - references.counts)
        return Result("toy_count", options.protocol, {"accuracy": float(np.mean(error == 0) * 100),
                                                      "MAE": float(np.mean(error))},
                      breakdowns={"per_image": {"image_id": references.image_ids.tolist(), "error": error.tolist()}},
                      counts={"images": len(pred)}, options={"split": options.split})


class CountViews:
    """Step 3: how results are shown (a module with these four functions would do as well)."""

    def text(self, result):
        """The generic layout."""
        return None

    def tables(self, result):
        """One table."""
        b = result.breakdowns["per_image"]
        return {"per image": (["image_id", "error"], [list(r) for r in zip(b["image_id"], b["error"])])}

    def plots(self, result, figure):
        """No plot."""
        return {}

    def scenes(self, references, predictions, result):
        """The viewer's images, the worst-counted first."""
        errors = result.breakdowns["per_image"]["error"]
        return [Scene(image=references.file_names[i] or None, title=f"error {errors[i]}", badness=float(errors[i]))
                for i in range(len(errors))]


class CountShowcase(Showcase):
    """Step 4: a sample for the Space."""

    boxes = False

    def sample_references(self, subset):
        """The bundled references."""
        return str(HERE / "toy_count" / "references.json")

    def example_predictions(self, quality, subset):
        """And its example predictions."""
        return str(HERE / "toy_count" / f"predictions_{quality}.json")


#: Step 5: compose them, with the names, metric keys and card facts
BENCHMARK = Benchmark(
    id="toy_count", display_name="ToyCount", scorer=CountScorer(), aliases=("toy-count",),
    metric_keys=("accuracy", "MAE"), headline=("accuracy", "MAE"), default_split="test",
    card=Card(task_type="object-counting", task_name="Object counting",
              metric_names={"accuracy": "exact-count accuracy", "MAE": "mean absolute error"}),
    views=CountViews(), showcase=CountShowcase(),
    leaderboards=SplitLeaderboards((EvalTask("accuracy", "accuracy", "default", "test", "exact-count accuracy"),)))
