"""Caption metrics of the COCO caption toolkit (pycocoevalcap), reproduced: tokenization, BLEU,
METEOR (Java), ROUGE-L, CIDEr-D and SPICE (optional Java backend)."""

from __future__ import annotations

__all__ = ["backends"]


def backends(*, prepare: bool = False) -> list[tuple[str, str]]:
    """(name, state) of every caption backend, as ``vlbench doctor`` prints them: the Java runtime
    (which, where from, its version), the PTB tokenizer and METEOR backends, SPICE, and METEOR's
    paraphrase index (``prepare`` builds it now rather than on first use)."""
    import subprocess

    from . import java
    from .meteor import meteor_available
    from .spice import spice_available

    exe, why = java.find_java()
    version = "not found"
    if exe:
        proc = subprocess.run([exe, "-version"], capture_output=True, text=True)
        version = (
            (proc.stderr or proc.stdout).splitlines()[0]
            if (proc.stderr or proc.stdout)
            else "unknown"
        )
    jar = java.tokenizer_jar()
    out = [("java", f"{exe} ({version}; from {why})" if exe else why),
           ("tokenizer java", f"ready ({jar})" if exe and jar else "not available"),
           ("tokenizer python",
            "ready (exact re-implementation of PTBTokenizer as the toolkit runs it)")]
    for name, (ok, reason) in (("METEOR python", meteor_available("python")),
                               ("METEOR java", meteor_available("java")),
                               ("SPICE", spice_available())):
        out.append((name, "ready" if ok else "not available: " + reason))
    if meteor_available()[0]:
        from .meteor import paraphrase_index
        from .paraphrase import ParaphraseIndex

        if prepare:
            paraphrase_index()
        cached = ParaphraseIndex.cache_path(
            java.require_meteor_jar().parent / "data" / "paraphrase-en.gz"
        )
        out.append(("METEOR paraphrase index", f"cached ({cached})" if cached.exists() else
                    "not built yet (a whole split's first METEOR run reads its own part of the "
                    "table instead, ~2 s; smaller reference sets build the whole index, ~3 s, "
                    "once; 'vlbench doctor --prepare' builds it now)"))
    return out
