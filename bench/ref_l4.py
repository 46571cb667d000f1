"""Ref-L4 scoring speed: the vectorised scorer vs a plain per-sample loop of the official algorithm,
and the whole `vlbench score` process on the full Ref-L4 size (45,341 rows, val + test).

    python bench/ref_l4.py [--rows 45341] [--repeat 5]

Prints times and ratios measured in this one run. The official `evaluate_pred.py` cannot be
installed here (its package is not on PyPI); the issue quotes ~7 s for it on this machine, and
that figure is printed as quoted, not measured.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from reference import ref_l4_loop  # noqa: E402
from vlbench.benchmarks.ref_l4 import schema, synthetic  # noqa: E402
from vlbench.benchmarks.ref_l4.reader import load_references  # noqa: E402
from vlbench.benchmarks.ref_l4.scorer import score  # noqa: E402

OFFICIAL_SECONDS_QUOTED = 7.0


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=45_341)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = synthetic.make_rows(args.rows, seed=0, n_images=args.rows // 4 + 1)
    preds = synthetic.make_predictions(rows, quality="good", seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        ref_path, pred_path = Path(tmp) / "refs.parquet", Path(tmp) / "preds.json"
        pq.write_table(pa.Table.from_pylist(rows), ref_path)
        pred_path.write_text(json.dumps(preds))

        refs = load_references(ref_path, "all")
        fast_min, fast_med, result = best_of(
            lambda: score(refs, preds, with_samples=False), args.repeat
        )
        mapping = {f"refcoco_{c}": f"o365_{o}" for c, o in schema.OFFICIAL_REFCOCO_TO_O365.items()}
        slim = [
            {"id": r["id"], "bbox": r["bbox"], "ori_category_id": r["ori_category_id"]}
            for r in rows
        ]
        loop_min, loop_med, expected = best_of(
            lambda: ref_l4_loop.evaluate(slim, preds, mapping), max(1, args.repeat // 2)
        )
        same = all(result.metrics[k] == v for k, v in expected.items())

        cmd = [sys.executable, "-m", "vlbench", "score", "ref_l4", "--references", str(ref_path),
               "--predictions", str(pred_path), "--quiet", "--output", str(Path(tmp) / "r.json")]
        subprocess.run(cmd, check=True)  # warm the file cache
        cli_min, cli_med, _ = best_of(lambda: subprocess.run(cmd, check=True), args.repeat)

    print(f"Ref-L4, {args.rows:,} rows (val + test size), best of {args.repeat}")
    print(
        f"  scorer (files already read)      {fast_min * 1e3:8.1f} ms   (median "
        f"{fast_med * 1e3:.1f} ms)"
    )
    print(
        f"  per-sample loop, official algo.  {loop_min * 1e3:8.1f} ms   (median "
        f"{loop_med * 1e3:.1f} ms)"
    )
    print(
        f"  ratio loop / scorer              {loop_min / fast_min:8.1f} x   identical numbers: "
        f"{same}"
    )
    print(
        f"  whole `vlbench score` process    {cli_min * 1e3:8.1f} ms   (median {cli_med * 1e3:.1f} "
        "ms)"
    )
    print(
        f"  official evaluate_pred.py        {OFFICIAL_SECONDS_QUOTED * 1e3:8.1f} ms   (quoted by "
        "the issue, not measured)"
    )
    print(f"  ratio official / process         {OFFICIAL_SECONDS_QUOTED / cli_min:8.1f} x")
    if not same:
        raise SystemExit("the vectorised scorer and the per-sample loop disagree")


if __name__ == "__main__":
    main()
