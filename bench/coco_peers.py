"""Plain COCO bbox evaluation, whole process, against the COCO engines people pick (#32).

    python bench/coco_peers.py [--pairs 5] [--venv ~/.cache/vlbench-bench/coco-peers]

One synthetic COCO bbox set (2,000 images, ~15,100 GT boxes in 80 categories, 200,000 detections:
half jittered copies of a GT box, a fifth of those relabelled, the rest background; seed 0) goes
through each engine in a process of its own, timed from start to exit (interpreter start, imports,
reading both JSON files, evaluate, accumulate, summarize), peak memory from the child's
``ru_maxrss``:

- pycocotools 2.0.11, faster-coco-eval 1.8.0 (C++), hotcoco 1.3.0 (Rust), ultrafast-pycocotools
  0.1.14 (Rust), each through its pycocotools-style API, installed by this script into a scratch
  virtual environment (never a project dependency; the first run needs the package index);
- ``vlbench.library.coco.evaluate_files`` in this interpreter.

Every engine's twelve stats must equal pycocotools', and vlbench's precision array must be
bit-identical to pycocotools' (SHA-256 of the float64 array; printed for every engine). The fast
engines run ``--pairs`` rounds, in an order that rotates each round, and the ratio (fastest of
hotcoco and ultrafast-pycocotools) / vlbench is taken per round: its median and spread are the
result (>= 1.0 means vlbench is at least as fast). pycocotools and faster-coco-eval run in the first
round only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import compile_like_an_install

#: engine -> the package pinned in the scratch venv (None: this interpreter's vlbench)
PEERS = {"pycocotools": "pycocotools==2.0.11", "faster-coco-eval": "faster-coco-eval==1.8.0",
         "hotcoco": "hotcoco==1.3.0", "ultrafast-pycocotools": "ultrafast-pycocotools==0.1.14"}
SLOW = ("pycocotools", "faster-coco-eval")
FAST = ("hotcoco", "ultrafast-pycocotools")

#: each peer's COCO and COCOeval, through the pycocotools-style API every one of them offers
IMPORTS = {
    "pycocotools": "from pycocotools.coco import COCO; from pycocotools.cocoeval import COCOeval "
                   "as E",
    "faster-coco-eval": "from faster_coco_eval import COCO, COCOeval_faster as E",
    "hotcoco": "from hotcoco import COCO, COCOeval as E",
    "ultrafast-pycocotools": "from ultrafast_pycocotools import COCO, COCOeval as E",
}

PEER_CHILD = """
import contextlib, hashlib, io, json, sys
import numpy as np
{imports}
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(sys.argv[1]); dt = gt.loadRes(sys.argv[2])
    ev = E(gt, dt, "bbox"); ev.evaluate(); ev.accumulate(); ev.summarize()
precision = np.ascontiguousarray(ev.eval["precision"], dtype=np.float64)
print(json.dumps({{"stats": [float(v) for v in ev.stats],
                  "precision": hashlib.sha256(precision).hexdigest()}}))
"""

VLBENCH_CHILD = """
import hashlib, json, sys
import numpy as np
from vlbench.library.coco import evaluate_files
res = evaluate_files(sys.argv[1], sys.argv[2])
precision = np.ascontiguousarray(res.precision, dtype=np.float64)
print(json.dumps({"stats": list(res.stats.values()),
                  "precision": hashlib.sha256(precision).hexdigest()}))
"""


def make_set(
    folder: Path, n_images: int = 2000, n_dets: int = 200_000, seed: int = 0
) -> tuple[Path, Path]:
    """The synthetic instances and results files (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    images = [
        {"id": i + 1, "width": 640, "height": 480, "file_name": f"{i + 1}.jpg"}
        for i in range(n_images)
    ]
    categories = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(80)]
    anns, boxes = [], {}
    for i, count in enumerate(rng.poisson(7.55, n_images)):
        for _ in range(count):
            w, h = rng.uniform(4, 300), rng.uniform(4, 300)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            c = int(rng.integers(1, 81))
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i + 1,
                    "category_id": c,
                    "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                    "area": round(w * h, 2),
                    "iscrowd": int(rng.random() < 0.01),
                }
            )
            boxes.setdefault(i + 1, []).append((c, x, y, w, h))
    dets = []
    for i in rng.integers(1, n_images + 1, n_dets).tolist():
        if boxes.get(i) and rng.random() < 0.5:
            c, x, y, w, h = boxes[i][int(rng.integers(len(boxes[i])))]
            x, y = x + rng.normal(0, 5), y + rng.normal(0, 5)
            w, h = w * rng.uniform(0.8, 1.2), h * rng.uniform(0.8, 1.2)
            c = int(rng.integers(1, 81)) if rng.random() < 0.2 else c
        else:
            c, w, h = int(rng.integers(1, 81)), rng.uniform(4, 300), rng.uniform(4, 300)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
        dets.append(
            {
                "image_id": i,
                "category_id": c,
                "bbox": [round(float(v), 2) for v in (x, y, w, h)],
                "score": round(float(rng.random()), 4),
            }
        )
    gt, dt = folder / "instances.json", folder / "results.json"
    gt.write_text(json.dumps({"images": images, "annotations": anns, "categories": categories}))
    dt.write_text(json.dumps(dets))
    return gt, dt


def scratch_venv(path: Path) -> Path:
    """The scratch venv's python, with the peers installed (created on first use)."""
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    missing = [spec for spec in PEERS.values()
               if subprocess.run([str(python), "-m", "pip", "show", "-q", spec.split("==")[0]],
                                 capture_output=True).returncode]
    if missing:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "numpy", *missing], check=True)
    return python


def run_child(cmd: list[str]) -> tuple[float, int, dict]:
    """(wall seconds, peak resident bytes, what the child printed) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()   # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{cmd[0]} failed:\n{err[-2000:]}")
    return seconds, usage.ru_maxrss * 1024, json.loads(out.strip().splitlines()[-1])


def main() -> None:
    """Build the set, run every engine, check their stats and precision arrays, print the table and
    the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument(
        "--venv", type=Path, default=Path.home() / ".cache" / "vlbench-bench" / "coco-peers"
    )
    args = ap.parse_args()
    compile_like_an_install()
    python = scratch_venv(args.venv)
    commands = {
        name: [str(python), "-c", PEER_CHILD.format(imports=IMPORTS[name])] for name in PEERS
    }
    commands["vlbench"] = [sys.executable, "-c", VLBENCH_CHILD]
    with tempfile.TemporaryDirectory() as tmp:
        files = [str(p) for p in make_set(Path(tmp))]
        times: dict[str, list[float]] = {name: [] for name in commands}
        memory: dict[str, int] = {}
        outputs: dict[str, dict] = {}
        fast = ["vlbench", *FAST]
        ratios = []
        for round_ in range(args.pairs):
            order = fast[round_ % len(fast):] + fast[:round_ % len(fast)]
            for name in (list(SLOW) if round_ == 0 else []) + order:
                seconds, peak, output = run_child(commands[name] + files)
                times[name].append(seconds)
                memory[name] = max(memory.get(name, 0), peak)
                outputs[name] = output
            ratios.append(min(times[n][-1] for n in FAST) / times["vlbench"][-1])
    reference = outputs["pycocotools"]
    print(
        f"{'engine':<24}{'whole process, median (runs)':>30}{'peak memory':>14}  stats = "
        "pycocotools  precision bit-identical"
    )
    for name in commands:
        same_stats = outputs[name]["stats"] == reference["stats"]
        same_precision = outputs[name]["precision"] == reference["precision"]
        print(
            f"{name:<24}{statistics.median(times[name]):>24.2f} s "
            f"({len(times[name])}){memory[name] / 2**20:>10.0f} MiB"
            f"  {str(same_stats):<20} {same_precision}"
        )
        if not same_stats or (name == "vlbench" and not same_precision):
            raise SystemExit(f"{name} differs from pycocotools")
    print(
        f"ratio fastest of {' / '.join(FAST)} over vlbench, per round: median "
        f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}; >= 1.0: "
        "vlbench at least as fast)"
    )


if __name__ == "__main__":
    main()
