"""The nocaps metric Space: upload captions, get the toolkit's scores per domain (see vlbench.space)."""

from vlbench.space import build_metric_app

demo = build_metric_app("nocaps")

if __name__ == "__main__":
    demo.launch()
