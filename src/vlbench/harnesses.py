"""Answers written by other evaluation harnesses -> the official prediction file, through the same
answer parsers and box conventions as ``vlbench predict``; answers without a usable box are counted
and reported, never guessed.

- lmms-eval's ``--log_samples`` file (``*_samples_<task>.jsonl``): one JSON line per document with
  ``doc_id`` and the model's ``filtered_resps`` (a string, or lists of them); a line written by
  vlbench's own task pack also holds the row it answered (``{"row": {...}, "answer": ...}`` under
  each metric key), which names it exactly.
- VLMEvalKit's result workbook (``<model>_<dataset>.xlsx``): one row per question with ``index`` and
  ``prediction`` columns (and ``id`` / ``image_id`` when the dataset had them).
- An Inspect (inspect-ai) eval log (``.eval`` or ``.json``) of vlbench's Inspect tasks
  (:mod:`vlbench.inspect_tasks`): one sample per item, its id the item's key, its metadata the row,
  its output the answer.

A line without its row names it by position (``doc_id`` / ``index``) in the given split of the built
dataset.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .benchmarks import get_benchmark
from .engine.errors import FormatError, InputError
from .engine.io import check_output, require_file, write_text_atomic

__all__ = ["read_lmms_eval", "read_vlmevalkit", "read_inspect", "import_answers", "score_answers",
           "logged_row", "HARNESSES"]


def _first_text(value: Any) -> str | None:
    """The first string of a response field (lmms-eval nests them in lists by request and by
    repeat)."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


#: bounds on a result workbook (VLMEvalKit): decompressed bytes of its zip members, and characters
#: of one answer
MAX_WORKBOOK_BYTES = 256 * 1024**2
#: the largest member of an Inspect ``.eval`` log read (one sample, its image as a data URL
#: included, is a few MB)
MAX_INSPECT_MEMBER_BYTES = 64 * 1024**2
MAX_ANSWER_CHARS = 100_000


def read_lmms_eval(path: str | os.PathLike, max_lines: int | None = None,
                   benchmark: str | None = None ) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """(doc_id, answer text, the row the answer is for when the line names it) of each line
    (``benchmark`` is not checked: the lines do not name their task)."""
    p = require_file(path, "lmms-eval samples file")
    out: list[tuple[Any, str, dict[str, Any] | None]] = []
    line_of: dict[Any, int] = {}
    fix = "pass the *_samples_<task>.jsonl file lmms-eval wrote with --log_samples"
    try:
        with open(p, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    raise FormatError("not a JSON line (or one nested too deep)", file=str(p),
                                      entry=f"line {n}", fix=fix) from None
                text = (
                    _first_text(record.get("filtered_resps", record.get("resps")))
                    if isinstance(record, dict)
                    else None
                )
                if text is None or "doc_id" not in record:
                    raise FormatError("the line has no 'doc_id' and no text in 'filtered_resps'",
                                      file=str(p),
                                      entry=f"line {n}",
                                      fix="pass the samples file of a generate_until task")
                row = next(
                    (
                        v["row"]
                        for v in record.values()
                        if isinstance(v, dict) and isinstance(v.get("row"), dict)
                    ),
                    None,
                )
                doc = record["doc_id"]
                first = line_of.setdefault(doc, n) if isinstance(doc, (int, str)) else n
                if first != n:
                    raise FormatError(f"doc_id {doc!r} is answered twice: the answers of lines "
                                      f"{first} and {n} are "
                                      f"both for item doc_id {doc!r}", file=str(p),
                                      entry=f"line {n}",
                                      fix="pass the samples file of one run (each doc answered "
                                                             "once), or remove the repeated line")
                if max_lines is not None and len(out) >= max_lines:
                    raise FormatError(f"the file holds more than {max_lines:,} answers, more than "
                                      "the split has rows",
                                      file=str(p), entry=f"line {n}", fix=fix)
                out.append((doc, text, row))
    except UnicodeDecodeError:
        raise FormatError("the file is not UTF-8 text", file=str(p), fix=fix) from None
    return out


def _check_unpacked_size(p: Path, what: str, limit: int, *, per_member: bool, fix: str) -> None:
    """A zip (a workbook, an Inspect ``.eval`` log): its members' declared sizes bound what reading
    it costs, before anything is inflated (a zip bomb is refused): the ``limit`` holds for the whole
    archive, or for each member."""
    try:
        with zipfile.ZipFile(p) as z:
            sizes = [(info.file_size, info.filename) for info in z.infolist()]
    except (zipfile.BadZipFile, OSError):
        raise FormatError(
            f"not a readable {what} (not a zip archive)", file=str(p), fix=fix
        ) from None
    size, name = max(sizes, default=(0, "")) if per_member else (sum(s for s, _ in sizes), "")
    if size > limit:
        raise FormatError(f"the {what} unpacks to {size:,} bytes{' in ' + name if name else ''}, "
                          f"more than it can hold ({limit:,})", file=str(p), fix=fix)


def read_vlmevalkit(path: str | os.PathLike, max_rows: int | None = None,
                    benchmark: str | None = None ) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """(index, prediction text, ``{"id"/"image_id": ...}`` when the workbook has such a column) of
    each row (``benchmark`` is not checked: the workbook's name says it, not its content).
    Formula cells without a stored value, oversized answers and more rows than ``max_rows`` are
    clear errors."""
    p = require_file(path, "VLMEvalKit result workbook")
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise InputError(
            "reading .xlsx needs openpyxl", fix='pip install "vlbench[harness]"'
        ) from None
    _check_unpacked_size(p, ".xlsx workbook", MAX_WORKBOOK_BYTES, per_member=False,
                         fix="pass the <model>_<dataset>.xlsx result workbook VLMEvalKit wrote")
    try:
        sheet = load_workbook(p, read_only=True, data_only=True).worksheets[0]
    except Exception as exc:  # openpyxl raises several types for a file that is not a workbook
        raise FormatError(
            f"not a readable .xlsx workbook ({type(exc).__name__})", file=str(p)
        ) from None
    rows = sheet.iter_rows(values_only=True)
    header = [str(h) if h is not None else "" for h in next(rows, ())]
    if "prediction" not in header or "index" not in header:
        raise FormatError(f"the sheet has no 'index' and 'prediction' columns (it has {header})",
                          file=str(p), fix="pass the <model>_<dataset>.xlsx VLMEvalKit wrote")
    out: list[Any] = []
    empty: list[Any] = []
    for n, values in enumerate(rows, 2):
        if max_rows is not None and len(out) >= max_rows:
            raise FormatError(f"the sheet holds more than {max_rows:,} rows, more than the split "
                              "has", file=str(p),
                              entry=f"row {n}", fix="pass the workbook of this dataset and split")
        cells = dict(zip(header, values))
        ids = {k: cells[k] for k in ("id", "image_id") if cells.get(k) is not None}
        text = cells["prediction"]
        if text is None:
            empty.append(n)
        elif len(str(text)) > MAX_ANSWER_CHARS:
            raise FormatError(f"the prediction holds {len(str(text)):,} characters", file=str(p),
                              entry=f"row {n}",
                              fix="pass the workbook VLMEvalKit wrote (answers are short texts)")
        out.append((cells["index"], "" if text is None else str(text), ids or None))
    if empty:
        _refuse_formulas(p, empty)
    return out


def _refuse_formulas(p: Path, rows: list[int]) -> None:
    """Empty prediction cells that hold a formula whose value was never computed: refused (they are
    not answers)."""
    from openpyxl import load_workbook

    sheet = load_workbook(p, read_only=True, data_only=False).worksheets[0]
    header = [str(h) if h is not None else "" for h in next(sheet.iter_rows(values_only=True), ())]
    col = header.index("prediction")
    wanted = set(rows)
    for n, values in enumerate(sheet.iter_rows(min_row=2, values_only=True), 2):
        if n in wanted and isinstance(values[col], str) and values[col].startswith("="):
            raise FormatError(f"the prediction cell holds the formula {values[col][:60]!r} with no "
                              "stored value",
                              file=str(p), entry=f"row {n}",
                              fix="open and save the workbook in a spreadsheet program (it stores "
                                  "the values), or write the answers as text")


#: harness name -> its reader
def read_inspect(path: str | os.PathLike, max_samples: int | None = None,
                 benchmark: str | None = None ) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """(sample id, answer text, the row from the sample's metadata) of each sample of an Inspect
    eval log of vlbench's task for ``benchmark`` (its ``-T benchmark=``); a log of another task or
    benchmark, without samples, of several epochs or with a sample id twice is a clear error."""
    p = require_file(path, "Inspect eval log")
    fix = "pass the log 'inspect eval' wrote for one of vlbench's Inspect tasks (logs/*.eval)"
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(
            "reading an Inspect log needs inspect-ai", fix="pip install inspect-ai"
        ) from None
    # an .eval log (a .json log is read as it is: its size is the file's)
    if zipfile.is_zipfile(p):
        _check_unpacked_size(p, "Inspect log", MAX_INSPECT_MEMBER_BYTES, per_member=True, fix=fix)
    try:
        log = read_eval_log(str(p))
    # inspect-ai raises many types for a file that is not one of its logs
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        raise FormatError(f"not an Inspect eval log ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:200]})",
                          file=str(p), fix=fix) from None
    _check_inspect_task(log, p, benchmark)
    samples = log.samples or []
    if not samples:
        raise FormatError("the log holds no samples (the run failed or was cancelled before any "
                          "answer)",
                          file=str(p), fix="rerun the task, then import its log")
    errored = [s for s in samples if getattr(s, "error", None)]
    # a sample that errored has no answer: scoring it would be a 0 for a model that never answered
    if errored:
        first = str(getattr(errored[0].error, "message", errored[0].error)).splitlines()[0][:200]
        raise FormatError(f"{len(errored)} of {len(samples)} samples errored without an answer "
                          f"(log status {getattr(log, 'status', '?')!r}; e.g. sample "
                          f"{errored[0].id}: {first})",
                          file=str(p),
                          fix="fix the cause and rerun them (inspect eval-retry LOG), then import "
                              "the log whose samples all answered")
    epochs = sorted({getattr(s, "epoch", 1) for s in samples})
    if epochs != [1]:
        raise FormatError(f"the log holds {len(epochs)} epochs ({', '.join(map(str, epochs))}): "
                          "one answer per row is scored", file=str(p),
                          fix="run the task with --epochs 1 (the default) and import that log")
    twice = sorted(str(i) for i, n in Counter(s.id for s in samples).items() if n > 1)
    if twice:
        raise FormatError(f"sample id(s) {', '.join(twice[:5])} appear more than once", file=str(p),
                          fix="pass the log of one run of the task")
    if max_samples is not None and len(samples) > max_samples:
        raise FormatError(f"the log holds {len(samples):,} samples, more than the split has rows",
                          file=str(p), fix=fix)
    out: list[tuple[Any, str, dict[str, Any] | None]] = []
    for sample in samples:
        row = (sample.metadata or {}).get("row")
        out.append((sample.id, sample.output.completion if sample.output else "",
                    row if isinstance(row, dict) else {"id": str(sample.id)}))
    return out


def _check_inspect_task(log: Any, p: Path, benchmark: str | None) -> None:
    """The log is of vlbench's Inspect task (``vlbench``, from :mod:`vlbench.inspect_tasks`), run
    for ``benchmark``."""
    task = str(getattr(log.eval, "task", ""))
    if task.rsplit("/", 1)[-1].rsplit("@", 1)[-1] != "vlbench":
        raise FormatError(f"the log is of the task {task!r}, not of vlbench's Inspect task",
                          file=str(p),
                          fix="run 'inspect eval vlbench/inspect_tasks.py@vlbench -T benchmark=... "
                              "-T data=...' and import that log")
    ran = (getattr(log.eval, "task_args", None) or {}).get("benchmark")
    if benchmark is not None and ran != benchmark:
        raise FormatError(
            f"the log is of the task run for {ran!r}, not {benchmark!r}",
            file=str(p),
            fix=f"pass --benchmark {ran}, or import a log of -T benchmark={benchmark}",
        )


def logged_row(row: dict[str, Any]) -> dict[str, Any]:
    """A dataset row without its image (and anything else not JSON): what a harness logs with an
    answer, enough to name the item and to score it (:func:`score_answers`)."""
    return {k: v for k,
            v in row.items() if isinstance(v, (str, int, float, bool, list, dict, type(None)))}


def score_answers(benchmark: str, rows: list[dict[str, Any]], answers: list[str],
                  box_format: str | None,
                  folder: str | os.PathLike | None = None, config: str | None = None,
                  harness: str = "harness") -> dict[str, float | None]:
    """Answers to the rows of a built dataset (images left out) -> the benchmark's metrics, as
    ``vlbench predict`` parses answers and ``vlbench score`` scores the file: what the lmms-eval and
    Inspect packs report."""
    from .benchmarks.protocol.predicting import PredictData
    from .library.api import score
    from .predict import PredictReport, PredictSettings, answer_record, tally
    from .predict.confidence import CONSTANT

    bench = get_benchmark(benchmark)
    predictor = bench.require_predictor()
    data = PredictData(rows=rows, folder=Path(folder) if folder else None, config=config)
    # the queries labels are matched to
    items = list(predictor.items(data, "image-text-to-text"))
    report = PredictReport(PredictSettings(bench.id, harness, None, "image-text-to-text", None, "",
                                           box_format, box_scores=CONSTANT if box_format else None))
    entries = []
    for item, row, text in zip(items, rows, answers):
        size = (row["width"], row["height"]) if row.get("width") and row.get("height") else None
        record = answer_record(predictor, item, text, box_format, image_size=size)
        tally(report, record)
        entries.extend(record["entries"])
    if not entries:
        # no usable answer at all: every prediction missed
        return {key: 0.0 for key in bench.metric_keys}
    result = score(bench.id, bench.scorer.references_from_rows(rows), entries,
                   **predictor.options_for_run(config, report.unanswered))
    return result.metrics


HARNESSES = {"lmms-eval": read_lmms_eval, "vlmevalkit": read_vlmevalkit, "inspect": read_inspect}
#: harnesses whose positions are only trusted when they cover the whole split (lmms-eval's doc_id is
#: the row's position in the split it loaded, so a partial run is fine)
_POSITIONS_MUST_COVER = {"vlmevalkit"}


def import_answers(harness: str, path: str | os.PathLike, benchmark: str, data: str | os.PathLike,
                   out: str | os.PathLike, *, split: str | None = None, config: str | None = None,
                   box_format: str | None = None) -> Any:
    """A harness's answers -> the official prediction file ``out`` (and ``out.meta.json``); returns
    the :class:`vlbench.predict.PredictReport` (answers, entries, failures by reason with a few raw
    answers, the items of the split no answer was for in ``skipped``)."""
    from .benchmarks.protocol.predicting import PredictData
    from .predict import (
        PredictReport,
        PredictSettings,
        answer_record,
        load_data,
        tally,
        write_run_record,
    )
    from .predict.confidence import CONSTANT
    from .predict.parsers import check_box_format

    bench = get_benchmark(benchmark)
    predictor = bench.require_predictor()
    if harness not in HARNESSES:
        raise InputError(f"unknown harness {harness!r}", fix="use " + " or ".join(HARNESSES))
    out = Path(out)
    check_output(out, "prediction file")
    fmt = None
    if predictor.answer_kind in ("box", "boxes"):
        if box_format is None:
            raise InputError(f"{bench.display_name} answers are boxes: say in which convention the "
                             "model wrote them",
                             fix="pass --box-format (the model family's: see 'vlbench predict "
                                 "--help')")
        fmt = check_box_format(box_format)
    rows, split = load_data(bench.id, data, split=split, config=config)
    items = list(predictor.items(rows, "image-text-to-text"))
    answers = HARNESSES[harness](path, len(items), bench.id)
    if not answers:         # scored, a file without answers is a 0 for a model that never answered
        raise FormatError("the file holds no answers", file=str(path),
                          fix="pass the file the harness wrote after the run answered (an empty or "
                              "cut-off log is not a run)")
    settings = PredictSettings(bench.id, f"{harness}:{Path(path).name}", None, "image-text-to-text",
                               config, split,
                               # a harness's file keeps no token scores
                               fmt, box_scores=CONSTANT if fmt else None)
    report = PredictReport(settings)
    entries, answered = [], set()
    for key, record in _records(predictor, items, answers, fmt, str(path), answer_record,
                                PredictData(rows=[], folder=rows.folder, config=rows.config),
                                harness in _POSITIONS_MUST_COVER):
        answered.add(key)
        entries.extend(record["entries"])
        tally(report, record)
    report.items, report.entries, report.skipped = (
        len(answered),
        len(entries),
        len(items) - len(answered),
    )
    write_text_atomic(out, json.dumps(entries, allow_nan=False), "prediction file")
    write_run_record(out, report)
    return report


def _key_of(predictor: Any, row: dict[str, Any] | None, data: Any) -> str | None:
    """The item key an answer names through its row: the benchmark's own key of that row (a logged
    row holds every column), else the row's ``id`` / ``image_id`` (a workbook's id column)."""
    from dataclasses import replace

    if row is None:
        return None
    try:
        return next(iter(predictor.items(replace(data, rows=[row]), "image-text-to-text"))).key
    except Exception:        # a partial row (a workbook's id column only): its id names the item
        pass
    return next((str(row[k]) for k in ("id", "image_id") if row.get(k) is not None), None)


def _records(predictor: Any, items: list[Any], answers: list[tuple[Any, str, dict | None]],
             fmt: str | None,
             source: str, answer_record: Any, data: Any,
             cover: bool) -> Iterable[tuple[str, dict[str, Any]]]:
    """Each answer with the item it is for, by the row its line names, else by its position in the
    split (with ``cover``, positions must cover the split exactly: a workbook's ``index`` is no
    proof of the split's order, and a missing row would shift every later answer). Two answers for
    one item are an error; an empty answer is counted as such."""
    by_key = {it.key: it for it in items}
    keys = [_key_of(predictor, row, data) for _, _, row in answers]
    positions = [pos for (pos, _, _), key in zip(answers, keys) if key is None]
    if positions and cover and sorted(positions) != list(range(len(items))):
        raise FormatError(f"{len(positions)} answer(s) name their row only by position, and the "
                          f"positions do not cover the split's {len(items)} rows "
                          f"0..{len(items) - 1} exactly: matching them by position would shift "
                          "answers", file=source,
                          fix="add an image_id (or id) column to the workbook, or pass the "
                              "workbook of the whole split")
    seen: dict[str, int] = {}
    for n, ((position, text, _), key) in enumerate(zip(answers, keys)):
        item = by_key.get(key) if key is not None else None
        if (
            item is None
            and key is None
            and isinstance(position, int)
            and not isinstance(position, bool)
            and 0 <= position < len(items)
        ):
            item = items[position]
        if item is None:
            raise FormatError(f"answer {n} is for "
                              f"{'id ' + key if key else 'position ' + str(position)}, which the "
                              "split does not have", file=source,
                              fix="pass the --data / --split / --config the harness evaluated")
        if item.key in seen:
            raise FormatError(f"answers {seen[item.key]} and {n} are both for item {item.key}",
                              file=source,
                              fix="pass the answers of one run (each row answered once)")
        seen[item.key] = n
        record = answer_record(predictor, item, text, fmt)
        if not text.strip() and "failure" not in record:
            record.update(failure="empty answer", answer=text)
        yield item.key, record
