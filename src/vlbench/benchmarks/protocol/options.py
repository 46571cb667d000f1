"""Scoring options: the ones every benchmark takes, and how a benchmark declares its own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Self

from ...engine.errors import InputError

__all__ = ["PROTOCOLS", "Options", "option"]

#: ``official`` reproduces the official scorer, quirks included; ``corrected`` fixes its known bugs.
PROTOCOLS = ("official", "corrected")


def option(default: Any, help: str, choices: tuple[Any, ...] | None = None,
           cli: bool = True) -> Any:
    """A benchmark option field: ``help`` and ``choices`` feed the CLI flag and the validation."""
    return field(default=default, metadata={"help": help, "choices": choices, "cli": cli})


@dataclass(frozen=True)
class Options:
    """Options every benchmark takes; a benchmark subclasses this to add its own (declared with
    :func:`option`). The one place where option values are validated (choices), so scorers never
    re-check them."""

    protocol: str = option("official",
                           "official (the official number) or corrected (known bugs fixed)",
                           PROTOCOLS, cli=False)
    split: str | None = option(None, "which split of the references to score", cli=False)
    details: bool = option(True, "per-sample / per-description breakdowns in the result", cli=False)
    analysis: bool = option(False, "the error analysis (why the model fails; slower) under the "
                                   "result's analysis",
                            cli=False)

    @classmethod
    def names(cls) -> list[str]:
        """The option names this benchmark takes."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def own_fields(cls) -> list[dataclasses.Field]:
        """The fields a benchmark adds to the common ones."""
        common = {f.name for f in dataclasses.fields(Options)}
        return [f for f in dataclasses.fields(cls) if f.name not in common]

    @classmethod
    def parse(cls, kwargs: dict[str, Any], *, owner: str, default_split: str | None) -> Self:
        """Validated options from keyword arguments: unknown names and values are an
        :class:`InputError` saying what is taken; ``None`` means "the default"; no split means
        ``default_split``."""
        unknown = sorted(set(kwargs) - set(cls.names()))
        if unknown:
            own = [f.name for f in cls.own_fields()]
            raise InputError(f"option(s) {', '.join(unknown)} do not apply to {owner}",
                             fix=f"{owner} takes: {', '.join(own) or 'no extra option'}")
        given = {k: v for k, v in kwargs.items() if v is not None or k == "split"}
        if given.get("split") is None:
            given["split"] = default_split
        return cls(**given)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            choices = f.metadata.get("choices")
            value = getattr(self, f.name)
            if choices and value is not None and value not in choices:
                raise InputError(f"unknown {f.name} {value!r}",
                                 fix="use " + " or ".join(map(repr, choices)))
