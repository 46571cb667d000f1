"""The ``--server`` client's throughput (#56): N items against a local fake OpenAI-compatible server
(tests/fake_server.py) that answers after a fixed latency, or after one drawn from a long-tailed (log-normal)
distribution, with ``--concurrency 8``. Prints each run's wall time over the ideal (the sum of the latencies divided
by the concurrency: what a window that never idles gives), the two runs interleaved A B A B, and the median.

    python bench/serving.py [--items 1000] [--latency 0.2] [--pairs 2]

The client keeps a sliding window of requests over the whole run, so ``--batch-size`` no longer enters a served
run (vlbench.predict sends served items through ``serving.answers_as_completed``, not in batches).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_server import serve
from vlbench.benchmarks.protocol.predicting import PredictItem
from vlbench.predict import serving
from vlbench.predict.families import OTHER
from vlbench.predict.models import ModelInfo

CONCURRENCY = 8


def run(items: int, latencies: np.ndarray) -> float:
    """Wall time over the ideal for one run whose k-th request waits ``latencies[k]``."""
    lock, count = threading.Lock(), iter(range(len(latencies)))

    def latency() -> float:
        with lock:
            return float(latencies[next(count)])

    image = Image.new("RGB", (64, 64))
    work = [PredictItem(key=str(i), image=image, queries=("q",)) for i in range(items)]
    with serve(latency=latency) as (url, _):
        served = serving.ServedModel(url, "fake", None, CONCURRENCY, ModelInfo("image-text-to-text", "served", OTHER))
        start = time.perf_counter()
        answers = dict(serving.answers_as_completed(served, work, ["q"] * items, max_new_tokens=16))
        wall = time.perf_counter() - start
    assert len(answers) == items
    return wall / (latencies.sum() / CONCURRENCY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request (the long tail's median)")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    fixed = np.full(args.items, args.latency)
    tailed = args.latency * rng.lognormal(0.0, 1.0, args.items)       # median = latency, mean ~1.65 x, a long tail
    ratios: dict[str, list[float]] = {"fixed": [], "long-tailed": []}
    for _ in range(args.pairs):                                        # interleaved: A B A B
        ratios["fixed"].append(run(args.items, fixed))
        ratios["long-tailed"].append(run(args.items, tailed))
    for name, got in ratios.items():
        print(f"{name:>12}: wall / ideal median {statistics.median(got):.3f} (min {min(got):.3f}, max {max(got):.3f}),"
              f" {args.items} items, concurrency {CONCURRENCY}")


if __name__ == "__main__":
    main()
