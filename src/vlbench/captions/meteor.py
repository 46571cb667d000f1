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


class _Jvm:
    """One METEOR process speaking the -stdio protocol."""

    def __init__(self) -> None:
        jar = java.meteor_jar()
        self.proc = subprocess.Popen([java.java_executable(), "-jar", "-Xmx2G", jar.name, "-", "-", "-stdio",
                                      "-l", "en", "-norm"], cwd=str(jar.parent), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def write(self, lines: list[str]) -> None:
        for line in lines:
            self.proc.stdin.write(line.encode("utf-8"))
        self.proc.stdin.flush()

    def readline(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise VlbenchError("the METEOR process ended unexpectedly")
        return line.decode("utf-8").strip()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.kill()
            self.proc.wait()


class Meteor:
    """METEOR JVMs: ``stats()`` once per image (split over ``processes`` JVMs), then ``evaluate()`` on
    any subset of those statistics. Create it early: the JVM loads its paraphrase table (~5 s) while the
    caller does other work. One JVM is the default: on two cores a second one was slower, not faster.
    """

    def __init__(self, processes: int = 1) -> None:
        ok, why = meteor_available()
        if not ok:
            raise VlbenchError(f"METEOR is not available: {why}")
        self._jvms = [_Jvm() for _ in range(max(1, processes))]

    def __enter__(self) -> "Meteor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for jvm in self._jvms:
            jvm.close()

    def stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
        """The statistics line of every (hypothesis, references) pair, in order."""
        lines = []
        for hyp, rs in zip(hyps, refs):
            hyp = hyp.replace("|||", "").replace("  ", " ")
            lines.append(" ||| ".join(("SCORE", " ||| ".join(rs), hyp)) + "\n")
        k = len(self._jvms)
        size = -(-len(lines) // k) if lines else 0
        chunks = [lines[i * size:(i + 1) * size] for i in range(k)]
        results: list[list[str]] = [[] for _ in range(k)]

        def run(i: int) -> None:  # each JVM gets its own writer (no pipe deadlock) and reader
            writer = threading.Thread(target=self._jvms[i].write, args=(chunks[i],), daemon=True)
            writer.start()
            results[i] = [self._jvms[i].readline() for _ in chunks[i]]
            writer.join()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(k)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out = [line for part in results for line in part]
        if len(out) != len(lines):
            raise VlbenchError("the METEOR processes did not answer every line")
        return out

    def evaluate(self, stats: Sequence[str]) -> tuple[list[float], float]:
        """(per-image scores, corpus score) of these statistics lines."""
        jvm = self._jvms[0]
        jvm.write(["EVAL ||| " + " ||| ".join(stats) + "\n"])
        per_image = [float(jvm.readline()) for _ in stats]
        return per_image, float(jvm.readline())
