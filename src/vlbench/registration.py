"""Benchmark registration on the Hub: the dataset's ``eval.yaml`` and a model's ``.eval_results/*.yaml``.

The Hub's evaluation-results format (hub docs, "Evaluation Results"): a benchmark dataset declares
its leaderboards in ``eval.yaml`` (``name``, ``description``, ``evaluation_framework``, ``tasks`` with
``id`` and optional ``config`` / ``split``); a model repo reports one value per task in
``.eval_results/<name>.yaml`` (a list of ``{dataset: {id, task_id, revision?}, value, date?, source?,
notes?}``). Here one task is one headline number, so every task names the metric key it reports.
Both files come from :data:`TASKS`, so they cannot disagree.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["EvalTask", "TASKS", "eval_tasks", "eval_yaml", "eval_results", "write_eval_yaml", "EVALUATION_FRAMEWORK"]

#: The framework key the tasks name. The Hub accepts keys from an allowlist (``EVALUATION_FRAMEWORKS`` in
#: huggingface.js ``packages/tasks/src/eval.ts``); "vlbench" has to be added there before the Hub shows leaderboards.
EVALUATION_FRAMEWORK = "vlbench"


@dataclass(frozen=True)
class EvalTask:
    """One leaderboard: the ``metric`` key of a vlbench result on (``config``, ``split``) of the Hub dataset."""

    id: str
    metric: str
    config: str | None
    split: str
    title: str
    #: configs that must all have been scored (a mean over sub-datasets)
    requires: tuple[str, ...] = ()


def _ovdeval_tasks() -> list[EvalTask]:
    from .benchmarks.ovdeval import schema

    tasks = [EvalTask(f"nms_ap_{s}", "NMS_AP", s, "test", f"NMS-AP, {s}") for s in schema.SUBSETS]
    return tasks + [EvalTask("nms_ap_total_average", "Total_Average", None, "test",
                             "NMS-AP Total Average over the nine sub-datasets (paper Table 3)", tuple(schema.SUBSETS))]


def _nocaps_tasks() -> list[EvalTask]:
    domains = (("", "overall"), ("_in", "in-domain"), ("_near", "near-domain"), ("_out", "out-domain"))
    return [EvalTask(f"{m.lower()}{suffix or '_overall'}", f"{m}{suffix}", "default", "validation", f"{m}, {name}")
            for m in ("CIDEr", "SPICE") for suffix, name in domains]


#: Headline numbers per benchmark (issue #7): Ref-L4 Acc50 / mAcc, OmniLabel AP / AP_categ / AP_descr,
#: OVDEval NMS-AP per sub-dataset and the Total Average, nocaps CIDEr / SPICE overall and per domain.
TASKS: dict[str, list[EvalTask]] = {
    "ref_l4": [EvalTask(f"{m.lower()}_{split}", m, "default", split, f"{m}, {split} split")
               for split in ("test", "val") for m in ("Acc50", "mAcc")],
    "omnilabel": [EvalTask("ap", "AP", "all", "validation", "AP (harmonic mean of AP_categ and AP_descr)"),
                  EvalTask("ap_categ", "AP_categ", "all", "validation", "AP on plain categories"),
                  EvalTask("ap_descr", "AP_descr", "all", "validation", "AP on free-form descriptions")],
    "ovdeval": _ovdeval_tasks(),
    "nocaps": _nocaps_tasks(),
}


def eval_tasks(benchmark: str, available: dict[str, list[str]] | None = None) -> list[EvalTask]:
    """The tasks of ``benchmark``, restricted to the configs/splits a built folder has (``available``:
    config -> splits; a task without config needs its split in any config)."""
    from .benchmarks import canonical_id

    tasks = TASKS[canonical_id(benchmark)]
    if available is None:
        return list(tasks)
    return [t for t in tasks if (t.split in available.get(t.config, []) if t.config
                                 else all(t.split in available.get(c, []) for c in t.requires))]


def _available(card_meta: dict[str, Any]) -> dict[str, list[str]]:
    return {c["config_name"]: [f["split"] for f in c["data_files"]] for c in card_meta.get("configs", [])}


def eval_yaml(benchmark: str, card_meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """``eval.yaml`` of a benchmark dataset: one task per headline number (restricted to the card's configs)."""
    from .benchmarks import get_benchmark

    info = get_benchmark(benchmark)
    tasks = eval_tasks(info.id, _available(card_meta) if card_meta else None)
    lines = "; ".join(f"{t.id} = {t.title}" for t in tasks)
    description = (f"{info.pretty_name} ({info.task_name}), scored by vlbench number for number with the official "
                   f"scorer, in percent. Tasks: {lines}.")
    out: dict[str, Any] = {"name": info.pretty_name, "description": description,
                           "evaluation_framework": EVALUATION_FRAMEWORK, "tasks": []}
    for t in tasks:
        entry: dict[str, Any] = {"id": t.id}
        if t.config:
            entry["config"] = t.config
        entry["split"] = t.split
        out["tasks"].append(entry)
    return out


def write_eval_yaml(out_dir: str | Path, benchmark: str, card_meta: dict[str, Any]) -> Path:
    import yaml

    path = Path(out_dir) / "eval.yaml"
    path.write_text(yaml.safe_dump(eval_yaml(benchmark, card_meta), sort_keys=False, allow_unicode=True, width=100),
                    encoding="utf-8")
    return path


def _result_scope(result: Any) -> tuple[str | None, str | None]:
    """(config, split) a result was computed on, in the Hub dataset's terms."""
    if result.benchmark == "ovdeval":
        return result.options.get("sub_dataset"), "test"
    split = result.options.get("split")
    if result.benchmark == "ref_l4" and split not in ("val", "test"):
        raise InputError(f"this Ref-L4 result is for split {split!r}; the Hub leaderboards are per split",
                         fix="score with --split test (or val) to report it")
    return None, split


def eval_results(result: Any, *, dataset_id: str | None = None, revision: str | None = None,
                 date: str | None = None, source_url: str | None = None, source_name: str | None = None,
                 notes: str | None = None) -> list[dict[str, Any]]:
    """The ``.eval_results`` entries of a result: one per task whose number it holds (value in percent)."""
    from .benchmarks import get_benchmark

    info = get_benchmark(result.benchmark)
    config, split = _result_scope(result)
    entries = []
    for task in TASKS[info.id]:
        if task.split != split or (config is not None and task.config not in (config, None)):
            continue
        key = task.metric
        if info.id == "ovdeval" and config is None and task.config:   # several sub-datasets: NMS_AP_<name>
            key = f"NMS_AP_{task.config}"
        if task.requires and (config is not None or not set(task.requires) <= set(result.options.get("sub_datasets", []))):
            continue                                # a mean over sub-datasets is only reported when all were scored
        value = result.metrics.get(key)
        if value is None:
            continue
        dataset: dict[str, Any] = {"id": dataset_id or info.hub_id, "task_id": task.id}
        if revision:
            dataset["revision"] = revision
        entry: dict[str, Any] = {"dataset": dataset, "value": round(float(value), 4),
                                 "date": date or _dt.date.today().isoformat()}
        if source_url:
            entry["source"] = {"url": source_url, **({"name": source_name} if source_name else {})}
        entry["notes"] = notes or f"vlbench {result.version}, protocol={result.protocol}"
        entries.append(entry)
    if not entries:
        raise InputError(f"this {info.id} result holds none of the registered leaderboard numbers "
                         f"({', '.join(t.id for t in TASKS[info.id])})",
                         fix="score a split that has leaderboards (see the dataset's eval.yaml)")
    return entries
