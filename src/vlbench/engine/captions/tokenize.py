"""Caption tokenization of the COCO caption toolkit: Stanford PTBTokenizer (``-preserveLines
-lowerCase``), then the toolkit's punctuation filter.

Two backends behind one switch: ``java`` runs the jar shipped with pycocoevalcap (temp files in a
temp dir, never in the installed package); ``python`` runs the jar's own lexer automaton without a
JVM (:mod:`vlbench.engine.captions.ptb`), equal to the jar on every character but the Greek capital
sigma, whose lower case Java decides by word boundaries. ``auto`` uses Python unless a caption holds
such a character and Java is present.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, VlbenchError
from . import java, textcache

__all__ = ["tokenize", "sanitize", "PUNCTUATION", "LINE_BREAKS", "SHIFTING_LINE_BREAK",
           "python_proven"]

#: The 17 tokens the toolkit drops after tokenizing (note: lower-case -lrb- / -rrb- are NOT in it).
PUNCTUATION = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                         ".", "?", "!", ",", ":", "-", "--", "...", ";"])

#: Characters replaced by spaces under the corrected protocol (counted, with a warning): every line
#: break of the PTB tokenizer, and NEL for safety.
LINE_BREAKS = re.compile("[\r\n\u2028\u2029\u000b\u000c\u0085]")
#: The PTB tokenizer's own line breaks (CoreNLP 3.4.1 with -preserveLines; NEL and U+FEFF are not
#: among them).
TOKENIZER_LINE_BREAK = re.compile("\r\n|[\r\n\u2028\u2029\u000b\u000c]")
#: Those of them that survive the toolkit's own ``\n`` -> space, and so shift later captions.
SHIFTING_LINE_BREAK = re.compile("[\r\u2028\u2029\u000b\u000c]")


def sanitize(captions: Sequence[str]) -> tuple[list[str], int]:
    """Replace line-break characters by spaces; returns the captions and how many were changed."""
    if not LINE_BREAKS.search(" ".join(captions)):      # the usual case: one scan, no Python loop
        return list(captions), 0
    out, changed = [], 0
    for c in captions:
        clean = LINE_BREAKS.sub(" ", c)
        changed += clean != c
        out.append(clean)
    return out, changed


def _filter(line: str) -> str:
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATION)


def _java_tokenize(captions: list[str]) -> list[str]:
    exe, jar = java.java_executable(), java.tokenizer_jar()
    if exe is None or jar is None:
        raise VlbenchError("the Java tokenizer needs java on PATH and pycocoevalcap's "
                           "stanford-corenlp-3.4.1.jar")
    with tempfile.TemporaryDirectory(prefix="vlbench-ptb-") as tmp:
        path = Path(tmp) / "captions.txt"
        path.write_text("\n".join(captions), encoding="utf-8")
        # ~50x the observed rate: only a hung JVM reaches it
        timeout = 120 + len(captions) / 1000
        try:
            proc = subprocess.run([exe, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer",
                                   "-preserveLines",
                                   "-lowerCase", str(path)], capture_output=True, check=False,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise VlbenchError(
                f"the Java PTBTokenizer did not finish within {timeout:.0f} s"
            ) from None
    if proc.returncode != 0:
        raise VlbenchError("the Java PTBTokenizer failed: "
                           f"{proc.stderr.decode(errors='replace')[-500:]}")
    lines = proc.stdout.decode("utf-8").split("\n")
    # one line per caption, and a final newline; any other count would pair captions with the wrong
    # images
    if len(lines) not in (len(captions), len(captions) + 1) or (
        len(lines) > len(captions) and lines[-1]
    ):
        raise VlbenchError(f"the Java PTBTokenizer returned {len(lines)} lines for {len(captions)} "
                           f"captions: {proc.stderr.decode(errors='replace')[-300:]}")
    return [_filter(line) for line in lines[: len(captions)]]


def tokenize(captions: Sequence[str], backend: str = "auto", *, shift_lines: bool = False,
             cache: bool = False) -> tuple[list[str], str]:
    """Tokenize captions as the toolkit does; returns (tokenized, backend used).

    By default every line break becomes a space first. With ``shift_lines`` only ``\\n`` does (as
    the toolkit's wrapper does): the tokenizer's other line breaks (CR, U+2028, U+2029, VT, FF) then
    start new output lines, and output line k goes to caption k, so later captions shift, as
    officially. With ``cache`` (a split's references, the same at every run) the result is kept on
    disk by content (:mod:`.textcache`) and read back next time.
    """
    if backend not in ("auto", "java", "python"):
        raise InputError(f"unknown tokenizer backend {backend!r}", fix="use auto, java or python")
    if backend == "auto":
        backend = (
            "java"
            if not python_proven(captions) and java.java_executable() and java.tokenizer_jar()
            else "python"
        )
    if cache:
        kind = f"ptb-{backend}-{'shifted' if shift_lines else 'lines'}"
        out, _ = textcache.cached(kind, _tokenizer_code(backend), captions,
                                  lambda: (tokenize(captions, backend, shift_lines=shift_lines)[0],
                                           ()),
                                  lambda v, _: isinstance(v, list) and len(v) == len(captions)
                                  and all(isinstance(t, str) for t in v))
        return out, backend
    if shift_lines:
        # the lines the tokenizer sees: the captions joined by "\n", split at its own line breaks
        lines = TOKENIZER_LINE_BREAK.split("\n".join(c.replace("\n", " ") for c in captions))
    else:
        lines, _ = sanitize(captions)
    if backend == "java":
        return _java_tokenize(list(lines))[: len(captions)], "java"
    from .ptb import tokenize_stream

    # the jar's input: the lines joined by "\n" (its -preserveLines output has a line per newline
    # token)
    return [_filter(line) for line in tokenize_stream("\n".join(lines))[: len(captions)]], "python"


def _tokenizer_code(backend: str) -> str:
    """What a tokenization depends on besides its input: this code, the jar (and the Java that runs
    it)."""
    here = Path(__file__).parent
    files = [here / "tokenize.py", here / "ptb.py", here / "jvmclass.py",
             here.parents[1] / "data" / "java17_lowercase.json",
             java.tokenizer_jar() or here / "tokenize.py"]
    if backend == "java":
        files.append(Path(java.java_executable() or here / "java.py").resolve())
    return textcache.code_digest(files)


def python_proven(captions: Sequence[str]) -> bool:
    """Whether the Python tokenizer is proven equal to the jar on these captions (no character of
    :data:`vlbench.engine.captions.ptb.UNPROVEN`)."""
    from .ptb import UNPROVEN

    return not any(UNPROVEN.search(c) for c in captions)
