"""Benchmark registration on the Hub: the dataset's ``eval.yaml`` and a model's
``.eval_results/*.yaml``.

The Hub's evaluation-results format (hub docs, "Evaluation Results"): a benchmark dataset declares
its leaderboards in ``eval.yaml`` (``name``, ``description``, ``evaluation_framework``, ``tasks``
with ``id`` and optional ``config`` / ``split``); a model repo reports one value per task in
``.eval_results/<name>.yaml`` (a list of ``{dataset: {id, task_id, revision?}, value, date?,
source?, notes?}``). Here one task is one headline number, so every task names the metric key it
reports. Both files come from each benchmark's leaderboards (``Benchmark.leaderboards.tasks()``), so
they cannot disagree.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..benchmarks.protocol.leaderboards import EvalTask
from ..engine.errors import InputError

__all__ = ["EvalTask", "eval_tasks", "yaml_configs", "eval_yaml", "eval_results", "write_eval_yaml",
           "merge_eval_results",
           "require_dataset_id", "EVALUATION_FRAMEWORK", "HUB_EVALUATION_FRAMEWORKS",
           "eval_yaml_problems", "check_eval_yaml"]

#: The framework key the tasks name. The Hub accepts keys from a closed list (below); "vlbench" has
#: to be added there before the Hub takes a dataset published with it as a benchmark.
EVALUATION_FRAMEWORK = "vlbench"
#: The ``evaluation_framework`` values the Hub accepts in ``eval.yaml`` at push time:
#: ``EVALUATION_FRAMEWORKS`` of huggingface.js ``packages/tasks/src/eval.ts`` (read at commit
#: 0589d13, 2026-11). No VLM harness is among them.
HUB_EVALUATION_FRAMEWORKS = frozenset({
    "exgentic", "inspect-ai", "math-arena", "mteb", "olmocr-bench", "harbor", "archipelago",
    "apex-evals",
    "screenspot-pro", "swe-bench", "swe-bench-pro", "nemo-evaluator", "yc-bench",
    "open-asr-leaderboard", "mdpbench", "parsebench", "video-mme-v2", "claw-eval", "wildclawbench"})
#: where the Hub's list lives (a framework is added there by a pull request)
HUB_FRAMEWORK_LIST = "https://github.com/huggingface/huggingface.js/blob/main/packages/tasks/src/eval.ts"
UNLISTED_FIX = (f"the Hub takes evaluation_framework only from its list ({HUB_FRAMEWORK_LIST}, "
                f"EVALUATION_FRAMEWORKS): propose {EVALUATION_FRAMEWORK!r} there (a pull request "
                "adding its name, description and url), or rebuild with --eval-framework "
                "inspect-ai (the tasks then run through vlbench's Inspect task, "
                "vlbench/inspect_tasks.py@vlbench), then publish")


def eval_tasks(benchmark: str, available: dict[str, list[str]] | None = None) -> list[EvalTask]:
    """The tasks of ``benchmark``, restricted to the configs/splits a built folder has
    (``available``: config -> splits; a task without config needs its split in every config it
    requires)."""
    tasks = get_benchmark(benchmark).leaderboards.tasks()
    if available is None:
        return list(tasks)
    return [t for t in tasks if (t.split in available.get(t.config, []) if t.config
                                 else all(t.split in available.get(c, []) for c in t.requires))]


def yaml_configs(card_meta: dict[str, Any]) -> dict[str, list[str]]:
    """The configs a card's YAML declares, each with its splits."""
    return {
        c["config_name"]: [f["split"] for f in c["data_files"]]
        for c in card_meta.get("configs", [])
    }


def eval_yaml(benchmark: str, card_meta: dict[str, Any] | None = None,
              framework: str = EVALUATION_FRAMEWORK) -> dict[str, Any]:
    """``eval.yaml`` of a benchmark dataset: one task per headline number (restricted to the card's
    configs), under ``framework`` (``vlbench``, or ``inspect-ai``: the tasks run through vlbench's
    Inspect task)."""
    info = get_benchmark(benchmark)
    tasks = eval_tasks(info.id, yaml_configs(card_meta) if card_meta else None)
    lines = "; ".join(f"{t.id} = {t.title}" for t in tasks)
    description = (f"{info.display_name} ({info.card.task_name}), scored by vlbench number for "
                   f"number with the official scorer, in percent. Tasks: {lines}.")
    out: dict[str, Any] = {"name": info.display_name, "description": description,
                           "evaluation_framework": framework, "tasks": []}
    for t in tasks:
        entry: dict[str, Any] = {"id": t.id}
        if t.config:
            entry["config"] = t.config
        entry["split"] = t.split
        out["tasks"].append(entry)
    return out


def eval_yaml_problems(spec: Any) -> list[str]:
    """What the Hub's push-time check of ``eval.yaml`` would refuse: the documented fields
    (``name``, ``description``, ``evaluation_framework`` from :data:`HUB_EVALUATION_FRAMEWORKS`,
    ``tasks``: a non-empty list of ``{id, config?, split?}`` with distinct ids), each problem as a
    sentence."""
    if not isinstance(spec, dict):
        return ["eval.yaml must be a mapping of name, description, evaluation_framework and tasks"]
    problems = [f"{key!r} must be non-empty text" for key in ("name", "description")
                if not (isinstance(spec.get(key), str) and spec[key].strip())]
    unlisted = _unlisted_framework(spec)
    problems += [unlisted] if unlisted else []
    tasks = spec.get("tasks")
    if not (isinstance(tasks, list) and tasks):
        return [*problems, "'tasks' must be a non-empty list"]
    for i, task in enumerate(tasks):
        if not (isinstance(task, dict) and isinstance(task.get("id"), str) and task["id"]):
            problems.append(f"tasks[{i}] needs an 'id' (text)")
        elif any(key in task and not isinstance(task[key], str) for key in ("config", "split")):
            problems.append(f"tasks[{i}] ({task['id']}): 'config' and 'split' must be text")
    ids = [t.get("id") for t in tasks if isinstance(t, dict)]
    problems += [
        f"task id {i!r} is used twice"
        for i in sorted({i for i in ids if ids.count(i) > 1}, key=str)
    ]
    return problems


def _unlisted_framework(spec: dict[str, Any]) -> str | None:
    """The problem of an ``evaluation_framework`` off the Hub's list, or None."""
    framework = spec.get("evaluation_framework")
    if framework in HUB_EVALUATION_FRAMEWORKS:
        return None
    return f"evaluation_framework {framework!r} is not on the Hub's list of frameworks"


def check_eval_yaml(spec: Any, source: str = "eval.yaml", *,
                    allow_unlisted: bool = False) -> list[str]:
    """Refuse (an :class:`InputError` with the fix) an ``eval.yaml`` the Hub would refuse; with
    ``allow_unlisted`` a framework missing from the Hub's list is returned as a warning instead (a
    local build may name one)."""
    problems = eval_yaml_problems(spec)
    unlisted = _unlisted_framework(spec) if isinstance(spec, dict) else None
    refused = [p for p in problems if not (allow_unlisted and p == unlisted)]
    if refused:
        fix = (
            UNLISTED_FIX
            if refused == [unlisted]
            else "rebuild the folder with 'vlbench build' (or correct the file)"
        )
        raise InputError("the Hub would refuse this eval.yaml: " + "; ".join(refused), file=source,
                         fix=fix)
    return [f"{unlisted}. Fix: {UNLISTED_FIX}"] if unlisted else []


def write_eval_yaml(out_dir: str | Path, benchmark: str, card_meta: dict[str, Any],
                    framework: str = EVALUATION_FRAMEWORK) -> tuple[Path, list[str]]:
    """Write ``eval.yaml`` into a built Hub folder, for the configs and splits its card lists,
    checked first as the Hub checks it (:func:`check_eval_yaml`; a framework off the Hub's list is a
    warning here, refused at publishing). Returns the path and the warnings."""
    import yaml

    path = Path(out_dir) / "eval.yaml"
    spec = eval_yaml(benchmark, card_meta, framework)
    warnings = check_eval_yaml(spec, str(path), allow_unlisted=framework == EVALUATION_FRAMEWORK)
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100),
                    encoding="utf-8")
    return path, warnings


def eval_results(result: Any, *, dataset_id: str | None = None, revision: str | None = None,
                 date: str | None = None, source_url: str | None = None,
                 source_name: str | None = None, notes: str | None = None) -> list[dict[str, Any]]:
    """The ``.eval_results`` entries of a result: one per task whose number it holds (value in
    percent), built as ``huggingface_hub``'s own :class:`~huggingface_hub.EvalResultEntry` and
    written by its ``eval_result_entries_to_yaml`` (so the schema is the library's, not a copy of
    it)."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    info = get_benchmark(result.benchmark)
    info.leaderboards.check(result)
    entries = []
    for task in info.leaderboards.tasks():
        value = info.leaderboards.value(task, result)
        if value is None:
            continue
        entries.append(EvalResultEntry(
            dataset_id=require_dataset_id(result, dataset_id), task_id=task.id,
            value=round(float(value), 4),
            dataset_revision=revision, date=date or _dt.date.today().isoformat(),
            source_url=source_url, source_name=source_name if source_url else None,
            notes=notes or _default_notes(result)))
    if not entries:
        raise InputError(f"this {info.id} result holds none of the registered leaderboard numbers "
                         f"({', '.join(t.id for t in info.leaderboards.tasks())})",
                         fix="score a split that has leaderboards (see the dataset's eval.yaml)")
    return eval_result_entries_to_yaml(entries)


def _default_notes(result: Any) -> str:
    """vlbench's version, the protocol and the references' source (release, revision, annotation
    files' SHA-256)."""
    notes = f"vlbench {result.version}, protocol={result.protocol}"
    source = result.source or {}
    if source.get("release"):
        notes += f"; references: {source['release']}" + (
            f"@{source['revision']}" if source.get("revision") else ""
        )
    files = source.get("files") or {}
    if files:
        notes += "; sha256: " + ", ".join(f"{name}={digest}" for name,
                                          digest in sorted(files.items()))
    return notes


def merge_eval_results(existing: str, new: list[dict[str, Any]],
                       source: str = ".eval_results") -> list[dict[str, Any]]:
    """The entries of an existing ``.eval_results`` file (YAML text, "" for none) with ``new``
    merged in: an entry for the same dataset, task and revision is replaced, every other one kept
    (another split's, another dataset's)."""
    import yaml

    if not existing.strip():
        return list(new)
    try:
        old = yaml.safe_load(existing)
    except yaml.YAMLError as exc:
        raise InputError(
            f"the existing evaluation results are not valid YAML ({str(exc).splitlines()[0]})",
            file=source,
            fix="fix or remove the file, then write the results again",
        ) from None
    if not isinstance(old, list) or not all(
        isinstance(e, dict) and isinstance(e.get("dataset"), dict) for e in old
    ):
        raise InputError("the existing evaluation results are not a list of {dataset: {...}, "
                         "value: ...} entries",
                         file=source, fix="fix or remove the file, then write the results again")
    from huggingface_hub import parse_eval_result_entries

    # what the Hub's library reads; the entries themselves are kept as written (fields it does not
    # know)
    try:
        parse_eval_result_entries(old)
    except (KeyError, TypeError) as exc:
        raise InputError(
            "an existing evaluation result lacks a field the Hub needs "
            f"({type(exc).__name__}: {exc})",
            file=source,
            fix="fix or remove the file, then write the results again",
        ) from None

    def key(entry: dict[str, Any]) -> tuple:
        d = entry["dataset"]
        return d.get("id"), d.get("task_id"), d.get("revision")

    replaced = {key(e) for e in new}
    return [e for e in old if key(e) not in replaced] + list(new)


def require_dataset_id(result: Any, dataset_id: str | None) -> str:
    """``dataset_id``, else the result's; never an id nobody gave (the Hub would link the card to a
    wrong dataset)."""
    chosen = dataset_id or result.dataset_id
    if not chosen:
        info = get_benchmark(result.benchmark)
        raise InputError("the result does not say which Hub dataset it was scored on",
                         fix=f"pass --dataset-id ORG/{info.id.replace('_', '-')} (the id you "
                             "published the dataset under with 'vlbench publish dataset'), or "
                             "score against the published folder or Hub id")
    return chosen
