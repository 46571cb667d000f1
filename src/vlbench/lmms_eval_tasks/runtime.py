"""What lmms-eval calls in vlbench's task pack: the image and prompt of a document,
``process_results`` (keeps the row and the answer) and one aggregation per metric (parses every
answer as ``vlbench predict`` does and scores them all with vlbench's scorer, so the numbers are the
official ones). Built per task by the generated ``vlbench_lmms.py`` of the pack (see
:mod:`vlbench.lmms_eval_tasks`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..benchmarks.protocol.predicting import PredictData

__all__ = ["doc_to_visual", "doc_to_text", "process_results", "aggregation"]

#: scored answer sets, by benchmark and a digest of the answers: every metric of a task aggregates
#: the same list
_SCORED: dict[tuple[str, str], dict[str, float | None]] = {}


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The document's image."""
    return [doc["image"].convert("RGB")]


def doc_to_text(benchmark: str, folder: str | None = None, config: str | None = None,
                family: str | None = None) -> Callable[..., str]:
    """The prompt ``vlbench predict`` gives a model of ``family`` (default: vlbench's own wording)
    for this document; ``folder`` / ``config``: the built dataset, for benchmarks whose queries need
    its card (category lists). A ``prompt`` in ``lmms_eval_specific_kwargs`` overrides the
    family's."""
    from ..benchmarks import get_benchmark
    from ..predict.families import GENERATOR, OTHER, Preset, family_named, render_prompt

    predictor = get_benchmark(benchmark).require_predictor()
    base = (
        family_named(family).presets.get(predictor.answer_kind)
        or OTHER.presets[predictor.answer_kind]
    )

    def prompt(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
        override = (lmms_eval_specific_kwargs or {}).get("prompt")
        preset = Preset(override or base.prompt, separator=base.separator)
        data = PredictData(rows=[doc], folder=Path(folder) if folder else None, config=config)
        return render_prompt(preset, predictor.answer_kind,
                             next(iter(predictor.items(data, GENERATOR))).queries)
    return prompt


def process_results(benchmark: str) -> Callable[[dict[str, Any], list[Any]], dict[str, Any]]:
    """Per document: ``{metric: {"row": the row, "answer": the text}}`` for every metric (aggregated
    together)."""
    from ..benchmarks import get_benchmark
    from ..harnesses import logged_row

    keys = get_benchmark(benchmark).metric_keys

    def keep(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        answer = results[0] if results else ""
        while isinstance(answer, list):
            answer = answer[0] if answer else ""
        payload = {"row": logged_row(doc), "answer": str(answer)}
        return {key: payload for key in keys}
    return keep


def _score(benchmark: str, payloads: list[dict[str, Any]], box_format: str | None,
           folder: str | None, config: str | None) -> dict[str, float | None]:
    from ..harnesses import score_answers

    return score_answers(benchmark, [p["row"] for p in payloads], [p["answer"] for p in payloads],
                         box_format, folder, config, harness="lmms-eval")


def aggregation(benchmark: str, key: str, box_format: str | None = None, folder: str | None = None,
                config: str | None = None) -> Callable[[list[Any]], float | None]:
    """The aggregation of metric ``key``: vlbench's score of all the task's answers (scored once per
    task)."""
    def aggregate(payloads: list[dict[str, Any]]) -> float | None:
        digest = hashlib.sha256(
            json.dumps(payloads, sort_keys=True, default=str).encode()
        ).hexdigest()
        if (benchmark, digest) not in _SCORED:
            if len(_SCORED) >= 8:       # a memo for the metrics of one task, not a store
                _SCORED.clear()
            _SCORED[(benchmark, digest)] = _score(benchmark, payloads, box_format, folder, config)
        return _SCORED[(benchmark, digest)][key]
    return aggregate
