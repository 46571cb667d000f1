"""The overhead of vlbench's predict loop over a bare ``model(**inputs)`` loop on the same batches.

    python bench/predict.py [--repeats 8] [--batch-size 8]

A randomly initialised OWL-ViT of a moderate size (4-layer 256-wide towers, 224x224 input, 49 boxes; built from a
config, offline) over the Ref-L4 sample's test split repeated ``--repeats`` times (a built Hub folder):

- vlbench: ``vlbench.predict.predict`` end to end (rows from the folder, queries, processor, forward,
  post-processing, entries, the resumable partial file, the official file);
- bare: the same items' batches prepared by the processor beforehand, then only ``model(**inputs)`` timed;
- bare with processing: the processor, ``model(**inputs)`` and the post-processing per batch (what any loop does).

Prints images per second of both and their ratio (the loop's overhead). Best of 3 runs each.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_model(folder: Path) -> Path:
    """The moderate random OWL-ViT (tests/tiny_models.py builds it, offline)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import tiny_owlvit

    return tiny_owlvit(folder, width=256, layers=4, image_size=224, patch_size=32)


def build_data(folder: Path, repeats: int) -> Path:
    """The Ref-L4 sample release with its test rows repeated (new ids), built into a Hub folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from vlbench import api

    raw = folder / "raw"
    raw.mkdir()
    sample = ROOT / "src" / "vlbench" / "samples" / "ref_l4"
    for name in ("ref-l4-val.parquet", "images.tar.gz"):
        (raw / name).write_bytes((sample / name).read_bytes())
    test = pq.read_table(sample / "ref-l4-test.parquet")
    parts = [test.set_column(0, "id", pa.array([i + 1000 * (r + 1) for i in test["id"].to_pylist()]))
             for r in range(repeats)]
    pq.write_table(pa.concat_tables(parts), raw / "ref-l4-test.parquet")
    api.build("ref_l4", raw, folder / "hub")
    return folder / "hub"


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    import torch

    from vlbench.predict import load_data, models, predict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir, hub = build_model(tmp / "model"), build_data(tmp, args.repeats)
        n = 0

        def ours() -> None:
            nonlocal n
            out = tmp / "preds.json"
            out.unlink(missing_ok=True)
            n = predict("ref_l4", str(model_dir), hub, out, split="test", batch_size=args.batch_size,
                        progress=False).items

        loaded = models.load_model(str(model_dir), models.inspect_model(str(model_dir)), device="cpu")
        data, _ = load_data("ref_l4", hub, split="test")
        from vlbench.benchmarks import get_benchmark

        items = list(get_benchmark("ref_l4").require_predictor().items(data, "detector"))
        batches = [loaded.processor(text=[list(it.queries) for it in items[i:i + args.batch_size]],
                                    images=[it.image.convert("RGB") for it in items[i:i + args.batch_size]],
                                    return_tensors="pt", padding="max_length", truncation=True)
                   for i in range(0, len(items), args.batch_size)]

        def bare() -> None:
            with torch.inference_mode():
                for inputs in batches:
                    loaded.model(**inputs)

        def bare_with_processor() -> None:
            with torch.inference_mode():
                for i in range(0, len(items), args.batch_size):
                    chunk = items[i:i + args.batch_size]
                    images = [it.image.convert("RGB") for it in chunk]
                    inputs = loaded.processor(text=[list(it.queries) for it in chunk], images=images,
                                              return_tensors="pt", padding="max_length", truncation=True)
                    outputs = loaded.model(**inputs)
                    loaded.processor.post_process_grounded_object_detection(
                        outputs, threshold=0.01, target_sizes=[im.size[::-1] for im in images])

        bare(), ours(), bare_with_processor()       # warm-up: thread pools, allocator, first-call compilation
        bare_s, ours_s, processed_s = best(bare), best(ours), best(bare_with_processor)
        print(f"{n} items, batch size {args.batch_size}, torch {torch.__version__}, {torch.get_num_threads()} threads")
        print(f"| loop | images/s |\n|---|---|\n| bare model(**inputs), batches prepared beforehand | {n / bare_s:.1f} |")
        print(f"| bare loop with the processor and post-processing per batch | {n / processed_s:.1f} |")
        print(f"| vlbench predict, end to end (model and rows loaded, partial file, official file) | {n / ours_s:.1f} |")
        print(f"overhead ratio (vlbench time / bare model time): {ours_s / bare_s:.2f}")
        print(f"overhead ratio (vlbench time / bare loop with processing): {ours_s / processed_s:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
