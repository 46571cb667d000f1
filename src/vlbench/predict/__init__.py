"""``vlbench predict``: a Hugging Face model over a built dataset -> the benchmark's official
prediction file.

Items are cheap: their images stay in the dataset's shards until their batch is decoded
(:mod:`.streaming`), so memory does not grow with the split. The loop is resumable: every finished
batch is appended to ``<out>.partial.jsonl`` (a first line records the settings: model, revision,
kind, box convention, prompt, thresholds), a rerun with the same settings continues where it
stopped, and the official file is written (atomically) only at the end, with ``<out>.meta.json``
beside it: the settings, the counts, each kind of unparseable answer with a few raw answers. Several
processes (``accelerate launch -m vlbench predict ...``) each take a shard of the items and write
their own partial file; the main process merges them in item order.

Benchmarks say what to ask through their predictor (:class:`vlbench.benchmarks.protocol.Predictor`);
nothing here names one. torch and transformers load only when a model runs (``pip install
"vlbench[predict]"``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..benchmarks.protocol.predicting import DetectorAnswer, PredictData, PredictItem, Predictor
from ..engine.errors import FormatError, InputError
from ..engine.io import check_output, write_text_atomic
from .confidence import BOX_SCORES, TOKEN_PROBABILITY, TokenScores, box_confidence
from .data import data_version, load_data
from .families import GENERATOR, Preset

__all__ = ["PredictSettings", "PredictReport", "predict", "run", "load_data", "answer_record",
           "tally", "write_run_record", "default_max_new_tokens"]

#: raw answers kept per kind of failure in the report
KEEP_ANSWERS = 5


@dataclass(frozen=True)
class PredictSettings:
    """Everything that decides the predictions (recorded with them; a resumed run must match)."""

    benchmark: str
    model: str
    revision: str | None
    kind: str
    config: str | None
    split: str | None
    box_format: str | None = None
    prompt: str | None = None
    threshold: float = 0.01
    top_k: int = 100
    max_queries: int = 16
    max_new_tokens: int | None = None
    #: the model family whose preset built the prompt and reads the answer (see :mod:`.families`)
    family: str | None = None
    #: how the prompt reached the model: "chat template" or "processor text" (task tokens, no chat
    #: turn)
    input: str | None = None
    #: how a generated box is scored (:data:`.confidence.BOX_SCORES`); None for a detector (its own
    #: scores)
    box_scores: str | None = None
    #: the weights' dtype ("auto": the checkpoint's) and the device map ("auto": spread over every
    #: device)
    dtype: str = "auto"
    device_map: str | None = None
    #: the OpenAI-compatible endpoint asked (``--server``), None for a model run in this process; a
    #: resumed run may use another address (each answer records the one that gave it)
    server: str | None = None
    #: the dataset folder's files as they were (:func:`data_version`), None for a Hub id
    data_version: str | None = None


@dataclass
class PredictReport:
    """What a run did: items answered, entries written, unparseable answers by reason (with a few
    raw ones), and queries a detector family had to alter (``notes``: cut at its text length,
    separators escaped)."""

    settings: PredictSettings
    items: int = 0
    entries: int = 0
    resumed: int = 0
    #: items whose answer gave no entry (no box found, or an answer without a usable box)
    unanswered: int = 0
    #: items of the split left out by ``limit`` (not asked at all)
    skipped: int = 0
    #: False in the other processes of a multi-process run (only the main one merges and reports)
    main: bool = True
    failures: dict[str, int] = field(default_factory=dict)
    answers: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    #: --server: the model each reply named (its ``model`` field) -> items it answered
    served_by: dict[str, int] = field(default_factory=dict)
    #: --server: each address that answered -> items it answered (a run may continue on another
    #: address)
    servers: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``<out>.meta.json`` content."""
        from .. import __version__

        return {"settings": asdict(self.settings), "items": self.items, "entries": self.entries,
                "resumed": self.resumed, "unanswered": self.unanswered, "skipped": self.skipped,
                "failures": self.failures,
                "failed_answers": self.answers, **self.notes,
                **({"served_by": self.served_by, "servers": self.servers} if self.servers else {}),
                "vlbench": __version__}

    def other_models(self) -> list[str]:
        """The models a server named in its replies other than the one asked for (``--model``)."""
        return sorted(m for m in self.served_by if m != self.settings.model)

    def summary(self) -> str:
        """One line for the terminal."""
        failed = sum(self.failures.values())
        altered = "; ".join(f"{n} {NOTES[k]}" for k, n in self.notes.items() if n)
        return (
            f"{self.items} item(s), {self.entries} prediction(s)"
            + (f", {self.resumed} resumed" if self.resumed else "")
            + (
                f"; {failed} answer(s) without a usable prediction: "
                + "; ".join(f"{n} {r}" for r, n in self.failures.items())
                if failed
                else ""
            )
            + (f"; {altered}" if altered else "")
            + (f"; {self.skipped} item(s) of the split not answered" if self.skipped else "")
            + (
                f"; prompts and box reading of the {self.settings.family!r} family"
                if self.settings.server
                else ""
            )
            + (
                "; warning: the server says another model answered: "
                + ", ".join(f"{m!r} ({self.served_by[m]} item(s))" for m in self.other_models())
                + f", not {self.settings.model!r}"
                if self.other_models()
                else ""
            )
        )


#: the detector notes a run counts -> how the summary says them
NOTES = {"queries_truncated": "queries cut at the text encoder's length",
         "queries_escaped": "queries with '.' or '?' written as ',' (phrase separators of the "
                            "model)",
         "boxes_non_finite": "boxes with NaN or infinite values dropped",
         "boxes_scored_1": "generated boxes scored 1 (the model gave no token probabilities for "
                           "them)",
         "boxes_outside_image": "boxes reaching more than 2 px beyond the image (kept and scored "
                                "as written, as the official scorers do; many suggest a wrong "
                                "--box-format)"}


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _partial_path(out: Path, rank: int) -> Path:
    return out.with_name(out.name + (f".partial-{rank}.jsonl" if rank else ".partial.jsonl"))


def _resume(path: Path, settings: PredictSettings,
            repair: bool = False) -> dict[str, dict[str, Any]]:
    """The finished items of an earlier run with the same settings (key -> its line). A last line
    cut by a killed run is dropped (with ``repair``, cut from the file too, so the next record
    starts on a line of its own); a file that is not such a partial file is a clear error, never a
    traceback."""
    if not path.exists():
        return {}
    fix = "delete the file to start over (or rerun the command that wrote it)"
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("the partial file is not UTF-8 text: it was not written by vlbench "
                          "predict", file=str(path),
                          fix=fix) from None
    except OSError as exc:
        raise FormatError(
            f"cannot read the partial file ({exc.strerror or exc})", file=str(path), fix=fix
        ) from None
    if not text.strip():
        return {}
    lines = text.split("\n")
    torn = lines[-1] != ""          # a complete file ends with a newline
    try:
        head = json.loads(lines[0])
        header_ok = isinstance(head, dict) and isinstance(head.get("settings"), dict)
    except ValueError:
        header_ok = False
    if not header_ok:
        raise FormatError("the partial file has no settings line (a torn or foreign file)",
                          file=str(path), fix=fix)
    now = json.loads(json.dumps(asdict(settings)))
    # the server's address is no setting of the answers: a run continues on another address of the
    # same model
    changed = sorted(
        k
        for k in {**head["settings"], **now}
        if head["settings"].get(k) != now.get(k) and k != "server"
    )
    if changed:
        if changed == ["data_version"]:
            raise InputError("a partial run over another version of the dataset is in the way (its "
                             "folder changed since)", file=str(path),
                             fix="delete the file to start over on the dataset as it is now")
        raise InputError("a partial run with other settings is in the way (they differ in: "
                         f"{', '.join(changed)})",
                         file=str(path),
                         fix="rerun with the same settings to continue it, or delete the file to "
                             "start over")
    # a foreign entry is never merged
    keys = get_benchmark(settings.benchmark).scorer.prediction_keys
    done = {}
    for n, line in enumerate(lines[1:-1] if torn else lines[1:], 2):
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise FormatError("a line of the partial file is not JSON", file=str(path),
                              entry=f"line {n}", fix=fix) from None
        if not (isinstance(record, dict) and isinstance(record.get("key"), str)
                and isinstance(record.get("entries"), list)):
            raise FormatError("a line of the partial file is not a record {\"key\", \"entries\", "
                              "...}", file=str(path),
                              entry=f"line {n}", fix=fix)
        stray = next(
            (e for e in record["entries"] if not (isinstance(e, dict) and keys <= e.keys())), None
        )
        if stray is not None:
            raise FormatError("a line of the partial file holds an entry that is no "
                              f"{settings.benchmark} prediction "
                              f"(every one has {', '.join(sorted(keys))}): {str(stray)[:120]}",
                              file=str(path), entry=f"line {n}", fix=fix)
        done[record["key"]] = record
    if torn and repair:         # drop the cut line, so that appending starts a new line
        with open(path, "r+b") as fh:
            fh.truncate(len(raw) - len(lines[-1].encode("utf-8")))
    return done


def _preset(info: Any, answer_kind: str, prompt: str | None,
            box_format: str | None) -> Preset | None:
    """A VLM's preset (None for a detector), its padded-square convention replaced by the square the
    model's image processor makes (:func:`.models.square_view`) unless ``box_format`` says
    otherwise."""
    from .models import viewed_preset

    if info.kind != GENERATOR:
        return None
    return viewed_preset(info.family.preset(answer_kind, prompt, box_format), info.square_view,
                         box_format)


def predict(benchmark: str, model: str, data: str | os.PathLike, out: str | os.PathLike, *,
            split: str | None = None, config: str | None = None, revision: str | None = None,
            device: str | None = None, kind: str | None = None, box_format: str | None = None,
            prompt: str | None = None, threshold: float = 0.01, top_k: int = 100,
            max_queries: int = 16,
            max_new_tokens: int | None = None, batch_size: int = 4, limit: int | None = None,
            box_scores: str = TOKEN_PROBABILITY, dtype: str = "auto", device_map: str | None = None,
            server: str | None = None, concurrency: int = 8, api_key_env: str | None = None,
            request_timeout: float = 600.0, skip_bad_images: bool = False, progress: bool = True,
            overwrite: bool = False) -> PredictReport:
    """Run ``model`` over a built dataset and write the official prediction file ``out`` (and
    ``out.meta.json``).

    ``threshold`` / ``top_k`` keep detections for AP (a low threshold, float boxes: the ``pipeline``
    drops scores under 0.1, rounds boxes). A VLM is asked as its family's preset says
    (:mod:`.families`; ``prompt`` and ``box_format`` override it); ``max_new_tokens`` defaults to a
    length that fits the answer kind; ``limit`` stops after that many items; ``box_scores``: how a
    generated box is scored (:data:`.confidence.BOX_SCORES`). ``dtype`` casts the weights;
    ``device_map="auto"`` spreads a large model over every device. With ``server`` (an
    OpenAI-compatible endpoint) the prompts go there, ``concurrency`` at a time (:mod:`.serving`:
    ``model`` is the name it serves, ``api_key_env`` the variable holding its key,
    ``request_timeout`` a request's seconds). An existing prediction file (or folder) is replaced
    only with ``overwrite``; ``skip_bad_images`` answers the items whose image decodes and counts
    the others. All checks precede the model.
    """
    from . import models, serving

    bench = get_benchmark(benchmark)
    _check_numbers(batch_size=batch_size, top_k=top_k, max_queries=max_queries, limit=limit,
                   max_new_tokens=max_new_tokens, threshold=threshold)
    _check_choices(box_scores, dtype, device_map)
    out = Path(out)
    check_output(out, "prediction file or folder", folder=out.suffix != ".json")
    predictor = bench.require_predictor()
    info = (
        serving.model_info(model, revision)
        if server
        else models.inspect_model(model, revision=revision, kind=kind)
    )
    if info.kind not in predictor.kinds:
        raise InputError(f"{bench.display_name} cannot be answered by {_a(info.kind)} model",
                         file=model,
                         fix="use " + " or ".join(f"{_a(k)} model" for k in predictor.kinds))
    preset = _preset(info, predictor.answer_kind, prompt, box_format)
    # before the (slow) model
    data_rows, split = load_data(bench.id, data, split=split, config=config)
    every = _items(bench, data_rows, info.kind, data)
    items = every[:limit]
    _check_targets(items, data, bench.id, out, overwrite)
    if preset is not None:
        max_new_tokens = max_new_tokens or default_max_new_tokens(predictor.answer_kind, items)
    out.parent.mkdir(parents=True, exist_ok=True)
    rank, world, merge = _processes()
    loaded, how = _load(model, info, preset, server=server, concurrency=concurrency,
                        api_key_env=api_key_env,
                        request_timeout=request_timeout, revision=revision, device=device,
                        dtype=dtype, device_map=device_map)
    boxes = preset is not None and predictor.answer_kind != "text"
    settings = PredictSettings(bench.id, model, revision, info.kind, config, split,
                               preset.box_format if boxes and preset else None,
                               preset.prompt if preset else None, threshold, top_k, max_queries,
                               max_new_tokens if preset else None, info.family.name,
                               how if preset else None,
                               box_scores if boxes else None, dtype, device_map, server,
                               data_version(data_rows.folder))
    report = PredictReport(settings, skipped=len(every) - len(items))
    report.main = rank == 0
    _answer_all(predictor, loaded, items[rank::world], _partial_path(out, rank), report, preset,
                batch_size, progress and rank == 0, skip_bad_images)
    merge(lambda: _finish(bench, items, out, report, world))
    return report


def _load(model: str, info: Any, preset: Any, *, server: str | None, concurrency: int,
          api_key_env: str | None,
          request_timeout: float, revision: str | None, device: str | None, dtype: str,
          device_map: str | None) -> tuple[Any, str]:
    """(the model loaded here, or the server checked, how a prompt reaches it)."""
    from . import models, serving

    if server:
        return serving.connect(server, model, info, concurrency=concurrency,
                               api_key_env=api_key_env, timeout=request_timeout), "server chat"
    loaded = models.load_model(model, info, revision=revision, device=device, preset=preset,
                               dtype=dtype, device_map=device_map)
    chat = preset is not None and preset.chat and models.has_chat_template(loaded.processor)
    return loaded, "chat template" if chat else "processor text"


def _check_choices(box_scores: str, dtype: str, device_map: str | None) -> None:
    """The named choices of a run, before anything loads."""
    from .models import DTYPES

    if box_scores not in BOX_SCORES:
        raise InputError(f"unknown box score rule {box_scores!r}",
                         fix="use one of: " + "; ".join(f"{k} ({v})" for k,
                                                        v in BOX_SCORES.items()))
    if dtype not in DTYPES or device_map not in (None, "auto"):
        raise InputError(f"unknown dtype {dtype!r} or device map {device_map!r}",
                         fix=f"use --dtype {' / '.join(DTYPES)} and --device-map auto (or leave "
                             "them out)")


def _check_targets(items: list[PredictItem], data: str | os.PathLike, benchmark: str, out: Path,
                   overwrite: bool) -> None:
    """Before the model loads: every item has its image, and the files the run writes may be
    written."""
    _require_images(items, data, benchmark)
    if len({it.context.get("part") for it in items}) > 1 and out.suffix == ".json":
        raise InputError("these items belong to several parts (sub-datasets), written as a folder "
                         "of <part>.json files", file=str(out),
                         fix="name a folder for --out (no .json), or pick one part with --config")
    # an unfinished run of this --out (its partial file is there) is continued: the files it may
    # have written before it stopped (a full disk between the prediction file and the meta file) are
    # its own, not the user's
    unfinished = any(out.parent.glob(f"{out.name}.partial*.jsonl"))
    _refuse_to_replace(_targets(out, items), overwrite or unfinished)


def _answer_all(predictor: Predictor, loaded: Any, mine: list[PredictItem], partial: Path,
                report: PredictReport,
                preset: Any, batch_size: int, progress: bool, skip_bad: bool = False) -> None:
    """This process's items in batches, each answer appended to its partial file (resumed where a
    run stopped)."""
    from . import serving
    from .families import render_prompt
    from .streaming import Unreadable, batches, grouped

    done = _resume(partial, report.settings, repair=True)
    report.resumed = sum(it.key in done for it in mine)
    todo = [it for it in mine if it.key not in done]
    with _appending(partial) as append:
        if partial.stat().st_size == 0:
            append(json.dumps({"settings": asdict(report.settings)}) + "\n")
        bar = _progress(len(mine), report.resumed, progress)
        # a server: a sliding window of requests, not batches
        if isinstance(loaded, serving.ServedModel):
            for record in _served_records(predictor, loaded, todo, report.settings, preset,
                                          skip_bad):
                append(json.dumps(record, allow_nan=False) + "\n")
                append(None)
                bar(1)
            return
        # alike items batched together; each batch's images decoded when its turn comes
        for decoded in batches(grouped(todo, batch_size), batch_size, skip_bad):
            batch = [it for it in decoded if not isinstance(it.image, Unreadable)]
            for it in decoded:
                if isinstance(it.image, Unreadable):
                    append(json.dumps(_unreadable_record(it.key, it.image.reason)) + "\n")
            prompts = (
                [render_prompt(preset, predictor.answer_kind, it.queries) for it in batch]
                if preset
                else []
            )
            for record in (
                _answer(predictor, loaded, batch, report.settings, preset, prompts) if batch else []
            ):
                append(json.dumps(record, allow_nan=False) + "\n")
            append(None)
            bar(len(decoded))


@contextlib.contextmanager
def _appending(partial: Path) -> Iterator[Callable[[str | None], None]]:
    """A function appending a line to ``partial`` (None: flush), whose failures (a full disk, a
    removed folder) are a FormatError with the fix; only the writes are guarded, so an error of the
    model or of an image keeps its own message. The finished batches stay in the partial file."""
    def unwritable(exc: OSError) -> FormatError:
        return FormatError(f"cannot write the partial file ({exc.strerror or exc})",
                           file=str(partial),
                           fix="free disk space (or fix the folder) and rerun the same command to "
                               "continue")

    try:
        fh = open(partial, "a", encoding="utf-8")
    except OSError as exc:
        raise unwritable(exc) from None

    def append(line: str | None) -> None:
        try:
            fh.write(line) if line is not None else fh.flush()
        except OSError as exc:
            raise unwritable(exc) from None

    with fh:        # each batch ends with a flush: closing has nothing left to write
        yield append


def run(benchmark: str, model: str, data: str | os.PathLike, out: str | os.PathLike, *,
        output: str | os.PathLike | None = None, **predict_options: Any) -> tuple[PredictReport,
                                                                                  Any]:
    """:func:`predict`, then score the file it wrote against the same dataset: (the report, the
    :class:`~vlbench.engine.result.Result`, None in a non-main process of ``accelerate launch``).
    The result records the run's settings under ``options["predicted_by"]`` and is written to
    ``output`` when given (checked before the model loads; never the prediction file). Items the run
    could not answer are scored as the benchmark's predictor says (misses, empty captions)."""
    from ..library.api import score

    if output is not None:
        check_output(output, "result JSON")
        if Path(output).resolve() == Path(out).resolve():
            raise InputError("--out and --output name the same file: the result would replace the "
                             "predictions",
                             file=str(out),
                             fix="write the result elsewhere, e.g. --output result.json")
    report = predict(benchmark, model, data, out, **predict_options)
    # another process of 'accelerate launch': the main one merges, reports and scores
    if not report.main:
        return report, None
    if not report.entries:
        raise InputError("the model gave no usable answer for any item, so there is nothing to "
                         f"score ({report.summary()})",
                         file=f"{out}.meta.json",
                         fix="look at the raw answers kept there; check --box-format and --prompt")
    predictor = get_benchmark(benchmark).require_predictor()
    result = score(benchmark, data, out, split=report.settings.split,
                   **predictor.options_for_run(report.settings.config,
                                               report.unanswered + report.skipped))
    result.options["predicted_by"] = {k: v for k,
                                      v in vars(report.settings).items() if v is not None}
    if output is not None:
        write_text_atomic(output, result.to_json(), "result JSON")
    return report, result


def _targets(out: Path, items: list[PredictItem]) -> list[Path]:
    """The official files a run writes: ``<out>/<part>.json`` per part when the items name parts
    (sub-datasets) and ``out`` is not a .json name (the official folder layout, also for one part),
    else ``out`` itself."""
    parts = list(dict.fromkeys(it.context.get("part") for it in items))
    if out.suffix != ".json" and parts and None not in parts:
        return [out / f"{part}.json" for part in parts]
    return [out]


def _refuse_to_replace(targets: list[Path], overwrite: bool) -> None:
    """A file the run would write that exists already is the user's: replaced only when asked; a
    folder in the way of a file is never replaced."""
    for path in targets:
        if path.is_dir():
            raise InputError("a folder is in the way of the prediction file", file=str(path),
                             fix="choose another --out (a folder is written only for several "
                                 "sub-datasets)")
        if path.exists() and not overwrite:
            raise InputError("the prediction file already exists", file=str(path),
                             fix="choose a new --out, or pass --overwrite to replace it")


def _items(bench: Any, rows: PredictData, kind: str, data: str | os.PathLike) -> list[PredictItem]:
    """The benchmark's items of the rows; rows without the benchmark's columns are a clear error."""
    try:
        return list(bench.require_predictor().items(rows, kind))
    except (KeyError, TypeError) as exc:
        raise InputError(
            f"the dataset's rows lack what {bench.display_name} needs "
            f"({type(exc).__name__}: {exc})",
            file=str(data),
            fix=f"pass a folder written by 'vlbench build {bench.id}'",
        ) from None


def _require_images(items: list[PredictItem], data: str | os.PathLike, benchmark: str) -> None:
    """Every item has its image (a dataset built without images cannot be shown to a model)."""
    missing = [it.key for it in items if it.image is None]
    if missing:
        raise InputError(f"{len(missing)} of the {len(items)} rows hold no image (e.g. "
                         f"{', '.join(missing[:3])}): the "
                         "dataset was built without them", file=str(data),
                         fix=f"rebuild it with the images: vlbench build {benchmark} --raw ... "
                             "--images ...")


def _check_numbers(*, batch_size: int, top_k: int, max_queries: int, limit: int | None,
                   max_new_tokens: int | None, threshold: float) -> None:
    """The run's numbers, checked before any work (a clear error, not a ValueError from range())."""
    for name, value, low in (("batch_size", batch_size, 1), ("top_k", top_k, 1),
                             ("max_queries", max_queries, 1),
                             ("max_new_tokens", 1 if max_new_tokens is None else max_new_tokens, 1),
                             ("limit", 0 if limit is None else limit, 0)):
        if not isinstance(value, int) or value < low:
            raise InputError(f"{name.replace('_', '-')} must be a whole number of at least {low}, "
                             f"got {value!r}",
                             fix=f"pass --{name.replace('_', '-')} {max(low, 1)} or more")
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"threshold must lie in [0, 1], got {threshold}",
                         fix="pass e.g. --threshold 0.01")


#: answer-length budget: a caption; one box answer (a JSON entry with its label is ~25-35 tokens
#: with digit-wise tokenizers, plus the expression when a family echoes it); per listed label of a
#: detection answer
CAPTION_TOKENS, BOX_TOKENS, TOKENS_PER_LABEL = 64, 160, 48


def default_max_new_tokens(answer_kind: str, items: list[PredictItem]) -> int:
    """The answer length when none is given: a caption's, one box's (room for an echoed expression:
    2 tokens per word of the longest), or a detection list with room for one entry per label of the
    largest label list."""
    if answer_kind == "text":
        return CAPTION_TOKENS
    if answer_kind == "box":
        return BOX_TOKENS + 2 * max((len(it.queries[0].split()) for it in items if it.queries),
                                    default=0)
    return 32 + TOKENS_PER_LABEL * max((len(it.queries) for it in items), default=1)


#: the failure an item whose image does not decode is counted under (``--skip-bad-images``)
BAD_IMAGE = "the image does not decode, skipped"


def _unreadable_record(key: str, reason: str) -> dict[str, Any]:
    """The record of an item skipped because its image does not decode: no entry, counted under
    :data:`BAD_IMAGE`, with what was wrong kept as its answer."""
    return {"key": key, "entries": [], "failure": BAD_IMAGE, "answer": reason}


def _served_records(predictor: Predictor, served: Any, todo: list[PredictItem],
                    settings: PredictSettings,
                    preset: Any, skip_bad: bool = False) -> Iterator[dict[str, Any]]:
    """One record per item, in the order the server answers (``--concurrency`` requests in flight,
    whatever ``--batch-size``); the official file is merged in item order at the end."""
    from . import serving
    from .families import render_prompt

    if settings.max_new_tokens is None:      # predict() sets it for every run that generates
        raise InputError("no answer length for a model that generates", fix="pass --max-new-tokens")
    by_key = {it.key: it for it in todo}
    scored = settings.box_scores == TOKEN_PROBABILITY
    prompts = (
        render_prompt(preset, predictor.answer_kind, it.queries) if preset else "" for it in todo
    )
    for key, a in serving.answers_as_completed(served, todo, prompts,
                                               max_new_tokens=settings.max_new_tokens,
                                               token_scores=scored, skip_bad=skip_bad):
        if a.unreadable is not None:
            yield _unreadable_record(key, a.unreadable)
            continue
        record = answer_record(predictor, by_key[key], a.text, settings.box_format, a.input_size,
                               truncated=a.truncated, tokens=a.tokens, token_scores=scored)
        yield {**record, "server": served.url,
               **({"served_by": a.model} if a.model is not None else {})}


def _answer(predictor: Predictor, loaded: Any, batch: list[PredictItem], settings: PredictSettings,
            preset: Any, prompts: list[str]) -> list[dict[str, Any]]:
    """One batch -> one record per item: its entries, or why its answer gave none (with the raw
    answer)."""
    from . import models

    if loaded.kind == models.DETECTOR:
        found, notes = models.detect(loaded, batch, threshold=settings.threshold,
                                     top_k=settings.top_k, max_queries=settings.max_queries)
        return [{"key": it.key, "entries": predictor.from_detections(it, d),
                 **({"notes": n} if n else {})}
                for it, d, n in zip(batch, found, notes)]
    if settings.max_new_tokens is None:      # predict() sets it for every run that generates
        raise InputError("no answer length for a model that generates", fix="pass --max-new-tokens")
    scored = settings.box_scores == TOKEN_PROBABILITY
    answers = models.generate(loaded, batch, prompts, preset,
                              max_new_tokens=settings.max_new_tokens,
                              text_answer=predictor.answer_kind == "text", token_scores=scored)
    return [answer_record(predictor, it, a.text, settings.box_format, a.input_size,
                          truncated=a.truncated,
                          tokens=a.tokens, token_scores=scored) for it, a in zip(batch, answers)]


def answer_record(predictor: Predictor, item: PredictItem, text: str, box_format: str | None,
                  input_size: tuple[int, int] | None = None,
                  image_size: tuple[int, int] | None = None, *,
                  truncated: bool = False, tokens: TokenScores | None = None,
                  token_scores: bool = False) -> dict[str, Any]:
    """One text answer -> its record: the official entries, or why it gave none (with the answer).
    With a ``box_format`` the answer is parsed as a box of the image (``image_size``, default the
    item image's): one box (``answer_kind`` "box") or every labelled box it lists ("boxes"; labels
    matched to the item's queries without case or extra spaces), each scored from the answer's
    ``tokens`` (:func:`.confidence.box_confidence`; one box: the whole answer's tokens), or 1
    without them (when the run asked for ``token_scores``, the record counts those boxes as
    ``boxes_scored_1``). A ``truncated`` answer (cut at the answer length) keeps its complete
    entries and is reported as such."""
    from .parsers import (
        TRUNCATED,
        LabelledBox,
        ParseFailure,
        label_index,
        parse_box,
        parse_labelled_boxes,
        reaches_outside,
    )

    if box_format is None:
        return {"key": item.key, "entries": predictor.from_answer(item, text)}
    size = image_size or item.image.size
    try:
        if predictor.answer_kind == "boxes":       # a detection answer: every (box, label) it lists
            boxes, failures = parse_labelled_boxes(text, box_format, size, input_size)
        else:
            boxes, failures = [LabelledBox(parse_box(text, box_format, size, input_size),
                                           item.queries[0], (0, len(text)))], []
    except ParseFailure as failure:
        return {"key": item.key, "entries": [],
                "failure": TRUNCATED if truncated else failure.reason, "answer": text}
    matched = [
        (b, label_index(b.label, item.queries) if predictor.answer_kind == "boxes" else 0)
        for b in boxes
    ]
    kept = [(b, q) for b, q in matched if q is not None]
    scores = [box_confidence(tokens, b.span) for b, _ in kept]
    entries = predictor.from_detections(
        item,
        DetectorAnswer(
            [b.xyxy for b, _ in kept],
            [1.0 if s is None else s for s in scores],
            [q for _, q in kept],
        ),
    )
    cut = any(f.reason == TRUNCATED for f in failures) or (
        truncated and predictor.answer_kind == "boxes"
    )
    # a cut-off list may miss entries; one box read whole is an answer
    reason = (
        TRUNCATED
        if cut
        else failures[0].reason
        if failures
        else (
            "a box without a label"
            if any(b.label is None for b in boxes)
            else "a label that is not one of the image's"
        )
        if len(kept) < len(boxes)
        else None
    )
    record: dict[str, Any] = {"key": item.key, "entries": entries}
    notes = {"boxes_scored_1": scores.count(None) if token_scores else 0,
             "boxes_outside_image": sum(reaches_outside(b.xyxy, size) for b, _ in kept)}
    if any(notes.values()):
        record["notes"] = {k: n for k, n in notes.items() if n}
    if reason:
        record.update(failure=reason, answer=text)
    return record


def _finish(bench: Any, items: list[PredictItem], out: Path, report: PredictReport,
            world: int) -> None:
    """Merge the partial files in item order, write the official files (:func:`_targets`) and the
    meta file, remove the partials."""
    records: dict[str, dict[str, Any]] = {}
    paths = [_partial_path(out, r) for r in range(world)]
    for path in paths:
        records.update(_resume(path, report.settings))
    entries: dict[Path, list[Any]] = {path: [] for path in _targets(out, items)}
    for it in items:
        record = records.get(it.key)
        if record is None:
            raise InputError(f"item {it.key} has no answer in the partial files", file=str(out),
                             fix="rerun the same command to finish the run")
        entries[out if out in entries else out / f"{it.context.get('part')}.json"].extend(
            record["entries"]
        )
        tally(report, record)
        for key, n in record.get("notes", {}).items():
            report.notes[key] = report.notes.get(key, 0) + n
        for name, count in (("served_by", report.served_by), ("server", report.servers)):
            if name in record:
                count[record[name]] = count.get(record[name], 0) + 1
    report.items, report.entries = len(items), sum(map(len, entries.values()))
    # a folder of <part>.json for sub-datasets: the official layout
    for path, written in entries.items():
        write_text_atomic(path, json.dumps(written, allow_nan=False), "prediction file")
    write_run_record(out, report)
    for path in paths:
        path.unlink(missing_ok=True)


def write_run_record(out: Path, report: PredictReport) -> Path:
    """``<out>.meta.json``: the settings and what the run found (see
    :meth:`PredictReport.to_dict`)."""
    return write_text_atomic(out.with_name(out.name + ".meta.json"),
                             json.dumps(report.to_dict(), indent=1), "run record")


def tally(report: PredictReport, record: dict[str, Any]) -> None:
    """Count one item's record in ``report``: unanswered, and a failure by reason with a few raw
    answers kept."""
    report.unanswered += not record["entries"]
    if "failure" in record:
        reason = record["failure"].split(" (")[0]
        report.failures[reason] = report.failures.get(reason, 0) + 1
        kept = report.answers.setdefault(reason, [])
        if len(kept) < KEEP_ANSWERS:
            kept.append(record["answer"])


def _processes() -> tuple[int, int, Callable[[Callable[[], None]], None]]:
    """(this process's rank, the number of processes, run-on-the-main-process-after-all-finished)
    under ``torchrun`` or ``accelerate launch``; (0, 1, run) otherwise. On a machine without GPUs
    the processes join as CPU workers (gloo): accelerate's default state there is not distributed,
    and every process of a GPU launch believed it was rank 0 and answered every item. A launch whose
    processes cannot agree on their ranks is refused before any work."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1, lambda fn: fn()
    fix = ("launch with torchrun --nproc_per_node N -m vlbench predict ..., or accelerate launch "
           "--num_processes N -m vlbench predict ... (each process then takes every N-th item)")
    missing = [name for name in ("RANK", "MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        raise InputError(f"WORLD_SIZE is {world} but {', '.join(missing)} is not set: this is no "
                         f"launch of {world} processes (each would answer every item)",
                         fix=fix + "; or unset WORLD_SIZE")
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    if state.num_processes != world:
        raise InputError(f"WORLD_SIZE is {world} but the distributed state has "
                         f"{state.num_processes} process(es) "
                         f"({state.distributed_type}): the processes would not share the items",
                         fix=fix)

    def merge(fn: Callable[[], None]) -> None:
        state.wait_for_everyone()
        if state.is_main_process:
            fn()
        state.wait_for_everyone()

    return state.process_index, state.num_processes, merge


def _progress(total: int, already: int, shown: bool) -> Callable[[int], None]:
    """A progress bar (tqdm, which transformers brings) advanced by the items of each batch."""
    if not shown:
        return lambda n: None
    from tqdm.auto import tqdm

    bar = tqdm(total=total, initial=already, unit="item", desc="predict")
    return bar.update
