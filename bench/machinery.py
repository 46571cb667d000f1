"""What each piece of speed machinery on the ledger (bench/MACHINERY.md) saves of a run users wait
for.

    python bench/machinery.py [--pairs 5] [--only NAME ...]

For each mechanism, the same whole run twice: A as shipped, B with that mechanism alone turned off
(a thread's work run where it is submitted, by an executor that runs each task at once; a filter or
memo bypassed). Interleaved A B A B, in this process, after one warm-up of each; prints the median
of the paired ratios B / A (above 1: the mechanism saves time; the ledger keeps it only from 1.10)
with their min and max. The runs:

- ``ovdeval-thread``: ``vlbench.score`` of ``bench/ovdeval.py``'s full-scale synthetic set (2,000
  images, 194,777 predictions), the scorer's worker thread off;
- ``nocaps-meteor-thread``, ``meteor-parts-two-at-a-time``, ``paraphrase-stamps``: the warm whole
  ``vlbench.score`` of the real ViECap val captions (golden case real_viecap_val), with METEOR's
  worker thread off, METEOR's alignment parts one at a time, the paraphrase index's stamp memos off
  (its checks run at every open);
- ``cold-meteor-parts-two-at-a-time``, ``cold-paraphrase-build-threads``: the same captions scored
  as on a machine's first run (a fresh cache each run: the references' paraphrase sub-table built),
  METEOR's alignment parts one at a time, the sub-table's blocks and ranges one at a time;
- ``index-build-threads``: a small corpus (golden case random_small) on a machine's first run, which
  builds the whole paraphrase index, its blocks and ranges one at a time. (The table inflated in a
  thread and the jar backend's index load beside its normaliser were measured here and removed:
  bench/MACHINERY.md.)
- ``bootstrap-threads``: Ref-L4's 45,341-row synthetic split scored with ``ci=0.95`` (1,000
  resamples), the resample chunks on one thread;
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT.parent / "shared" / "golden" / "nocaps" / "real_viecap_val"


class RunAtSubmit:
    """A stand-in for ``ThreadPoolExecutor`` that runs each task when it is submitted, in the
    caller's thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> RunAtSubmit:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        done: Future = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to .result(), as the executor does
            done.set_exception(exc)
        return done

    def map(self, fn: Callable[..., Any], *iterables: Any) -> Iterator[Any]:
        return map(fn, *iterables)

    def shutdown(self, wait: bool = True) -> None:
        return None


@contextlib.contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, saved)


def serial(module: Any) -> Callable[[], contextlib.AbstractContextManager]:
    """The module's ``ThreadPoolExecutor`` replaced by :class:`RunAtSubmit`."""
    return lambda: patched(module, "ThreadPoolExecutor", RunAtSubmit)


def ovdeval_run(tmp: Path) -> Callable[[], Any]:
    from vlbench import score
    from vlbench.benchmarks.ovdeval import synthetic

    data = synthetic.make_subset(2_000, seed=0, boxes_per_image=4.0)
    preds = synthetic.make_predictions(data, seed=1, hard_negatives=8, duplicates=4, background=55)
    gt, pr = tmp / "material.json", tmp / "ovd_preds.json"
    _dump(gt, data)
    _dump(pr, preds)
    return lambda: score("ovdeval", str(gt), str(pr))


def nocaps_run(tmp: Path) -> Callable[[], Any]:
    from vlbench import score

    return lambda: score(
        "nocaps", str(GOLDEN / "references.json"), str(GOLDEN / "predictions.json"), spice=False
    )


def _first_run(tmp: Path, case: Path = GOLDEN) -> Callable[[], Any]:
    """The whole val split scored as on a machine's first run (a fresh cache each time: the
    paraphrase index or sub-table built, the text cache empty)."""
    import os

    from vlbench import score

    runs = iter(range(1_000_000))

    def run() -> Any:
        os.environ["VLBENCH_CACHE_DIR"] = str(tmp / f"cache-{case.name}-{next(runs)}")
        try:
            return score("nocaps", str(case / "references.json"),
                         str(case / "predictions.json"), spice=False)
        finally:
            del os.environ["VLBENCH_CACHE_DIR"]

    return run


def nocaps_cold_run(tmp: Path) -> Callable[[], Any]:
    return _first_run(tmp)


def nocaps_small_first_run(tmp: Path) -> Callable[[], Any]:
    """A small corpus (the golden case random_small) on a machine's first run: under
    SUBTABLE_MIN_LINES references, so the whole paraphrase index is built (a fresh cache each
    time)."""
    return _first_run(tmp, ROOT / "tests" / "data" / "golden" / "nocaps" / "random_small")


def ref_l4_ci_run(tmp: Path) -> Callable[[], Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from vlbench import score
    from vlbench.benchmarks.ref_l4 import synthetic

    rows = synthetic.make_rows(45_341, seed=0, n_images=45_341 // 4 + 1)
    refs, pr = tmp / "refl4.parquet", tmp / "refl4_preds.json"
    pq.write_table(pa.Table.from_pylist(rows), refs)
    _dump(pr, synthetic.make_predictions(rows, seed=1))
    return lambda: score("ref_l4", str(refs), str(pr), ci=0.95)


def _dump(path: Path, value: Any) -> None:
    import json

    path.write_text(json.dumps(value))


def _no_stamps() -> contextlib.AbstractContextManager:
    from vlbench.engine.captions import paraphrase

    return patched(paraphrase, "_stamp", lambda path: None)


def mechanisms() -> dict[str, tuple[Callable[[Path], Callable[[], Any]], Callable[[], Any]]]:
    """name -> (the run's setup, the context that turns the mechanism off)."""
    import concurrent.futures

    import vlbench.benchmarks.nocaps.scorer as nocaps_scorer
    import vlbench.benchmarks.ovdeval.scorer as ovdeval_scorer
    import vlbench.engine.captions.paraphrase as paraphrase
    import vlbench.engine.captions.pymeteor.batch as meteor_batch

    return {
        "ovdeval-thread": (ovdeval_run, serial(ovdeval_scorer)),
        "nocaps-meteor-thread": (nocaps_run, serial(nocaps_scorer)),
        "meteor-parts-two-at-a-time": (nocaps_run, serial(meteor_batch)),
        "paraphrase-stamps": (nocaps_run, _no_stamps),
        "cold-meteor-parts-two-at-a-time": (nocaps_cold_run, serial(meteor_batch)),
        "cold-paraphrase-build-threads": (nocaps_cold_run, serial(paraphrase)),
        "index-build-threads": (nocaps_small_first_run, serial(paraphrase)),
        # uncertainty imports the executor when it replicates: patched where it is looked up
        "bootstrap-threads": (ref_l4_ci_run, serial(concurrent.futures)),
    }


def paired(
    run: Callable[[], Any], off: Callable[[], Any], pairs: int
) -> tuple[float, float, float, float]:
    """(median seconds as shipped, median of the paired ratios off / shipped, their min, their
    max)."""
    run()
    with off():
        run()
    shipped, ratios = [], []
    for _ in range(pairs):
        t = time.perf_counter()
        run()
        a = time.perf_counter() - t
        with off():
            t = time.perf_counter()
            run()
            b = time.perf_counter() - t
        shipped.append(a)
        ratios.append(b / a)
    return statistics.median(shipped), statistics.median(ratios), min(ratios), max(ratios)


def main() -> None:
    table = mechanisms()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=sorted(table), default=None)
    args = ap.parse_args()
    print("| mechanism | run as shipped, s | without it / with it, median (min-max) |")
    print("|---|---|---|")
    setups: dict[Any, Callable[[], Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (setup, off) in table.items():
            if args.only and name not in args.only:
                continue
            if setup not in setups:
                setups[setup] = setup(Path(tmp))
            seconds, med, lo, hi = paired(setups[setup], off, args.pairs)
            print(f"| {name} | {seconds:.2f} | **{med:.3f}** ({lo:.3f}-{hi:.3f}) |", flush=True)


if __name__ == "__main__":
    main()
