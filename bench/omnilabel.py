"""OmniLabel scoring speed and memory at validation scale, next to pycocotools doing the same
matching.

    python bench/omnilabel.py [--images 12000] [--skip-baseline]

1. Generates a synthetic val-scale set: 12,000 images, 10-40 label-space entries each, ~25,000 GT
   boxes, ~1,000,000 (box, description, score) detections.
2. Times the whole `vlbench score omnilabel` process and reads its peak memory (ru_maxrss).
3. Runs pycocotools COCOeval on the same detections with every (image, description) pair as an
   "image" of a single category (the per-pair matching OmniLabelEval delegates to pycocotools,
   pooled into one ranking), times it, and checks that the vlbench engine gives the same precision
   and recall arrays for that pooling.

The official evaluator (omnilabeltools, not on PyPI) is quoted by the issue at ~85 s and 3.2 GB for
such a set on 2 cores. With ``--official CHECKOUT`` (a clone of samschulter/omnilabeltools: pure
Python on pycocotools, nothing to build), its ``oleval`` is also run once as a whole process on the
same files, its 13 printed numbers (5 decimals) checked against vlbench's metrics, and the measured
ratio printed beside the quoted one. (The generated set's ``info`` carries a ``url``, which
omnilabeltools reads from a file named OmniLabel.)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_process_run, printed_stats, process_run

OFFICIAL_QUOTED = (85.0, 3.2 * 1024**3)


def child_baseline(gt_path: str, pred_path: str, out_path: str) -> None:
    """pycocotools with pairs as images; writes its precision/recall and timings."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    from vlbench.benchmarks.omnilabel.reader import parse_official

    t0 = time.perf_counter()
    gt = parse_official(json.loads(Path(gt_path).read_text()))
    preds = json.loads(Path(pred_path).read_text())
    img_of = {int(i): k for k, i in enumerate(gt.image_ids)}
    pair_key = {(int(i), int(d)): p for p, (i, d) in enumerate(zip(gt.pair_image, gt.pair_descr))}
    coco = COCO()
    coco.dataset = {
        "images": [{"id": p + 1} for p in range(len(gt.pair_image))],
        "categories": [{"id": 1}],
        "annotations": [
            {
                "id": int(i) + 1,
                "image_id": int(p) + 1,
                "category_id": 1,
                "bbox": b.tolist(),
                "area": max(0.0, float(b[2] * b[3])),
                "iscrowd": int(c),
            }
            for i, (p, b, c) in enumerate(zip(gt.gt_pair, gt.gt_box, gt.gt_iscrowd))
        ],
    }
    dets = []
    for e in preds:
        k = img_of.get(e["image_id"])
        if k is None:
            continue
        for d, s in zip(e["description_ids"], e["scores"]):
            p = pair_key.get((k, d))
            if p is not None:
                dets.append({"image_id": p + 1, "category_id": 1, "bbox": e["bbox"], "score": s})
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
        res = coco.loadRes(dets)
        ev = COCOeval(coco, res, "bbox")
        ev.evaluate()
        ev.accumulate()
    seconds = time.perf_counter() - t0
    np.savez(out_path, precision=ev.eval["precision"], recall=ev.eval["recall"], seconds=seconds,
             maxrss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def engine_single_group(gt_path: str, pred_path: str):
    """The vlbench engine on the same pooling (all pairs, one group, ids as pycocotools sees
    them)."""
    from vlbench.benchmarks.omnilabel.reader import parse_official
    from vlbench.benchmarks.omnilabel.scorer import parse_predictions
    from vlbench.engine import cocoeval

    gt = parse_official(json.loads(Path(gt_path).read_text()))
    dets, _, _ = parse_predictions(json.loads(Path(pred_path).read_text()), gt)
    truth = cocoeval.GroundTruth(
        pair=gt.gt_pair,
        box_xywh=gt.gt_box,
        area=np.maximum(0, gt.gt_box[:, 2] * gt.gt_box[:, 3]),
        iscrowd=gt.gt_iscrowd,
        ann_id=np.arange(1, len(gt.gt_pair) + 1),
    )
    m = cocoeval.match(truth, dets, len(gt.pair_image))
    pairs = np.arange(len(gt.pair_image))
    precision, recall, _ = cocoeval.accumulate(m, pairs, np.zeros(len(pairs), np.int64), 1)
    return precision, recall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=12_000)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument(
        "--official",
        metavar="CHECKOUT",
        help="a clone of samschulter/omnilabeltools: run its oleval too",
    )
    args = ap.parse_args()
    if args.child:
        return child_baseline(*args.child)

    from vlbench.benchmarks.omnilabel import synthetic

    with tempfile.TemporaryDirectory() as tmp:
        gt_path, pred_path = Path(tmp) / "gt.json", Path(tmp) / "preds.json"
        data = synthetic.make_dataset(args.images, seed=0, boxes_per_image=2.1)
        # read by omnilabeltools' version check
        data["info"]["url"] = "https://www.omnilabel.org"
        preds = synthetic.make_predictions(data, seed=1, extra_per_box=25, background_per_image=20)
        gt_path.write_text(json.dumps(data))
        pred_path.write_text(json.dumps(preds))
        n_det = sum(len(p["scores"]) for p in preds)
        n_ls = sum(len(d["image_ids"]) for d in data["descriptions"])
        print(
            f"OmniLabel synthetic val-scale set: {args.images:,} images, {n_ls / args.images:.1f} "
            f"label-space entries per image, {len(data['annotations']):,} GT boxes, {len(preds):,} "
            f"predicted boxes, {n_det:,} (box, description, score) detections"
        )

        cmd = [sys.executable, "-m", "vlbench", "score", "omnilabel", "--references", str(gt_path),
               "--predictions", str(pred_path), "--quiet", "--output", str(Path(tmp) / "r.json")]
        seconds, peak = best_process_run(cmd)
        print(
            f"  vlbench score (whole process)     {seconds:7.2f} s   peak {peak / 1024**3:5.2f} GB "
            "  (best of 3)"
        )
        print(
            f"  official OmniLabelEval (quoted)   {OFFICIAL_QUOTED[0]:7.2f} s   peak "
            f"{OFFICIAL_QUOTED[1] / 1024**3:5.2f} GB   -> {OFFICIAL_QUOTED[0] / seconds:.0f}x "
            f"faster, {OFFICIAL_QUOTED[1] / peak:.1f}x less memory"
        )
        if args.official:
            official(
                Path(args.official),
                gt_path,
                pred_path,
                json.loads((Path(tmp) / "r.json").read_text()),
                seconds,
                peak,
            )
        if args.skip_baseline:
            return
        npz = Path(tmp) / "baseline.npz"
        subprocess.run(
            [sys.executable, __file__, "--child", str(gt_path), str(pred_path), str(npz)],
            check=True,
        )
        base = np.load(npz)
        t0 = time.perf_counter()
        precision, recall = engine_single_group(str(gt_path), str(pred_path))
        engine_seconds = time.perf_counter() - t0
        same = np.array_equal(precision, base["precision"]) and np.array_equal(
            recall, base["recall"]
        )
        print(
            "  pycocotools COCOeval, pairs as images, one pooled ranking (load + evaluate + "
            "accumulate):"
        )
        print(
            f"                                    {float(base['seconds']):7.2f} s   peak "
            f"{int(base['maxrss']) / 1024**3:5.2f} GB"
        )
        print(
            f"  vlbench engine, same pooling      {engine_seconds:7.2f} s   -> "
            f"{float(base['seconds']) / engine_seconds:.0f}x"
            f" faster; identical precision and recall arrays: {same}"
        )
        if not same:
            raise SystemExit("the engine and pycocotools disagree")


def official(
    checkout: Path, gt_path: Path, pred_path: Path, ours: dict, seconds: float, peak: int
) -> None:
    """Run omnilabeltools' ``oleval`` once (a whole process, the checkout on the path) and print its
    time and memory against vlbench's; its 13 printed numbers (5 decimals) must be vlbench's metrics
    rounded, in the same order."""
    run = (
        "import sys; from omnilabeltools.eval import main_cli; sys.argv = ['oleval', "
        f"'--path-to-gt', {str(gt_path)!r}, '--path-to-res', {str(pred_path)!r}]; main_cli()"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")]),
    }
    took, their_peak, printed = process_run([sys.executable, "-c", run], env=env)
    values = printed_stats(printed)
    mine = list(ours["metrics"].values())
    same = len(values) == len(mine) == 13 and all(
        (m is None and v == -1) or (m is not None and abs(m / 100 - v) <= 5e-6 + 1e-12)
        for m, v in zip(mine, values)
    )
    print(
        f"  official OmniLabelEval (run here) {took:7.2f} s   peak {their_peak / 1024**3:5.2f} "
        f"GB   -> {took / seconds:.0f}x faster, {their_peak / peak:.1f}x less memory; its 13 "
        f"printed numbers = vlbench's: {same}"
    )
    if not same:
        raise SystemExit("vlbench and the official OmniLabelEval disagree")


if __name__ == "__main__":
    main()
