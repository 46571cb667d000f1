"""`vlbench predict` on a GPU against a bare loop, with a detector of realistic size (random
weights, offline).

    python bench/predict_gpu.py [--rows 512] [--batch-size 16] [--pairs 3] [--device cuda]

An OWL-ViT with base-sized towers (12 layers, 768 wide) at 768x768 input in 16-pixel patches (2,304
boxes per image, the layout of ``owlvit-base-patch16``), built from a config with random weights
(tests/tiny_models.py), over a synthetic Ref-L4 split of ``--rows`` rows, one 640x480 image each
(built into a Hub folder here):

- vlbench: ``vlbench.predict.predict`` end to end (rows streamed from the folder, each batch's
  images decoded in its turn, queries, processor, forward, post-processing, entries, the partial and
  the official files);
- bare: per batch, the images decoded, the processor, ``model(**inputs)`` on the device and the
  post-processing (what a hand-written loop does: the device waits while the CPU decodes).

Each pair runs vlbench then the bare loop (A B A B ...) after one warm-up of each; prints items per
second and the median of the paired time ratios vlbench / bare with their spread (< 1: vlbench's
loop is faster). Needs a GPU (the project never does); on a CPU it runs, slowly, with ``--device
cpu``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Build the data and the model, then time both loops, interleaved."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "bench"))
    import torch
    from predict import bare_detector_loop, paired
    from predict_memory import build_split

    from tiny_models import tiny_owlvit
    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import load_data, models, predict

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        hub = build_split(root / "split", args.rows)
        model_dir = tiny_owlvit(root / "owl", width=768, layers=12, image_size=768, patch_size=16)
        print(f"data and model built in {time.perf_counter() - t:.1f} s")
        data, _ = load_data("ref_l4", hub, split="all")
        items = list(get_benchmark("ref_l4").require_predictor().items(data, "detector"))
        loaded = models.load_model(
            str(model_dir), models.inspect_model(str(model_dir)), device=args.device
        )
        n_params = sum(p.numel() for p in loaded.model.parameters())
        name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
        print(
            f"{len(items)} items, batch size {args.batch_size}, {n_params / 1e6:.0f} M parameters, "
            f"torch {torch.__version__}, {name}"
        )
        out = root / "preds.json"
        bs = args.batch_size

        def ours() -> None:
            predict(
                "ref_l4",
                str(model_dir),
                hub,
                out,
                split="all",
                batch_size=bs,
                device=args.device,
                progress=False,
                overwrite=True,
            )

        def bare() -> None:
            bare_detector_loop(loaded, items, bs, args.device)

        ours(), bare()                                   # warm-up (kernels, caches)
        a, b, ratio, low, high = paired(ours, bare, args.pairs)
        print(
            f"| detector (OWL-ViT B/16 768 px, random weights) | {len(items)} | "
            f"{len(items) / a:.1f} | {len(items) / b:.1f} | {ratio:.2f} ({low:.2f}-{high:.2f}) |"
        )

if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
