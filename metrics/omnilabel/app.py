"""The OmniLabel metric Space: upload predictions, get the official scores (see vlbench.space)."""

from vlbench.space import build_metric_app

demo = build_metric_app("omnilabel")

if __name__ == "__main__":
    demo.launch()
