"""The upload-and-score Space (Gradio), for every registered benchmark, and the small per-metric
apps.

All logic lives in the engine (``vlbench.library.api``, ``vlbench.library.report``); this module
only wires Gradio components. Uploads are read from Gradio's temporary files only; references are
the bundled samples (no user-given path is ever opened). Gradio is imported only here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .benchmarks import all_benchmarks, get_benchmark
from .benchmarks.protocol.views import ALL_QUERIES, SHOW_SCORE
from .engine.errors import VlbenchError
from .space_viewer import (
    MAX_VIEWER_STATES,
    ViewerStore,
    legend,
    viewer_draw,
    viewer_page,
    viewer_queries,
    viewer_state,
)

__all__ = ["sample_references", "example_predictions", "build_app", "run_space", "run_compare",
           "choices", "labels"]

#: Maximum decompressed bytes of one upload (a .json, .json.gz or all the members of a .zip),
#: checked while reading; ``VLBENCH_SPACE_MAX_MB`` overrides it. The real prediction files of the
#: bundled samples are far below it.
MAX_UPLOAD_BYTES = int(float(os.environ.get("VLBENCH_SPACE_MAX_MB", "64")) * 1024**2)
#: Memory one request may spend on its upload (parsed entries and the scorer's working set), beyond
#: the app's own; ``VLBENCH_SPACE_MEMORY_MB`` overrides it. CONCURRENCY requests run at once, the
#: rest wait in the queue, so the Space needs its base plus CONCURRENCY times this.
MEMORY_BUDGET = int(float(os.environ.get("VLBENCH_SPACE_MEMORY_MB", "1024")) * 1024**2)
#: Memory one JSON value of an upload costs at most once parsed and scored (~70 bytes as a Python
#: object, as much again for the scorer's arrays and the viewer; bench/space_memory.py measures it
#: per benchmark)
BYTES_PER_VALUE = 200
#: Members of an uploaded .zip read at most (one per sub-dataset, with room to spare).
MAX_ZIP_MEMBERS = 64
#: Requests scored at once, all scoring events together; the others wait in the queue.
CONCURRENCY = 2


def upload_limits(bench: Any) -> tuple[int, int]:
    """(decompressed bytes, JSON values) one upload for ``bench`` may hold: what its largest real
    split needs, and what MEMORY_BUDGET affords: half of it for the values, half for the text (kept
    while parsing, and the strings parsed from it: twice its size at most)."""
    values = MEMORY_BUDGET // (2 * BYTES_PER_VALUE)
    own = bench.showcase.max_prediction_values if bench.showcase else None
    if own:
        values = min(values, own)
    return min(MAX_UPLOAD_BYTES, MEMORY_BUDGET // 4), values


def labels() -> dict[str, str]:
    """id -> display name of every registered benchmark the Space can show (one with a showcase)."""
    return {b.id: b.display_name for b in all_benchmarks() if b.showcase is not None}


def choices(benchmark: str) -> list[str]:
    """The choices of the "split / sub-dataset" dropdown of a benchmark."""
    return list(get_benchmark(benchmark).require_showcase().subsets)


def _allowed(benchmark: Any, subset: Any, quality: Any = "good") -> tuple[Any, str]:
    """The benchmark and choice of a request, only from the enumerated lists (a request is untrusted
    text)."""
    if not isinstance(benchmark, str) or benchmark not in labels():
        raise VlbenchError(f"unknown benchmark {benchmark!r}; choose one of {', '.join(labels())}")
    bench = get_benchmark(benchmark)
    subsets = bench.require_showcase().subsets
    subset = subsets[0] if subset is None else subset
    if subset not in subsets or quality not in ("good", "poor"):
        raise VlbenchError(f"unknown choice {subset!r} / {quality!r} for {bench.display_name}; "
                           f"choose one of {', '.join(subsets)}")
    return bench, subset


def sample_references(benchmark: str, subset: str | None = None) -> str:
    """The bundled sample references for a choice (the first choice by default)."""
    bench, subset = _allowed(benchmark, subset)
    return bench.require_showcase().sample_references(subset)


def example_predictions(benchmark: str, quality: str, subset: str | None = None) -> str:
    """The bundled good / poor example prediction file of a choice, as a copy in one temp folder per
    process (Gradio serves files from the temp folder or the working directory only, and the package
    may be installed anywhere); a folder of files is served as a .zip. Made once: repeated clicks
    write nothing new."""
    import zipfile

    bench, subset = _allowed(benchmark, subset, quality)
    path = Path(bench.require_showcase().example_predictions(quality, subset))
    target = (Path(tempfile.gettempdir()) / f"vlbench-examples-{os.getpid()}" / bench.id / quality
              / (f"{bench.id}_{path.name}.zip" if path.is_dir() else path.name))
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        if path.is_dir():
            with zipfile.ZipFile(tmp, "w") as zf:
                for f in sorted(path.glob("*.json")):
                    zf.write(f, f.name)
        else:
            shutil.copyfile(path, tmp)
        tmp.replace(target)
    return str(target)


def _public(message: str) -> str:
    """An error message for the web page: every absolute path becomes its last part, and the advice
    to score with another benchmark's command is said in the page's terms."""
    message = re.sub(r"(?:/[^/\s:'\"()]+)+/([^/\s:'\"()]+)", r"\1", message)
    return re.sub(r"score it with 'vlbench score (\w+)'",
                  lambda m: f"choose {labels().get(m.group(1), m.group(1))} as the benchmark",
                  message)


def local_reference_choices(benchmark: str) -> list[str]:
    """Hub folders (built by vlbench) the Space operator put under $VLBENCH_SPACE_DATA/<benchmark>/:
    the only references besides the bundled samples a visitor can pick (from a list, never as a
    typed path)."""
    root = os.environ.get("VLBENCH_SPACE_DATA")
    folder = Path(root) / benchmark if root else None
    if not folder or not folder.is_dir():
        return []
    return sorted(
        p.name for p in folder.iterdir() if (p / "README.md").exists() and (p / "data").is_dir()
    )


def _references(benchmark: str, subset: str | None, choice: str | None) -> str:
    if choice and choice != BUNDLED:
        if choice not in local_reference_choices(benchmark):
            raise VlbenchError(f"unknown references {choice!r}")
        return str(Path(os.environ["VLBENCH_SPACE_DATA"]) / benchmark / choice)
    return sample_references(benchmark, subset)


BUNDLED = "bundled sample"


def _score(benchmark: str, subset: str | None, predictions_path: str,
           references_path: str | None = None, protocol: str = "official"):
    """(result, records, parsed predictions) of one upload; a .zip is unpacked into a folder of
    prediction files."""
    import zipfile

    from .library.api import load_references, score
    from .library.provenance import source_of

    bench, subset = _allowed(benchmark, subset)
    show = bench.require_showcase()
    options = show.options(subset)
    refs_path = references_path or show.sample_references(subset)
    max_bytes, max_values = upload_limits(bench)
    unpacked = (
        _unzip_predictions(predictions_path, max_bytes, max_values)
        if zipfile.is_zipfile(predictions_path)
        else None
    )
    try:
        preds = bench.scorer.read_predictions(str(unpacked or predictions_path),
                                              max_bytes=max_bytes, max_values=max_values)
    finally:
        if unpacked is not None:
            shutil.rmtree(unpacked, ignore_errors=True)
    show.check(preds)
    refs = load_references(bench.id, refs_path, split=options.get("split"))
    result = score(bench.id, refs, preds, protocol=protocol, source=Path(predictions_path).name,
                   analysis=True, **options)
    result.source = source_of(refs_path)     # the references were read here, so score() saw records
    return result, refs, preds, refs_path


def _unzip_predictions(path: str, max_bytes: int, max_values: int) -> Path:
    """A .zip of per-sub-dataset prediction files (<name>.json) -> a temp folder: names flattened,
    at most MAX_ZIP_MEMBERS files, ``max_bytes`` and ``max_values`` in all (counted while
    decompressing), one file per name."""
    import zipfile

    from .engine.errors import FormatError
    from .engine.io import json_values_bound

    name_of_upload = Path(path).name
    folder = Path(tempfile.mkdtemp(prefix="vlbench-upload-"))
    try:
        total, values = 0, 0
        seen: dict[str, str] = {}
        with zipfile.ZipFile(path) as zf:
            members = [
                i
                for i in zf.infolist()
                if not i.is_dir() and i.filename.endswith((".json", ".json.gz"))
            ]
            if len(members) > MAX_ZIP_MEMBERS:
                raise FormatError(f"the archive holds {len(members)} prediction files; at most "
                                  f"{MAX_ZIP_MEMBERS} are read", file=name_of_upload,
                                  fix="zip one <sub-dataset>.json per sub-dataset")
            for info in members:
                name = Path(info.filename).name
                if name in seen:
                    raise FormatError(f"two members are named {name}: {seen[name]} and "
                                      f"{info.filename}",
                                      file=name_of_upload,
                                      fix="keep one prediction file per sub-dataset")
                seen[name] = info.filename
                with zf.open(info) as src, open(folder / name, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        total += len(chunk)
                        values += json_values_bound(chunk)
                        if total > max_bytes or values > max_values:
                            raise FormatError(f"the archive unpacks to more than {max_bytes:,} "
                                              "bytes or "
                                              f"{max_values:,} JSON values", file=name_of_upload,
                                              fix="upload fewer predictions (e.g. the best 100 "
                                                  "boxes per image)")
                        dst.write(chunk)
    except zipfile.BadZipFile as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise FormatError(f"not a readable .zip ({exc})", file=name_of_upload) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _shown(value: Any) -> Any:
    """One way to show a number on the page: two decimals (as the papers and leaderboards), ``null``
    for none."""
    return "null" if value is None else f"{value:.2f}" if isinstance(value, float) else value


# -- the full Space --------------------------------------------------------------------------------

_N_TABLES, _N_PLOTS = 5, 2
#: Gradio deletes the files of its cache older than an hour, looking every 15 minutes
#: (``Blocks(delete_cache=)``)
CACHE_LIFETIME = (900, 3600)
#: Gradio keeps every session's copy of the page's components with their last outputs (~0.35 MB
#: after a scoring) for up to 10,000 sessions; the Space keeps the latest ones only (twice the
#: viewer states kept: older sessions have lost their images anyway). A session beyond them starts
#: over on its next event, without an error.
MAX_SESSIONS = int(os.environ.get("VLBENCH_SPACE_SESSIONS", str(2 * MAX_VIEWER_STATES)))
#: ``launch()`` options of every Space that runs this app: upload size, and the sessions kept
LAUNCH_OPTIONS: dict[str, Any] = {"max_file_size": "100mb", "state_session_capacity": MAX_SESSIONS}


def _output_dir() -> Path:
    """A folder for one request's downloads, inside Gradio's own cache: Gradio serves the files from
    there without copying them and deletes them after CACHE_LIFETIME, so nothing of vlbench's
    accumulates in the temp folder."""
    from gradio.utils import get_upload_folder

    folder = Path(get_upload_folder())
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="vlbench-out-", dir=folder))


def _headline_markdown(result: Any) -> str:
    """The headline metrics as a Markdown table, with each AP key's tie bounds beside it when scores
    tied."""
    from .library import report

    bounds, orders = report.tie_bounds(result), report.tie_orders(result)
    ties = bool(bounds or orders)

    def span(k: str, of: dict[str, Any], mean: bool = False) -> str:
        b = of.get(k)
        return "" if b is None else (f"{_shown(b['mean'])} ({_shown(b['low'])} to "
                                     f"{_shown(b['high'])})" if mean
                                     else f"{_shown(b['low'])} to {_shown(b['high'])}")

    rows = [
        f"| {k} | {_shown(v)} |"
        + (f" {span(k, bounds)} | {span(k, orders, mean=True)} |" if ties else "")
        for k, v in report.headline(result)
    ]
    header = ("| metric | value | over every order of tied scores | random orders: mean (5% to "
              "95%) |\n"
              "|---|---|---|---|\n" if ties else "| metric | value |\n|---|---|\n")
    return header + "\n".join(rows)


def run_space(benchmark: str, subset: str | None, predictions_path: str | None, protocol: str,
              model_name: str,
              progress: Any = None, references: str | None = None, dataset_id: str | None = None):
    """Everything the Space shows for one upload; errors become a status message, never a crash."""
    import gradio as gr

    from .library import model_card, report

    def step(fraction: float, what: str) -> None:
        if progress is not None:
            progress(fraction, desc=what)

    empty: list[Any] = (
        [gr.Dataframe(visible=False)] * _N_TABLES
        + [gr.Plot(visible=False)] * _N_PLOTS
        + [
            gr.Markdown(NO_ANALYSIS),
            gr.Dataframe(visible=False),
            gr.Plot(visible=False),
            gr.Dropdown(choices=[], value=None, visible=False),
            None,
            None,
            [],
        ]
    )
    if not predictions_path:
        return ["**Error:** upload a prediction file (or click an example) first.", ""] + empty
    if benchmark not in labels() or subset not in choices(benchmark):
        return [f"**Error:** unknown benchmark / subset {benchmark!r} / {subset!r}; choose one of "
                f"{', '.join(f'{b}: {choices(b)}' for b in labels())}", ""] + empty
    step(0.05, "reading and scoring (a full split: seconds)")
    try:
        refs_path = (
            _references(benchmark, subset, references)
            if references and references != BUNDLED
            else None
        )
        result, refs, preds, refs_path = _score(benchmark, subset, predictions_path, refs_path,
                                                protocol=protocol)
        # shown and downloaded: no server path
        result.warnings = [_public(w) for w in result.warnings]
        viewer = viewer_state(benchmark, refs, preds, result, refs_path)
    except VlbenchError as exc:
        return [f"**Error:** {_public(str(exc))}", ""] + empty
    step(0.7, "tables, plots and samples")
    status = "**Scored.**" + (
        "".join(f"\n\n⚠️ {w}" for w in result.warnings) if result.warnings else " No warnings."
    )
    if not viewer["scenes"]:
        status += ("\n\nNo samples to show for this choice (several parts at once: pick one to see "
                   "its images).")
    head = _headline_markdown(result)
    tables = list(report.tables(result).items())[:_N_TABLES]
    table_outputs = [
        gr.Dataframe(
            value=[
                [_shown(v) if v is None or isinstance(v, float) else v for v in row] for row in rows
            ],
            headers=headers,
            label=name,
            visible=True,
            show_search="search",
        )
        for name, (headers, rows) in tables
    ]
    table_outputs += [gr.Dataframe(visible=False)] * (_N_TABLES - len(table_outputs))
    figs = list(report.plots(result).items())[:_N_PLOTS]
    plot_outputs = [gr.Plot(value=fig, label=name, visible=True) for name, fig in figs]
    plot_outputs += [gr.Plot(visible=False)] * (_N_PLOTS - len(plot_outputs))
    out_dir = _output_dir()
    (out_dir / "result.json").write_text(result.to_json(indent=1), encoding="utf-8")
    files = [str(out_dir / "result.json")]
    given = (dataset_id or "").strip() or None
    # a card names its dataset by an id someone gave
    if given is None and result.dataset_id is None:
        status += ("\n\nNo model-card block: enter the dataset's id on the Hub (ORG/name) above to "
                   "get one.")
    else:
        try:
            (out_dir / "model-index.yaml").write_text(model_card.model_index_yaml(
                result, model_name or "my-model", dataset_id=given), encoding="utf-8")
            files.append(str(out_dir / "model-index.yaml"))
        except VlbenchError as exc:
            status += f"\n\nNo model-card block: {_public(str(exc))}"
    for name, table in tables:
        path = out_dir / (name.split(" (")[0].replace(" ", "_") + ".csv")
        path.write_text(report.to_csv(table), encoding="utf-8")
        files.append(str(path))
    metrics_json = json.dumps(result.metrics)
    return (
        [status, head]
        + table_outputs
        + plot_outputs
        + _errors_outputs(result, viewer)
        + [viewer, metrics_json, files]
    )


#: the Errors tab's words, by what the result's analysis holds
ERRORS_INTRO = ("Why the model fails (not official): each error type with how much of the headline "
                "it costs (fixed alone, as TIDE fixes it). Pick a type to see its worst examples "
                "in the viewer.")
NO_ANALYSIS = "No error analysis for this upload."


def _errors_intro(analysis: dict[str, Any] | None) -> str:
    """What the Errors tab says first: the error types where the analysis has them, else what it
    does hold (a captioning analysis: the domains' gaps and the words captions miss), in its own
    note's words."""
    if not analysis:
        return NO_ANALYSIS
    if "errors" in analysis:
        return ERRORS_INTRO
    note = str(analysis.get("note") or "the tables below").removeprefix("not official: ")
    return f"Where the model falls short (not official): {note}."


def _errors_outputs(result: Any, viewer: dict) -> list[Any]:
    """The Errors tab: its intro, the analysis' first table (the error types and what each costs, or
    what the analysis has instead), and the types whose worst examples the viewer can show (no
    dropdown where none)."""
    import gradio as gr

    from .library import report

    intro = gr.Markdown(_errors_intro(result.analysis))
    tables = list(report.analysis_tables(result).items())
    if not tables:
        return [intro, gr.Dataframe(visible=False), gr.Plot(visible=False),
                gr.Dropdown(choices=[], value=None, visible=False)]
    name, (headers, rows) = tables[0]
    shown = gr.Dataframe(
        value=[
            [_shown(v) if v is None or isinstance(v, float) else v for v in row] for row in rows
        ],
        headers=headers,
        label=name,
        visible=True,
    )
    figure = report.analysis_plot(result)
    kinds = [(f"{kind} ({len(ranks)} image(s))", kind) for kind,
             ranks in viewer["examples"].items()]
    return [intro, shown, gr.Plot(value=figure, visible=figure is not None),
            gr.Dropdown(choices=kinds, value=None, visible=bool(kinds))]


def run_compare(benchmark: str, subset: str | None, a_path: str | None, b_path: str | None,
                protocol: str,
                references: str | None = None, progress: Any = None) -> tuple[str, list[str]]:
    """Paired bootstrap of two uploads on the same references: (verdict table as Markdown,
    [comparison JSON])."""
    from .engine.uncertainty import compare

    if not a_path or not b_path:
        return "**Error:** upload two prediction files (A above, B here) to compare them.", []
    if benchmark not in labels() or subset not in choices(benchmark):
        return f"**Error:** unknown benchmark / subset {benchmark!r} / {subset!r}", []
    try:
        if progress is not None:
            progress(0.05, desc="scoring A and B")
        refs_path = (
            _references(benchmark, subset, references)
            if references and references != BUNDLED
            else None
        )
        a = _score(benchmark, subset, a_path, refs_path, protocol=protocol)[0]
        b = _score(benchmark, subset, b_path, refs_path, protocol=protocol)[0]
        if progress is not None:
            progress(0.6, desc="paired bootstrap (1,000 resamples of images)")
        result = compare(a, b, 0.95, names=(f"A ({Path(a_path).name})", f"B ({Path(b_path).name})"),
                         lower_is_better=get_benchmark(benchmark).lower_is_better)
    except VlbenchError as exc:
        return f"**Error:** {_public(str(exc))}", []
    out = _output_dir() / "comparison.json"
    out.write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return result.markdown(), [str(out)]


def _example_loader(quality: str):
    """The handler of an "Example" button: the bundled file for the chosen benchmark and choice."""
    def load(benchmark: str, subset: str) -> str:
        import gradio as gr

        try:
            return example_predictions(benchmark, quality, subset)
        except VlbenchError as exc:   # only enumerated choices reach the file system
            raise gr.Error(_public(str(exc))) from None
    return load


@dataclass
class _Viewer:
    """The viewer's components (see :func:`_viewer_components`)."""

    state: Any
    page_no: Any
    previous: Any
    following: Any
    page_label: Any
    image_pick: Any
    query_pick: Any
    threshold: Any
    legend: Any
    view: Any
    caption: Any
    box_panel: Any
    boxes: Any
    store: ViewerStore

    def box_controls(self, has_boxes: bool) -> list[Any]:
        """Updates showing the controls that apply to boxes only (hidden for a benchmark whose
        answers are text)."""
        import gradio as gr

        return [gr.update(visible=has_boxes) for _ in (self.query_pick, self.threshold, self.legend,
                                                       self.box_panel)]


def _has_boxes(benchmark: str) -> bool:
    """Whether a benchmark's scenes have boxes (else text: no query, threshold or box legend to
    show)."""
    return get_benchmark(benchmark).require_showcase().boxes


def _viewer_components(has_boxes: bool) -> _Viewer:
    """The Samples tab: pages of images worst first, the query and threshold, the drawn image, its
    legend."""
    import gradio as gr

    state = gr.State(None, time_to_live=CACHE_LIFETIME[1])
    page_no = gr.State(0)
    with gr.Row():
        previous = gr.Button("◀ worse images", size="sm", elem_id="page-previous")
        page_label = gr.Markdown("score a file to see its images", elem_id="page-label")
        following = gr.Button("better images ▶", size="sm", elem_id="page-next")
    with gr.Row():
        # choices set per session, values checked by the handlers: a session Gradio no longer keeps
        # (MAX_SESSIONS) knows only the empty choices, so a strict dropdown would answer its next
        # pick with an error
        image_pick = gr.Dropdown([], label="image (worst first)", elem_id="image-pick", scale=2,
                                 allow_custom_value=True)
        query_pick = gr.Dropdown([], label="description / category / expression",
                                 elem_id="query-pick", scale=2, visible=has_boxes,
                                 allow_custom_value=True)
        threshold = gr.Slider(0.05, 1.0, value=SHOW_SCORE, step=0.05, label="score threshold",
                              elem_id="threshold", scale=1, visible=has_boxes)
    legend_text = gr.Markdown(legend(), elem_id="legend", visible=has_boxes)
    view = gr.Image(type="pil", label="ground truth and predictions", elem_id="view",
                    interactive=False, format="png", height=720)
    caption = gr.Markdown(elem_id="view-caption")
    with gr.Accordion("the drawn boxes, in pixels of the drawn image (JSON)", open=False,
                      visible=has_boxes, elem_id="view-boxes-panel") as box_panel:
        boxes = gr.Code(language="json", elem_id="view-boxes", interactive=False)
    return _Viewer(state, page_no, previous, following, page_label, image_pick, query_pick,
                   threshold, legend_text, view, caption, box_panel, boxes, ViewerStore())


def _wire_viewer(v: _Viewer, scored: list[Any]) -> None:
    """The viewer's events (none of them an API endpoint): a scored upload shows its worst page and
    image; the page buttons, the image, the query and the threshold redraw. The session's state is a
    key into ``v.store``."""
    import gradio as gr

    def turn(key, page, step):
        state = v.store.get(key)
        page, shown, label = viewer_page(state, page + step)
        if state is None and key:
            label = "these images were dropped for newer uploads: score the file again to see them"
        return page, gr.Dropdown(choices=shown, value=shown[0][1] if shown else None), label

    pick = _draw_first(v)

    def draw(key, rank, query, threshold_value):
        return viewer_draw(v.store.get(key), rank, query, threshold_value)

    private = {"api_visibility": "private", "concurrency_id": "viewer",
               "concurrency_limit": CONCURRENCY}
    paging = [v.state, v.page_no], [v.page_no, v.image_pick, v.page_label]
    shown = [v.state, v.image_pick, v.threshold], [v.query_pick, v.view, v.caption, v.boxes]
    for event in scored:
        event.then(lambda key, page: turn(key, 0, 0), *paging, **private).then(pick, *shown,
                                                                               **private)
    v.previous.click(lambda key, page: turn(key, page, -1), *paging, **private).then(pick, *shown,
                                                                                     **private)
    v.following.click(lambda key, page: turn(key, page, 1), *paging, **private).then(pick, *shown,
                                                                                     **private)
    v.image_pick.input(pick, *shown, **private)
    for changed in (v.query_pick.input, v.threshold.release):
        changed(draw, [v.state, v.image_pick, v.query_pick, v.threshold],
                [v.view, v.caption, v.boxes], **private)


def _wire_errors(tabs: _Tabs) -> None:
    """Picking an error type opens the Samples tab on its worst examples' images, the first drawn
    for the label of its worst example (so the erroneous box shows with that label's ground truth
    only)."""
    import gradio as gr

    v = tabs.viewer

    def show(key, kind, threshold_value):
        state = v.store.get(key)
        ranks = (state or {}).get("examples", {}).get(kind, [])
        scenes = state["scenes"] if state else []
        shown = [(f"#{r + 1} {scenes[r].title}", r) for r in ranks]
        first = shown[0][1] if shown else None
        queries = viewer_queries(state, first)
        label = state["example_labels"].get(kind) if state else None
        query = label if label in queries else ALL_QUERIES
        image, caption, boxes = viewer_draw(state, first, query, threshold_value)
        return (
            gr.Tabs(selected="samples"),
            gr.Dropdown(choices=shown, value=first),
            f"the worst examples of {kind}: {len(shown)} image(s)"
            if shown
            else "no example to show",
            gr.Dropdown(choices=queries, value=query if queries else None),
            image,
            caption,
            boxes,
        )

    private = {"api_visibility": "private", "concurrency_id": "viewer",
               "concurrency_limit": CONCURRENCY}
    tabs.error_pick.input(
        show,
        [v.state, tabs.error_pick, v.threshold],
        [tabs.tabs, v.image_pick, v.page_label, v.query_pick, v.view, v.caption, v.boxes],
        **private,
    )


def _draw_first(v: _Viewer):
    """The viewer's image handler (queries and the drawn image of the picked image)."""
    import gradio as gr

    def pick(key, rank, threshold_value):
        state = v.store.get(key)
        queries = viewer_queries(state, rank)
        image, caption, boxes = viewer_draw(state, rank, ALL_QUERIES, threshold_value)
        return (
            gr.Dropdown(choices=queries, value=queries[0] if queries else None),
            image,
            caption,
            boxes,
        )
    return pick


def _benchmark_chosen(viewer: _Viewer):
    """The handler of the benchmark dropdown: its choices and references, and the viewer's box
    controls."""
    import gradio as gr

    def chosen(benchmark: str) -> list[Any]:
        return [gr.Dropdown(choices=choices(benchmark), value=choices(benchmark)[0]),
                gr.Dropdown(choices=[BUNDLED] + local_reference_choices(benchmark), value=BUNDLED),
                *viewer.box_controls(_has_boxes(benchmark))]
    return chosen


@dataclass(frozen=True)
class _Tabs:
    """The result tabs' components: tables, plots, the errors, the sample viewer, downloads, and the
    comparison's."""

    tabs: Any
    tables: list[Any]
    plots: list[Any]
    errors_intro: Any
    errors: Any
    errors_plot: Any
    error_pick: Any
    viewer: _Viewer
    downloads: Any
    upload_b: Any
    compare_button: Any
    comparison: Any
    comparison_file: Any


def _result_tabs(has_boxes: bool) -> _Tabs:
    """Tables, Plots, Samples, Downloads and "Compare with another model" (inside the app's
    Blocks)."""
    import gradio as gr

    with gr.Tabs() as tabs:
        with gr.Tab("Tables"):
            tables = [
                gr.Dataframe(visible=False, interactive=False, label=f"table {k + 1}")
                for k in range(_N_TABLES)
            ]
        with gr.Tab("Plots"):
            plots = [gr.Plot(visible=False, label=f"plot {k + 1}") for k in range(_N_PLOTS)]
        with gr.Tab("Errors", elem_id="errors-tab"):
            errors_intro = gr.Markdown(ERRORS_INTRO, elem_id="errors-intro", label="errors intro")
            errors = gr.Dataframe(visible=False, interactive=False, label="error types",
                                  elem_id="errors-table")
            errors_plot = gr.Plot(visible=False, label="what each error costs",
                                  elem_id="errors-plot")
            error_pick = gr.Dropdown([], label="show the worst examples of", elem_id="error-pick",
                                     # as the viewer's picks (MAX_SESSIONS)
                                     allow_custom_value=True)
        with gr.Tab("Samples", id="samples", elem_id="samples-tab"):
            viewer = _viewer_components(has_boxes)
        with gr.Tab("Downloads", elem_id="downloads-tab"):
            downloads = gr.File(label="result JSON, model-index YAML, tables as CSV",
                                file_count="multiple", elem_id="downloads")
        with gr.Tab("Compare with another model", elem_id="compare-tab"):
            gr.Markdown("Upload a second prediction file B for the same benchmark and split: a "
                        "paired bootstrap over images (the same resampled images for both) says "
                        "per metric whether A really beats B, with the 95% interval of the "
                        "difference.")
            upload_b = gr.File(label="predictions B", file_types=[".json", ".gz", ".zip"],
                               elem_id="upload-b")
            compare_button = gr.Button("Compare A and B", elem_id="compare")
            comparison = gr.Markdown(elem_id="comparison")
            comparison_file = gr.File(label="comparison JSON", file_count="multiple",
                                      elem_id="comparison-file")
    return _Tabs(tabs, tables, plots, errors_intro, errors, errors_plot, error_pick, viewer,
                 downloads, upload_b, compare_button, comparison, comparison_file)


_INTRO = ("Upload a prediction file in the benchmark's official format (or click an example) and "
          "get the official scores, the breakdowns, plots, the worst samples and a ready-to-paste "
          "model-card block. References: the bundled sample releases.")


def _compare_handler():
    """The Compare button's handler (its parameters' names are the Space API's, as gradio_client
    shows them)."""
    import gradio as gr

    def compare_with_progress(benchmark, subset, predictions_a, predictions_b, protocol, references,
                              progress=gr.Progress()):
        return run_compare(benchmark, subset, predictions_a, predictions_b, protocol, references,
                           progress)
    return compare_with_progress


def build_app(only: str | None = None):
    """The upload-and-score Space: all four benchmarks, or ``only`` one (the app of its evaluate
    metric Space)."""
    import gradio as gr

    names_of = labels()
    shown = [only] if only else list(names_of)
    if only and only not in names_of:
        raise VlbenchError(f"unknown benchmark {only!r}; choose one of {', '.join(names_of)}")
    names = ", ".join(names_of[k] for k in shown)
    with gr.Blocks(
        title=f"vlbench: score {names}", analytics_enabled=False, delete_cache=CACHE_LIFETIME
    ) as demo:
        gr.Markdown(
            f"# {'vlbench' if not only else names_of[only] + ' metric (vlbench)'}\n{_INTRO}"
        )
        with gr.Row():
            bench = gr.Dropdown([(names_of[k], k) for k in shown], value=shown[0],
                                label="benchmark", elem_id="bench", interactive=not only)
            # the choices follow the benchmark; custom values let API calls pass any of them
            # (checked in run_space)
            subset = gr.Dropdown(choices(shown[0]), value=choices(shown[0])[0],
                                 label="split / sub-dataset", elem_id="subset",
                                 allow_custom_value=True)
            protocol = gr.Dropdown(["official", "corrected"], value="official", label="protocol")
            model_name = gr.Textbox(value="my-model", label="model name (for the model card)")
            dataset_id = gr.Textbox(value="", label="dataset id on the Hub (for the model card)",
                                    placeholder="ORG/name", elem_id="dataset-id")
            references = gr.Dropdown([BUNDLED] + local_reference_choices(shown[0]), value=BUNDLED,
                                     label="references", elem_id="references")
        upload = gr.File(label="predictions (.json or .json.gz; for several parts at once: a .zip "
                               "of <part>.json files)",
                         file_types=[".json", ".gz", ".zip"], elem_id="upload")
        with gr.Row():
            good = gr.Button("Example: a good model", elem_id="example-good")
            poor = gr.Button("Example: a poor model", elem_id="example-poor")
            run = gr.Button("Score", variant="primary", elem_id="score")
        status = gr.Markdown(elem_id="status", label="status")
        head = gr.Markdown(elem_id="headline", label="headline")
        tabs = _result_tabs(_has_boxes(shown[0]))
        viewer, table_slots, plot_slots, downloads = (
            tabs.viewer,
            tabs.tables,
            tabs.plots,
            tabs.downloads,
        )
        metrics_json = gr.Textbox(visible=False, elem_id="metrics-json", label="metrics (JSON)")

        bench.change(_benchmark_chosen(viewer), bench,
                     [subset, references, viewer.query_pick, viewer.threshold, viewer.legend,
                      viewer.box_panel])
        good_click = good.click(_example_loader("good"), [bench, subset], upload,
                                api_visibility="private")
        poor_click = poor.click(_example_loader("poor"), [bench, subset], upload,
                                api_visibility="private")
        # the parameters' names are the Space API's (gradio_client shows them): no single letters
        def score_with_progress(benchmark, subset, predictions, protocol, model_name, references,
                                dataset_id="", progress=gr.Progress()):
            out = run_space(benchmark, subset, predictions, protocol, model_name, progress,
                            references, dataset_id)
            # the session holds the viewer state's key
            out[-3] = viewer.store.put(out[-3]) if out[-3] else None
            return out

        outputs = [status, head] + table_slots + plot_slots + [tabs.errors_intro, tabs.errors,
                                                               tabs.errors_plot,
                                                               tabs.error_pick, viewer.state,
                                                               metrics_json, downloads]
        # every event that scores shares one limit of CONCURRENCY (by default each event would have
        # its own)
        scoring: dict[str, Any] = {"concurrency_id": "scoring", "concurrency_limit": CONCURRENCY}
        inputs = [bench, subset, upload, protocol, model_name, references, dataset_id]
        scored = [run.click(score_with_progress, inputs, outputs, api_name="score", **scoring)]
        # an example click scores at once, as a visitor expects
        for clicked in (good_click, poor_click):
            scored.append(clicked.then(score_with_progress, inputs, outputs,
                                       api_visibility="private", **scoring))
        _wire_viewer(viewer, scored)
        _wire_errors(tabs)

        tabs.compare_button.click(_compare_handler(),
                                  [bench, subset, upload, tabs.upload_b, protocol, references],
                                  [tabs.comparison, tabs.comparison_file], api_name="compare",
                                  **scoring)
    return demo.queue(default_concurrency_limit=CONCURRENCY)


def launch(host: str = "127.0.0.1", port: int = 7860, **kwargs: Any) -> None:
    """Start the Space on ``host:port`` (uploads up to 100 MB)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_app().launch(server_name=host, server_port=port, **{**LAUNCH_OPTIONS, **kwargs})
