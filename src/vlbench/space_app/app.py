"""The vlbench Space: upload predictions for OmniLabel, nocaps, OVDEval or Ref-L4 and get the
official scores, breakdowns, plots, the worst samples and the model-card block. All logic is in
vlbench."""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from vlbench.space import LAUNCH_OPTIONS, build_app

demo = build_app()

if __name__ == "__main__":
    demo.launch(**LAUNCH_OPTIONS)
