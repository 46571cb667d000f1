"""nocaps scoring speed on the real validation references (4,500 images x 10 captions) with the
released ViECap captions (the golden case real_viecap_val), next to pycocoevalcap.

    python bench/nocaps.py [--case PATH]

Per metric on the same tokens: vlbench vs pycocoevalcap's scorer (METEOR: the Python backend and the
jar backend). Whole split: tokenization and every metric but METEOR and SPICE (vlbench, Python
tokenizer and Java tokenizer), then with METEOR, next to the stock toolkit pipeline (PTBTokenizer +
Bleu + Meteor + Rouge + Cider, as COCOEvalCap.evaluate runs them; SPICE left out on both sides: its
CoreNLP jars are not available here). Without a JVM: the Python tokenizer and the Python METEOR,
timed here and run again in a child process for its peak memory (VmHWM) and a record of every
process it starts (none expected). METEOR uses the cached paraphrase index (built first if missing;
its one-time build is timed and printed).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--case", default=str(ROOT.parent / "shared" / "golden" / "nocaps" / "real_viecap_val")
    )
    args = ap.parse_args()
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor as StockMeteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    from vlbench.benchmarks.nocaps.reader import parse_official
    from vlbench.benchmarks.nocaps.scorer import score
    from vlbench.engine.captions import bleu as vbleu, java
    from vlbench.engine.captions.cider import cider_d
    from vlbench.engine.captions.meteor import meteor_stats
    from vlbench.engine.captions.ngrams import count_ngrams
    from vlbench.engine.captions.paraphrase import ParaphraseIndex
    from vlbench.engine.captions.rouge import rouge_l
    from vlbench.engine.captions.tokenize import tokenize

    case = Path(args.case)
    refs_json = json.loads((case / "references.json").read_text())
    preds = json.loads((case / "predictions.json").read_text())
    gt = parse_official(refs_json)
    n = len(gt.image_ids)
    print(f"nocaps: {n:,} images, {sum(len(r) for r in gt.references):,} references ({case.name})")

    # the stock pipeline, as COCOEvalCap.evaluate runs it (SPICE left out)
    gts = {i: [{"caption": c} for c in rs] for i, rs in zip(gt.image_ids, gt.references)}
    res = {p["image_id"]: [{"caption": p["caption"]}] for p in preds}
    with contextlib.redirect_stdout(io.StringIO()):
        t_tok, (gts_t, res_t) = timed(
            lambda: (PTBTokenizer().tokenize(gts), PTBTokenizer().tokenize(res))
        )
        stock = {"tokenize (2 JVM runs)": t_tok}
        for name, scorer in (("BLEU", Bleu(4)), ("ROUGE-L", Rouge()), ("CIDEr-D", Cider())):
            stock[name], _ = timed(lambda scorer=scorer: scorer.compute_score(gts_t, res_t))
        stock["METEOR"], _ = timed(lambda: StockMeteor().compute_score(gts_t, res_t))
    stock_total = sum(stock.values())

    # vlbench on the same tokens, per metric
    hyps = [res_t[i][0] for i in gt.image_ids]
    refs = [gts_t[i] for i in gt.image_ids]
    flat = [r for rs in refs for r in rs]
    k = [len(r) for r in refs]
    ref_image = np.repeat(np.arange(n), k)
    t_table, table = timed(lambda: count_ngrams(hyps + flat))
    hyp_s, ref_s = np.arange(n), n + np.arange(len(flat))
    ours = {"n-gram table (shared)": t_table}
    ours["BLEU"], _ = timed(
        lambda: vbleu.corpus_bleu(vbleu.bleu_stats(table, hyp_s, ref_s, ref_image, n))
    )
    ours["ROUGE-L"], _ = timed(lambda: rouge_l(hyps, refs))
    ours["CIDEr-D"], _ = timed(lambda: cider_d(table, hyp_s, ref_s, ref_image, n))
    t_index, _ = timed(
        lambda: ParaphraseIndex.load(java.meteor_jar().parent / "data" / "paraphrase-en.gz")
    )
    ours["METEOR (jar)"], (lines_java, how) = timed(
        lambda: meteor_stats(hyps, refs, backend="java")
    )
    ours["METEOR (python)"], (lines_py, _) = timed(
        lambda: meteor_stats(hyps, refs, backend="python")
    )
    stock["METEOR (jar)"] = stock["METEOR (python)"] = stock["METEOR"]
    print(
        f"  METEOR paraphrase index ({java.cache_dir()}): {t_index:.2f} s (a one-time build when > "
        "1 s)"
    )
    print(f"  METEOR jar backend: {how}; Python statistics lines equal to the jar's: "
          f"{sum(a == b for a, b in zip(lines_py, lines_java)):,} of {len(lines_java):,}")
    print("  per metric, same tokens:          pycocoevalcap   vlbench")
    for name in ("BLEU", "ROUGE-L", "CIDEr-D", "METEOR (jar)", "METEOR (python)"):
        print(
            f"    {name:<30}{stock[name]:10.2f} s {ours[name]:8.3f} s   "
            f"{stock[name] / ours[name]:6.1f}x"
        )
    print(
        f"    {'(vlbench n-gram table, shared)':<30}{'':>10}   "
        f"{ours['n-gram table (shared)']:8.3f} s"
    )

    # whole split
    with contextlib.redirect_stdout(io.StringIO()):
        t_py, _ = timed(lambda: score(gt, preds, tokenizer="python", meteor=False, spice=False))
        t_java, _ = timed(lambda: score(gt, preds, tokenizer="java", meteor=False, spice=False))
        t_all, result = timed(
            lambda: score(
                gt, preds, tokenizer="auto", meteor=True, meteor_backend="java", spice=False
            )
        )
        t_nojvm, result_py = timed(
            lambda: score(
                gt, preds, tokenizer="python", meteor=True, meteor_backend="python", spice=False
            )
        )
    t_tok_py, _ = timed(
        lambda: tokenize(
            flat and [c for rs in gt.references for c in rs] + [p["caption"] for p in preds],
            "python",
        )
    )
    print("  whole split:")
    print(
        f"    all but METEOR/SPICE, Python tokenizer   {t_py:7.2f} s   (tokenization alone "
        f"{t_tok_py:.2f} s)"
    )
    print(f"    all but METEOR/SPICE, Java tokenizer     {t_java:7.2f} s")
    print(f"    with METEOR (auto tokenizer, METEOR jar) {t_all:7.2f} s")
    print(f"    no JVM (Python tokenizer, Python METEOR) {t_nojvm:7.2f} s")
    print(f"    stock toolkit (tokenize, BLEU, METEOR, ROUGE-L, CIDEr-D)  {stock_total:7.2f} s   "
          f"-> {stock_total / t_all:.1f}x (METEOR jar), {stock_total / t_nojvm:.1f}x (no JVM)")
    same = all(result.metrics[k] == result_py.metrics[k] for k in result.metrics)
    print(f"    every key equal, no-JVM run vs jar run: {same}")
    peak, started = _child_run(case)
    print(
        f"    no JVM, in a fresh process: peak memory {peak:.0f} MB, processes started: "
        f"{started or 'none'}"
    )
    print(
        f"    stock tokenization {stock['tokenize (2 JVM runs)']:.2f} s, METEOR "
        f"{stock['METEOR']:.2f} s"
    )
    print(
        f"  CIDEr {result.metrics['CIDEr']:.4f} B4 {result.metrics['B4']:.4f} METEOR "
        f"{result.metrics['METEOR']:.4f}"
    )


_CHILD = """
import json, subprocess, sys
started = []
real = subprocess.Popen.__init__
def spy(self, args, *a, **k):
    started.append(str(args if isinstance(args, str) else args[0]))
    real(self, args, *a, **k)
subprocess.Popen.__init__ = spy
from vlbench.benchmarks.nocaps.reader import parse_official
from vlbench.benchmarks.nocaps.scorer import score
case = sys.argv[1]
gt = parse_official(json.load(open(case + "/references.json")))
score(gt, json.load(open(case + "/predictions.json")), tokenizer="python", meteor=True,
      meteor_backend="python", spice=False)
# VmHWM: this process's own peak (ru_maxrss would also count the parent it was forked from)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps([hwm / 1024, started]))
"""


def _child_run(case: Path) -> tuple[float, list[str]]:
    """(peak resident memory in MB, the processes it started) of the no-JVM scoring in a new
    interpreter."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(case)], capture_output=True, text=True, check=True
    )
    peak, started = json.loads(out.stdout.strip().splitlines()[-1])
    return peak, started


if __name__ == "__main__":
    main()
