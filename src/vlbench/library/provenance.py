"""Which references a number was scored against: the result's ``source`` (FORMATS.md, "The result
JSON").

A build records the SHA-256 of the annotation files it read in the card's ``vlbench.source``; a
score against the built folder carries that record, a score against official files their own
SHA-256, so two numbers can be told to be comparable. Image archives are not hashed: they change no
number, and hashing gigabytes at every score would cost more than the scoring.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["ANNOTATION_SUFFIXES", "annotation_files", "source_of", "release_record"]

#: the files whose bytes decide a number (annotations), as opposed to images and archives
ANNOTATION_SUFFIXES = (".json", ".jsonl", ".parquet")


def annotation_files(path: Path) -> list[Path]:
    """The annotation files of a release: the file itself, or those under a folder (hidden ones left
    out)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in ANNOTATION_SUFFIXES
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def release_record(raw: Any) -> dict[str, Any]:
    """``{"release": <what was given>, "files": {name: sha256}}`` for the raw release a build reads
    (a file, a folder, or several files)."""
    from ..engine.hub import file_digest

    paths = [Path(p) for p in (raw if isinstance(raw, (list, tuple)) else [raw])]
    files: dict[str, str] = {}
    for given in paths:
        for f in annotation_files(given):
            name = f.name if f == given else f.relative_to(given).as_posix()
            files[name] = file_digest(f)
    return {"release": ", ".join(p.name for p in paths), "files": files}


def source_of(references: Any) -> dict[str, Any] | None:
    """The ``source`` of a score: a built folder's recorded release (its card's ``vlbench.source``),
    the SHA-256 of official files given as a path, the Hub id of a dataset scored from the Hub; None
    for references passed as records."""
    if not isinstance(references, (str, os.PathLike)):
        return None
    path = Path(references)
    if not path.exists():
        return {"release": f"hf://{references}"}
    if path.is_dir() and (path / "README.md").is_file():
        from ..benchmarks.validation import read_card_metadata

        recorded = (read_card_metadata(path).get("vlbench") or {}).get("source")
        if isinstance(recorded, dict):
            return {**recorded, "folder": path.name}
    return release_record(path)
