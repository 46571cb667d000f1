"""vlbench: hard vision-language benchmarks as Hugging Face datasets, metrics and Spaces, scored
like the official scorers.

The public API is imported lazily so that ``vlbench --version`` and the CLI start fast. The code
sits in layer folders, each importing only the ones below it: ``engine/``, ``benchmarks/`` (the
registry, the capability interfaces and one folder per benchmark), ``library/`` (the library API and
renderings), and at the top the fronts (CLI, Space, model runner, harness importers, task packs,
``evaluate`` modules).
"""

from __future__ import annotations

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    **dict.fromkeys(("score", "compare", "load_references", "build", "export", "metric_path"),
                    "library.api"),
    "Result": "engine.result", "Benchmark": "benchmarks.benchmark",
    "Options": "benchmarks.benchmark",
    "BENCHMARKS": "benchmarks", "register": "benchmarks", "get_benchmark": "benchmarks",
    "VlbenchError": "engine.errors", "InputError": "engine.errors",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    """Import a public name from its module on first use."""
    import importlib

    if name in _PUBLIC:
        return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module 'vlbench' has no attribute {name!r}")
