"""METEOR 1.5 through the jar shipped with pycocoevalcap, in one JVM for the whole call.

Like pycocoevalcap's ``Meteor``: ``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm``, one
``SCORE ||| ref1 ||| ... ||| hyp`` line per image (``|||`` and double spaces removed from the
hypothesis only), then ``EVAL ||| stats...`` returns the per-image scores and the corpus score from
the summed statistics. The statistics are computed once and every subset (the domains) is one more
``EVAL`` line in the same process.
"""

from __future__ import annotations

import subprocess
import threading
from typing import Sequence

from ..errors import VlbenchError
from . import java

__all__ = ["meteor_available", "Meteor"]


def meteor_available() -> tuple[bool, str]:
    if java.java_executable() is None:
        return False, "Java is not on PATH (install a JRE, e.g. 'apt-get install default-jre-headless')"
    if java.meteor_jar() is None:
        return False, "pycocoevalcap's meteor-1.5.jar or data/paraphrase-en.gz is missing (pip install pycocoevalcap)"
    return True, "ok"


class Meteor:
    """A METEOR JVM: ``stats()`` once per image, then ``evaluate()`` on any subset of those statistics."""

    def __init__(self) -> None:
        ok, why = meteor_available()
        if not ok:
            raise VlbenchError(f"METEOR is not available: {why}")
        jar = java.meteor_jar()
        self._proc = subprocess.Popen([java.java_executable(), "-jar", "-Xmx2G", jar.name, "-", "-", "-stdio",
                                       "-l", "en", "-norm"], cwd=str(jar.parent), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def __enter__(self) -> "Meteor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.kill()
            self._proc.wait()

    def _readline(self) -> str:
        line = self._proc.stdout.readline()
        if not line:
            raise VlbenchError("the METEOR process ended unexpectedly")
        return line.decode("utf-8").strip()

    def stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
        """The statistics line of every (hypothesis, references) pair, written by a thread (no pipe deadlock)."""
        lines = []
        for hyp, rs in zip(hyps, refs):
            hyp = hyp.replace("|||", "").replace("  ", " ")
            lines.append(" ||| ".join(("SCORE", " ||| ".join(rs), hyp)) + "\n")
        writer = threading.Thread(target=self._write, args=(lines,), daemon=True)
        writer.start()
        out = [self._readline() for _ in lines]
        writer.join()
        return out

    def _write(self, lines: list[str]) -> None:
        for line in lines:
            self._proc.stdin.write(line.encode("utf-8"))
        self._proc.stdin.flush()

    def evaluate(self, stats: Sequence[str]) -> tuple[list[float], float]:
        """(per-image scores, corpus score) of these statistics lines."""
        self._write(["EVAL ||| " + " ||| ".join(stats) + "\n"])
        per_image = [float(self._readline()) for _ in stats]
        return per_image, float(self._readline())
