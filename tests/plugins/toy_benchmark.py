"""A toy fifth benchmark, written only against the public protocol (ARCHITECTURE.md, "How to add a
benchmark"), with every face a benchmark can have: count the objects in an image. References
``{"images": [{"id", "count", "file_name"}]}`` (or the Hub folder its builder writes), predictions
``[{"image_id", "count"}]``; ``accuracy`` = 100 * share of exact counts, ``MAE`` = mean absolute
error (in objects, not percent: a toy). A detector answers it: the count is the number of its boxes
scoring at least 0.5."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlbench import Result
from vlbench.benchmarks import expect_prediction_list
from vlbench.benchmarks.benchmark import (
    Benchmark,
    Card,
    EvalTask,
    Options,
    PredictItem,
    Scene,
    Scorer,
    Showcase,
    SplitLeaderboards,
    check_examples,
)
from vlbench.engine.errors import FormatError, PredictionError

HERE = Path(__file__).parent
FORM = '{"image_id", "count"}'


@dataclass(frozen=True)
class CountRecords:
    """Step 1: the records: image ids, true counts and file names."""

    image_ids: np.ndarray
    counts: np.ndarray
    file_names: list[str]


def _records(images: list[dict], source: str) -> CountRecords:
    if not all(isinstance(i, dict) and {"id", "count"} <= set(i) for i in images):
        raise FormatError("each image needs 'id' and 'count'", file=source)
    return CountRecords(np.array([i["id"] for i in images], dtype=np.int64),
                        np.array([i["count"] for i in images], dtype=np.int64),
                        [i.get("file_name") or "" for i in images])


class CountReplicator:
    """Step 2b: the metrics under image weights, for ``--ci``
    (:mod:`vlbench.engine.uncertainty`)."""

    unit = "image"

    def __init__(self, error: np.ndarray) -> None:
        self.error, self.strata = error.astype(np.float64), (len(error),)

    def __call__(self, weights):
        """(R, images) weights -> each metric per resample."""
        total = weights.sum(axis=1)
        return {"accuracy": weights @ (self.error == 0) / total * 100,
                "MAE": weights @ self.error / total}


class CountScorer(Scorer[Options]):
    """Step 2: the scorer: read the references (a JSON or the built Hub folder), score a prediction
    list."""

    options_type = Options
    prediction_keys = frozenset({"count"})
    prediction_form = FORM

    def load_references(self, source, split):
        """The JSON, or the Hub folder the dataset builder wrote."""
        if Path(source).is_dir():
            import pyarrow.parquet as pq

            rows = [
                r
                for f in sorted(Path(source).glob("data/*.parquet"))
                for r in pq.read_table(f, columns=["image_id", "count", "file_name"]).to_pylist()
            ]
            return self.references_from_rows(rows)
        data = json.loads(Path(source).read_text())
        if not isinstance(data, dict) or "images" not in data:
            raise FormatError("references need 'images'", file=str(source))
        return _records(data["images"], str(source))

    def references_from_rows(self, rows):
        """Hub rows (the ``evaluate`` module's references) -> records."""
        return _records([{"id": r.get("image_id"), "count": r.get("count"),
                          "file_name": r.get("file_name")}
                         for r in rows], "references")

    def entries_from_examples(self, references, predictions):
        """One count per row -> official entries."""
        check_examples(references, predictions)
        return [{"image_id": r["image_id"], "count": p} for r, p in zip(references, predictions)]

    def score(self, references, predictions, options, source="predictions"):
        """A pure scorer."""
        expect_prediction_list(predictions, "toy_count", source, FORM)
        by_id = {}
        for n, p in enumerate(predictions):
            if not isinstance(p, dict) or "image_id" not in p or "count" not in p:
                raise PredictionError("needs 'image_id' and 'count'", file=source,
                                      entry=f"entry {n}")
            by_id[p["image_id"]] = p["count"]
        pred = np.array([by_id.get(int(i), -1) for i in references.image_ids])
        error = np.abs(pred - references.counts)
        return Result("toy_count", options.protocol, {"accuracy": float(np.mean(error == 0) * 100),
                                                      "MAE": float(np.mean(error))},
                      breakdowns={"per_image": {"image_id": references.image_ids.tolist(),
                                                "error": error.tolist()}},
                      counts={"images": len(pred)}, options={"split": options.split},
                      resampler=lambda: CountReplicator(error))


class CountDataset:
    """Step 3: the Hub dataset: release JSON (+ an image folder) -> README.md card + Parquet, and
    back."""

    def build(self, raw, out, *, images=None, allow_missing_images=False, skip_bad_images=False,
              max_shard_bytes=None):
        """One ``test`` split of rows {image_id, count, file_name, image}."""
        import datasets

        from vlbench.benchmarks.validation import BuildReport
        from vlbench.engine.hub import ShardedParquetWriter, card_yaml, write_card
        from vlbench.engine.images import image_cell

        if images is None and not allow_missing_images:
            raise FormatError("no images were given", file=str(raw),
                              fix="pass --images or --allow-missing-images")
        records = CountScorer().load_references(raw, "test")
        features = datasets.Features({"image_id": datasets.Value("int64"),
                                      "count": datasets.Value("int64"),
                                      "file_name": datasets.Value("string"),
                                      "image": datasets.Image()})
        report, writer = BuildReport(), ShardedParquetWriter(out, "test", features)
        for image_id, count, name in zip(records.image_ids.tolist(), records.counts.tolist(),
                                         records.file_names):
            path = Path(images) / name if images else None
            cell = (
                image_cell(path, name, skip_bad=skip_bad_images, report=report)[0]
                if path and path.is_file()
                else None
            )
            if cell is None:
                report.missing_images.append(name)
            writer.write({"image_id": image_id, "count": count, "file_name": name, "image": cell})
        summary = writer.close()
        report.rows["test"], report.files = summary.num_examples, ["README.md", *summary.files]
        write_card(
            out,
            card_yaml(features=features, splits=[summary], extra={"license": "cc0-1.0"}),
            "# ToyCount",
        )
        return report

    def export(self, folder, split, /):
        """The Hub folder -> the release JSON."""
        refs = CountScorer().load_references(folder, split)
        return {"images": [{"id": i, "count": c, "file_name": f} for i, c, f in
                           zip(refs.image_ids.tolist(), refs.counts.tolist(), refs.file_names)]}


class CountViews:
    """Step 4: how results are shown (a module with these four functions would do as well)."""

    def text(self, result):
        """The generic layout."""
        return None

    def tables(self, result):
        """One table."""
        b = result.breakdowns["per_image"]
        return {"per image": (["image_id", "error"],
                              [list(r) for r in zip(b["image_id"], b["error"])])}

    def plots(self, result, figure):
        """A histogram of the errors."""
        fig = figure(figsize=(4, 3))
        fig.add_subplot().hist(result.breakdowns["per_image"]["error"], bins=5)
        return {"errors": fig}

    def scenes(self, references, predictions, result):
        """The viewer's images, the worst-counted first."""
        errors = result.breakdowns["per_image"]["error"]
        return [Scene(image=references.file_names[i] or None, title=f"error {errors[i]}",
                      badness=float(errors[i]))
                for i in range(len(errors))]


class CountPredictor:
    """Step 5: a model in the loop (``vlbench predict``): a detector asked for "object" in each
    image."""

    kinds = ("detector",)
    answer_kind = "text"

    def items(self, data, kind, /):
        """One item per row."""
        for row in data.rows:
            yield PredictItem(key=str(row["image_id"]), image=row.get("image"), queries=("object",),
                              context={"image_id": row["image_id"]})

    def from_detections(self, item, detections, /):
        """The count: boxes scoring at least 0.5."""
        return [{"image_id": item.context["image_id"],
                 "count": sum(s >= 0.5 for s in detections.scores)}]

    def from_answer(self, item, answer, /):
        """Not reached: only detectors answer."""
        raise NotImplementedError

    def options_for_run(self, config, unanswered, /):
        """No option."""
        return {}


class CountShowcase(Showcase):
    """Step 6: a sample for the Space."""

    boxes = False

    def sample_references(self, subset):
        """The bundled references."""
        return str(HERE / "toy_count" / "references.json")

    def example_predictions(self, quality, subset):
        """And its example predictions."""
        return str(HERE / "toy_count" / f"predictions_{quality}.json")


#: Step 7: compose them, with the names, metric keys, card facts, leaderboards and the evaluate
#: module's folder
BENCHMARK = Benchmark(
    id="toy_count", display_name="ToyCount", scorer=CountScorer(), aliases=("toy-count",),
    metric_keys=("accuracy", "MAE"), headline=("accuracy", "MAE"),
    lower_is_better=frozenset({"MAE"}), default_split="test",
    card=Card(task_type="object-counting", task_name="Object counting", license="cc0-1.0",
              metric_names={"accuracy": "exact-count accuracy", "MAE": "mean absolute error"}),
    dataset=CountDataset(), views=CountViews(), predictor=CountPredictor(),
    showcase=CountShowcase(),
    leaderboards=SplitLeaderboards((EvalTask("accuracy", "accuracy", "default", "test",
                                             "exact-count accuracy"),)),
    evaluate_module=os.fspath(HERE / "toy_count"))
