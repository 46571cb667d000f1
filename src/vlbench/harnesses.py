"""Answers written by other evaluation harnesses -> the official prediction file, through the same answer parsers and
box conventions as ``vlbench predict``; answers without a usable box are counted and reported, never guessed.

- lmms-eval's ``--log_samples`` file (``*_samples_<task>.jsonl``): one JSON line per document with ``doc_id`` and
  the model's ``filtered_resps`` (a string, or lists of them); a line written by vlbench's own task pack also holds
  the row it answered (``{"row": {...}, "answer": ...}`` under each metric key), which names it exactly.
- VLMEvalKit's result workbook (``<model>_<dataset>.xlsx``): one row per question with ``index`` and
  ``prediction`` columns (and ``id`` / ``image_id`` when the dataset had them).

A line without its row names it by position (``doc_id`` / ``index``) in the given split of the built dataset.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from .benchmarks import get_benchmark
from .errors import FormatError, InputError
from .io import check_output, require_file, write_text_atomic

__all__ = ["read_lmms_eval", "read_vlmevalkit", "import_answers", "HARNESSES"]


def _first_text(value: Any) -> str | None:
    """The first string of a response field (lmms-eval nests them in lists by request and by repeat)."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def read_lmms_eval(path: str | os.PathLike) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """(doc_id, answer text, the row the answer is for when the line names it) of each line."""
    p = require_file(path, "lmms-eval samples file")
    out = []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise FormatError("not a JSON line", file=str(p), entry=f"line {n}",
                                  fix="pass the *_samples_<task>.jsonl file lmms-eval wrote with --log_samples") from None
            text = _first_text(record.get("filtered_resps", record.get("resps"))) if isinstance(record, dict) else None
            if text is None or "doc_id" not in record:
                raise FormatError("the line has no 'doc_id' and no text in 'filtered_resps'", file=str(p),
                                  entry=f"line {n}", fix="pass the samples file of a generate_until task")
            row = next((v["row"] for v in record.values() if isinstance(v, dict) and isinstance(v.get("row"), dict)),
                       None)
            out.append((record["doc_id"], text, row))
    return out


def read_vlmevalkit(path: str | os.PathLike) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """(index, prediction text, ``{"id"/"image_id": ...}`` when the workbook has such a column) of each row."""
    p = require_file(path, "VLMEvalKit result workbook")
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise InputError("reading .xlsx needs openpyxl", fix='pip install "vlbench[harness]"') from None
    try:
        sheet = load_workbook(p, read_only=True, data_only=True).worksheets[0]
    except Exception as exc:  # openpyxl raises several types for a file that is not a workbook
        raise FormatError(f"not a readable .xlsx workbook ({type(exc).__name__})", file=str(p)) from None
    rows = sheet.iter_rows(values_only=True)
    header = [str(h) if h is not None else "" for h in next(rows, ())]
    if "prediction" not in header or "index" not in header:
        raise FormatError(f"the sheet has no 'index' and 'prediction' columns (it has {header})", file=str(p),
                          fix="pass the <model>_<dataset>.xlsx VLMEvalKit wrote")
    out = []
    for values in rows:
        cells = dict(zip(header, values))
        ids = {k: cells[k] for k in ("id", "image_id") if cells.get(k) is not None}
        out.append((cells["index"], "" if cells["prediction"] is None else str(cells["prediction"]), ids or None))
    return out


#: harness name -> its reader
HARNESSES = {"lmms-eval": read_lmms_eval, "vlmevalkit": read_vlmevalkit}


def import_answers(harness: str, path: str | os.PathLike, benchmark: str, data: str | os.PathLike,
                   out: str | os.PathLike, *, split: str | None = None, config: str | None = None,
                   box_format: str | None = None) -> Any:
    """A harness's answers -> the official prediction file ``out`` (and ``out.meta.json``); returns the
    :class:`vlbench.predict.PredictReport` (answers, entries, failures by reason with a few raw answers)."""
    from .predict import PredictReport, PredictSettings, answer_record, load_data, tally, write_run_record
    from .predict.parsers import check_box_format

    bench = get_benchmark(benchmark)
    if harness not in HARNESSES:
        raise InputError(f"unknown harness {harness!r}", fix="use " + " or ".join(HARNESSES))
    out = Path(out)
    check_output(out, "prediction file")
    answers = HARNESSES[harness](path)
    fmt = None
    if bench.answer_kind in ("box", "boxes"):
        if box_format is None:
            raise InputError(f"{bench.display_name} answers are boxes: say in which convention the model wrote them",
                             fix="pass --box-format (the model family's: see 'vlbench predict --help')")
        fmt = check_box_format(box_format)
    rows, split = load_data(bench.id, data, split=split, config=config)
    items = list(bench.predict_items(rows, "image-text-to-text"))
    settings = PredictSettings(bench.id, f"{harness}:{Path(path).name}", None, "image-text-to-text", config, split,
                               fmt)
    report = PredictReport(settings)
    entries = []
    for record in _records(bench, items, answers, fmt, str(path), answer_record):
        entries.extend(record["entries"])
        tally(report, record)
    report.items, report.entries = len(answers), len(entries)
    write_text_atomic(out, json.dumps(entries), "prediction file")
    write_run_record(out, report)
    return report


def _records(bench: Any, items: list[Any], answers: Iterable[tuple[Any, str, dict | None]], fmt: str | None,
             source: str, answer_record: Any) -> Iterable[dict[str, Any]]:
    """Each answer with the item it is for: by the id its line names, else by position in the split."""
    by_key = {it.key: it for it in items}
    for n, (position, text, row) in enumerate(answers):
        key = next((str(row[k]) for k in ("id", "image_id") if row and row.get(k) is not None), None)
        item = by_key.get(key) if key is not None else None
        if item is None and key is None and isinstance(position, int) and 0 <= position < len(items):
            item = items[position]
        if item is None:
            raise FormatError(f"answer {n} is for {'id ' + key if key else 'position ' + str(position)}, which the "
                              "split does not have", file=source,
                              fix="pass the --data / --split / --config the harness evaluated")
        yield answer_record(bench, item, text, fmt)
