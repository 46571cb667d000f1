"""The leaderboards capability: the Hub dataset's ``eval.yaml`` tasks and which number of a result
each takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["EvalTask", "Leaderboards", "SplitLeaderboards"]


@dataclass(frozen=True)
class EvalTask:
    """One leaderboard: the ``metric`` key of a result on (``config``, ``split``) of the Hub
    dataset."""

    id: str
    metric: str
    config: str | None
    split: str
    title: str
    #: configs that must all have been scored (a mean over configs)
    requires: tuple[str, ...] = ()


class Leaderboards(Protocol):
    """The Hub dataset's leaderboards (``eval.yaml``) and how a result reaches them
    (``.eval_results``)."""

    def tasks(self) -> list[EvalTask]:
        """The leaderboards, one per headline number."""
        ...

    def scope(self, result: Any, /) -> tuple[str | None, str | None]:
        """(config, split) of the Hub dataset a result was computed on."""
        ...

    def check(self, result: Any, /) -> None:
        """Raise an :class:`~vlbench.engine.errors.InputError` with the fix when no leaderboard can
        take ``result``."""
        ...

    def value(self, task: EvalTask, result: Any, /) -> float | None:
        """The number of ``task`` that ``result`` holds, or None."""
        ...


@dataclass(frozen=True)
class SplitLeaderboards:
    """Leaderboards keyed by split (and config when a task names one): what most benchmarks need."""

    boards: tuple[EvalTask, ...] = ()

    def tasks(self) -> list[EvalTask]:
        """The leaderboards given."""
        return list(self.boards)

    def scope(self, result: Any) -> tuple[str | None, str | None]:
        """No config; the split the result names."""
        return None, result.options.get("split")

    def check(self, result: Any) -> None:
        """Every result can be reported (a task just finds no number in one of another split)."""

    def value(self, task: EvalTask, result: Any) -> float | None:
        """The task's metric when the result is of the task's split (and config)."""
        config, split = self.scope(result)
        if (
            task.split != split
            or task.requires
            or (config is not None and task.config not in (config, None))
        ):
            return None
        return result.metrics.get(task.metric)
