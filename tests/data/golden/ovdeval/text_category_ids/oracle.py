"""The oracle of this case: OVDEval's eval.py (om-ai-lab/OVDEval @ 2ba0aa95, unmodified, imported
from beside this file or PYTHONPATH) on this folder's files, as its __main__ runs it: predictions
grouped by image in order of first appearance, nms_threaded per image against that image's GT, then
cal_map's COCO / loadRes / COCOeval "bbox", whose 12 stats are read from the COCOeval object at full
precision (cal_map prints them to 3 decimals); plain AP is the same COCOeval on the unsuppressed
list. Writes expected.json (percent, -1 as null).

    PYTHONPATH=path/to/OVDEval python oracle.py CASE_FOLDER
"""
import collections
import contextlib
import io
import json
import sys
from pathlib import Path

from eval import nms_threaded  # OVDEval's eval.py
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

KEYS = ["AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large", "AR1", "AR10", "AR100",
        "AR_small", "AR_medium", "AR_large"]


def stats(gt_path, results):
    with contextlib.redirect_stdout(io.StringIO()):
        anno = COCO(str(gt_path))
        ev = COCOeval(anno, anno.loadRes(results), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [None if float(v) == -1 else float(v) * 100 for v in ev.stats]


case = Path(sys.argv[1])
gt_data = json.loads((case / "references.json").read_text())
before = json.loads((case / "predictions.json").read_text())
image_dict, gt_dict = collections.defaultdict(list), collections.defaultdict(list)
for p in before:
    image_dict[p["image_id"]].append(p)
for a in gt_data["annotations"]:
    gt_dict[a["image_id"]].append(a)
after = []
for img, preds in image_dict.items():
    after += nms_threaded(gt_dict[img], preds, 0.5, 16)
plain = stats(case / "references.json", json.loads((case / "predictions.json").read_text()))
metrics = {**{"NMS_" + k: v for k, v in zip(KEYS, stats(case / "references.json", after))},
           **dict(zip(KEYS, plain))}
(case / "expected.json").write_text(
    json.dumps({"protocol": "official", "split": None, "metrics": metrics}, indent=1) + "\n"
)
print(case.name, f"before/after suppression {len(before)}/{len(after)}", metrics)
