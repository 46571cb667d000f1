"""A minimal upload-and-score Space for the Ref-L4 metric (the full Space is spaces/, issue #6).

Upload a prediction file in the official format; it is scored against the bundled sample
references, or against an uploaded Ref-L4 parquet.
"""

from __future__ import annotations

from importlib import resources

import gradio as gr

from vlbench import score
from vlbench.errors import VlbenchError

SAMPLE = str(resources.files("vlbench").joinpath("samples/ref_l4"))


def run(predictions_file, references_file, split, protocol):
    if predictions_file is None:
        raise gr.Error("Upload a prediction file first.")
    references = references_file or SAMPLE
    try:
        result = score("ref_l4", references, predictions_file, split=split, protocol=protocol, with_samples=False)
    except VlbenchError as exc:
        raise gr.Error(str(exc)) from None
    table = [[k, "null" if v is None else round(v, 4)] for k, v in result.metrics.items()]
    return table, "\n".join(result.warnings) or "no warnings"


with gr.Blocks(title="Ref-L4 metric", analytics_enabled=False) as demo:
    gr.Markdown("# Ref-L4\nUpload `[{\"id\", \"pred_bbox\", \"format\"}]` predictions.")
    with gr.Row():
        predictions = gr.File(label="predictions (.json / .json.gz)", file_types=[".json", ".gz"])
        references = gr.File(label="references (optional .parquet; default: bundled sample)", file_types=[".parquet"])
    with gr.Row():
        split = gr.Dropdown(["all", "val", "test"], value="all", label="split")
        protocol = gr.Dropdown(["official", "corrected"], value="official", label="protocol")
    button = gr.Button("Score", variant="primary")
    scores = gr.Dataframe(headers=["metric", "value"], label="scores")
    notes = gr.Textbox(label="warnings")
    button.click(run, [predictions, references, split, protocol], [scores, notes])

if __name__ == "__main__":
    demo.launch()
