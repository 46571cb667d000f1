"""METEOR 1.5 without a JVM: ``meteor-1.5.jar -l en -norm`` as pycocoevalcap runs it, in Python.

For each ``SCORE ||| ref ||| ... ||| hyp`` line the jar normalises every text (``normalizer``),
lowercases it (``String.toLowerCase``), aligns the hypothesis with each reference (``aligner``),
keeps the statistics of the reference with the highest METEOR score (the first on ties) and prints
them. This package does the same with the jar's own data files (``resources``) and its 2006 Snowball
stemmer (``stemmer``); the paraphrase table is read through the reduced index of
``captions.paraphrase`` (only entries whose two phrases occur in the texts can match).

Where Python cannot be shown to agree with Java, :func:`python_eligible` says so and ``auto`` keeps
the jar: lowercasing differs between Unicode versions for characters outside a fixed, tested set
(:data:`PROVEN_CHARACTERS`), and a line break inside a text splits the jar's input line.
"""

from .stats import PROVEN_CHARACTERS, python_eligible, python_stats

__all__ = ["python_eligible", "python_stats", "PROVEN_CHARACTERS"]
