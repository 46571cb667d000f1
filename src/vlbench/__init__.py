"""vlbench: OmniLabel, nocaps, OVDEval and Ref-L4 as Hugging Face datasets, metrics and Spaces.

The public API is imported lazily so that ``vlbench --version`` and the CLI start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "score", "Result", "BENCHMARKS", "VlbenchError", "InputError"]


def __getattr__(name: str):
    if name == "score":
        from .api import score
        return score
    if name == "Result":
        from .result import Result
        return Result
    if name == "BENCHMARKS":
        from .benchmarks import BENCHMARKS
        return BENCHMARKS
    if name in ("VlbenchError", "InputError"):
        from . import errors
        return getattr(errors, name)
    raise AttributeError(f"module 'vlbench' has no attribute {name!r}")
