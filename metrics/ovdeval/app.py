"""The OVDEval metric Space: upload predictions, get NMS-AP and AP (see vlbench.space)."""

from vlbench.space import build_metric_app

demo = build_metric_app("ovdeval", splits=("color", "material"))

if __name__ == "__main__":
    demo.launch()
