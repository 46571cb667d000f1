"""Each detection benchmark's whole `vlbench score` against the time to merely parse its input files
(#32).

    python bench/parse_floor.py [--pairs 5] [--only omnilabel|ovdeval|ref_l4]

The inputs are those of the per-benchmark benches at full benchmark scale (bench/omnilabel.py:
12,000 images, ~1,000,000 detections; bench/ovdeval.py: one sub-dataset of 2,000 images, ~195,000
predictions; bench/ref_l4.py: 45,341 rows). Per round, interleaved:

- the floor: a fresh process that imports orjson and parses every JSON input with it (Ref-L4's
  references are a Parquet file: read with ``pyarrow.parquet.read_table``);
- the whole `vlbench score <id> --quiet --output ...` process.

The ratio score / floor is taken per round and its median printed (the goal of #32: <= 1.5).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import compile_like_an_install

FLOOR = """
import sys, orjson
for path in sys.argv[1:]:
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq
        pq.read_table(path)
    else:
        orjson.loads(open(path, "rb").read())
"""


def make_inputs(bench: str, folder: Path) -> tuple[Path, Path]:
    """(references, predictions) at the scale of ``bench/<bench>.py``."""
    refs, preds = folder / "refs.json", folder / "preds.json"
    if bench == "omnilabel":
        from vlbench.benchmarks.omnilabel import synthetic as s
        data = s.make_dataset(12_000, seed=0, boxes_per_image=2.1)
        refs.write_text(json.dumps(data))
        preds.write_text(
            json.dumps(s.make_predictions(data, seed=1, extra_per_box=25, background_per_image=20))
        )
    elif bench == "ovdeval":
        from vlbench.benchmarks.ovdeval import synthetic as o
        data = o.make_subset(2_000, seed=0, boxes_per_image=4.0)
        refs.write_text(json.dumps(data))
        preds.write_text(
            json.dumps(
                o.make_predictions(data, seed=1, hard_negatives=8, duplicates=4, background=55)
            )
        )
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from vlbench.benchmarks.ref_l4 import synthetic as r
        rows = r.make_rows(45_341, seed=0, n_images=45_341 // 4 + 1)
        refs = folder / "refs.parquet"
        pq.write_table(pa.Table.from_pylist(rows), refs)
        preds.write_text(json.dumps(r.make_predictions(rows, quality="good", seed=1)))
    return refs, preds


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--only", choices=("omnilabel", "ovdeval", "ref_l4"))
    args = parser.parse_args()
    compile_like_an_install()
    for bench in [args.only] if args.only else ["omnilabel", "ovdeval", "ref_l4"]:
        with tempfile.TemporaryDirectory() as tmp:
            refs, preds = make_inputs(bench, Path(tmp))
            floor = [sys.executable, "-c", FLOOR, str(refs), str(preds)]
            score = [sys.executable, "-m", "vlbench", "score", bench, "--references", str(refs),
                     "--predictions", str(preds), "--quiet", "--output", str(Path(tmp) / "r.json")]
            # warm the file cache
            timed(floor), timed(score)
            pairs = [(timed(floor), timed(score)) for _ in range(args.pairs)]
        ratios = [s / f for f, s in pairs]
        print(
            f"{bench:10} floor {statistics.median(f for f, _ in pairs):6.2f} s   score "
            f"{statistics.median(s for _, s in pairs):6.2f} s   score / floor: median "
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}, {args.pairs} "
            "pairs)"
        )


if __name__ == "__main__":
    main()
