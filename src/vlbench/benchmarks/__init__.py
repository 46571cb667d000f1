"""The registry of benchmarks.

Every sub-package of this package that defines ``BENCHMARK`` (a
:class:`~vlbench.benchmarks.benchmark.Benchmark`) is registered on first use, then every object an
installed distribution names under the entry-point group ``vlbench.benchmarks``; :func:`register`
adds one at run time (a notebook, a test). This module knows no benchmark by name: they are
discovered.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from collections.abc import Iterator, Mapping

from ..engine.errors import InputError
from .benchmark import Benchmark

__all__ = ["register", "unregister", "get_benchmark", "canonical_id", "all_benchmarks",
           "sniff_predictions", "expect_prediction_list", "BENCHMARKS"]

#: entry-point group of benchmark plug-ins: ``name = "package.module:BENCHMARK"``
ENTRY_POINT_GROUP = "vlbench.benchmarks"

_registry: dict[str, Benchmark] = {}
#: what has been registered so far: "packages" (this package's sub-packages), "plugins" (the entry
#: points)
_discovered: set[str] = set()


def _discover(plugins: bool = True) -> None:
    """Register every sub-package's ``BENCHMARK`` once, then (``plugins``) the entry points'
    benchmarks once. The plug-ins are looked up only when asked for: their scan reads every
    installed distribution's metadata (~20 ms with ``importlib.metadata``'s import), which a command
    naming a built-in benchmark need not pay."""
    if "packages" not in _discovered:
        _discovered.add("packages")
        found = [getattr(importlib.import_module(f"{__name__}.{m.name}"), "BENCHMARK", None)
                 for m in pkgutil.iter_modules(__path__) if m.ispkg]
        for benchmark in sorted((b for b in found if isinstance(b, Benchmark)),
                                key=lambda b: (b.listing_order, b.id)):
            _registry.setdefault(benchmark.id, benchmark)
    if plugins and "plugins" not in _discovered:
        _discovered.add("plugins")
        _load_plugins()


def _load_plugins() -> None:
    """Register the benchmark of every entry point in :data:`ENTRY_POINT_GROUP`; a broken one is a
    warning."""
    import importlib.metadata

    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            benchmark = entry.load()
            if not isinstance(benchmark, Benchmark):
                raise TypeError(f"{entry.value} is a {type(benchmark).__name__}, not a vlbench "
                                "Benchmark")
            register(benchmark)
        # a broken plug-in must not take the built-in benchmarks down with it
        except Exception as exc:
            warnings.warn(f"vlbench: benchmark plug-in {entry.name!r} ({entry.value}) was not "
                          f"loaded: {exc}",
                          stacklevel=3)


def register(benchmark: Benchmark) -> Benchmark:
    """Add ``benchmark`` to the registry (its id and aliases must be new); returns it."""
    _discover()
    taken = {name for b in _registry.values() for name in (b.id, *b.aliases)}
    clash = {benchmark.id, *benchmark.aliases} & taken
    if clash:
        raise ValueError(f"benchmark name(s) already registered: {', '.join(sorted(clash))}")
    _registry[benchmark.id] = benchmark
    return benchmark


def unregister(benchmark_id: str) -> None:
    """Remove a benchmark registered with :func:`register` (tests use it to clean up)."""
    _registry.pop(benchmark_id, None)


def all_benchmarks(plugins: bool = True) -> list[Benchmark]:
    """Every registered benchmark: the discovered ones in listing order, then the added ones.
    Without ``plugins``, the entry points are not looked up (those already registered are
    listed)."""
    _discover(plugins)
    return list(_registry.values())


def canonical_id(name: str, *, plugins: bool = True) -> str:
    """An id or alias (any case, ``-`` or ``_``) -> the canonical id; :class:`InputError` if
    unknown. The plug-ins are looked up only for a name that no registered benchmark has (a plug-in
    cannot take a registered name), and not at all without ``plugins``."""
    key = name.strip().lower()
    for with_plugins in (False, True) if plugins else (False,):
        for b in all_benchmarks(with_plugins):
            if key == b.id or key in b.aliases:
                return b.id
    raise InputError(f"unknown benchmark {name!r}",
                     fix="use one of " + ", ".join(b.id for b in all_benchmarks()))


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark of an id or alias."""
    return _registry[canonical_id(name)]


def sniff_predictions(entries: object) -> str | None:
    """Which benchmark's prediction format the first entry of a list has, or None."""
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        return None
    keys = set(entries[0])
    for b in all_benchmarks():
        if b.scorer.prediction_keys and b.scorer.prediction_keys <= keys:
            return b.id
    return None


def expect_prediction_list(entries: object, benchmark: str, source: str, entry_form: str) -> None:
    """Raise a FormatError unless ``entries`` is a JSON list that does not look like another
    benchmark's file."""
    from ..engine.errors import FormatError

    if not isinstance(entries, list):
        raise FormatError(f"the predictions must be a JSON list of {entry_form} objects, "
                          f"got a JSON {type(entries).__name__}", file=source)
    _discover(plugins=False)        # the caller's own benchmark is registered once it is scoring
    mine = _registry.get(benchmark)
    if (
        mine is not None
        and entries
        and isinstance(entries[0], dict)
        and mine.scorer.prediction_keys <= set(entries[0])
    ):
        return
    other = sniff_predictions(entries)
    if other not in (None, benchmark):
        raise FormatError(f"this looks like a {other} prediction file, not {benchmark}",
                          file=source, fix=f"score it with 'vlbench score {other}'")


class _Registry(Mapping[str, Benchmark]):
    """Read-only id -> benchmark view of the registry (``vlbench.BENCHMARKS``)."""

    def __getitem__(self, key: str) -> Benchmark:
        _discover()
        return _registry[key]

    def __iter__(self) -> Iterator[str]:
        return iter([b.id for b in all_benchmarks()])

    def __len__(self) -> int:
        return len(all_benchmarks())


BENCHMARKS: Mapping[str, Benchmark] = _Registry()
