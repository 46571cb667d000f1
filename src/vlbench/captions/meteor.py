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

import numpy as np
from numpy.typing import NDArray

from ..errors import VlbenchError
from . import java

__all__ = ["Meteor", "meteor_available", "meteor_from_stats", "parse_stats", "summable_stats"]


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


# -- METEOR from its sufficient statistics -------------------------------------------------------------
#: METEOR 1.5 parameters for English under the default task ("rank"), which pycocoevalcap uses:
#: alpha, beta, gamma, delta and the module weights (exact, stem, synonym, paraphrase).
ALPHA, BETA, GAMMA, DELTA = 0.85, 0.20, 0.60, 0.75
MODULE_WEIGHTS = (1.0, 0.6, 0.8, 0.6)
#: Fields of a statistics line: lengths, function words, 4 modules x (test/ref x content/function), chunks, word matches.
N_STATS = 23


def parse_stats(lines: Sequence[str]) -> NDArray[np.float64]:
    """Statistics lines (``Meteor.stats``) -> float array (n, 23)."""
    values = np.asarray([line.split() for line in lines], dtype=np.float64).reshape(len(lines), -1)
    if values.shape[1] != N_STATS:
        raise VlbenchError(f"unexpected METEOR statistics line with {values.shape[1]} fields (expected {N_STATS})")
    return values


def summable_stats(stats: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-segment statistics ready to be summed into a corpus aggregate: METEOR's ``EVAL`` does not add
    the chunk of a segment that matches its reference exactly (one chunk, every word matched); found by
    comparing with the jar's aggregates, which this then reproduces (to the last bit or two)."""
    s = np.array(stats, dtype=np.float64)
    module = s[:, 4:20].reshape(len(s), 4, 4)
    perfect = ((module[:, :, 0].sum(1) + module[:, :, 2].sum(1) == s[:, 0])
               & (module[:, :, 1].sum(1) + module[:, :, 3].sum(1) == s[:, 1]) & (s[:, 20] == 1))
    s[perfect, 20] = 0.0
    return s


def meteor_from_stats(stats: NDArray[np.float64]) -> NDArray[np.float64]:
    """METEOR score of summed statistics (..., 23), as ``MeteorScorer.computeMetrics`` does for an ``EVAL``
    aggregate: weighted precision and recall over content/function words, Fmean, fragmentation penalty."""
    s = np.asarray(stats, dtype=np.float64)
    test_len, ref_len, test_fn, ref_fn = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    module = s[..., 4:20].reshape(s.shape[:-1] + (4, 4))    # per module: test content, ref content, test fn, ref fn
    chunks, test_words, ref_words = s[..., 20], s[..., 21], s[..., 22]
    test_weighted, ref_weighted = np.zeros(s.shape[:-1]), np.zeros(s.shape[:-1])
    for part, factor in ((0, DELTA), (2, 1.0 - DELTA)):      # Java's accumulation order: content, then function
        for i, w in enumerate(MODULE_WEIGHTS):
            test_weighted = test_weighted + module[..., i, part] * w * factor
            ref_weighted = ref_weighted + module[..., i, part + 1] * w * factor
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = test_weighted / (DELTA * (test_len - test_fn) + (1 - DELTA) * test_fn)
        recall = ref_weighted / (DELTA * (ref_len - ref_fn) + (1 - DELTA) * ref_fn)
        fmean = 1.0 / ((1 - ALPHA) / precision + ALPHA / recall)
        test_total = module[..., 0].sum(-1) + module[..., 2].sum(-1)
        ref_total = module[..., 1].sum(-1) + module[..., 3].sum(-1)
        exact = (test_total == test_len) & (ref_total == ref_len) & (chunks == 1)
        frag = np.where(exact, 0.0, chunks / ((test_words + ref_words) / 2))
        score = fmean * (1.0 - GAMMA * frag**BETA)
    return np.where(np.isnan(score), 0.0, np.maximum(score, 0.0))
