"""What the error analysis (#30) costs: a whole `vlbench analyze` process against a whole `vlbench
score` process on the same files, at full benchmark scale, interleaved A B A B, the median of the
paired ratios.

    python bench/analysis.py [--pairs 5] [--omnilabel-images 12000] [--ovdeval-images 2000] \\
        [--ref-l4-rows 45341]

The sets are the other benches' (bench/omnilabel.py's validation-scale OmniLabel set,
bench/ovdeval.py's 2,000-image sub-dataset, a Ref-L4 split of 45,341 rows with noisy boxes). Goal of
#30: analyze within 2x of score. Each pair also checks that the analysis' as-scored number is the
official one (NMS_AP50, OmniLabel's harmonic mean of AP50_categ and AP50_descr, Acc50).
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


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def _files(
    folder: Path, omnilabel_images: int, ovdeval_images: int, ref_l4_rows: int
) -> list[tuple[str, Path, Path]]:
    """(benchmark, references, predictions) per benchmark."""
    from vlbench.benchmarks.omnilabel import synthetic as omni
    from vlbench.benchmarks.ovdeval import synthetic as ovd
    from vlbench.benchmarks.ref_l4 import synthetic as refl4

    data = omni.make_dataset(omnilabel_images, seed=0, boxes_per_image=2.1)
    out = [("omnilabel", _write(folder / "omnilabel_refs.json", data),
            _write(folder / "omnilabel.json", omni.make_predictions(data, seed=1, extra_per_box=25,
                                                                     background_per_image=20)))]
    sub = ovd.make_subset(ovdeval_images, seed=0, boxes_per_image=4.0)
    out.append(
        (
            "ovdeval",
            _write(folder / "color.json", sub),
            _write(
                folder / "ovdeval.json",
                ovd.make_predictions(sub, seed=1, hard_negatives=8, duplicates=4, background=55),
            ),
        )
    )
    import pyarrow as pa
    import pyarrow.parquet as pq

    # bench/ref_l4.py's set
    rows = refl4.make_rows(ref_l4_rows, seed=0, n_images=ref_l4_rows // 4 + 1)
    pq.write_table(pa.Table.from_pylist(rows), folder / "ref_l4.parquet")
    out.append(
        (
            "ref_l4",
            folder / "ref_l4.parquet",
            _write(folder / "ref_l4.json", refl4.make_predictions(rows, quality="poor", seed=1)),
        )
    )
    return out


def _run(command: str, benchmark: str, refs: Path, preds: Path, out: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "vlbench", command, benchmark, "--references", str(refs),
                    "--predictions", str(preds), "--quiet", "--output", str(out)],
                   check=True, capture_output=True)
    return time.perf_counter() - t


def _as_official(benchmark: str, result: dict) -> float | None:
    m = result["metrics"]
    if benchmark == "omnilabel":
        c, d = m["AP50_categ"] / 100, m["AP50_descr"] / 100
        return 100 * 2 * c * d / (c + d + 1e-5)
    return m["NMS_AP50"] if benchmark == "ovdeval" else m["Acc50"]


def main() -> None:
    """Generate, time interleaved, print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--omnilabel-images", type=int, default=12000)
    ap.add_argument("--ovdeval-images", type=int, default=2000)
    ap.add_argument("--ref-l4-rows", type=int, default=45341)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for benchmark, refs, preds in _files(
            folder, args.omnilabel_images, args.ovdeval_images, args.ref_l4_rows
        ):
            ratios, times = [], []
            for _ in range(args.pairs):
                a = _run("analyze", benchmark, refs, preds, folder / "a.json")
                b = _run("score", benchmark, refs, preds, folder / "b.json")
                ratios.append(a / b)
                times.append((a, b))
            result = json.loads((folder / "a.json").read_text())
            same = abs(result["analysis"]["as_scored"] - _as_official(benchmark, result)) < 1e-9
            print(
                f"{benchmark:<10} analyze {statistics.median(a for a, _ in times):6.2f} s  score "
                f"{statistics.median(b for _, b in times):6.2f} s  ratio median "
                f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})  "
                f"as scored = official: {same}"
            )


if __name__ == "__main__":
    main()
