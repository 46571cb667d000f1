"""Bootstrap speed: 1,000 resamples at validation scale, next to the naive bootstrap (a full
evaluation per resample).

    python bench/uncertainty.py [--resamples 1000] [--naive 3] [--only nocaps|omnilabel]

- nocaps: 4,500 synthetic images x 10 references (the size of nocaps val), every metric but SPICE,
  METEOR included when Java is present (its per-image statistics come from the one scoring run).
- OmniLabel: the val-scale set of bench/omnilabel.py (12,000 images, ~1,000,000 detections).

For each: the scoring run, then ``add_intervals`` with 1,000 resamples (timed alone), then
``--naive`` resamples done the straightforward way: the drawn images physically copied into a new
reference / prediction set and scored from scratch; its mean time x 1,000 is the naive bootstrap,
printed as a ratio. Goal of issue #8: under 30 s for 1,000 resamples on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import vlbench
from vlbench.engine import uncertainty as U


def _timed(score, resamples: int, metric: str, title: str) -> tuple[object, float]:
    """Score once, then time ``add_intervals`` alone; print both."""
    t0 = time.perf_counter()
    result = score()
    scored = time.perf_counter() - t0
    t0 = time.perf_counter()
    U.add_intervals(result, 0.95, resamples=resamples)
    fast = time.perf_counter() - t0
    iv = result.breakdowns["confidence_intervals"]["metrics"][metric]
    print(f"{title}; scoring {scored:.1f} s")
    print(
        f"  {resamples} resamples, every metric: {fast:.1f} s  ({metric} "
        f"{result.metrics[metric]:.2f} [{iv['low']:.2f}, {iv['high']:.2f}])"
    )
    return result, fast


def _naive_report(seconds: float, naive: int, resamples: int, fast: float) -> None:
    per = seconds / naive
    print(f"  naive bootstrap (copy the drawn images, score again): {per:.1f} s per resample, "
          f"{per * resamples / 60:.0f} min for {resamples} -> {per * resamples / fast:.0f}x slower")


def _nocaps(resamples: int, naive: int) -> None:
    from vlbench.benchmarks.nocaps import synthetic
    from vlbench.benchmarks.nocaps.reader import parse_official
    from vlbench.engine.captions.meteor import meteor_available

    data = synthetic.make_dataset(4500, seed=0)
    preds = synthetic.make_predictions(data, seed=1, quality="poor")
    gt = parse_official(data)
    meteor = meteor_available()[0]
    _, fast = _timed(
        lambda: vlbench.score("nocaps", gt, preds, meteor=meteor, spice=False),
        resamples,
        "CIDEr",
        f"nocaps: 4,500 images, METEOR {'on' if meteor else 'off (no Java)'}",
    )
    weights = U.draw_weights((len(gt.image_ids),), naive, seed=0)
    by_image = {}
    for a in data["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    cap = {p["image_id"]: p["caption"] for p in preds}
    t0 = time.perf_counter()
    for w in weights:
        images, anns, ps = [], [], []
        for img, k in zip(data["images"], w.astype(int)):
            for _ in range(k):
                new = len(images)
                images.append({**img, "id": new})
                anns += [
                    {**a, "image_id": new, "id": len(anns) + j}
                    for j, a in enumerate(by_image[img["id"]])
                ]
                ps.append({"image_id": new, "caption": cap[img["id"]]})
        vlbench.score(
            "nocaps",
            parse_official({"images": images, "annotations": anns}),
            ps,
            meteor=meteor,
            spice=False,
        )
    _naive_report(time.perf_counter() - t0, naive, resamples, fast)


def _omnilabel(resamples: int, naive: int) -> None:
    from vlbench.benchmarks.omnilabel import synthetic
    from vlbench.benchmarks.omnilabel.reader import parse_official

    data = synthetic.make_dataset(12000, seed=0, boxes_per_image=2.1)
    preds = synthetic.make_predictions(data, seed=1, extra_per_box=25, background_per_image=20)
    gt = parse_official(data)
    _, fast = _timed(lambda: vlbench.score("omnilabel", gt, preds, details=False), resamples, "AP",
                     "OmniLabel: 12,000 images, ~1,000,000 detections")
    weights = U.draw_weights((len(gt.image_ids),), naive, seed=0)
    boxes = {}
    for a in data["annotations"]:
        boxes.setdefault(a["image_id"], []).append(a)
    dets = {}
    for p in preds:
        dets.setdefault(p["image_id"], []).append(p)
    t0 = time.perf_counter()
    for w in weights:
        images, anns, ps, copies = [], [], [], {}
        for img, k in zip(data["images"], w.astype(int)):
            for _ in range(k):
                new = len(images) + 1
                copies.setdefault(img["id"], []).append(new)
                images.append({**img, "id": new})
                anns += [
                    {**a, "image_id": new, "id": len(anns) + j + 1}
                    for j, a in enumerate(boxes.get(img["id"], []))
                ]
                ps += [{**p, "image_id": new} for p in dets.get(img["id"], [])]
        descriptions = [{**d, "image_ids": [n for i in d["image_ids"] for n in copies.get(i, [])]}
                        for d in data["descriptions"]]
        copy = {**data, "images": images, "annotations": anns,
                "descriptions": [d for d in descriptions if d["image_ids"]]}
        vlbench.score("omnilabel", parse_official(copy), ps, details=False)
    _naive_report(time.perf_counter() - t0, naive, resamples, fast)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--naive", type=int, default=3, help="naive resamples to time (default 3)")
    ap.add_argument("--only", choices=("nocaps", "omnilabel"), default=None)
    args = ap.parse_args()
    np.seterr(all="ignore")
    if args.only in (None, "nocaps"):
        _nocaps(args.resamples, args.naive)
    if args.only in (None, "omnilabel"):
        _omnilabel(args.resamples, args.naive)


if __name__ == "__main__":
    main()
