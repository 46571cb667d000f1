"""Work side by side (#32, :func:`vlbench.engine.overlap.overlapped`): two input files, the references read in a
forked child while the predictions are read here (:func:`vlbench.engine.io.read_both`), and nocaps' BLEU, CIDEr-D and
ROUGE-L in a forked child beside METEOR. The fork is forced in a fresh process (one thread, the size bounds lowered
to 0) and seen through the interpreter's ``os.fork`` audit event; the numbers are the golden cases' official ones,
the errors those of the calls one after the other, a child that dies or sends what does not unpickle changes
nothing, and a process running a second thread never forks (that thread's locks would stay held in the child)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import GOLDEN, agree

CASE = GOLDEN / "omnilabel" / "random_small"

#: runs in a fresh process: the fork forced, every fork counted; prints the outcome as JSON
_PROBE = """
import json, os, sys
forks = []
sys.addaudithook(lambda event, args: forks.append(event) if event == "os.fork" else None)
from vlbench.engine import io
from vlbench.engine.errors import VlbenchError
from vlbench.library import api
io.FORK_MIN_BYTES = 0
refs, preds, mode = sys.argv[1:4]
out = {}
try:
    if mode != "score":
        parent = os.getpid()

        def refuse():               # unpickling the child's value fails in the parent
            raise ValueError("not here")

        class Unreadable:
            def __reduce__(self):
                return refuse, ()

        def load():
            if os.getpid() == parent:
                return "read here"
            if mode == "dying child":           # the child ends without a word
                os._exit(3)
            return Unreadable()                 # the child's bytes do not unpickle
        out["value"] = io.read_both(load, lambda: "second", (refs, preds))
    else:
        out["metrics"] = api.score("omnilabel", refs, preds).metrics
except VlbenchError as err:
    out["error"] = str(err)
out["forks"] = len(forks)
print(json.dumps(out))
"""


def _probe(refs, preds, mode: str = "score") -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(refs), str(preds), mode], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_side_by_side_reading_gives_the_official_numbers():
    expected = json.loads((CASE / "expected.json").read_text())["metrics"]
    got = _probe(CASE / "references.json", CASE / "predictions.json")
    assert got["forks"] == 1 and not agree(got["metrics"], expected)


def test_errors_come_as_if_the_files_were_read_one_after_the_other(tmp_path):
    """Both files broken: the references' error (read first when serial), naming that file; only the predictions
    broken: theirs."""
    bad_refs, bad_preds = tmp_path / "refs.json", tmp_path / "preds.json"
    bad_refs.write_text('{"images": [')
    bad_preds.write_text("[{")
    both = _probe(bad_refs, bad_preds)
    assert both["forks"] == 1 and str(bad_refs) in both["error"] and str(bad_preds) not in both["error"]
    preds_only = _probe(CASE / "references.json", bad_preds)
    assert preds_only["forks"] == 1 and str(bad_preds) in preds_only["error"]


@pytest.mark.parametrize("mode", ["dying child", "unreadable value"])
def test_a_child_that_fails_leaves_the_reading_to_this_process(mode):
    got = _probe(CASE / "references.json", CASE / "predictions.json", mode)
    assert got == {"value": ["read here", "second"], "forks": 1}


#: runs in a fresh process: :func:`overlapped` called as the argument says, every fork counted
_OVERLAP_PROBE = """
import json, os, sys, threading
forks = []
sys.addaudithook(lambda event, args: forks.append(event) if event == "os.fork" else None)
from vlbench.engine import overlap
mode = sys.argv[1]
order = []


def fail(what):
    order.append(what)
    raise ValueError(what)


if mode == "second thread":         # another thread is running: no fork, the serial outcome
    stop = threading.Event()
    threading.Thread(target=stop.wait).start()
try:
    if mode == "both fail":
        for thread in (False, True):
            for fork in (False, True):
                try:
                    overlap.overlapped(lambda: fail("first"), lambda: fail("second"), fork=fork, thread=thread)
                except ValueError as err:
                    order.append(f"raised {err}")
        out = {"order": order}
    else:
        out = {"values": [overlap.overlapped(lambda: os.getpid(), lambda: "second", fork=True, thread=thread)
                          for thread in (False, True)], "here": os.getpid()}
finally:
    if mode == "second thread":
        stop.set()
out["forks"] = len(forks)
print(json.dumps(out))
"""


def _overlap_probe(mode: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _OVERLAP_PROBE, mode], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_overlapped_forks_only_in_a_one_thread_process():
    """One thread: ``first()`` runs in a child (another pid), once per call; a second thread running: here."""
    alone = _overlap_probe("one thread")
    assert alone["forks"] == 2 and all(v[0] != alone["here"] and v[1] == "second" for v in alone["values"])
    beside = _overlap_probe("second thread")
    assert beside["forks"] == 0 and beside["values"] == [[beside["here"], "second"]] * 2


def test_overlapped_errors_come_in_the_serial_order():
    """Both calls fail: ``first()``'s error is the one raised, in every mode. Serial: ``second()`` never runs. Forked:
    ``second()`` runs here, and the child's failure is not trusted, so ``first()`` runs again here after it. Thread:
    both run (in either order), ``first()``'s error wins."""
    got = _overlap_probe("both fail")
    runs = [[]]
    for event in got["order"]:
        runs[-1].append(event)
        if event.startswith("raised"):
            runs.append([])
    serial, forked, thread, thread_forked, rest = runs
    assert serial == ["first", "raised first"] and forked == ["second", "first", "raised first"], got
    assert sorted(thread[:2]) == ["first", "second"] and thread[2:] == ["raised first"], got
    assert thread_forked == forked and rest == [] and got["forks"] == 2, got


#: runs in a fresh process: a nocaps golden case scored with the fork forced (bound lowered to 0), forks counted
_NOCAPS_PROBE = """
import json, sys, warnings
forks = []
sys.addaudithook(lambda event, args: forks.append(event) if event == "os.fork" else None)
from vlbench.benchmarks.nocaps import scorer
from vlbench.benchmarks.nocaps.reader import parse_official
scorer.FORK_MIN_REFERENCES = int(sys.argv[2])
meteor = sys.argv[3] == "meteor"
gt = parse_official(json.load(open(sys.argv[1] + "/references.json")))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    result = scorer.score(gt, json.load(open(sys.argv[1] + "/predictions.json")), tokenizer="python",
                          meteor_backend="python", spice=False, meteor=meteor)
print(json.dumps({"metrics": result.metrics, "per_image": result.breakdowns["per_image"]["CIDEr"].tolist(),
                  "forks": len(forks)}))
"""


def test_nocaps_metrics_beside_meteor_in_a_child_are_the_official_ones():
    """BLEU, CIDEr-D and ROUGE-L computed in the child: every key of the golden case's expected.json but SPICE, and
    the per-image CIDEr-D the same as computed here (bound above the case's 6,000 references: no fork). Without
    METEOR nothing runs beside them: no fork either."""
    case = GOLDEN / "nocaps" / "random_medium"
    want = {k: v for k, v in json.loads((case / "expected.json").read_text())["metrics"].items()
            if not k.startswith("SPICE")}
    runs = {}
    for bound, meteor in ((0, "meteor"), (10**9, "meteor"), (0, "no meteor")):
        proc = subprocess.run([sys.executable, "-c", _NOCAPS_PROBE, str(case), str(bound), meteor],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs[bound, meteor] = got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not agree(got["metrics"], {k: v for k, v in want.items()
                                          if meteor == "meteor" or not k.startswith("METEOR")}), (bound, meteor)
    assert [r["forks"] for r in runs.values()] == [1, 0, 0]
    assert runs[0, "meteor"]["per_image"] == runs[10**9, "meteor"]["per_image"] == runs[0, "no meteor"]["per_image"]
