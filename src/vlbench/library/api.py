"""The library entry points: ``vlbench.score``, ``compare``, ``load_references``, ``build``,
``export``.

Each works for every registered benchmark through the
:class:`~vlbench.benchmarks.benchmark.Benchmark` protocol: options are validated once, paths are
read here (the scorers never touch files), and predictions are checked not to be another benchmark's
file.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..engine.io import process_alive, write_text_atomic
from ..engine.result import Result
from ..engine.tie_orders import DEFAULT_ORDERS, default_orders
from .provenance import release_record, source_of

__all__ = ["score", "compare", "conventions", "load_references", "build", "export", "metric_path",
           "dataset_id_of", "record_hub_id"]


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def load_references(benchmark: str, references: str | os.PathLike, *,
                    split: str | None = None) -> Any:
    """Read a benchmark's references (official file, Hub folder or Hub id) into its records type."""
    bench = get_benchmark(benchmark)
    return bench.scorer.load_references(references, split or bench.default_split)


def _prepare(benchmark: str, references: Any, split: str | None, protocol: str,
             options: dict[str, Any], predictions: Any = None, max_bytes: int | None = None):
    """(benchmark, options, records, predictions): ``predictions`` as given, or, when it and
    ``references`` are both paths, the prediction file's entries (the references read first: their
    errors come first)."""
    bench = get_benchmark(benchmark)
    opts = bench.options(protocol=protocol, split=split, **options)
    if not _is_path(references):
        return bench, opts, references, predictions
    load = lambda: bench.scorer.load_references(references, opts.split)  # noqa: E731
    if not _is_path(predictions):
        return bench, opts, load(), predictions
    refs = load()
    return bench, opts, refs, _read_predictions(bench, predictions, max_bytes)


def _read_predictions(bench: Any, path: str | os.PathLike, max_bytes: int | None) -> Any:
    """A prediction file's entries, typed records where the file has the usual shape."""
    return bench.scorer.read_predictions(path, max_bytes=max_bytes, typed=True)


def _score(bench: Any, opts: Any, refs: Any, predictions: Any, max_bytes: int | None = None,
           source: str = "predictions") -> Result:
    if _is_path(predictions):
        source = str(predictions)
        predictions = _read_predictions(bench, predictions, max_bytes)
    result = bench.scorer.score(refs, predictions, opts, source)
    check_conventions(bench, refs, predictions, result, opts)
    return result


def check_conventions(bench: Any, references: Any, predictions: Any, result: Result,
                      options: Any = None) -> None:
    """Add :func:`convention_warning`'s warning to ``result`` for a benchmark with box conventions.
    Another reading can beat the file by the margin only where the file scores under 100 - margin: a
    good file is never re-read."""
    conventions = bench.conventions
    if (
        conventions is not None
        and (result.metrics.get(conventions.key) or 0.0) < 100 - CONVENTION_MARGIN_POINTS
    ):
        values = conventions.readings(references, predictions, options)
        result.warnings.extend(convention_warning(conventions, values))


#: another reading must score this many points more, and at least twice as much, to be named
CONVENTION_MARGIN_POINTS = 20.0


def convention_warning(conventions: Any, values: dict[str, float | None]) -> list[str]:
    """A warning when another reading of the file's boxes scores far better than the file as written
    (by CONVENTION_MARGIN_POINTS and at least twice): the file is probably in that convention."""
    from ..benchmarks.protocol.conventions import AS_WRITTEN

    written = values.get(AS_WRITTEN) or 0.0
    others = {k: v for k, v in values.items() if k != AS_WRITTEN and v is not None}
    if not others:
        return []
    best = max(others, key=lambda k: others[k] or 0.0)
    value = others[best] or 0.0
    if value < written + CONVENTION_MARGIN_POINTS or value < 2 * written:
        return []
    return [f"the boxes score {conventions.key} {written:.1f} as written but {value:.1f} read as "
            f"{best}: the file is probably in that convention (fix: {conventions.fix(best)}; "
            "'vlbench conventions' shows every reading)"]


def conventions(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
                max_bytes: int | None = None) -> tuple[str, dict[str, float | None]]:
    """(the metric compared, its value under each common reading of the file's box numbers, the
    official reading first): what ``vlbench conventions`` prints. A benchmark without box
    conventions is an UnsupportedError."""
    from ..engine.errors import UnsupportedError

    bench, opts, refs, _ = _prepare(benchmark, references, split, "official", {})
    if bench.conventions is None:
        raise UnsupportedError(f"{bench.display_name} has no box conventions to compare",
                               fix="score the file with 'vlbench score'")
    entries = (
        _read_predictions(bench, predictions, max_bytes) if _is_path(predictions) else predictions
    )
    bench.scorer.score(refs, entries, opts,
                       source=str(predictions) if _is_path(predictions) else "predictions")
    return bench.conventions.key, bench.conventions.readings(refs, entries, opts)


def score(benchmark: str, references: Any, predictions: Any, *, split: str | None = None,
          protocol: str = "official", ci: float | None = None, resamples: int = 1000, seed: int = 0,
          max_bytes: int | None = None, source: str = "predictions", dataset_id: str | None = None,
          tie_orders: int | None = None, **options: Any) -> Result:
    """Score ``predictions`` (a path or the parsed official JSON) against ``references`` (a path or
    records).

    ``dataset_id`` (the Hub id of the references, for model cards) defaults to the one the
    references name: a Hub id given as references, or the id a folder was published under (``vlbench
    publish dataset``); else None.

    ``options`` are the benchmark's own (see its ``options_type``); an unknown one is an error.
    ``source`` names parsed predictions in messages (a path names itself). With
    ``ci`` (e.g. 0.95), ``breakdowns["confidence_intervals"]`` holds a percentile bootstrap interval
    over images for every metric (``resamples`` draws from ``seed``); the metrics themselves are
    unchanged.

    Where scores tie (the result has ``tie_bounds``), ``breakdowns["tie_orders"]`` holds the
    headline and bounded keys over ``tie_orders`` seeded random orders of the prediction list
    (:mod:`vlbench.engine.tie_orders`; 0: none): each is one more scoring of the file. By default
    (None) 20 for a list of up to 50,000 entries, else none, with a warning saying how to ask for
    them.
    """
    from ..engine.errors import InputError

    if tie_orders is not None and (not isinstance(tie_orders, int) or tie_orders < 0):
        raise InputError(f"tie_orders must be a whole number of orders, got {tie_orders!r}",
                         fix="pass 0 or more")
    source = str(predictions) if _is_path(predictions) else source
    bench, opts, refs, entries = _prepare(benchmark, references, split, protocol, options,
                                          predictions, max_bytes)
    result = _score(bench, opts, refs, entries, max_bytes, source)
    result.dataset_id = dataset_id or dataset_id_of(references)
    result.source = source_of(references)
    if "tie_bounds" in result.breakdowns and isinstance(entries, list):
        orders = default_orders(len(entries)) if tie_orders is None else tie_orders
        if orders:
            add_tie_orders(bench, opts, refs, entries, result, orders, seed)
        elif tie_orders is None:
            result.warnings.append("scores tie: what random orders of the ties give was not "
                                   f"sampled for {len(entries):,} predictions (each order is one "
                                   f"more scoring); pass --tie-orders {DEFAULT_ORDERS} "
                                   f"(tie_orders={DEFAULT_ORDERS}) to see it")
    if ci is not None:
        from ..engine.uncertainty import add_intervals

        add_intervals(result, ci, resamples=resamples, seed=seed)
    return result


def add_tie_orders(bench: Any, opts: Any, refs: Any, entries: list[Any], result: Result,
                   orders: int, seed: int) -> None:
    """``breakdowns["tie_orders"]``: the headline and every key with tie bounds over ``orders``
    random file orders, each scored as the official scorer scores that file (no analysis, no
    per-sample details: only the metrics)."""
    import dataclasses

    from ..engine.tie_orders import random_tie_orders

    plain = dataclasses.replace(opts, analysis=False, details=False)
    keys = list(dict.fromkeys([*bench.headline, *result.breakdowns["tie_bounds"]]))
    result.breakdowns["tie_orders"] = random_tie_orders(
        lambda shuffled: bench.scorer.score(refs, shuffled, plain, "predictions").metrics, entries,
        [k for k in keys if k in result.metrics], orders, seed)


def compare(benchmark: str, references: Any, predictions_a: Any, predictions_b: Any, *,
            split: str | None = None,
            protocol: str = "official", ci: float = 0.95, resamples: int = 1000, seed: int = 0,
            names: tuple[str, str] | None = None, max_bytes: int | None = None, **options: Any):
    """Paired bootstrap of two prediction files on the same references (see
    :func:`vlbench.engine.uncertainty.compare`). Returns ``(comparison, result_a, result_b)``."""
    from ..engine.uncertainty import compare as paired

    # read once, scored twice
    bench, opts, refs, _ = _prepare(benchmark, references, split, protocol, options)
    a = _score(bench, opts, refs, predictions_a, max_bytes)
    b = _score(bench, opts, refs, predictions_b, max_bytes)
    if names is None:
        names = (str(predictions_a) if _is_path(predictions_a) else "A",
                 str(predictions_b) if _is_path(predictions_b) else "B")
    return (
        paired(
            a,
            b,
            ci,
            resamples=resamples,
            seed=seed,
            names=names,
            lower_is_better=bench.lower_is_better,
        ),
        a,
        b,
    )


#: written into every built folder: the files of that build (the only ones a later build may
#: replace)
MANIFEST = ".vlbench-build.json"


def build(benchmark: str, raw: Any, out: str | os.PathLike, *, overwrite: bool = False,
          eval_framework: str = "inspect-ai", release: dict[str, Any] | None = None,
          **kwargs: Any) -> Any:
    """Official release -> Hub folder (the benchmark's builder), then the folder's ``eval.yaml``
    naming ``eval_framework`` (see :func:`vlbench.library.registration.eval_yaml`).

    ``release``: the record of a fetched release (:mod:`vlbench.library.fetch`: home, revision,
    files' SHA-256), kept in the card as the folder's ``source``; without it the SHA-256 of the
    annotation files read.

    The build happens in a staging folder next to ``out`` and is moved in at the end, so an error or
    Ctrl-C leaves ``out`` as it was. ``out`` must be new or empty; with ``overwrite``, a folder an
    earlier vlbench build wrote is updated, and only the files that build wrote are replaced or
    removed (never a file of yours).
    """
    import shutil
    import tempfile

    from ..benchmarks.validation import read_card_metadata
    from ..engine.io import check_output
    from .registration import eval_tasks, write_eval_yaml, yaml_configs

    bench = get_benchmark(benchmark)
    out = check_output(out, "output folder", folder=True)
    _check_apart(out, [*(raw if isinstance(raw, list | tuple) else [raw]), kwargs.get("images")])
    previous = _check_build_target(out, overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    removed = _remove_dead_staging(out)
    staging = Path(tempfile.mkdtemp(prefix=f".vlbench-staging-{out.name}-{os.getpid()}-",
                                    dir=out.parent))
    try:
        try:
            report = bench.require_dataset().build(raw, staging, **kwargs)
        except OSError as exc:
            if exc.errno != errno.ENOSPC and "No space left" not in str(exc):
                raise
            from ..engine.errors import ServiceError

            raise ServiceError(f"no space left on the device of {out.parent} while writing the "
                               f"build (the folder {out} was not changed). Fix: free space there, "
                               "or pass another --out, then rerun"
                               ) from None
        for name in removed:
            report.count("staging_removed",
                         "staging folder(s) left by a killed build were removed (" + name + ")")
        _note_missing_images(staging, report)
        _record_release(staging, release or release_record(raw))
        card = read_card_metadata(staging)
        if eval_tasks(bench.id, yaml_configs(card)):
            _, warnings = write_eval_yaml(staging, bench.id, card, eval_framework)
            report.files.insert(1, "eval.yaml")
            # kept for local use and the .eval_results task ids; publishing refuses it
            for warning in warnings:
                report.count("eval_yaml_framework",
                             "eval.yaml the Hub would refuse at push time: " + warning)
        else:
            # e.g. a config named after a file, which no leaderboard task names: a dataset, no
            # leaderboard
            report.count("no_eval_yaml",
                         "folder without eval.yaml: no leaderboard task covers its configs "
                                         f"({', '.join(yaml_configs(card))})")
        _verify_embedded_images(staging)
        _move_build(staging, out, previous)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def _remove_dead_staging(out: Path) -> list[str]:
    """Remove the staging folders a killed build of ``out`` left beside it
    (``.vlbench-staging-<name>-<pid>-*`` whose process is gone), and return their names: they hold
    the shards written before the kill."""
    import shutil

    removed = []
    for folder in out.parent.glob(f".vlbench-staging-{out.name}-*"):
        pid = folder.name[len(f".vlbench-staging-{out.name}-"):].split("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or process_alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder.name)
    return removed


def _note_missing_images(folder: Path, report: Any) -> None:
    """A build without (some of) its images says so on the card, whatever the field descriptions
    promise."""
    if not report.missing_images:
        return
    card = folder / "README.md"
    note = (
        f"\n\n## Images\n\n{len(report.missing_images):,} image(s) are **not embedded** in "
        "this build (it was made "
        "with `--allow-missing-images`; e.g. "
        + ", ".join(f"`{m}`" for m in report.missing_images[:3])
        + "): their rows have no image, so models cannot be run on them (`vlbench predict` "
        "refuses such rows).\n"
    )
    card.write_text(card.read_text(encoding="utf-8").rstrip("\n") + note, encoding="utf-8")


def _record_release(folder: Path, record: dict[str, Any]) -> None:
    """The card's ``vlbench.source``: the release the build read (its home and revision when
    fetched, its files' SHA-256), carried by every result scored against the folder
    (``Result.source``)."""
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(folder / "README.md")
    card.data["vlbench"] = {**(card.data.get("vlbench") or {}), "source": record}
    card.save(folder / "README.md")


def _check_apart(out: Path, sources: list[Any]) -> None:
    """Refuse an output folder that is, holds or lies inside a file or folder the build reads (the
    release, its images): the build's files would mix with the release's, and a later build would
    read them as part of it (a release given as a folder is read as every file of its kind in
    it)."""
    from ..engine.errors import InputError

    here = out.resolve()
    for path in (p for p in sources if isinstance(p, str | os.PathLike)):
        source = Path(path).resolve()
        if here == source or source in here.parents or here in source.parents:
            raise InputError(f"the output folder {'is' if here == source else 'and'} the release "
                             "it reads "
                             f"({path}){' overlap' if here != source else ''}", file=str(out),
                             fix="pass --out a folder outside the release (e.g. hub/<benchmark>)")


def _check_build_target(out: Path, overwrite: bool) -> list[str]:
    """The files an earlier build wrote into ``out`` (its manifest); refuses a folder holding
    anything else unless ``overwrite``, and then only where the new build would replace a file
    vlbench did not write."""
    from ..engine.errors import InputError

    if not out.exists() or not any(out.iterdir()):
        return []
    files = _read_manifest(out).get("files")
    previous = [str(p) for p in files] if isinstance(files, list) else []
    if not overwrite:
        what = "an earlier vlbench build" if previous else "files vlbench did not write"
        raise InputError(f"the output folder is not empty: it holds {what}", file=str(out),
                         fix="choose a new or empty folder, or pass --overwrite (only files of an "
                             "earlier vlbench "
                             "build are replaced; your own files are never touched)")
    return previous


def _verify_embedded_images(folder: Path) -> None:
    """Every image cell of every shard carries its bytes (a path alone would not load from anywhere
    else). Only image columns are read, one row group at a time, so memory stays flat whatever the
    build's size."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..engine.errors import FormatError

    for shard in sorted(folder.rglob("*.parquet")):
        parquet = pq.ParquetFile(shard)
        images = [f.name for f in parquet.schema_arrow
                  if pa.types.is_struct(f.type) and {"bytes", "path"} <= {c.name for c in f.type}]
        for i in range(parquet.num_row_groups) if images else ():
            group = parquet.read_row_group(i, columns=images)
            for name in images:
                column = group[name]
                without = pc.sum(
                    pc.and_(pc.is_valid(column), pc.is_null(pc.struct_field(column, "bytes")))
                ).as_py()
                if without:
                    raise FormatError(f"{without} image(s) in {shard.name} were written without "
                                      "their bytes",
                                      file=str(folder),
                                      fix="report this: the build must embed every image")


def _move_build(staging: Path, out: Path, previous: list[str]) -> None:
    """Replace the files of the previous build by the staged ones; refuse to replace a file vlbench
    did not write."""
    from ..engine.errors import InputError

    new = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    clash = [f for f in new if (out / f).exists() and f not in previous]
    if clash:
        raise InputError("the output folder holds file(s) the build would replace that vlbench did "
                         f"not write: {', '.join(clash[:5])}", file=str(out),
                         fix="move them away, or choose another folder")
    for rel in previous:
        target = out / rel
        # only inside out
        if target.is_file() and not Path(rel).is_absolute() and ".." not in Path(rel).parts:
            target.unlink()
    for rel in new:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).replace(out / rel)
    (out / MANIFEST).write_text(json.dumps({"files": new}, indent=1), encoding="utf-8")
    for folder in sorted({(out / rel).parent for rel in previous}, key=lambda p: -len(p.parts)):
        if folder != out and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def export(benchmark: str, folder: str | os.PathLike, *, split: str | None = None) -> Any:
    """Hub folder -> the benchmark's official annotation data (JSON-serialisable)."""
    bench = get_benchmark(benchmark)
    if not Path(folder).is_dir():
        from ..engine.errors import FormatError

        raise FormatError("the folder does not exist", file=str(folder),
                          fix="pass the folder 'vlbench build' wrote")
    return bench.require_dataset().export(folder, split or bench.default_split or "")


def metric_path(benchmark: str) -> str:
    """The folder of a benchmark's ``evaluate`` module (inside the installed package, or the one a
    plug-in names), for ``evaluate.load(vlbench.metric_path(benchmark))`` from any working directory
    (it is also the metric Space)."""
    from ..engine.errors import UnsupportedError

    bench = get_benchmark(benchmark)
    folder = (Path(bench.evaluate_module) if bench.evaluate_module
              else Path(__file__).resolve().parents[1] / "evaluate_modules" / bench.id)
    if not (folder / f"{bench.id}.py").is_file():
        raise UnsupportedError(f"{bench.display_name} has no evaluate module in this installation",
                               fix="score with vlbench.score(...) or 'vlbench score'")
    return str(folder)


#: a Hub repo id: ``owner/name``
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def dataset_id_of(references: Any) -> str | None:
    """The Hub id that ``references`` name: a Hub id itself (not a local path), or the id a built
    folder was published under (:func:`record_hub_id`); None otherwise (never a guessed id)."""
    if not _is_path(references):
        return None
    path = Path(references)
    if path.is_dir():
        return _read_manifest(path).get("hub_id")
    return str(references) if not path.exists() and _HUB_ID.match(str(references)) else None


def record_hub_id(folder: str | os.PathLike, hub_id: str) -> None:
    """Note in a built folder's manifest the Hub id it was published under (read back by
    :func:`dataset_id_of`)."""
    manifest = {**_read_manifest(Path(folder)), "hub_id": hub_id}
    write_text_atomic(Path(folder) / MANIFEST, json.dumps(manifest, indent=1), "build manifest")


def _read_manifest(folder: Path) -> dict[str, Any]:
    """The build manifest of ``folder`` (files written, Hub id published under); {} when absent or
    unreadable."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}
