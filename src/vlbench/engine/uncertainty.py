"""How sure is a score: percentile bootstrap intervals and paired model comparison.

None of the official scorers reports uncertainty; this module adds it on top of any benchmark
without touching the point estimates. The resampling unit is the image (where a benchmark scores
several items per image, such as referring expressions, they move together). A resample is a vector
of integer *weights*, one per image (how often the image was drawn); each benchmark's
:class:`Replicator` recomputes every metric from its per-image sufficient statistics under such
weights, with the metric's own definition (corpus BLEU / METEOR from summed counts, CIDEr-D with
reweighted document frequencies, AP from a pooled weighted ranking), so 1,000 resamples cost
seconds, not 1,000 evaluations.

With all weights 1 a replicator gives back the point estimate (tested for every benchmark).
Several strata (e.g. sub-datasets scored together) are resampled independently, each with its own
image count.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .errors import InputError

__all__ = ["Replicator", "draw_weights", "replicate", "percentile_interval", "add_intervals",
           "compare",
           "Comparison", "interval_table", "stack", "merge", "DEFAULT_RESAMPLES", "DEFAULT_SEED"]

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
#: Resamples evaluated together: bounds memory (a chunk holds chunk x images weights and the metric
#: work arrays).
_CHUNK = 50


class Replicator(Protocol):
    """A benchmark's per-image sufficient statistics, able to recompute its metrics under image
    weights."""

    @property
    def strata(self) -> tuple[int, ...]:
        """Images per stratum; weights are drawn within each stratum and concatenated in this
        order."""
        ...

    @property
    def unit(self) -> str:
        """What one resampling unit is, for the report ("image")."""
        ...

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """``weights`` (R, sum(strata)) -> metric name -> (R,) values in percent (NaN where
        undefined)."""
        ...


def draw_weights(strata: Sequence[int], resamples: int, seed: int) -> NDArray[np.float64]:
    """(resamples, sum(strata)) multiplicities of a nonparametric bootstrap within each stratum."""
    rng = np.random.default_rng(seed)
    parts = []
    for n in strata:
        if n == 0:
            parts.append(np.zeros((resamples, 0)))
            continue
        draws = rng.integers(0, n, size=(resamples, n))
        flat = (draws + (np.arange(resamples) * n)[:, None]).ravel()
        parts.append(
            np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(np.float64)
        )
    return np.concatenate(parts, axis=1)


def replicate(replicator: Replicator,
              weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Every metric under every row of ``weights``, evaluated in chunks of resamples."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    chunks = [weights[start:start + _CHUNK] for start in range(0, len(weights), _CHUNK)]
    # numpy and scipy.sparse release the GIL in the heavy products: chunks run on two threads
    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1, len(chunks)))) as pool:
        parts = list(pool.map(replicator, chunks))
    out: dict[str, list[NDArray[np.float64]]] = {}
    for part in parts:
        for key, values in part.items():
            out.setdefault(key, []).append(np.asarray(values, dtype=np.float64))
    return {k: np.concatenate(v) for k, v in out.items()}


def percentile_interval(samples: NDArray[np.float64], level: float) -> tuple[float | None,
                                                                             float | None]:
    """The percentile bootstrap interval (linear interpolation between order statistics), NaNs left
    out."""
    finite = samples[np.isfinite(samples)]
    if len(finite) == 0:
        return None, None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(finite, [tail, 100 - tail])
    return float(lo), float(hi)


def _check(level: float, resamples: int) -> None:
    if not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise InputError(f"the confidence level must be between 0 and 1 (exclusive), got {level!r}",
                         fix="use e.g. --ci 0.95")
    if not isinstance(resamples, numbers.Integral) or isinstance(resamples, bool) or resamples < 10:
        raise InputError(f"the number of resamples must be an integer >= 10, got {resamples!r}",
                         fix="use e.g. --resamples 1000")


def _replicator_of(result: Any) -> Replicator:
    make: Callable[[], Replicator] | None = getattr(result, "resampler", None)
    if make is None:
        raise InputError(f"this {result.benchmark} result cannot be resampled (it was read back "
                         "from JSON, "
                         "not scored in this process)", fix="score the predictions again with --ci")
    return make()


def add_intervals(result: Any, level: float = 0.95, *, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED) -> Any:
    """Attach ``breakdowns["confidence_intervals"]`` to a fresh
    :class:`~vlbench.engine.result.Result` (metrics unchanged)."""
    _check(level, resamples)
    rep = _replicator_of(result)
    samples = replicate(rep, draw_weights(rep.strata, resamples, seed))
    intervals: dict[str, Any] = {}
    for key, value in result.metrics.items():
        if value is None or key not in samples:
            intervals[key] = {"low": None, "high": None, "std_error": None,
                              "undefined_resamples": None}
            continue
        s = samples[key]
        lo, hi = percentile_interval(s, level)
        finite = s[np.isfinite(s)]
        intervals[key] = {"low": lo, "high": hi,
                          "std_error": float(np.std(finite, ddof=1)) if len(finite) > 1 else None,
                          "undefined_resamples": int(len(s) - len(finite))}
    if min(rep.strata, default=0) < 2:
        result.warnings.append(
            f"bootstrap: a stratum holds {min(rep.strata, default=0)} {rep.unit}(s), so every "
            "resample draws the same data there and its intervals have no width: they do not say "
            "how sure the score is (score more images for a meaningful interval)"
        )
    undefined = {k: v["undefined_resamples"] for k,
                 v in intervals.items() if v["undefined_resamples"]}
    if undefined:
        result.warnings.append("bootstrap: some metrics were undefined in some resamples (no "
                               "ground truth of that kind drawn) and those resamples were left out "
                               "of their interval: "
                               + ", ".join(f"{k} x{n}" for k, n in undefined.items()))
    result.breakdowns["confidence_intervals"] = {
        "level": level, "resamples": resamples, "seed": seed, "method": "percentile bootstrap",
        "unit": rep.unit, "strata": list(rep.strata), "metrics": intervals}
    result.options.update({"ci": level, "resamples": resamples, "seed": seed})
    return result


def interval_table(result: Any, digits: int = 2) -> str:
    """The metrics with their bootstrap intervals, one line each."""
    ci = result.breakdowns["confidence_intervals"]
    width = max([len(k) for k in ci["metrics"]] + [6])
    fmt = lambda v: "null" if v is None else f"{v:.{digits}f}"  # noqa: E731
    pct = f"{ci['level'] * 100:g}%"
    lines = [f"{pct} percentile bootstrap intervals ({ci['resamples']} resamples of {ci['unit']}s, "
             f"seed {ci['seed']})",
             f"{'metric'.ljust(width)}  {'value':>8}  {'low':>8}  {'high':>8}  {'std.err':>8}"]
    for key, iv in ci["metrics"].items():
        lines.append(f"{key.ljust(width)}  {fmt(result.metrics.get(key)):>8}  {fmt(iv['low']):>8}  "
                     f"{fmt(iv['high']):>8}  {fmt(iv['std_error']):>8}")
    return "\n".join(lines)


@dataclass
class Comparison:
    """Paired bootstrap of two prediction files on the same references: A - B per metric."""

    benchmark: str
    level: float
    resamples: int
    seed: int
    unit: str
    rows: list[dict[str, Any]]
    names: tuple[str, str] = ("A", "B")

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON-safe data."""
        return {"benchmark": self.benchmark, "level": self.level, "resamples": self.resamples,
                "seed": self.seed,
                "unit": self.unit, "method": "paired percentile bootstrap", "a": self.names[0],
                "b": self.names[1], "metrics": self.rows}

    def markdown(self, digits: int = 2) -> str:
        """The verdict table as Markdown (the Space)."""
        fmt = lambda v: "null" if v is None else f"{v:.{digits}f}"  # noqa: E731
        pct = f"{self.level * 100:g}%"
        lines = [f"Paired bootstrap over {self.unit}s ({self.resamples} resamples, seed "
                 f"{self.seed}): A = `{self.names[0]}`, B = `{self.names[1]}`", "",
                 f"| metric | A | B | A - B | {pct} interval of A - B | A wins | verdict |",
                 "|---|---|---|---|---|---|---|"]
        for r in self.rows:
            ci = f"[{fmt(r['low'])}, {fmt(r['high'])}]" if r["low"] is not None else "null"
            wins = "null" if r["a_wins"] is None else f"{r['a_wins'] * 100:.1f}%"
            verdict = (
                f"**{r['verdict']}**" if r["verdict"] in ("A better", "B better") else r["verdict"]
            )
            lines.append(f"| {r['metric']} | {fmt(r['a'])} | {fmt(r['b'])} | {fmt(r['diff'])} | "
                         f"{ci} | {wins} | {verdict} |")
        return "\n".join(lines)

    def table(self, digits: int = 2) -> str:
        """Verdict table: A, B, A - B with its interval, share of resamples A wins, verdict."""
        a, b = self.names
        width = max([len(r["metric"]) for r in self.rows] + [6])
        pct = int(round(self.level * 100))
        fmt = lambda v: "null" if v is None else f"{v:.{digits}f}"  # noqa: E731
        head = (f"{'metric'.ljust(width)}  {'A':>8}  {'B':>8}  {'A-B':>8}  "
                f"{f'{pct}% CI of A-B':>19}  {'A wins':>7}  verdict")
        lines = [f"{self.benchmark}: paired bootstrap, {self.resamples} resamples of {self.unit}s, "
                 f"seed {self.seed}",
                 f"A = {a}", f"B = {b}", head, "-" * len(head)]
        for r in self.rows:
            ci = f"[{fmt(r['low'])}, {fmt(r['high'])}]" if r["low"] is not None else "null"
            wins = "null" if r["a_wins"] is None else f"{r['a_wins'] * 100:.1f}%"
            lines.append(f"{r['metric'].ljust(width)}  {fmt(r['a']):>8}  {fmt(r['b']):>8}  "
                         f"{fmt(r['diff']):>8}  {ci:>19}  {wins:>7}  {r['verdict']}")
        return "\n".join(lines)


def _verdict(low: float | None, high: float | None, lower_is_better: bool = False) -> str:
    """The verdict of an interval of A - B: A better when it excludes 0 on A's side (below 0 for an
    error metric)."""
    if low is None or high is None:
        return "undefined"
    if low > 0:
        return "B better" if lower_is_better else "A better"
    if high < 0:
        return "A better" if lower_is_better else "B better"
    return "no clear difference"


def compare(result_a: Any, result_b: Any, level: float = 0.95, *,
            resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED, names: tuple[str, str] = ("A", "B"),
            lower_is_better: Collection[str] = ()) -> Comparison:
    """Paired bootstrap: the same resampled images for both results; per metric the difference A -
    B, its percentile interval and the share of resamples in which A is better (scores higher;
    lower, for the keys in ``lower_is_better``, the benchmark's error metrics)."""
    _check(level, resamples)
    if result_a.benchmark != result_b.benchmark:
        raise InputError(f"cannot compare a {result_a.benchmark} result with a "
                         f"{result_b.benchmark} result")
    rep_a, rep_b = _replicator_of(result_a), _replicator_of(result_b)
    if tuple(rep_a.strata) != tuple(rep_b.strata):
        raise InputError("the two results were scored on different references or sub-datasets "
                         f"({list(rep_a.strata)} vs {list(rep_b.strata)} {rep_a.unit}s)",
                         fix="score both prediction files against the same references and split")
    weights = draw_weights(rep_a.strata, resamples, seed)
    sa, sb = replicate(rep_a, weights), replicate(rep_b, weights)
    values = [(key, key, va, result_b.metrics.get(key)) for key, va in result_a.metrics.items()]
    values += _analysis_values(result_a, result_b)
    rows = []
    for label, key, va, vb in values:
        row: dict[str, Any] = {"metric": label, "a": va, "b": vb, "diff": None, "low": None,
                               "high": None, "a_wins": None, "verdict": "undefined"}
        if va is not None and vb is not None:
            row["diff"] = va - vb
        if va is not None and vb is not None and key in sa and key in sb:
            d = sa[key] - sb[key]
            d = d[np.isfinite(d)]
            lo, hi = percentile_interval(d, level)
            lower = key in lower_is_better
            verdict = _verdict(lo, hi, lower)
            if key.startswith("analysis:"):  # a cost: more of it is worse
                verdict = {"A better": "A loses more to it", "B better": "B loses more to it"}.get(
                    verdict, verdict
                )
            row.update({"low": lo, "high": hi,
                        "a_wins": float(np.mean(d < 0 if lower else d > 0)) if len(d) else None,
                        "verdict": verdict})
        rows.append(row)
    return Comparison(result_a.benchmark, level, resamples, seed, rep_a.unit, rows, names)


def _analysis_values(result_a: Any, result_b: Any) -> list[tuple[str, str, Any, Any]]:
    """(row label, replicate key, A's, B's) of each error type both results' analyses cost: what a
    fix of that type would gain in each file (a positive difference: A loses more to that type than
    B)."""
    a, b = getattr(result_a, "analysis", None) or {}, getattr(result_b, "analysis", None) or {}
    if "errors" not in a or "errors" not in b or a.get("delta_key") != b.get("delta_key"):
        return []
    field = f"delta_{a['delta_key']}"
    return [(f"cost of {name} ({a['delta_key']})", f"analysis:{name}", a["errors"][name].get(field),
             b["errors"][name].get(field)) for name in a["errors"] if name in b["errors"]]


def merge(primary: Replicator, extra: Replicator | None) -> Replicator:
    """One replicator giving both's values (the same resampling units: e.g. a result's metrics and
    its analysis)."""
    return primary if extra is None else _Merged(primary, extra)


@dataclass(frozen=True)
class _Merged:
    primary: Replicator
    extra: Replicator

    @property
    def strata(self) -> tuple[int, ...]:
        """The primary replicator's strata (the extra one resamples the same units)."""
        return tuple(self.primary.strata)

    @property
    def unit(self) -> str:
        """The resampling unit."""
        return self.primary.unit

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        return {**self.primary(weights), **self.extra(weights)}


def stack(replicators: Sequence[Replicator],
          combine: Callable[[list[dict[str, NDArray]]], dict[str, NDArray]] ) -> Replicator:
    """Strata side by side (e.g. sub-datasets): each gets its slice of the weights; ``combine``
    merges."""
    return _Stacked(tuple(replicators), combine)


@dataclass(frozen=True)
class _Stacked:
    parts: tuple[Replicator, ...]
    combine: Callable[[list[dict[str, NDArray]]], dict[str, NDArray]]

    @property
    def strata(self) -> tuple[int, ...]:
        """The image counts of the stacked strata, in order."""
        return tuple(n for p in self.parts for n in p.strata)

    @property
    def unit(self) -> str:
        """The resampling unit of the stacked replicators."""
        return self.parts[0].unit if self.parts else "image"

    def __call__(self, weights: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        outs, start = [], 0
        for p in self.parts:
            n = sum(p.strata)
            outs.append(p(weights[:, start:start + n]))
            start += n
        return self.combine(outs)
