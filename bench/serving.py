"""The ``--server`` client on real images (#67): 1,000 Ref-L4 rows of photo-like 640x480 JPEGs
(gradients with noise, ~60-90 KB each, not flat colours) built into a Hub folder and read as
``vlbench predict`` reads it, sent to a local fake OpenAI-compatible server (tests/fake_server.py,
in a child process so that its work is not the client's) that answers after a fixed latency. For
concurrency 8 and 32, interleaved A B A B, prints the wall time over the latency-bound ideal (N x
latency / concurrency), the mean requests in flight (the sum of the latencies over the wall time)
and the client's CPU per item (this process: reading the cell, base64, JSON, HTTP).

    python bench/serving.py [--items 1000] [--latency 0.2] [--pairs 2]
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1] / "tests"

#: the fake server in a child process: prints its URL, serves until its stdin closes
_SERVER = f"""
import sys, time
sys.path.insert(0, {str(TESTS)!r})
from fake_server import serve
with serve(latency=lambda: {{latency}}) as (url, fake):
    print(url, flush=True)
    sys.stdin.read()
"""


def photo_like(rng: np.random.Generator, width: int = 640, height: int = 480) -> bytes:
    """A JPEG (quality 85) of a smooth two-colour gradient with Gaussian noise (sigma 12):
    compresses like a photo."""
    from PIL import Image

    a, b = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    t = np.linspace(0.0, 1.0, width)[None, :, None] * np.linspace(0.5, 1.0, height)[:, None, None]
    pixels = a + (b - a) * t + rng.normal(0.0, 12.0, (height, width, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def built_folder(root: Path, items: int) -> Path:
    """A Ref-L4 release of ``items`` rows, one photo-like image each, built with ``vlbench
    build``."""
    from vlbench.benchmarks.ref_l4 import synthetic
    from vlbench.library import api

    rows = synthetic.make_rows(
        items, seed=1, n_images=items, image_size=(640, 480), val_fraction=0.0
    )
    release = synthetic.make_release(root / "raw", rows, archive=False)
    rng = np.random.default_rng(0)
    for image in sorted((release / "images").iterdir()):
        image.write_bytes(photo_like(rng))
    api.build("ref_l4", release, root / "hub")
    return root / "hub"


def run(folder: Path, concurrency: int, latency: float) -> tuple[float, float, float]:
    """(wall / ideal, mean in flight, client CPU ms per item) of one run over every row of
    ``folder``."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import serving
    from vlbench.predict.data import load_data
    from vlbench.predict.families import OTHER
    from vlbench.predict.models import ModelInfo

    data, _ = load_data("ref_l4", folder, split="test")
    items = list(get_benchmark("ref_l4").require_predictor().items(data, "image-text-to-text"))
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER.format(latency=latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        served = serving.ServedModel(
            url, "fake", None, concurrency, ModelInfo("image-text-to-text", "served", OTHER)
        )
        cpu, start = time.process_time(), time.perf_counter()
        answers = dict(
            serving.answers_as_completed(served, items, ["q"] * len(items), max_new_tokens=16)
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        server.stdin.close()
        server.wait()
    assert len(answers) == len(items)
    ideal = len(items) * latency / concurrency
    return wall / ideal, len(items) * latency / wall, 1000 * cpu / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = built_folder(Path(tmp), args.items)
        sizes = [p.stat().st_size for p in (Path(tmp) / "raw" / "images").iterdir()]
        print(
            f"{args.items} photo-like 640x480 JPEGs, median {statistics.median(sizes) / 1024:.0f} "
            f"KiB, latency {args.latency * 1000:.0f} ms"
        )
        got: dict[int, list[tuple[float, float, float]]] = {8: [], 32: []}
        for _ in range(args.pairs):                              # interleaved: A B A B
            for concurrency in got:
                got[concurrency].append(run(folder, concurrency, args.latency))
        for concurrency, runs in got.items():
            ratio, flight, cpu = (statistics.median(r[k] for r in runs) for k in range(3))
            print(
                f"concurrency {concurrency:>2}: wall / ideal {ratio:.3f} (min "
                f"{min(r[0] for r in runs):.3f}, max {max(r[0] for r in runs):.3f}), in flight "
                f"{flight:.1f} of {concurrency}, client CPU {cpu:.2f} ms per item"
            )


if __name__ == "__main__":
    main()
