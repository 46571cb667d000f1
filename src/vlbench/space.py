"""A small upload-and-score Gradio app for one benchmark (used by each metric Space's ``app.py``).

The full multi-benchmark Space with tables, plots and a sample viewer lives in ``spaces/``.
Gradio is imported only here, so the engine never needs it.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from .errors import VlbenchError

__all__ = ["sample_references", "score_upload", "build_metric_app"]

#: The bundled sample references of each benchmark (a path inside the installed package).
_SAMPLES = {"ref_l4": "samples/ref_l4", "omnilabel": "samples/omnilabel/dataset_val.json",
            "ovdeval": "samples/ovdeval", "nocaps": "samples/nocaps/nocaps_val_captions.json"}


def sample_references(benchmark: str) -> str:
    return str(resources.files("vlbench").joinpath(_SAMPLES[benchmark]))


def score_upload(benchmark: str, predictions_path: str | None, references_path: str | None = None,
                 split: str | None = None, protocol: str = "official") -> tuple[list[list[Any]], str]:
    """Score an uploaded file: (table rows [metric, value], warnings text). Errors become gradio errors."""
    import gradio as gr

    from .api import score

    if not predictions_path:
        raise gr.Error("Upload a prediction file first.")
    try:
        result = score(benchmark, references_path or sample_references(benchmark), predictions_path,
                       split=split or None, protocol=protocol)
    except VlbenchError as exc:
        raise gr.Error(str(exc)) from None
    rows = [[k, None if v is None else round(v, 4)] for k, v in result.metrics.items()]
    return rows, "\n".join(result.warnings) or "no warnings"


def build_metric_app(benchmark: str, *, splits: tuple[str, ...] = (), title: str | None = None):
    """A Blocks app: upload predictions (and optionally references), pick split and protocol, get the scores."""
    import gradio as gr

    from .benchmarks import get_benchmark

    info = get_benchmark(benchmark)
    with gr.Blocks(title=title or f"{info.pretty_name} metric", analytics_enabled=False) as demo:
        gr.Markdown(f"# {info.pretty_name}\nUpload predictions in the official format; they are scored against "
                    "the bundled sample references unless you upload references too.")
        with gr.Row():
            predictions = gr.File(label="predictions (.json / .json.gz)", file_types=[".json", ".gz"])
            references = gr.File(label="references (optional)", file_types=[".json", ".gz", ".parquet"])
        with gr.Row():
            split = gr.Dropdown(list(splits), value=splits[0], label="split", visible=bool(splits)) if splits \
                else gr.State(None)
            protocol = gr.Dropdown(["official", "corrected"], value="official", label="protocol")
        button = gr.Button("Score", variant="primary")
        table = gr.Dataframe(headers=["metric", "value"], label="scores")
        notes = gr.Textbox(label="warnings")
        button.click(lambda p, r, s, pr: score_upload(benchmark, p, r, s, pr),
                     [predictions, references, split, protocol], [table, notes])
    return demo
