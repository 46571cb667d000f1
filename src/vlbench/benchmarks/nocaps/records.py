"""nocaps records: the images of a split with their domains and reference captions, in file
order."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NocapsReferences"]


@dataclass(frozen=True)
class NocapsReferences:
    """Images in file order (the toolkit's order) with their domains and reference captions."""

    image_ids: list[int]
    domains: list[str | None]
    references: list[list[str]]
    has_captions: bool
    source: str = "references"
    notes: list[str] = field(default_factory=list)
    #: per image: file_name (for showing samples)
    file_names: list[str] = field(default_factory=list)
