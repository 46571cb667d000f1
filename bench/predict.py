"""The overhead of vlbench's predict loop over a bare ``model(**inputs)`` loop on the same batches.

    python bench/predict.py [--repeats 8] [--batch-size 8] [--pairs 5]

A randomly initialised OWL-ViT of a moderate size (4-layer 256-wide towers, 224x224 input, 49 boxes;
built from a config, offline) over the Ref-L4 sample's test split repeated ``--repeats`` times (a
built Hub folder):

- vlbench: ``vlbench.predict.predict`` end to end (rows from the folder, queries, processor,
  forward, post-processing, entries, the resumable partial file, the official file);
- bare: the checkpoint loaded with ``from_pretrained``, then the processor, ``model(**inputs)`` and
  the post-processing per batch (what any loop does; the rows are read beforehand, each image
  decoded in the loop).

Also a detector sent OmniLabel's label spaces 4 queries at a time (multi-query chunking) and a tiny
LLaVA generating 16 tokens per Ref-L4 item. Each pair runs vlbench then the bare loop (A B A B ...);
prints items per second, the median of the paired wall-time ratios with their spread and the median
of the paired CPU-time ratios (the loop's overhead; 1.0 is none).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

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

    from vlbench.library import api

    raw = folder / "raw"
    raw.mkdir()
    sample = ROOT / "src" / "vlbench" / "samples" / "ref_l4"
    for name in ("ref-l4-val.parquet", "images.tar.gz"):
        (raw / name).write_bytes((sample / name).read_bytes())
    test = pq.read_table(sample / "ref-l4-test.parquet")
    parts = [
        test.set_column(0, "id", pa.array([i + 1000 * (r + 1) for i in test["id"].to_pylist()]))
        for r in range(repeats)
    ]
    pq.write_table(pa.concat_tables(parts), raw / "ref-l4-test.parquet")
    api.build("ref_l4", raw, folder / "hub")
    return folder / "hub"


def paired(a, b, pairs: int) -> tuple[float, float, float, float, float, float]:
    """A and B run in turn (A B A B ...): (median A seconds, median B seconds, median of the paired
    wall-time ratios A / B, their min, their max, median of the paired CPU-time ratios: this
    process's user + system time)."""
    import statistics

    times = []
    for _ in range(pairs):
        t, c = time.perf_counter(), time.process_time()
        a()
        ta, ca = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        b()
        times.append((ta, time.perf_counter() - t, ca / (time.process_time() - c)))
    ratios = [x / y for x, y, _ in times]
    return (
        statistics.median(x for x, _, _ in times),
        statistics.median(y for _, y, _ in times),
        statistics.median(ratios),
        min(ratios),
        max(ratios),
        statistics.median(r for _, _, r in times),
    )


def bare_detector_loop(loaded, items: list, batch_size: int, device: str) -> None:
    """What a hand-written detector loop does per batch: decode, processor, ``model(**inputs)`` on
    ``device``, the family's post-processing (waiting for the device at the end)."""
    import torch

    with torch.inference_mode():
        for i in range(0, len(items), batch_size):
            chunk = items[i:i + batch_size]
            images = [it.image.convert("RGB") for it in chunk]
            inputs = loaded.processor(text=[list(it.queries) for it in chunk], images=images,
                                      return_tensors="pt", padding="max_length", truncation=True)
            outputs = loaded.model(**inputs.to(device))
            loaded.processor.post_process_grounded_object_detection(
                outputs, threshold=0.01, target_sizes=[im.size[::-1] for im in images])
        if device.startswith("cuda"):
            torch.cuda.synchronize()


def _report(name: str, n: int, result: tuple[float, float, float, float, float, float]) -> None:
    a, b, med, lo, hi, cpu = result
    print(
        f"| {name} | {n} | {n / a:.1f} | {n / b:.1f} | {med:.2f} ({lo:.2f}-{hi:.2f}) | {cpu:.2f} |",
        flush=True,
    )


def main() -> None:
    """Build the models and data, then time each loop against its bare loop, interleaved."""
    import torch

    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import load_data, models, predict
    from vlbench.predict.families import render_prompt

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(2)
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import tiny_llava

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir, hub = build_model(tmp / "model"), build_data(tmp, args.repeats)
        vlm_dir = tiny_llava(tmp / "llava")
        out = tmp / "preds.json"
        data, _ = load_data("ref_l4", hub, split="test")
        items = list(get_benchmark("ref_l4").require_predictor().items(data, "detector"))
        bs = args.batch_size
        print(
            f"{len(items)} items, batch size {bs}, torch {torch.__version__}, "
            f"{torch.get_num_threads()} threads, "
            f"{args.pairs} pairs A B A B\n"
        )
        print(
            "| loop | items | vlbench items/s | bare items/s | wall ratio vlbench / bare, median "
            "(min-max) | CPU ratio |"
        )
        print("|---|---|---|---|---|---|")

        # detector: vlbench predict end to end vs the processor, forward and post-processing per
        # batch
        loaded = models.load_model(
            str(model_dir), models.inspect_model(str(model_dir)), device="cpu"
        )

        def ours_detector() -> None:
            predict(
                "ref_l4",
                str(model_dir),
                hub,
                out,
                split="test",
                batch_size=bs,
                progress=False,
                overwrite=True,
            )

        def bare_detector() -> None:
            # a hand-written loop loads the checkpoint too, as predict does at each run
            from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

            own = SimpleNamespace(processor=AutoProcessor.from_pretrained(model_dir),
                                  model=AutoModelForZeroShotObjectDetection.from_pretrained(model_dir).eval())
            bare_detector_loop(own, items, bs, "cpu")

        ours_detector(), bare_detector()  # warm-up
        _report(
            "detector (OWL-ViT, Ref-L4)",
            len(items),
            paired(ours_detector, bare_detector, args.pairs),
        )

        # multi-query chunking: OmniLabel's label spaces sent 4 queries at a time
        omni = tmp / "omni"
        from vlbench.library import api

        api.build(
            "omnilabel",
            ROOT / "src" / "vlbench" / "samples" / "omnilabel" / "dataset_val.json",
            omni,
            images=ROOT / "src" / "vlbench" / "samples" / "omnilabel" / "images",
        )
        o_data, _ = load_data("omnilabel", omni)
        o_items = list(get_benchmark("omnilabel").require_predictor().items(o_data, "detector"))

        def ours_chunked() -> None:
            predict(
                "omnilabel",
                str(model_dir),
                omni,
                out,
                batch_size=bs,
                max_queries=4,
                progress=False,
                overwrite=True,
            )

        def bare_chunked() -> None:
            with torch.inference_mode():
                for it in o_items:
                    image = it.image.convert("RGB")
                    for q in range(0, len(it.queries), 4):
                        inputs = loaded.processor(
                            text=[list(it.queries[q : q + 4])],
                            images=[image],
                            return_tensors="pt",
                            padding="max_length",
                            truncation=True,
                        )
                        loaded.processor.post_process_grounded_object_detection(
                            loaded.model(**inputs), threshold=0.01, target_sizes=[image.size[::-1]])

        ours_chunked(), bare_chunked()
        _report(
            "detector, 4 queries per pass (OmniLabel)",
            len(o_items),
            paired(ours_chunked, bare_chunked, args.pairs),
        )

        # generator: vlbench predict (prompt, generate, parse, token scores) vs prompt + generate +
        # decode
        vlm_info = models.inspect_model(str(vlm_dir))
        preset = vlm_info.family.preset("box", None, None)
        g_items = items[: 4 * bs]

        def ours_generator() -> None:
            predict(
                "ref_l4",
                str(vlm_dir),
                hub,
                out,
                split="test",
                batch_size=bs,
                limit=len(g_items),
                max_new_tokens=16,
                progress=False,
                overwrite=True,
            )

        def bare_generator() -> None:
            # loaded at each run, as predict loads it
            vlm = models.load_model(str(vlm_dir), vlm_info, device="cpu", preset=preset)
            with torch.inference_mode():
                for i in range(0, len(g_items), bs):
                    chunk = g_items[i:i + bs]
                    inputs = models._inputs(
                        vlm,
                        chunk,
                        [render_prompt(preset, "box", it.queries) for it in chunk],
                        preset,
                    )
                    vlm.processor.batch_decode(
                        vlm.model.generate(**inputs, do_sample=False, max_new_tokens=16)
                    )

        ours_generator(), bare_generator()
        _report("generator (LLaVA, Ref-L4, 16 new tokens)", len(g_items),
                paired(ours_generator, bare_generator, args.pairs))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
