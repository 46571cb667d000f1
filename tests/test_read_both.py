"""Two input files read side by side (#32): the references in a forked child while the predictions are read here
(:func:`vlbench.engine.io.read_both`). The fork is forced in a fresh process (one thread, the size bound lowered to
0) and seen through the interpreter's ``os.fork`` audit event; the numbers are the golden case's official ones, the
errors those of the files read one after the other, and a child that dies or sends what does not unpickle changes
nothing."""

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
