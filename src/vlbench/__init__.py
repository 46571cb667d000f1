"""vlbench: hard vision-language benchmarks as Hugging Face datasets, metrics and Spaces, scored like the
official scorers.

The public API is imported lazily so that ``vlbench --version`` and the CLI start fast. The code sits in layer
folders, each importing only the ones below it: ``engine/``, ``benchmarks/`` (the registry, the capability
interfaces and one folder per benchmark), ``library/`` (the library API and renderings), and at the top the fronts
(CLI, Space, model runner, harness importers, task packs, ``evaluate`` modules). The 0.1 flat import paths
(``vlbench.cocoeval``, ``vlbench.api``, ...) still work: see :mod:`vlbench._moved`.
"""

from __future__ import annotations

from . import _moved

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    **dict.fromkeys(("score", "compare", "load_references", "build", "export", "metric_path"), "library.api"),
    "Result": "engine.result", "Benchmark": "benchmarks.benchmark", "Options": "benchmarks.benchmark",
    "BENCHMARKS": "benchmarks", "register": "benchmarks", "get_benchmark": "benchmarks",
    "VlbenchError": "engine.errors", "InputError": "engine.errors",
}

__all__ = ["__version__", *_PUBLIC]

_moved.install()


def __getattr__(name: str):
    """Import a public name from its module on first use; a module of the 0.1 layout (``vlbench.cocoeval``) is the
    module at its new path."""
    import importlib

    if name in _PUBLIC:
        return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    moved = _moved.new_name(f"{__name__}.{name}")
    if moved is None:
        raise AttributeError(f"module 'vlbench' has no attribute {name!r}")
    return importlib.import_module(moved)
