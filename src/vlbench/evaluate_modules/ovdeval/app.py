"""The OVDEval metric Space: the vlbench Space restricted to OVDEval (upload predictions or click an
example; scores, breakdown tables, plots, worst samples, model-card block, paired comparison). See
vlbench.space."""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from vlbench.space import LAUNCH_OPTIONS, build_app

demo = build_app(only="ovdeval")

if __name__ == "__main__":
    demo.launch(**LAUNCH_OPTIONS)
