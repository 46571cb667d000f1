"""``vlbench new-benchmark ID``: a plug-in package holding every file a benchmark needs, working
from the start.

The package (``templates/new_benchmark/``, each file's placeholders filled in) is a complete
benchmark for a stand-in task, counting objects, whose parts the author replaces one by one:
records, scorer, dataset builder, views, predictor, Space sample, the ``BENCHMARK`` record, the
``evaluate`` module with its metric card (generated regions filled in here) and metric Space, sample
files, a golden case and the test that checks golden cases. It registers itself through the
``vlbench.benchmarks`` entry point of its ``pyproject.toml``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path

from ..benchmarks import canonical_id, register, unregister
from ..engine.errors import InputError, ServiceError
from .metric_card import render

__all__ = ["TEMPLATE", "new_benchmark"]

#: the package's files, each ending in ``.tmpl`` (so no tool reads them as this package's code)
TEMPLATE = Path(__file__).parent / "templates" / "new_benchmark"
_ID = re.compile(r"[a-z][a-z0-9_]{1,39}")


def _placeholders(benchmark_id: str, display_name: str | None, suffix: str) -> dict[str, str]:
    """The template's placeholders for a file of ``suffix``: the id, the class-name prefix
    (``my_bench`` -> ``MyBench``) and the display name, escaped for where it stands:
    ``__NAME_JSON__`` a quoted string literal (Python, YAML), ``__NAME_JSON_INNER__`` the inside of
    one (a TOML string), ``__NAME__`` prose (inside a Python docstring, its backslashes and quotes
    escaped)."""
    camel = "".join(part.capitalize() for part in benchmark_id.split("_"))
    name = display_name or camel
    quoted = json.dumps(name, ensure_ascii=False)
    prose = name.replace("\\", "\\\\").replace('"', '\\"') if suffix == ".py" else name
    return {"__ID__": benchmark_id, "__CLASS__": camel, "__NAME_JSON_INNER__": quoted[1:-1],
            "__NAME_JSON__": quoted, "__NAME__": prose}


def _fill(text: str, values: dict[str, str]) -> str:
    # the longer placeholders first (__NAME_JSON__ before __NAME__)
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _check_name(display_name: str | None) -> None:
    """A display name is one line of printable text (a control character would be pasted into every
    file)."""
    if display_name is not None and (
        not display_name.strip()
        or any(unicodedata.category(c).startswith("C") for c in display_name)
    ):
        raise InputError(f"{display_name!r} cannot be a display name: it is empty or holds a "
                         "control character",
                         fix="pass --name with one line of text, e.g. --name 'My Bench (v2)'")


def _check_id(benchmark_id: str) -> None:
    """A new id: a Python identifier in lower case, not a registered benchmark's name."""
    if not _ID.fullmatch(benchmark_id) or benchmark_id.endswith("_"):
        raise InputError(f"{benchmark_id!r} cannot be a benchmark id",
                         fix="use 2-40 lower-case letters, digits and underscores, starting with a "
                             "letter (my_bench)")
    if (
        benchmark_id in sys.stdlib_module_names
        or importlib.util.find_spec(benchmark_id) is not None
    ):
        raise InputError(f"{benchmark_id!r} is the name of a Python module: the metric Space's "
                         f"{benchmark_id}.py beside its app.py would shadow it, and the Space "
                         "would not start",
                         fix=f"choose another id (e.g. {benchmark_id}_bench)")
    try:
        taken = canonical_id(benchmark_id)
    except InputError:                  # unknown: free
        return
    raise InputError(f"{benchmark_id!r} is already a registered benchmark ({taken})",
                     fix="choose another id")


def _fill_card(package_src: Path, benchmark_id: str) -> None:
    """The metric card's generated regions, rendered from the new package's own ``BENCHMARK``
    record."""
    card = package_src / f"vlbench_{benchmark_id}" / "evaluate_modules" / benchmark_id / "README.md"
    sys.path.insert(0, str(package_src))
    try:
        module = importlib.import_module(f"vlbench_{benchmark_id}")
        register(module.BENCHMARK)
        try:
            card.write_text(render(card.read_text(encoding="utf-8"), benchmark_id),
                            encoding="utf-8")
        finally:
            unregister(benchmark_id)
    finally:
        sys.path.remove(str(package_src))
        for name in [
            m
            for m in sys.modules
            if m == f"vlbench_{benchmark_id}" or m.startswith(f"vlbench_{benchmark_id}.")
        ]:
            del sys.modules[name]


def _sample_images(package: Path, benchmark_id: str) -> list[Path]:
    """The sample's images (``samples/images/<file_name>``: as many dots as the image's count), so
    that the sample builds with its images and ``vlbench predict`` can run on it."""
    from PIL import Image, ImageDraw

    samples = Path("src") / f"vlbench_{benchmark_id}" / "samples"
    written = []
    for entry in json.loads((package / samples / "references.json").read_text(encoding="utf-8"))[
        "images"
    ]:
        image = Image.new("RGB", (96, 64), (235, 235, 235))
        draw = ImageDraw.Draw(image)
        for k in range(int(entry["count"])):
            x = 8 + 16 * k
            draw.ellipse([x, 24, x + 12, 36], fill=(40, 90, 200))
        relative = samples / "images" / entry["file_name"]
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        image.save(package / relative, format="JPEG", quality=90)
        written.append(relative)
    return written


def new_benchmark(benchmark_id: str, out: str | os.PathLike,
                  display_name: str | None = None) -> list[Path]:
    """Write the plug-in package for ``benchmark_id`` into the new folder ``out`` and return its
    files (relative). ``out`` must not exist: nothing of the user's is overwritten, and a failure
    leaves no folder behind (the package is written beside it, then renamed)."""
    _check_id(benchmark_id)
    _check_name(display_name)
    target = Path(out)
    if target.exists() or target.is_symlink():
        raise InputError(f"{target} already exists" + (" (a link)" if target.is_symlink() else ""),
                         fix="pass --out with a new folder (nothing is overwritten)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError as exc:
        raise InputError(f"cannot create a folder in {target.parent} ({exc.strerror or exc})",
                         fix="pass --out inside a folder you can write to") from None
    try:
        files = []
        for source in sorted(p for p in TEMPLATE.rglob("*.tmpl") if p.is_file()):
            relative = Path(_fill(str(source.relative_to(TEMPLATE)),
                                  _placeholders(benchmark_id, None, "")))
            relative = relative.with_suffix("")
            values = _placeholders(benchmark_id, display_name, relative.suffix)
            dest = staging / relative
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(_fill(source.read_text(encoding="utf-8"), values), encoding="utf-8")
            files.append(relative)
        files += _sample_images(staging, benchmark_id)
        _fill_card(staging / "src", benchmark_id)
        umask = os.umask(0)
        os.umask(umask)
        # mkdtemp's 0700 would hide the package from other users
        staging.chmod(0o777 & ~umask)
        staging.rename(target)
    except OSError as exc:              # a full disk, a quota, a folder made read-only meanwhile
        shutil.rmtree(staging, ignore_errors=True)
        raise ServiceError(
            f"cannot write the package in {target.parent} ({exc.strerror or exc}); nothing was "
            "left there. Fix: free space there or pass another --out, then rerun"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files
