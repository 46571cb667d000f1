"""What the tie bounds (#29) cost: a whole `vlbench score` process on a file whose detections tie,
against the same file with every score made distinct (no bounds computed), at validation scale,
interleaved A B A B.

    python bench/tie_bounds.py [--pairs 5] [--omnilabel-images 12000] [--ovdeval-images 2000]

Two tied files per detection benchmark: scores rounded to 3 decimals (what many detectors' files
hold) and every score 1 (a model without confidences, as `vlbench predict` writes generated boxes).
The distinct file keeps the ranking of the tied one but within ties (nudged apart in file order by
less than any score step). Prints, per file, the median of the paired ratios tied / distinct with
its min and max, and the headline AP of both files (close, not equal: across images the official
code breaks a tie by image order, not by the file order the nudge follows).
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


def _nudged(scores: list[float], start: int) -> list[float]:
    """Distinct scores in the same order: equal ones are nudged apart in file order (1e-9 steps keep
    every rounded-to-3-decimals difference)."""
    return [s - 1e-9 * (start + k) / 1e3 for k, s in enumerate(scores)]


def _files(
    folder: Path, omnilabel_images: int, ovdeval_images: int
) -> list[tuple[str, Path, Path, Path]]:
    """(benchmark, references, tied predictions, distinct predictions) for each tied variant."""
    from vlbench.benchmarks.omnilabel import synthetic as omni
    from vlbench.benchmarks.ovdeval import synthetic as ovd

    out = []
    # bench/omnilabel.py's set
    data = omni.make_dataset(omnilabel_images, seed=0, boxes_per_image=2.1)
    refs = folder / "omnilabel_refs.json"
    refs.write_text(json.dumps(data))
    rounded = omni.make_predictions(data, seed=1, extra_per_box=25, background_per_image=20)
    for name, preds in (
        ("rounded", rounded),
        ("all-1", [{**p, "scores": [1.0] * len(p["scores"])} for p in rounded]),
    ):
        distinct, n = [], 0
        for p in preds:
            distinct.append({**p, "scores": _nudged(p["scores"], n)})
            n += len(p["scores"])
        out.append(("omnilabel", refs, _write(folder / f"omnilabel_{name}.json", preds),
                    _write(folder / f"omnilabel_{name}_distinct.json", distinct)))
    # bench/ovdeval.py's full-scale set
    sub = ovd.make_subset(ovdeval_images, seed=0, boxes_per_image=4.0)
    refs = folder / "color.json"
    refs.write_text(json.dumps(sub))
    rounded = [
        {**p, "score": round(p["score"], 3)}
        for p in ovd.make_predictions(sub, seed=1, hard_negatives=8, duplicates=4, background=55)
    ]
    for name, preds in (("rounded", rounded), ("all-1", [{**p, "score": 1.0} for p in rounded])):
        distinct = [
            {**p, "score": s} for p, s in zip(preds, _nudged([p["score"] for p in preds], 0))
        ]
        out.append(("ovdeval", refs, _write(folder / f"ovdeval_{name}.json", preds),
                    _write(folder / f"ovdeval_{name}_distinct.json", distinct)))
    return out


def _write(path: Path, entries: list) -> Path:
    path.write_text(json.dumps(entries))
    return path


def _score(benchmark: str, refs: Path, preds: Path, out: Path) -> float:
    t = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "vlbench",
            "score",
            benchmark,
            "--references",
            str(refs),
            "--predictions",
            str(preds),
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t


def main() -> None:
    """Generate, time interleaved, print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--omnilabel-images", type=int, default=12000)
    ap.add_argument("--ovdeval-images", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for benchmark, refs, tied, distinct in _files(
            folder, args.omnilabel_images, args.ovdeval_images
        ):
            n = len(json.loads(tied.read_text()))
            ratios, times = [], []
            for _ in range(args.pairs):
                a = _score(benchmark, refs, tied, folder / "a.json")
                b = _score(benchmark, refs, distinct, folder / "b.json")
                ratios.append(a / b)
                times.append((a, b))
            ra, rb = (json.loads((folder / f).read_text()) for f in ("a.json", "b.json"))
            assert "tie_bounds" in ra["breakdowns"] and "tie_bounds" not in rb["breakdowns"]
            key = "AP" if benchmark == "omnilabel" else "NMS_AP"
            print(
                f"{benchmark:<10} {tied.stem:<18} {n:>9,} entries  tied "
                f"{statistics.median(a for a, _ in times):6.2f} s"
                f"  distinct {statistics.median(b for _, b in times):6.2f} s  ratio median "
                f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
                f"  {key} {ra['metrics'][key]:.2f} / {rb['metrics'][key]:.2f}"
            )


if __name__ == "__main__":
    main()
