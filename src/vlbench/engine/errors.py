"""The project's exception types.

Every user mistake (a malformed file, a wrong id, a missing column) raises an :class:`InputError`;
the CLI turns it into exit status 2 and a one-paragraph message, never a traceback.
"""

from __future__ import annotations


class VlbenchError(Exception):
    """Base class of every error vlbench raises on purpose."""


class InputError(VlbenchError, ValueError):
    """Bad input: names the file, the entry and the fix in its message."""

    def __init__(self, message: str, *, file: str | None = None, entry: str | None = None,
                 fix: str | None = None) -> None:
        self.file = file
        self.entry = entry
        self.fix = fix
        parts = []
        if file:
            parts.append(f"{file}:")
        if entry:
            parts.append(f"{entry}:")
        parts.append(message.rstrip("."))
        text = " ".join(parts) + "."
        if fix:
            text += f" Fix: {fix.rstrip('.')}."
        super().__init__(text)


class FormatError(InputError):
    """A file is not in the expected format (not JSON, not a list, a missing column, another
    benchmark's file)."""


class PredictionError(InputError):
    """A prediction entry is malformed (bad box, bad id, duplicate, missing key)."""


class CoverageError(InputError):
    """Predictions do not cover the references (missing ids)."""


class UnsupportedError(InputError):
    """A request the project does not support here (e.g. scoring a split without public references);
    like every :class:`InputError` it can name the file and the fix, and the CLI reports it with
    exit status 2."""


class ServiceError(VlbenchError):
    """A service vlbench needs did not answer (the Hugging Face Hub offline, unreachable, refusing):
    not the user's input, so the CLI reports it with exit status 1, and never a traceback."""
