"""The oracle of this case: omnilabeltools @ bfd742a9 (its source tree on sys.path), run unmodified
on this folder's files; writes expected.json (official fractions x 100, -1 as null) in the 13-key
order of golden/README.md.

    PYTHONPATH=path/to/omnilabeltools python oracle.py CASE_FOLDER
"""
import contextlib
import io
import json
import sys
from pathlib import Path

from omnilabeltools import OmniLabel, OmniLabelEval

case = Path(sys.argv[1])
with contextlib.redirect_stdout(io.StringIO()):
    gt = OmniLabel(str(case / "references.json"))
    ev = OmniLabelEval(gt, gt.load_res(str(case / "predictions.json")))
    ev.evaluate()
    ev.accumulate()
    ev.summarize(verbose=False)
names = ["AP", "AP_categ", "AP_descr", "AP_descr_pos", "AP_descr_S", "AP_descr_M", "AP_descr_L",
         "AP50_descr", "AP75_descr", "AP50_categ", "AP75_categ", "AR_descr", "AR_categ"]
metrics = {n: None if float(v) == -1 else float(v) * 100 for n, v in zip(names, ev.stats)}
(case / "expected.json").write_text(
    json.dumps({"protocol": "official", "split": None, "metrics": metrics}, indent=1) + "\n"
)
print(case.name, metrics)
