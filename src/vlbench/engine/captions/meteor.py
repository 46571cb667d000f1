"""METEOR 1.5 as pycocoevalcap runs it: the jar shipped with pycocoevalcap, or its Python equal.

Backends, as for the tokenizer: ``python`` (:mod:`.pymeteor`: the jar's algorithm and data in
Python/numpy, no JVM), ``java`` (the jar, below) and ``auto``, which takes Python where it is proven
to give the jar's statistics (:func:`.pymeteor.python_eligible`: every character in the tested set)
and the jar otherwise (Python, with a note, when no Java is there).

The jar backend:

pycocoevalcap's ``Meteor`` runs ``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm`` and sends
one ``SCORE ||| ref1 ||| ... ||| hyp`` line per image (``|||`` and double spaces removed from the
hypothesis only). ``meteor_stats`` returns the same statistics lines from the same jar in two steps:

1. the jar's own normaliser (``edu.cmu.meteor.util.Normalizer``, what ``-norm`` applies to every
   hypothesis and reference after splitting the line at ``|||`` and trimming) on every distinct
   text;
2. the scorer with ``-lower`` (lowercasing, which ``-norm`` also does after normalising) on the
   normalised texts, with the paraphrase table reduced to the entries this corpus can use
   (``paraphrase.ParaphraseIndex``): the jar loads the whole table at every run.

The two-step statistics equal the one-step ones (tested on every golden case and on edge cases).
Where that equality is not guaranteed (``U+0130`` in the texts, a line without a reference, a
normaliser that does not round-trip UTF-8) the one-step run is used instead; an unwritable cache
only costs re-indexing the table. The corpus score comes from the summed statistics
(``meteor_from_stats``), as the jar's ``EVAL`` computes it.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, VlbenchError
from . import java
from .meteor_lines import score_lines, split_like_jar
from .paraphrase import ParaphraseIndex

__all__ = ["METEOR_BACKENDS", "Meteor", "meteor_available", "meteor_stats"]

#: ``--meteor-backend`` choices.
METEOR_BACKENDS = ("auto", "python", "java")

#: pycocoevalcap's arguments, after ``-jar meteor-1.5.jar``.
STOCK_ARGS = ("-", "-", "-stdio", "-l", "en", "-norm")
#: The normaliser's main reads and writes stdin/stdout in the platform charset unless told otherwise
#: (the scorer reads stdin as UTF-8 itself and keeps the platform defaults, as in pycocoevalcap's
#: run).
_UTF8 = ("-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8")
#: A line whose normal form shows that non-ASCII text survived the round trip through the
#: normaliser.
_PROBE = ("Caf\u00e9 \u2019s \u201cNa\u00efve\u201d", "Caf\u00e9 ' s \" Na\u00efve \"")


def meteor_available(backend: str = "auto") -> tuple[bool, str]:
    """(True, "") when METEOR can run with this backend, else (False, why): every backend reads the
    jar's data (pycocoevalcap); ``java`` also needs a Java runtime."""
    if java.meteor_jar() is None:
        return (
            False,
            "pycocoevalcap's meteor-1.5.jar or data/paraphrase-en.gz is missing "
            "(pip install pycocoevalcap)",
        )
    if backend == "java":
        exe, why = java.find_java()
        if exe is None:
            return False, (f"no Java found: {why}, or install a JRE (e.g. 'apt-get install "
                           "default-jre-headless'), or use --meteor-backend python")
    return True, "ok"


class Meteor:
    """One METEOR process speaking the -stdio protocol line by line, started as pycocoevalcap starts
    it (the reference the tests compare ``meteor_stats`` with, and the jar's own ``EVAL``)."""

    def __init__(self) -> None:
        ok, why = meteor_available("java")
        if not ok:
            raise VlbenchError(f"METEOR is not available: {why}")
        jar = java.require_meteor_jar()
        self.proc = subprocess.Popen([java.require_java(), "-jar", "-Xmx2G", jar.name, *STOCK_ARGS],
                                     cwd=str(jar.parent), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        # PIPE always gives both: for the type checker
        if self.proc.stdin is None or self.proc.stdout is None:
            raise VlbenchError("the METEOR process has no pipes")
        self._in, self._out = self.proc.stdin, self.proc.stdout

    def __enter__(self) -> Meteor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the jar process."""
        if self.proc.poll() is None:
            self._in.close()
            self.proc.kill()
            self.proc.wait()

    def _readline(self) -> str:
        line = self._out.readline()
        if not line:
            raise VlbenchError("the METEOR process ended unexpectedly")
        return line.decode("utf-8").strip()

    def run(self, lines: Sequence[str]) -> list[str]:
        """The jar's answer to each ``SCORE`` line (a statistics line), in order."""
        def write() -> None:  # a writer thread, so neither side blocks on a full pipe
            for line in lines:
                self._in.write((line + "\n").encode("utf-8"))
            self._in.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out = [self._readline() for _ in lines]
        writer.join()
        return out

    def stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
        """The statistics line of every (hypothesis, references) pair, in order."""
        return self.run(score_lines(hyps, refs))

    def evaluate(self, stats: Sequence[str]) -> tuple[list[float], float]:
        """(per-image scores, corpus score) of these statistics lines, from the jar's ``EVAL``."""
        self._in.write(("EVAL ||| " + " ||| ".join(stats) + "\n").encode("utf-8"))
        self._in.flush()
        per_image = [float(self._readline()) for _ in stats]
        return per_image, float(self._readline())


def _run_jar(args: Sequence[str], lines: Sequence[str], workdir: Path) -> list[str]:
    """One batch run of a class of the METEOR jar: ``lines`` on stdin, exactly one output line per
    input line. Files, not pipes, on both ends: the jar flushes stdout after every line, which
    through a pipe costs about a second per 50,000 lines. A failure, a time-out or another number of
    lines is a :class:`VlbenchError` with the jar's own message (its standard error)."""
    jar = java.require_meteor_jar()
    src, dst, err = workdir / "in.txt", workdir / "out.txt", workdir / "err.txt"
    src.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    timeout = 300 + len(lines) / 100          # ~20x the observed rate: only a hung JVM reaches it
    with src.open("rb") as stdin, dst.open("wb") as stdout, err.open("wb") as stderr:
        try:
            # the serial collector: one thread, which on two cores leaves the other to the caller
            code = subprocess.run(
                [java.require_java(), "-Xmx2G", "-XX:+UseSerialGC", *args],
                cwd=str(jar.parent),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                timeout=timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            raise VlbenchError(f"the METEOR jar did not finish within {timeout:.0f} s on "
                               f"{len(lines):,} lines (run 'vlbench doctor')") from None
    out = dst.read_bytes().decode("utf-8", errors="replace").split("\n")
    if code != 0 or len(out) != len(lines) + 1:
        message = err.read_bytes().decode("utf-8", errors="replace").strip()[-500:]
        raise VlbenchError(
            f"the METEOR jar failed (exit {code}, {len(out) - 1:,} output lines for {len(lines):,} "
            f"input lines){': ' + message if message else ''} (run 'vlbench doctor')"
        )
    return out[:-1]


def normalize(texts: Sequence[str]) -> list[str] | None:
    """``Normalizer.normalizeLine(text, English, keep punctuation)`` of every text, by the jar's own
    class; None when a line break in a text or the platform's charset would garble the round
    trip."""
    if any("\n" in t or "\r" in t for t in texts):
        return None
    with tempfile.TemporaryDirectory(prefix="vlbench-meteor-") as tmp:
        try:
            out = _run_jar((*_UTF8, "-cp", java.require_meteor_jar().name,
                            "edu.cmu.meteor.util.Normalizer", "en", "true"),
                           (_PROBE[0], *texts), Path(tmp))
        except VlbenchError:
            # the caller falls back to the one-step stock run, which reports its own failure
            return None
    if out[0] != _PROBE[1]:
        return None
    return out[1:]


def paraphrase_index(cache_dir: Path | None = None) -> ParaphraseIndex:
    """The index of the jar's paraphrase table (``data/paraphrase-en.gz``), built and cached on
    first use."""
    return ParaphraseIndex.load(java.require_meteor_jar().parent / "data" / "paraphrase-en.gz",
                                cache_dir)


def index_ahead(n_references: int, cache_dir: Path | None = None) -> ParaphraseIndex | None:
    """The whole paraphrase table's index to open before METEOR runs on ``n_references`` reference
    texts (a caller can do it beside other work): :meth:`ParaphraseIndex.whole_for`, None where
    METEOR reads their own sub-table instead (:meth:`ParaphraseIndex.for_references`)."""
    return ParaphraseIndex.whole_for(java.require_meteor_jar().parent / "data" / "paraphrase-en.gz",
                                     n_references, cache_dir)


def meteor_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], *, backend: str = "auto",
                 cache_dir: Path | None = None,
                 index: ParaphraseIndex | None = None) -> tuple[list[str], str]:
    """The jar's statistics line of every (hypothesis, references) pair, and how they were computed
    ("python", or "java, <paraphrase table used>", with the reason when ``auto`` kept the jar).
    ``index``: the paraphrase table's index when the caller has it open already
    (:func:`index_ahead`); else the Python backend reads :meth:`ParaphraseIndex.for_references` of
    these references, the jar :func:`paraphrase_index`."""
    from .pymeteor import python_eligible, python_stats

    if backend not in METEOR_BACKENDS:
        raise InputError(f"unknown METEOR backend {backend!r}",
                         fix="use " + ", ".join(METEOR_BACKENDS))
    ok, why = meteor_available(backend)
    if not ok:
        raise VlbenchError(f"METEOR is not available: {why}")
    use, note = backend, ""
    if backend == "auto":
        proven, why = python_eligible(hyps, refs)
        has_java = java.java_executable() is not None
        use = "python" if proven or not has_java else "java"
        note = "" if proven else f" ({why}: " + ("the jar is used" if has_java else
                                                  "equality with the jar is not proven there; no "
                                                  "Java found") + ")"
    if use == "java":
        lines, how = _jar_stats(hyps, refs, cache_dir=cache_dir, index=index)
        return lines, f"java, {how}{note}"
    return python_stats(
        hyps, refs, jar=java.require_meteor_jar(), index=index, cache_dir=cache_dir
    ), f"python{note}"


def _jar_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], *, cache_dir: Path | None = None,
               index: ParaphraseIndex | None = None) -> tuple[list[str], str]:
    """The jar's statistics lines through the jar, and which paraphrase table it used ("reduced
    paraphrase table" or "full paraphrase table: <why>")."""
    lines = score_lines(hyps, refs)
    pieces = [split_like_jar(line) for line in lines]
    if any(len(p) < 2 for p in pieces):
        return _stock(lines, "a line without a reference")
    distinct = list(dict.fromkeys(t for p in pieces for t in p))
    normal = normalize(distinct)
    if normal is None:
        return _stock(lines, "the normaliser did not round-trip these texts")
    index = index or paraphrase_index(cache_dir)
    entries = index.kept_entries(normal)
    if entries is None:
        return _stock(lines, "U+0130 in the texts")
    form = dict(zip(distinct, normal))
    # every piece is already normalised: no "|||" survives the normaliser (it spaces out "|"), and
    # no piece is empty at the end of a line, so the jar splits these lines into the same pieces
    lowered = [" ||| ".join(("SCORE", *(form[t] for t in p))) for p in pieces]
    with tempfile.TemporaryDirectory(prefix="vlbench-meteor-") as tmp:
        table = Path(tmp) / "paraphrase.gz"
        index.write(entries, table)
        out = _run_jar(("-jar", java.require_meteor_jar().name, "-", "-", "-stdio", "-l", "en",
                        "-lower", "-a", str(table)),
                       lowered, Path(tmp))
    index.settle()
    return out, f"reduced paraphrase table ({len(entries):,} of {len(index.entry_first):,} entries)"


def _stock(lines: list[str], why: str) -> tuple[list[str], str]:
    """pycocoevalcap's one-step run (``-norm``, the whole paraphrase table) on these ``SCORE``
    lines."""
    with tempfile.TemporaryDirectory(prefix="vlbench-meteor-") as tmp:
        out = _run_jar(("-jar", java.require_meteor_jar().name, *STOCK_ARGS), lines, Path(tmp))
    return out, f"full paraphrase table: {why}"
