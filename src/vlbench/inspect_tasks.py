"""vlbench's benchmarks as an Inspect (inspect-ai) task, scored by vlbench's official scorers.

The task (``vlbench``, the benchmark named by ``-T benchmark=ID``) reads a built dataset folder
(``vlbench build``) or a Hub id, asks every item with the prompt ``vlbench predict`` gives the
model's family (``family``, e.g. ``Qwen2-VL`` or ``PaliGemma``; ``prompt`` / ``box_format`` override
it), generates greedily (Inspect's ``generate()``), and scores all answers together: each answer is
parsed as ``vlbench predict`` parses it, and the corpus-level numbers (AP, NMS-AP, CIDEr-D,
Acc@IoU...) come from ``vlbench score`` on the resulting entries, so they are the official ones. Run
with Inspect's own runner, e.g. a model served by any OpenAI-compatible server::

    inspect eval vlbench/inspect_tasks.py@vlbench -T benchmark=ID -T data=hub/ID -T config=CONFIG \\
        -T family=PaliGemma --model openai-api/local/MODEL     # LOCAL_BASE_URL=http://127.0.0.1:8000/v1

(``python -c "import vlbench.inspect_tasks as m; print(m.__file__)"`` gives the file's path in an
installation.) ``vlbench import inspect LOG --benchmark ID --data hub/ID --config CONFIG
--box-format loc-1024 --out preds.json`` turns the log into the official prediction file. Samples
keep their row (without the image) in their metadata and their image as a PNG data URL, so a whole
split is held in memory, as Inspect datasets are.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

# absolute imports: `inspect eval FILE@vlbench` loads this file as a module of its own, outside the
# package
from vlbench.benchmarks import get_benchmark
from vlbench.harnesses import logged_row, score_answers

__all__ = ["vlbench", "benchmark_task", "official_metrics", "answers"]


@metric
def official_metrics(benchmark: str, box_format: str | None, folder: str | None,
                     config: str | None) -> Metric:
    """Every answer of the task parsed and scored together by vlbench: the benchmark's metrics
    (percent)."""
    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        rows = [(s.sample_metadata or {}).get("row", {}) for s in scores]
        texts = [s.score.answer or "" for s in scores]
        return score_answers(benchmark, rows, texts, box_format, folder, config, harness="inspect")
    return compute


@scorer(metrics=[])
def answers(benchmark: str, box_format: str | None, folder: str | None,
            config: str | None) -> Scorer:
    """Keeps each answer (the task's metric scores them all at once); a sample's own value is 1 when
    the answer was read (a caption, or a box in the family's convention), 0 when not."""
    from vlbench.benchmarks.protocol.predicting import PredictData
    from vlbench.predict import answer_record

    predictor = get_benchmark(benchmark).require_predictor()

    async def score(state: TaskState, target: Target) -> Score:
        row = state.metadata.get("row", {})
        data = PredictData(rows=[row], folder=Path(folder) if folder else None, config=config)
        item = next(iter(predictor.items(data, "image-text-to-text")))
        size = (row["width"], row["height"]) if row.get("width") and row.get("height") else None
        text = state.output.completion
        record = answer_record(predictor, item, text, box_format, image_size=size)
        return Score(value=0 if record.get("failure") or not record["entries"] else 1, answer=text,
                     explanation=record.get("failure"))
    return score


def benchmark_task(benchmark: str, data: str, split: str | None = None, config: str | None = None,
                   family: str | None = None, prompt: str | None = None,
                   box_format: str | None = None,
                   max_tokens: int | None = None, limit: int | None = None,
                   processor: str | None = None) -> Task:
    """The Inspect task of ``benchmark`` over the rows of ``data`` (a built folder or Hub id;
    ``split`` / ``config`` as ``vlbench predict`` takes them), prompted as ``family`` is by
    ``vlbench predict``; ``processor`` (the evaluated model's folder or Hub id) decides LLaVA-1.5's
    box square as ``vlbench predict`` does."""
    from vlbench.predict import default_max_new_tokens, load_data
    from vlbench.predict.families import family_named, render_prompt
    from vlbench.predict.models import square_view, viewed_preset
    from vlbench.predict.serving import data_url

    bench = get_benchmark(benchmark)
    predictor = bench.require_predictor()
    preset = viewed_preset(family_named(family).preset(predictor.answer_kind, prompt, box_format),
                           square_view(processor) if processor else None, box_format)
    rows, split = load_data(bench.id, data, split=split, config=config)
    samples, items = [], []
    for row in rows.rows:
        item = next(iter(predictor.items(dataclasses.replace(rows, rows=[row]),
                                         "image-text-to-text")))
        items.append(item)
        image = ContentImage(image=data_url(item.image))
        text = ContentText(text=render_prompt(preset, predictor.answer_kind, item.queries))
        samples.append(Sample(input=[ChatMessageUser(content=[image, text])], id=item.key,
                              metadata={"row": logged_row(row)}))
        if limit is not None and len(samples) >= limit:
            break
    fmt = preset.box_format if predictor.answer_kind != "text" else None
    folder = os.fspath(rows.folder) if rows.folder else None
    return Task(
        dataset=MemoryDataset(samples, name=f"{bench.id}-{config or split}"),
        solver=generate(),
        scorer=answers(bench.id, fmt, folder, config),
        metrics=[official_metrics(bench.id, fmt, folder, config)],
        config=GenerateConfig(
            temperature=0.0,
            max_tokens=max_tokens or default_max_new_tokens(predictor.answer_kind, items),
        ),
        metadata={
            "benchmark": bench.id,
            "split": split,
            "config": config,
            "box_format": fmt,
            "family": family,
        },
    )


@task
def vlbench(benchmark: str, data: str, split: str | None = None, config: str | None = None,
            family: str | None = None,
            prompt: str | None = None, box_format: str | None = None, max_tokens: int | None = None,
            limit: int | None = None, processor: str | None = None) -> Task:
    """Any registered benchmark (``vlbench list``) as an Inspect task: see :func:`benchmark_task` (a
    relative ``data`` or ``processor`` folder is the caller's: :func:`caller_path`)."""
    return benchmark_task(benchmark, caller_path(data), split, config, family, prompt, box_format,
                          max_tokens, limit, caller_path(processor) if processor else None)


def caller_path(data: str) -> str:
    """``-T data=`` as the caller meant it: inspect-ai creates a file's tasks from inside that
    file's folder, so a relative folder is looked up in the shell's working directory (``PWD``,
    which ``os.chdir`` does not change) first, then as it is (an absolute path, or a Hub id)."""
    shell = os.environ.get("PWD")
    if shell and not os.path.isabs(data) and os.path.isdir(os.path.join(shell, data)):
        return os.path.join(shell, data)
    return data
