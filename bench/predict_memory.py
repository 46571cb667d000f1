"""Peak memory of a whole `vlbench predict` process as the split grows (#31: flat in the split's
size).

    python bench/predict_memory.py [--small 500] [--large 5000]

Two synthetic Ref-L4 splits with one 640x480 image per row (the worst case for memory: no image
shared), built into Hub folders, then `vlbench predict ref_l4` with a tiny random OWL-ViT
(tests/tiny_models.py, offline) over every row of each, in its own process, its /proc status polled
every 20 ms. Prints each run's peak anonymous memory (what the process holds: RssAnon), peak
resident set (VmRSS, which also counts the pages of the memory-mapped dataset the process has read:
page cache the kernel reclaims under pressure) and wall time, and the ratios large / small (goal: <=
1.2). Before #31 the loop decoded every item's image up front: about 0.92 MB more per 640x480 row
(RGB), so the large split would have needed ~4 GB more anonymous memory than the small one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def peak_memory(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RssAnon bytes, peak VmRSS bytes) of ``cmd``, polling /proc/<pid>/status every
    20 ms."""
    import subprocess
    import time

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    anon = rss = 0
    while proc.poll() is None:
        try:
            fields = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
            )
            anon = max(anon, int(fields["RssAnon"].split()[0]) * 1024)
            rss = max(rss, int(fields["VmRSS"].split()[0]) * 1024)
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(0.02)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode})")
    return time.perf_counter() - start, anon, rss


def build_split(folder: Path, rows: int) -> Path:
    """A Ref-L4 release of ``rows`` rows, one noisy 640x480 image each, built into a Hub folder."""
    from vlbench.benchmarks.ref_l4 import synthetic
    from vlbench.library import api

    data = synthetic.make_rows(rows, seed=0, n_images=rows, image_size=(640, 480))
    synthetic.make_release(folder / "raw", data, noise=True)
    api.build("ref_l4", folder / "raw", folder / "hub")
    return folder / "hub"


def main() -> None:
    """Build both splits, run predict on each, print the peaks and their ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=500)
    ap.add_argument("--large", type=int, default=5000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import tiny_owlvit

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = tiny_owlvit(root / "owl")
        peaks = {}
        for n in (args.small, args.large):
            hub = build_split(root / f"split{n}", n)
            out = root / f"preds{n}.json"
            cmd = [
                sys.executable,
                "-m",
                "vlbench",
                "predict",
                "ref_l4",
                "--model",
                str(model),
                "--data",
                str(hub),
                "--split",
                "all",
                "--out",
                str(out),
                "--device",
                "cpu",
                "--batch-size",
                "8",
                "--overwrite",
            ]
            seconds, anon, rss = peak_memory(cmd)
            entries = len(json.loads(out.read_text()))
            peaks[n] = (anon, rss)
            print(
                f"{n:>6,} rows  peak anonymous {anon / 2**20:8.1f} MiB  peak resident "
                f"{rss / 2**20:8.1f} MiB  {seconds:7.1f} s  ({entries:,} predictions)"
            )
        (a_small, r_small), (a_large, r_large) = peaks[args.small], peaks[args.large]
        print(
            f"ratio large / small: anonymous {a_large / a_small:.3f} (goal <= 1.2), resident "
            f"{r_large / r_small:.3f}"
        )


if __name__ == "__main__":
    main()
