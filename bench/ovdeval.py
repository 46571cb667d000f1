"""OVDEval scoring speed and memory on one sub-dataset, next to the straightforward algorithm.

    python bench/ovdeval.py [--images 2000]

Generates an attribute-style sub-dataset (2,000 images, ~8,000 GT boxes, ~200,000 predictions with
hard-negative labels on true boxes), then times:

- the whole `vlbench score ovdeval` process (suppression, NMS-AP and plain AP, 24 numbers), with
  its peak memory;
- the straightforward algorithm the official eval.py runs: a per-image Python suppression loop
  (tests/reference/ovdeval_nms.py) followed by pycocotools COCOeval, with its peak memory, and
  checks that its 12 NMS stats equal vlbench's.

The official script itself is quoted by the issue at ~12 s and 1 GB on such a sub-dataset. With
``--official CHECKOUT`` (a clone of om-ai-lab/OVDEval, whose eval.py needs only numpy and
pycocotools), that eval.py is also run once as a whole process on the same files, its 12 printed
stats (3 decimals) checked against vlbench's NMS stats, and the measured ratio printed beside the
quoted one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from _timing import best_process_run, printed_stats, process_run  # noqa: E402

OFFICIAL_QUOTED = (12.0, 1.0 * 1024**3)


def child_baseline(gt_path: str, pred_path: str, out_path: str) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    from reference import ovdeval_nms

    t0 = time.perf_counter()
    gt = json.loads(Path(gt_path).read_text())
    preds = json.loads(Path(pred_path).read_text())
    kept = ovdeval_nms.suppress(gt["annotations"], preds)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(gt_path)
        ev = COCOeval(coco, coco.loadRes(kept), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    Path(out_path).write_text(
        json.dumps(
            {
                "stats": ev.stats.tolist(),
                "seconds": time.perf_counter() - t0,
                "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=2_000)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument(
        "--official", metavar="CHECKOUT", help="a clone of om-ai-lab/OVDEval: run its eval.py too"
    )
    args = ap.parse_args()
    if args.child:
        return child_baseline(*args.child)

    from vlbench.benchmarks.ovdeval import synthetic

    with tempfile.TemporaryDirectory() as tmp:
        gt_path, pred_path = Path(tmp) / "material.json", Path(tmp) / "preds.json"
        data = synthetic.make_subset(args.images, seed=0, boxes_per_image=4.0)
        preds = synthetic.make_predictions(
            data, seed=1, hard_negatives=8, duplicates=4, background=55
        )
        gt_path.write_text(json.dumps(data))
        pred_path.write_text(json.dumps(preds))
        print(
            f"OVDEval synthetic sub-dataset: {args.images:,} images, {len(data['categories'])} "
            f"categories, {len(data['annotations']):,} GT boxes, {len(preds):,} predictions"
        )
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "vlbench", "score", "ovdeval", "--references", str(gt_path),
               "--predictions", str(pred_path), "--quiet", "--output", str(out)]
        seconds, peak = best_process_run(cmd)
        ours = json.loads(out.read_text())
        base_out = Path(tmp) / "base.json"
        subprocess.run(
            [sys.executable, __file__, "--child", str(gt_path), str(pred_path), str(base_out)],
            check=True,
        )
        base = json.loads(base_out.read_text())
        keys = [
            f"NMS_{k}"
            for k in (
                "AP",
                "AP50",
                "AP75",
                "AP_small",
                "AP_medium",
                "AP_large",
                "AR1",
                "AR10",
                "AR100",
                "AR_small",
                "AR_medium",
                "AR_large",
            )
        ]
        same = all(
            (v == -1 and ours["metrics"][k] is None) or abs(ours["metrics"][k] - v * 100) < 1e-9
            for k, v in zip(keys, base["stats"])
        )
        print(
            f"  vlbench score (NMS-AP and AP, whole process)  {seconds:7.2f} s   peak "
            f"{peak / 1024**3:5.2f} GB (best of 3)"
        )
        print(
            f"  per-image Python suppression + pycocotools    {base['seconds']:7.2f} s   peak "
            f"{base['maxrss'] / 1024**3:5.2f} GB   -> {base['seconds'] / seconds:.1f}x; same 12 "
            f"NMS stats: {same}"
        )
        print(
            f"  official eval.py (quoted by the issue)        {OFFICIAL_QUOTED[0]:7.2f} s   peak "
            f"{OFFICIAL_QUOTED[1] / 1024**3:5.2f} GB   -> {OFFICIAL_QUOTED[0] / seconds:.1f}x"
        )
        print(
            f"  suppression: {ours['breakdowns']['suppression']['before']:,} -> "
            f"{ours['breakdowns']['suppression']['after']:,}"
            f" predictions, {ours['breakdowns']['suppression']['tie_decisions']} tie decisions"
        )
        if not same:
            raise SystemExit("vlbench and the straightforward algorithm disagree")
        if args.official:
            official(
                Path(args.official) / "eval.py",
                gt_path,
                pred_path,
                Path(tmp) / "official",
                ours,
                keys,
                seconds,
            )


def official(script: Path, gt_path: Path, pred_path: Path, out: Path, ours: dict, keys: list[str],
             seconds: float) -> None:
    """Run the official eval.py once (a whole process) and print its time against vlbench's; its 12
    printed stats (pycocotools' summary, 3 decimals) must be vlbench's NMS stats rounded."""
    took, peak, printed = process_run(
        [
            sys.executable,
            str(script),
            "--gt-path",
            str(gt_path),
            "--result-path",
            str(pred_path),
            "--output-path",
            str(out),
        ]
    )
    stats = printed_stats(printed)
    same = len(stats) == 12 and all(
        (v == -1 and ours["metrics"][k] is None)
        or (ours["metrics"][k] is not None and abs(ours["metrics"][k] / 100 - v) <= 5e-4 + 1e-12)
        for k, v in zip(keys, stats)
    )
    print(f"  official eval.py (run here, {script})  {took:7.2f} s   peak {peak / 1024**3:5.2f} GB"
          f"   -> {took / seconds:.1f}x; its 12 printed stats = vlbench's: {same}")
    if not same:
        raise SystemExit("vlbench and the official eval.py disagree")


if __name__ == "__main__":
    main()
