"""The ``vlbench`` command line: ``score``, ``compare``, ``build``, ``export``, ``report``,
``publish``, ``doctor``, ``demo``.

Bad input exits with status 2 and a one-paragraph error (file, entry, fix); heavy libraries are
imported only by the sub-command that needs them, so start-up stays light.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .benchmarks import all_benchmarks, get_benchmark
from .benchmarks.benchmark import Benchmark
from .benchmarks.protocol.options import PROTOCOLS

EXIT_BAD_INPUT = 2


def _parser(benches: Sequence[Benchmark] | None = None,
            command: str | None = None) -> argparse.ArgumentParser:
    """The command line of ``benches`` (default: every benchmark, plug-ins included). With
    ``command``, only that sub-command gets its arguments and the others are listed by name: the
    model runner's arguments import the model runner (numpy, its families and box formats), which
    ``vlbench score`` has no use for."""
    benches = all_benchmarks() if benches is None else benches
    names = ", ".join(b.display_name for b in benches)
    p = argparse.ArgumentParser(prog="vlbench",
                                description=f"Score and publish {names} exactly as their official "
                                                            "scorers do.")
    p.add_argument("--version", action="version", version=f"vlbench {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    ids = " | ".join(b.id for b in benches)
    for commands, build in _builders(ids, benches):
        if command is None or command in commands:
            build(sub)
        else:
            for name in commands:
                sub.add_parser(name)
    return p


def _builders(ids: str,
              benches: Sequence[Benchmark]) -> list[tuple[tuple[str, ...], Callable[[Any], None]]]:
    """Each group of sub-commands (in the order ``vlbench --help`` lists them) and the function
    adding them."""
    return [(("score", "analyze"), lambda sub: _score_args(sub, ids, benches)),
            (("compare",), lambda sub: _compare_args(sub, ids, benches)),
            (("conventions",), lambda sub: _conventions_args(sub, ids)),
            (("build",), _build_args),
            (("export",), _export_args),
            (("report", "publish"), _report_and_publish_args),
            (("doctor",), _doctor_args),
            (("predict", "run"), lambda sub: _predict_args(sub, ids)),
            (("import",), lambda sub: _import_args(sub, ids)),
            (("demo",), _demo_args),
            (("new-benchmark",), _new_benchmark_args)]


def _compare_args(sub: Any, ids: str, benches: Sequence[Benchmark]) -> None:
    c = sub.add_parser("compare",
                       help="paired bootstrap of two prediction files: is A really better than B?")
    c.add_argument("benchmark", help=ids)
    c.add_argument("--references", required=True,
                   help="official annotation file, Hub folder or Hub dataset id")
    c.add_argument("--predictions", required=True, nargs=2, metavar=("A", "B"),
                   help="the two prediction files")
    _scoring_args(c, benches)
    c.add_argument("--output", default=None, help="write the comparison JSON here")
    c.add_argument("--analysis", action="store_true",
                   help="also compare what each error type costs the two files (the error "
                        "analysis; detection benchmarks: paired intervals on each cost)")
    _uncertainty_args(c, ci_default=0.95)


def _export_args(sub: Any) -> None:
    e = sub.add_parser("export", help="write the official annotation file back from a Hub folder")
    e.add_argument("benchmark", help="benchmark id")
    e.add_argument("--folder", required=True, help="Hub folder written by 'vlbench build'")
    e.add_argument("--out", required=True,
                   help="output file: the official annotations as JSON, or as Parquet when the "
                        "name ends .parquet (for a release shipped as Parquet tables)")
    e.add_argument("--split", default=None, help="split (or sub-dataset) to export")


def _doctor_args(sub: Any) -> None:
    doctor = sub.add_parser("doctor",
                            help="report Java, the tokenizer backends, METEOR and SPICE readiness")
    doctor.add_argument("--prepare", action="store_true",
                        help="build METEOR's paraphrase index now (otherwise built on first use, "
                             "~10 s, once)")


def _demo_args(sub: Any) -> None:
    d = sub.add_parser("demo", help="open the upload-and-score Space locally (needs the 'space' "
                                    "extra)")
    d.add_argument("--host", default="127.0.0.1",
                   help="address to serve on (default 127.0.0.1: this machine only)")
    d.add_argument("--port", type=int, default=7860, help="port to serve on (default 7860)")


def _new_benchmark_args(sub: Any) -> None:
    n = sub.add_parser("new-benchmark",
                       help="write a plug-in package with every file a new benchmark needs "
                                            "(a working stand-in to replace part by part)")
    n.add_argument("id", help="the new benchmark's id: lower case, digits and underscores "
                              "(my_bench)")
    n.add_argument("--out", default=None,
                   help="the new folder to write (default: ./vlbench-ID with hyphens for "
                        "underscores, e.g. ./vlbench-my-bench; never overwritten)")
    n.add_argument("--name", default=None, help="the display name (default: the id in CamelCase)")


def _score_args(sub: Any, ids: str, benches: Sequence[Benchmark]) -> None:
    """The ``score`` and ``analyze`` sub-commands' arguments (analyze: score with the error
    analysis, printed)."""
    for name, help_text in (("score", "score a prediction file against a benchmark's references"),
                            ("analyze",
                             "score a prediction file and say why it fails: error types with the "
                             "AP each costs, slices, examples (not official)")):
        s = sub.add_parser(name, help=help_text)
        s.add_argument("benchmark", help=ids)
        s.add_argument("--references", required=True,
                       help="official annotation file, Hub folder or Hub dataset id")
        s.add_argument("--predictions", required=True,
                       help="prediction file in the official format (.json, .json.gz)")
        _scoring_args(s, benches)
        s.add_argument("--output", default=None, help="write the result JSON here")
        s.add_argument("--no-samples", action="store_true",
                       help="leave per-sample breakdowns out of the JSON")
        s.add_argument("--dataset-id", default=None,
                       help="the Hub id of the references, recorded in the result for model cards "
                            "(default: the id the references name, if any)")
        s.add_argument("--quiet", action="store_true", help="do not print the table")
        s.add_argument("--tie-orders", type=int, default=None, metavar="N",
                       help="where scores tie, also score N seeded random orders of the file and "
                            "show their mean and 5-95%% range beside the bounds (each is one more "
                            "scoring; 0: none; default 20 for a file of up to 50,000 predictions, "
                            "else 0)")
        if name == "score":
            s.add_argument("--analysis", action="store_true",
                           help="add the error analysis to the result (slower; 'vlbench analyze' "
                                "prints it)")
        _uncertainty_args(s, ci_default=None)


def _conventions_args(sub: Any, ids: str) -> None:
    v = sub.add_parser("conventions",
                       help="score a file's boxes under each common box convention, side by side "
                                           "(xyxy / xywh, pixels, 0-1, a 0-1000 grid, y first)")
    v.add_argument("benchmark", help=ids)
    v.add_argument("--references", required=True,
                   help="official annotation file, Hub folder or Hub dataset id")
    v.add_argument("--predictions", required=True,
                   help="prediction file in the official format (.json, .json.gz)")
    v.add_argument("--split", default=None, help="which split of the references to score")


def _cmd_conventions(args: argparse.Namespace) -> int:
    from .library.api import conventions

    key, values = conventions(args.benchmark, args.references, args.predictions, split=args.split)
    width = max(len(k) for k in values)
    print(f"{'reading':<{width}}  {key}")
    for reading, value in values.items():
        print(f"{reading:<{width}}  {'needs image sizes' if value is None else f'{value:.2f}'}")
    return 0


def _predict_args(sub: Any, ids: str) -> None:
    """The ``predict`` and ``run`` sub-commands' arguments (run: predict, then score)."""
    from .predict.confidence import BOX_SCORES, TOKEN_PROBABILITY
    from .predict.families import FAMILIES
    from .predict.parsers import BOX_FORMATS, box_format_argument

    families = "; ".join(f"{f.name} ({f.kind})" for f in FAMILIES)
    for name, help_text in (("predict",
                             "run a Hugging Face model over a built dataset and write the official "
                                        "prediction file (needs the 'predict' extra). Known "
                                        f"families: {families}"),
                            ("run", "predict, then score: writes the prediction file and the "
                                    "result JSON")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("benchmark", help=ids)
        p.add_argument("--model", required=True, help="Hub model id or local folder")
        p.add_argument("--data", required=True,
                       help="a folder written by 'vlbench build' (or its Hub id)")
        p.add_argument("--split", default=None, help="the dataset split (default: the benchmark's)")
        p.add_argument(
            "--config",
            default=None,
            help="the dataset config (e.g. one sub-dataset; default: the default config)",
        )
        p.add_argument("--out", required=True, help="the prediction file to write (JSON)")
        p.add_argument("--revision", default=None, help="model revision (commit, branch or tag)")
        p.add_argument("--device", default=None,
                       help="torch device (default: cuda if present, else cpu)")
        p.add_argument("--kind", choices=("detector", "image-text-to-text"), default=None,
                       help="override the kind read from the model's config")
        p.add_argument("--box-format", type=box_format_argument, metavar="FORMAT", default=None,
                       help="a VLM's box convention (default: its family's): " + "; ".join(
                           f"{k}: {v}" for k, v in BOX_FORMATS.items()))
        p.add_argument("--prompt", default=None,
                       help="the VLM prompt (default: its family's preset): for one box, with "
                            "{expression} where the expression goes; for a label list, with "
                            "{labels}")
        p.add_argument("--box-scores", choices=tuple(BOX_SCORES), default=TOKEN_PROBABILITY,
                       help="VLMs: how each generated box is scored for AP (default: "
                            "token-probability): " + "; ".join(
                           f"{k}: {v}" for k, v in BOX_SCORES.items()))
        p.add_argument("--dtype", choices=("auto", "float32", "float16", "bfloat16"),
                       default="auto",
                       help="the weights' dtype (default auto: the checkpoint's own)")
        p.add_argument("--device-map", choices=("auto",), default=None,
                       help="auto: spread a model larger than one device over every device "
                            "(accelerate)")
        p.add_argument("--server", default=None, metavar="URL",
                       help="an OpenAI-compatible chat-completions endpoint (vLLM, SGLang, "
                            "transformers serve, a provider) to send the prompts to; --model is "
                            "then the name it serves")
        p.add_argument("--concurrency", type=int, default=8,
                       help="--server: requests in flight at once (default 8)")
        p.add_argument("--skip-bad-images", action="store_true",
                       help="answer the items whose image decodes; each other item is counted (in "
                            "the summary and the meta file) and scored as unanswered (default: "
                            "stop at the first, naming it)")
        p.add_argument("--request-timeout", type=float, default=600.0, metavar="SECONDS",
                       help="--server: the longest one request may take, its retries included "
                            "(default 600)")
        p.add_argument("--api-key-env", default=None, metavar="VAR",
                       help="--server: the environment variable holding the API key (sent as a "
                            "Bearer token)")
        p.add_argument("--threshold", type=float, default=0.01,
                       help="detectors: lowest score kept (default 0.01)")
        p.add_argument("--top-k", type=int, default=100,
                       help="detectors: boxes kept per item (default 100)")
        p.add_argument("--max-queries", type=int, default=16,
                       help="detectors: text queries per forward pass")
        p.add_argument("--max-new-tokens", type=int, default=None,
                       help="VLMs: answer length (default: 64 for a caption, 160 for one box plus "
                            "2 per word of the longest expression, 48 per label of the largest "
                            "label list for a detection answer)")
        p.add_argument("--batch-size", type=int, default=4,
                       help="items per forward pass (default 4)")
        p.add_argument("--limit", type=int, default=None,
                       help="stop after this many items (a smoke test; 'run' scores the rest as "
                            "misses)")
        p.add_argument("--overwrite", action="store_true",
                       help="replace an existing prediction file (or the files of a prediction "
                            "folder); a run stopped part-way continues either way from its "
                            ".partial.jsonl (delete that file to start over)")
        if name == "run":
            p.add_argument("--output", required=True, help="the result JSON to write")


def _import_args(sub: Any, ids: str) -> None:
    """The ``import`` sub-command's arguments."""
    from .harnesses import HARNESSES
    from .predict.parsers import box_format_argument

    p = sub.add_parser("import",
                       help="another harness's answers (lmms-eval samples .jsonl, VLMEvalKit "
                            ".xlsx, an Inspect log of vlbench's Inspect task) -> the official "
                            "prediction file")
    p.add_argument("harness", choices=tuple(HARNESSES), help="the harness that wrote the file")
    p.add_argument("file", help="lmms-eval: *_samples_<task>.jsonl (--log_samples); VLMEvalKit: "
                                "<model>_<data>.xlsx; inspect: the .eval log of 'inspect eval "
                                ".../vlbench/inspect_tasks.py@vlbench'")
    p.add_argument("--benchmark", required=True, help=ids)
    p.add_argument("--data", required=True,
                   help="the built dataset the harness evaluated (names rows by position)")
    p.add_argument("--split", default=None,
                   help="the split the harness evaluated (default: the benchmark's)")
    p.add_argument("--config", default=None, help="the dataset config the harness evaluated")
    p.add_argument("--box-format", type=box_format_argument, metavar="FORMAT", default=None,
                   help="grounding answers: the model family's box convention")
    p.add_argument("--out", required=True, help="the prediction file to write")


def _cmd_import(args: argparse.Namespace) -> int:
    from .harnesses import import_answers

    report = import_answers(args.harness, args.file, args.benchmark, args.data, args.out,
                            split=args.split, config=args.config, box_format=args.box_format)
    print(f"wrote {args.out}: {report.summary()}")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from .predict import predict, run

    options = {"split": args.split, "config": args.config, "revision": args.revision,
               "device": args.device,
               "kind": args.kind, "box_format": args.box_format, "prompt": args.prompt,
               "threshold": args.threshold,
               "top_k": args.top_k, "max_queries": args.max_queries,
               "max_new_tokens": args.max_new_tokens,
               "batch_size": args.batch_size, "limit": args.limit, "overwrite": args.overwrite,
               "box_scores": args.box_scores, "dtype": args.dtype, "device_map": args.device_map,
               "server": args.server, "concurrency": args.concurrency,
               "api_key_env": args.api_key_env,
               "request_timeout": args.request_timeout, "skip_bad_images": args.skip_bad_images,
               "progress": sys.stderr.isatty()}
    if args.command == "run":
        report, result = run(args.benchmark, args.model, args.data, args.out, output=args.output,
                             **options)
    else:
        report, result = predict(args.benchmark, args.model, args.data, args.out, **options), None
    # another process of 'accelerate launch': the main one merges, reports and scores
    if not report.main:
        return 0
    print(f"wrote {args.out}: {report.summary()}")
    if result is not None:
        from .library import report as rendering

        print(rendering.text(result))
    return 0


def _report_and_publish_args(sub: Any) -> None:
    """The ``report`` and ``publish`` sub-commands' arguments."""
    r = sub.add_parser("report",
                       help="render a result JSON: the model-card model-index block, tables as CSV")
    r.add_argument("result", help="a result JSON written by 'vlbench score --output'")
    r.add_argument("--model-index", action="store_true", help="print the model-index YAML block")
    r.add_argument("--model-name", default="my-model",
                   help="the model's name in the model-index (default: the card's)")
    r.add_argument("--dataset-id", default=None,
                   help="Hub id of the dataset the result was scored on (default: the one the "
                        "result names; required when it names none)")
    r.add_argument("--into", default=None, metavar="README.md",
                   help="merge the model-index into this model card (created if missing; other "
                        "metadata and the prose kept; re-running replaces the same entries)")
    r.add_argument("--push", default=None, metavar="ORG/MODEL",
                   help="upload the merged card (README.md) and .eval_results/<benchmark>.yaml to "
                        "this model repo in one commit (the card merged is --into's, else the "
                        "repo's own)")
    r.add_argument("--dry-run", action="store_true",
                   help="with --push: print the diff and the files, upload nothing")
    r.add_argument("--config", default=None,
                   help="dataset config of the result (default: the result's)")
    r.add_argument("--split", default=None,
                   help="dataset split of the result (default: the result's)")
    r.add_argument("--csv", default=None,
                   help="write the breakdown tables as CSV files into this folder")
    r.add_argument("--eval-results", default=None, metavar="FOLDER",
                   help="write FOLDER/.eval_results/<benchmark>.yaml, the Hub's evaluation-results "
                        "format")
    r.add_argument("--revision", default=None,
                   help="dataset revision (commit) the result was computed on")
    r.add_argument("--date", default=None,
                   help="evaluation date for --eval-results (ISO 8601; default today)")
    r.add_argument("--source-url", default=None,
                   help="--eval-results: a link to the evaluation (traces, paper)")

    pub = sub.add_parser("publish",
                         help="upload a Hub dataset folder, the Space or a metric Space (--dry-run "
                              "lists the files)")
    pub.add_argument("kind", choices=("dataset", "metric", "space"), help="what to publish")
    pub.add_argument("benchmark", nargs="?", help="dataset and metric: the benchmark")
    pub.add_argument("--folder", default=None,
                     help="dataset: the built folder; metric / space: the source folder "
                                                    "(default: the one installed with vlbench)")
    pub.add_argument("--wheel", default=None,
                     help="metric / space: the vlbench wheel to ship in the folder (default: "
                          "dist/vlbench-<version>-*.whl, else built from the source checkout)")
    pub.add_argument("--out", default=None,
                     help="metric / space: write the deployable folder here and keep it")
    pub.add_argument("--repo-id", required=True, help="the Hub repo to upload to, ORG/NAME")
    pub.add_argument("--dry-run", action="store_true",
                     help="list what would be uploaded, upload nothing")
    pub.add_argument("--private", action="store_true", help="create the repo private")



def _scoring_args(p: argparse.ArgumentParser, benches: Sequence[Benchmark]) -> None:
    """``--split``, ``--protocol`` and one flag per option of ``benches``, for score / compare."""
    p.add_argument(
        "--split",
        default=None,
        help="; ".join(f"{b.display_name}: {b.split_help}" for b in benches if b.split_help),
    )
    p.add_argument("--protocol", default="official", choices=PROTOCOLS,
                   help="official (default): the official scorer's number, quirks included, with a "
                        "warning per quirk that changed it; corrected: the known bugs fixed and "
                        "unusual values refused")
    flags: dict[str, list] = {}
    for b in benches:
        for f in b.scorer.options_type.own_fields():
            if f.metadata.get("cli"):
                flags.setdefault(f.name, []).append((b, f))
    for name, owners in flags.items():
        choices = sorted({c for _, f in owners for c in f.metadata.get("choices") or ()}) or None
        helps = "; ".join(f"{b.display_name}: {f.metadata['help']} (default {f.default})" for b,
                          f in owners)
        p.add_argument("--" + name.replace("_", "-"), dest=name, default=None, choices=choices,
                       help=helps)
    p.set_defaults(_option_owners={name: [b.id for b, _ in owners] for name,
                                   owners in flags.items()})


def _uncertainty_args(p: argparse.ArgumentParser, ci_default: float | None) -> None:
    p.add_argument("--ci", type=float, default=ci_default, metavar="LEVEL",
                   help="add percentile bootstrap intervals over images at this level, e.g. 0.95"
                   + ("" if ci_default is None else f" (default {ci_default})"))
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def _score_options(args: argparse.Namespace) -> dict:
    """The benchmark options given on the command line (their values are validated by the
    benchmark)."""
    from .engine.errors import InputError

    bench = get_benchmark(args.benchmark)
    options = {
        name: getattr(args, name) for name in args._option_owners if getattr(args, name) is not None
    }
    for name in options:
        if bench.id not in args._option_owners[name]:
            flag = "--" + name.replace("_", "-")
            raise InputError(f"{flag} applies to {', '.join(args._option_owners[name])} only",
                             fix=f"drop it for {bench.id}")
    if getattr(args, "no_samples", False):
        options["details"] = False
    return options


def _cmd_compare(args: argparse.Namespace) -> int:
    import json

    from .engine.io import check_output, write_text_atomic
    from .library.api import compare

    if args.output:
        check_output(args.output, "comparison JSON")
    options = _score_options(args)
    if args.analysis:
        options["analysis"] = True
    comparison, _, _ = compare(args.benchmark, args.references, *args.predictions, split=args.split,
                               protocol=args.protocol, ci=args.ci, resamples=args.resamples,
                               seed=args.seed, **options)
    print(comparison.table())
    if args.output:
        write_text_atomic(args.output, json.dumps(comparison.to_dict(), indent=1),
                          "comparison JSON")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .engine.errors import InputError
    from .engine.io import check_output, read_json
    from .engine.result import Result
    from .library import model_card

    result = Result.from_dict(read_json(args.result, what="result JSON"), source=args.result)
    if not (args.model_index or args.csv or args.eval_results or args.into or args.push):
        raise InputError("nothing to do",
                         fix="pass --model-index, --into README.md, --push ORG/MODEL, "
                                              "--eval-results FOLDER and/or --csv FOLDER")
    if args.dry_run and not args.push:
        raise InputError("--dry-run goes with --push",
                         fix="add --push ORG/MODEL, or leave --dry-run out")
    get_benchmark(result.benchmark)    # a result of an unknown benchmark: a clear error first
    if args.csv:
        check_output(args.csv, "CSV folder", folder=True)
    entry_fields = {"dataset_id": args.dataset_id, "revision": args.revision, "date": args.date,
                    "source_url": args.source_url}
    if args.eval_results:
        path, entries, kept = model_card.write_eval_results(result, args.eval_results,
                                                            **entry_fields)
        print(f"wrote {path} ({len(entries)} result(s): "
              f"{', '.join(e['dataset']['task_id'] for e in entries)}"
              + (f"; {kept} other entr{'y' if kept == 1 else 'ies'} kept" if kept else "") + ")")
    card_options = {"dataset_id": args.dataset_id, "config": args.config, "split": args.split,
                    "revision": args.revision}
    if args.model_index:
        print(model_card.model_index_yaml(result, args.model_name, **card_options), end="")
    if args.into or args.push:
        for line in model_card.update_model_card(
                result, into=args.into, push=args.push, dry_run=args.dry_run,
                card_options=card_options,
                model_name=None if args.model_name == "my-model" else args.model_name,
                **entry_fields):
            print(line)
    if args.csv:
        written = _write_csv_tables(result, Path(args.csv), args.result)
        print(f"wrote {len(written)} CSV table(s) into {args.csv}: "
              f"{', '.join(written) or 'none (no tables)'}")
    return 0


def _write_csv_tables(result: Any, folder: Path, source: str) -> list[str]:
    """The result's breakdown tables as ``folder/<table>.csv``; the names written. A write that
    fails (a full disk) takes back the files and the folder this call made, so no half set of tables
    is left to be taken as whole."""
    from .engine.errors import FormatError
    from .engine.io import write_text_atomic
    from .library import report

    try:
        tables = report.tables(result)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        raise FormatError("the result JSON lacks the breakdowns its tables are made from (was it "
                          "edited?)",
                          file=source, fix="write it again with 'vlbench score ... --output "
                                           "result.json'") from None
    paths = [folder / (name.split(" (")[0].replace(" ", "_") + ".csv") for name in tables]
    made_folder, new_files = not folder.exists(), [path for path in paths if not path.exists()]
    try:
        for path, table in zip(paths, tables.values()):
            write_text_atomic(path, report.to_csv(table), "CSV table")
    except BaseException:
        for path in new_files:
            path.unlink(missing_ok=True)
        if made_folder and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        raise
    return [path.name for path in paths]


def _cmd_publish(args: argparse.Namespace) -> int:
    import tempfile

    from .engine.errors import InputError
    from .library.publish import find_wheel, space_folder

    if args.kind != "space" and not args.benchmark:
        raise InputError(
            f"publish {args.kind} needs a benchmark",
            fix=f"vlbench publish {args.kind} <benchmark> ... "
            f"({', '.join(b.id for b in all_benchmarks())})",
        )
    if args.kind == "dataset":
        if not args.folder:
            raise InputError("--folder is required for a dataset",
                             fix="pass the folder 'vlbench build' wrote")
        code = _publish_and_show(Path(args.folder), args, "dataset")
        # results scored against this folder now name the dataset by its Hub id
        if not args.dry_run:
            from .library.api import record_hub_id

            record_hub_id(args.folder, args.repo_id)
        return code
    if args.kind == "metric":
        from .library.api import metric_path

        source = Path(args.folder or metric_path(args.benchmark))
    else:
        source = Path(args.folder or Path(__file__).resolve().parent / "space_app")
    if not (source / "app.py").is_file() or not (source / "requirements.txt").is_file():
        raise InputError("the source folder has no app.py / requirements.txt", file=str(source),
                         fix="pass the folder of a Space (or leave --folder out)")
    if args.out:
        from .engine.io import check_output

        check_output(args.out, "Space folder", folder=True)
    with tempfile.TemporaryDirectory(prefix="vlbench-publish-") as tmp:
        wheel = find_wheel(args.wheel, tmp)
        folder = space_folder(source, args.out or Path(tmp) / "space", wheel,
                              repo_id=args.repo_id if args.kind == "metric" else None)
        return _publish_and_show(folder, args, "space")


def _publish_and_show(folder: Path, args: argparse.Namespace, repo_type: str) -> int:
    from .library.publish import publish_folder

    plan = publish_folder(folder, args.repo_id, repo_type=repo_type, dry_run=args.dry_run,
                          private=args.private)
    print(("would upload to " if args.dry_run else "uploaded to ") + f"{repo_type} {args.repo_id}:")
    print("\n".join(plan.lines()))
    if args.dry_run:
        for name in ("requirements.txt", "README.md"):
            if (folder / name).is_file():
                print(f"\n--- {name} ---")
                print((folder / name).read_text(encoding="utf-8"))
    return 1 if plan.refused else 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from .engine.captions import backends

    print(f"vlbench {__version__}")
    for name, state in backends(prepare=args.prepare):
        print(f"{name + ':':<18} {state}")
    return 0


def _cmd_new_benchmark(args: argparse.Namespace) -> int:
    from .library.scaffold import new_benchmark

    out = Path(args.out or f"vlbench-{args.id.replace('_', '-')}")
    files = new_benchmark(args.id, out, args.name)
    print(f"wrote {len(files)} files into {out}:")
    for f in files:
        print(f"  {f}")
    print(f"next: cd {out} && pip install -e . && python -m pytest tests; then replace each part "
          "(its README.md says what each file is)")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .engine.errors import InputError

    try:
        import gradio  # noqa: F401
    except ImportError:
        raise InputError("the Space needs Gradio", fix="pip install -e '.[space]'") from None
    from .space import launch

    launch(host=args.host, port=args.port)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    import json

    from .engine.io import check_output, write_parquet_atomic, write_text_atomic
    from .library.api import export

    check_output(args.out, "exported file")
    data = export(args.benchmark, args.folder, split=args.split)
    if Path(args.out).suffix == ".parquet":      # a release shipped as Parquet tables
        out = write_parquet_atomic(args.out, data, "exported file")
    else:
        out = write_text_atomic(args.out, json.dumps(data), "exported file")
    print(f"wrote {out}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from .engine.io import check_output, write_text_atomic
    from .library import report
    from .library.api import score

    if args.output:
        # before the work: a bad destination must not cost the run
        check_output(args.output, "result JSON")
    options = _score_options(args)
    if args.command == "analyze" or getattr(args, "analysis", False):
        options["analysis"] = True
    result = score(args.benchmark, args.references, args.predictions, split=args.split,
                   protocol=args.protocol,
                   ci=args.ci, resamples=args.resamples, seed=args.seed, dataset_id=args.dataset_id,
                   tie_orders=args.tie_orders, **options)
    if not args.quiet:
        print(report.text(result))
        if args.command == "analyze" and result.analysis:
            print(report.analysis_text(result))
        # exit 0: the score is right, there is just nothing more to say
        elif args.command == "analyze":
            print(f"note: {args.benchmark} has no error analysis; the score above is all 'vlbench "
                  "analyze' can give for it", file=sys.stderr)
        if "confidence_intervals" in result.breakdowns:
            from .engine.uncertainty import interval_table

            print(interval_table(result))
        print(_where_metrics_are_explained(args.benchmark))
    if args.output:
        write_text_atomic(args.output, result.to_json(), "result JSON")
    return 0


def _where_metrics_are_explained(benchmark: str) -> str:
    """The line that points a newcomer to what each key means: the metric card (formulas, quirks),
    else --help."""
    from .engine.errors import UnsupportedError
    from .library.api import metric_path

    try:
        card = Path(metric_path(benchmark)) / "README.md"
    except UnsupportedError:
        card = None
    where = (
        f"the metric card {card}"
        if card is not None and card.is_file()
        else f"vlbench score {benchmark} --help"
    )
    return f"What each metric means: {where}"


def _build_args(sub: Any) -> None:
    """``vlbench build``'s arguments."""
    b = sub.add_parser("build", help="build the Hub dataset folder from the official raw release")
    b.add_argument("benchmark", help="benchmark id")
    b.add_argument("--raw", nargs="+", default=None,
                   help="the official release: a folder or annotation file(s), "
                        "hf://OWNER/NAME[@REVISION] or an https URL (fetched into the Hugging Face "
                        "cache); default: the benchmark's own release, fetched from its home")
    b.add_argument("--out", required=True, help="output folder (Hub repo layout)")
    b.add_argument("--images", "--images-root", dest="images", default=None,
                   help="image folder or archive, or the root of the images' file_name paths")
    b.add_argument("--allow-missing-images", action="store_true",
                   help="write rows whose image is missing without image instead of failing")
    b.add_argument("--config", default=None,
                   help="the config one annotation file becomes, where the benchmark has one "
                        "config per file (default: the file's name)")
    b.add_argument("--max-shard-mb", type=int, default=None,
                   help="Parquet shard size (default 300)")
    b.add_argument("--skip-bad-images", action="store_true",
                   help="leave out (and count) image files that are not readable images instead of "
                        "failing")
    b.add_argument("--overwrite", action="store_true",
                   help="update a folder an earlier build wrote (only its files are replaced; "
                        "yours are never touched)")
    b.add_argument("--eval-framework", choices=("inspect-ai", "vlbench"), default="inspect-ai",
                   help="eval.yaml's evaluation_framework: inspect-ai (the default: the dataset's "
                        "tasks run through vlbench's Inspect task, "
                        "vlbench/inspect_tasks.py@vlbench) or vlbench (not yet on the Hub's list: "
                        "publishing refuses it until it is)")


def _cmd_build(args: argparse.Namespace) -> int:
    from .engine.errors import InputError
    from .library.api import build

    info = get_benchmark(args.benchmark)
    kwargs = {"images": args.images, "allow_missing_images": args.allow_missing_images,
              "skip_bad_images": args.skip_bad_images}
    if args.max_shard_mb:
        kwargs["max_shard_bytes"] = args.max_shard_mb * 1024**2
    if args.config is not None:
        import inspect

        if "config" not in inspect.signature(info.require_dataset().build).parameters:
            raise InputError(f"{info.display_name} is built into its own configs; --config names "
                             "the config of one annotation file where a benchmark has one config "
                             "per file",
                             fix="drop --config")
        kwargs["config"] = args.config
    raw, release = _raw_release(info, args.raw)
    report = build(info.id, raw, args.out, overwrite=args.overwrite,
                   eval_framework=args.eval_framework, release=release, **kwargs)
    print(f"built {info.display_name} into {args.out}")
    for line in report.lines():
        print("  " + line)
    return 0


def _raw_release(info: Benchmark, raw: list[str] | None) -> tuple[Any, dict[str, Any] | None]:
    """(what the build reads, the fetched release's record or None): files and folders as given;
    nothing, an ``hf://`` repo or an https URL fetched into the Hugging Face cache first
    (:mod:`vlbench.library.fetch`)."""
    if raw and not any(r.startswith(("hf://", "https://", "http://")) for r in raw):
        return (raw[0] if len(raw) == 1 else raw), None
    from .engine.errors import InputError
    from .library.fetch import fetch, release_of

    if raw and len(raw) > 1:
        raise InputError("--raw takes one hf:// repo or URL at a time",
                         fix="pass one, or the downloaded files")
    fetched = fetch(release_of(info.release, raw[0] if raw else None, info.display_name))
    return fetched.raw, fetched.record


def _parse(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The parser (every benchmark's, plug-ins included; the arguments of the sub-command named
    only) and the parsed command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(command=next((a for a in args if not a.startswith("-")), None))
    return parser, parser.parse_args(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for bad input)."""
    parser, args = _parse(argv)
    # a log file or CI: no progress bars (datasets, huggingface_hub, transformers)
    if not sys.stderr.isatty():
        for name in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS",
                     "TQDM_DISABLE"):
            os.environ.setdefault(name, "1")
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    from .engine.errors import ServiceError, VlbenchError

    try:
        return {"score": _cmd_score, "analyze": _cmd_score, "compare": _cmd_compare,
                "conventions": _cmd_conventions, "build": _cmd_build, "export": _cmd_export,
                "doctor": _cmd_doctor, "demo": _cmd_demo, "report": _cmd_report,
                "publish": _cmd_publish, "predict": _cmd_predict, "run": _cmd_predict,
                "import": _cmd_import, "new-benchmark": _cmd_new_benchmark}[args.command](args)
    except ServiceError as exc:
        print(f"vlbench {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except VlbenchError as exc:
        print(f"vlbench {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(
            f"vlbench {args.command}: interrupted"
            + (
                " (the finished answers are kept: rerun the same command to continue)"
                if args.command in ("predict", "run")
                else ""
            ),
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
