"""The import paths of vlbench 0.1, kept: ``vlbench.cocoeval`` is ``vlbench.engine.cocoeval``, and so on.

The modules moved into the layer folders (``engine/``, ``benchmarks/``, ``library/``); plug-ins, notebooks and
scripts written against the flat layout import them by their old names. A finder at the front of ``sys.meta_path``
(ahead of the path finder, which would load a second copy of a module below a moved package) answers for exactly the
names in :data:`MOVED` (and the modules below them) with the module object of the new path, so both names are one
module: a monkeypatch through either is seen by both, and nothing is imported twice.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType

_LAYERS = {
    "engine": ("geometry", "cocoeval", "error_analysis", "uncertainty", "io", "errors", "result", "hub", "images",
               "captions"),
    "benchmarks": ("benchmark", "protocol", "validation", "box_conventions"),
    "library": ("api", "coco", "report", "model_card", "registration", "metric_card", "metric_support", "publish"),
}
#: old module name -> its name now
MOVED = {f"vlbench.{name}": f"vlbench.{layer}.{name}" for layer, names in _LAYERS.items() for name in names}


def new_name(old: str) -> str | None:
    """The module name ``old`` (a moved module or one below it) has now; None if it did not move."""
    head, _, rest = old.partition(".")
    top, _, below = rest.partition(".")
    now = MOVED.get(f"{head}.{top}")
    return None if now is None else f"{now}.{below}" if below else now


class _AliasSpec(importlib.machinery.ModuleSpec):
    """An old name's spec whose ``parent`` is the new name's, so that the relative imports of a module run by
    ``python -m`` with its old name resolve where the module now lives."""

    @property
    def parent(self) -> str | None:
        """The package of the module's new name."""
        real = self.loader_state[1]
        return real.parent if real is not None else super().parent


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and loads it as the module already at the new one."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        """A spec for a moved module's old name (None for every other name)."""
        now = new_name(fullname)
        if now is None:
            return None
        module = importlib.import_module(now)
        real = module.__spec__
        package = real is not None and real.submodule_search_locations is not None
        return _AliasSpec(fullname, self, origin=None if real is None else real.origin, is_package=package,
                          loader_state=(module, real))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module under its new name (not a copy)."""
        return spec.loader_state[0]

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran when its new name was imported. Only its own spec is put back, which
        the import system replaced by the alias's."""
        alias = module.__spec__
        assert alias is not None and alias.loader is self
        module.__spec__ = alias.loader_state[1]

    def get_code(self, fullname: str) -> CodeType | None:
        """The code of the module at the new name: ``python -m vlbench.metric_card`` runs it as ``__main__``."""
        now = new_name(fullname)
        if now is None:
            return None
        spec = importlib.util.find_spec(now)
        loader = None if spec is None else spec.loader
        return loader.get_code(now) if isinstance(loader, importlib.abc.InspectLoader) else None


def install() -> None:
    """Add the finder once (``import vlbench`` calls this)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
