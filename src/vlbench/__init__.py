"""vlbench: hard vision-language benchmarks as Hugging Face datasets, metrics and Spaces, scored like the
official scorers.

The public API is imported lazily so that ``vlbench --version`` and the CLI start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    "score": "api", "compare": "api", "load_references": "api", "build": "api", "export": "api", "metric_path": "api",
    "Result": "result", "Benchmark": "benchmark", "Options": "benchmark",
    "BENCHMARKS": "benchmarks", "register": "benchmarks", "get_benchmark": "benchmarks",
    "VlbenchError": "errors", "InputError": "errors",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    """Import a public name from its module on first use."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'vlbench' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
