"""What one Space request costs in memory per JSON value of its upload, per benchmark, against the
Space's estimate.

    python bench/space_memory.py [--values 1500000]

For each benchmark, writes an upload of about ``--values`` JSON values (entries on the bundled
sample's images, so that scoring and the viewer do their real work), then, in a fresh process per
benchmark: loads the app's modules and the references, records the resident size, scores the upload
the way the Space does (reading with its limits, scoring, the viewer's scenes) and reads the peak
resident size (VmHWM). Prints bytes per value and its ratio to ``vlbench.space.BYTES_PER_VALUE``
(must stay below 1 for the per-request budget to hold).

nocaps is left out: its uploads are bounded by 15,100 entries (one caption per image, unknown images
refused), and its caption metrics run in Java processes of their own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, sys
from pathlib import Path

def rss(field):
    lines = Path("/proc/self/status").read_text().splitlines()
    return int(next(l.split()[1] for l in lines if l.startswith(field))) * 1024

from vlbench import space
from vlbench.library import api
from vlbench.benchmarks import get_benchmark
from vlbench.engine.io import json_values_bound
bench_id, subset, upload = sys.argv[1:4]
bench = get_benchmark(bench_id)
refs = api.load_references(bench_id, space.sample_references(bench_id, subset),
                           split=bench.require_showcase().options(subset).get("split"))
# warm: imports, caches
space._score(bench_id, subset, space.example_predictions(bench_id, "good", subset))
import gc; gc.collect()
base = rss("VmRSS:")
Path("/proc/self/clear_refs").write_text("5")            # reset VmHWM to the current size
result, refs, preds, refs_path = space._score(bench_id, subset, upload)
state = space.viewer_state(bench_id, refs, preds, result, refs_path)
values = json_values_bound(Path(upload).read_bytes()) + 1
print(json.dumps({"values": values, "peak_growth": rss("VmHWM:") - base}))
"""


def upload(bench: str, values: int, folder: Path) -> tuple[str, Path]:
    """(Space choice, upload path) of about ``values`` JSON values for ``bench``."""
    rng = np.random.default_rng(0)
    box = lambda: [round(float(v), 1) for v in rng.uniform(1, 200, 4)]  # noqa: E731
    if bench == "ref_l4":
        entries = [{"id": i, "pred_bbox": box(), "format": "xywh"} for i in range(values // 8)]
        return "all", _write(folder / "ref_l4.json", entries)
    from vlbench.space import sample_references

    if bench == "omnilabel":
        gt = json.loads(Path(sample_references("omnilabel")).read_text())
        images = [im["id"] for im in gt["images"]]
        descr = [d["id"] for d in gt["descriptions"]]
        entries = [
            {
                "image_id": images[i % len(images)],
                "bbox": box(),
                "description_ids": descr[:3],
                "scores": [round(float(s), 3) for s in rng.uniform(0, 1, 3)],
            }
            for i in range(values // 16)
        ]
        return "validation", _write(folder / "omnilabel.json", entries)
    gt = json.loads(Path(sample_references("ovdeval", "color")).read_text())
    images = [im["id"] for im in gt["images"]]
    cats = [c["id"] for c in gt["categories"]]
    entries = [
        {
            "image_id": images[i % len(images)],
            "category_id": cats[i % len(cats)],
            "bbox": box(),
            "score": round(float(rng.uniform()), 3),
        }
        for i in range(values // 9)
    ]
    return "color", _write(folder / "color.json", entries)


def _write(path: Path, entries: list) -> Path:
    path.write_text(json.dumps(entries))
    return path


def main() -> None:
    from vlbench.space import BYTES_PER_VALUE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=1_500_000)
    args = parser.parse_args()
    print(
        "| benchmark | values | peak growth | bytes per value | ratio to "
        f"BYTES_PER_VALUE={BYTES_PER_VALUE} |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for bench in ("ref_l4", "omnilabel", "ovdeval"):
            from vlbench.benchmarks import get_benchmark

            cap = get_benchmark(bench).require_showcase().max_prediction_values
            subset, path = upload(bench, min(args.values, int(0.9 * cap)), Path(tmp))
            out = subprocess.run(
                [sys.executable, "-c", CHILD, bench, subset, str(path)],
                capture_output=True,
                text=True,
                env={"VLBENCH_SPACE_MEMORY_MB": "100000", **__import__("os").environ},
            )
            if out.returncode:
                print(f"| {bench} | failed: {out.stderr.strip().splitlines()[-1]} |")
                continue
            got = json.loads(out.stdout.strip().splitlines()[-1])
            per = got["peak_growth"] / got["values"]
            print(
                f"| {bench} | {got['values']:,} | {got['peak_growth'] / 1024**2:.0f} MiB | "
                f"{per:.0f} | {per / BYTES_PER_VALUE:.2f} |"
            )


if __name__ == "__main__":
    main()
