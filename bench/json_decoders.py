"""Reading a COCO results file into columns: the JSON decoders #32 names, each a whole process.

    python bench/json_decoders.py [--pairs 5] [--venv ~/.cache/vlbench-bench/decoders]

The results file of ``bench/coco_peers.py`` (200,000 detections, 19 MB) is read by a fresh process
per candidate into the columns the engine needs (``image_id``, ``category_id`` int64, ``bbox`` (n,
4) float64, ``score`` float64), timed from start to exit (interpreter, imports, reading, columns),
   peak memory from ``ru_maxrss``:

- ``orjson``: ``orjson.loads`` to a list of dicts, then one list comprehension per column (what
  vlbench does);
- ``msgspec``: typed decoding into a list of ``Struct`` (no dict per detection), then the columns;
- ``simdjson``: pysimdjson's parser, the document walked element by element;
- ``polars``: ``polars.read_json`` into a DataFrame (no Python object per detection; its JSON reader
  has no fixed-size lists, so bbox is a list column, exploded);
- ``pyarrow``: the array rewritten as newline-delimited JSON (``}, {`` -> ``}\\n{``; valid only when
  no string value holds that text, which a results file has none of), then
  ``pyarrow.json.read_json``.

Every candidate's columns must equal orjson's (a checksum). Candidates other than orjson run from a
scratch venv the script installs (never project dependencies). Rounds rotate the order; per round
the ratio candidate / orjson is taken and its median printed (< 1.0: faster than what vlbench does
today).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from coco_peers import make_set

PACKAGES = [
    "numpy",
    "orjson==3.13.0",
    "msgspec==0.22.0",
    "pysimdjson==7.0.2",
    "polars==2.1.0",
    "pyarrow==26.0.1",
]

CHECK = """
import hashlib
digest = hashlib.sha256()
for a in (image_id, category_id, bbox, score):
    digest.update(np.ascontiguousarray(a).tobytes())
print(json.dumps({"n": len(score), "sha": digest.hexdigest()}))
"""

READERS = {
    "orjson": """
import json, sys, orjson, numpy as np
rows = orjson.loads(open(sys.argv[1], "rb").read())
image_id = np.array([r["image_id"] for r in rows], dtype=np.int64)
category_id = np.array([r["category_id"] for r in rows], dtype=np.int64)
bbox = np.array([r["bbox"] for r in rows], dtype=np.float64).reshape(-1, 4)
score = np.array([r["score"] for r in rows], dtype=np.float64)
""",
    "msgspec": """
import json, sys, msgspec, numpy as np
class Det(msgspec.Struct, gc=False):
    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    score: float
rows = msgspec.json.decode(open(sys.argv[1], "rb").read(), type=list[Det])
image_id = np.array([r.image_id for r in rows], dtype=np.int64)
category_id = np.array([r.category_id for r in rows], dtype=np.int64)
bbox = np.array([r.bbox for r in rows], dtype=np.float64).reshape(-1, 4)
score = np.array([r.score for r in rows], dtype=np.float64)
""",
    "simdjson": """
import json, sys, simdjson, numpy as np
doc = simdjson.Parser().parse(open(sys.argv[1], "rb").read())
rows = [(r["image_id"], r["category_id"], r["bbox"].as_list(), r["score"]) for r in doc]
image_id = np.array([r[0] for r in rows], dtype=np.int64)
category_id = np.array([r[1] for r in rows], dtype=np.int64)
bbox = np.array([r[2] for r in rows], dtype=np.float64).reshape(-1, 4)
score = np.array([r[3] for r in rows], dtype=np.float64)
""",
    "polars": """
import json, sys, polars as pl, numpy as np
df = pl.read_json(sys.argv[1], schema={"image_id": pl.Int64, "category_id": pl.Int64,
                                       "bbox": pl.List(pl.Float64), "score": pl.Float64})
image_id = df["image_id"].to_numpy()
category_id = df["category_id"].to_numpy()
bbox = df["bbox"].explode().to_numpy().reshape(-1, 4)
score = df["score"].to_numpy()
""",
    "pyarrow": """
import io, json, sys, numpy as np, pyarrow as pa, pyarrow.json as pj
data = open(sys.argv[1], "rb").read().strip()
lines = data[1:-1].replace(b"}, {", b"}\\n{").replace(b"},{", b"}\\n{")
table = pj.read_json(io.BytesIO(lines), parse_options=pj.ParseOptions(explicit_schema=pa.schema(
    [("image_id", pa.int64()), ("category_id", pa.int64()), ("bbox", pa.list_(pa.float64())),
     ("score", pa.float64())])))
image_id = table["image_id"].to_numpy()
category_id = table["category_id"].to_numpy()
bbox = table["bbox"].combine_chunks().flatten().to_numpy().reshape(-1, 4)
score = table["score"].to_numpy()
""",
}

TIMER = """
import resource, subprocess, sys, time
t = time.perf_counter()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True).stdout
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out.strip())
"""


def scratch_venv(path: Path) -> Path:
    """A venv holding the candidates (created and filled on first use)."""
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return python


def run(python: Path, name: str, results: Path) -> tuple[float, int, dict]:
    """(seconds, peak KiB, check) of one candidate's whole process."""
    out = subprocess.run(
        [sys.executable, "-c", TIMER, str(python), "-c", READERS[name] + CHECK, str(results)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split(maxsplit=2)
    return float(out[0]), int(out[1]), json.loads(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache/vlbench-bench/decoders")
    args = parser.parse_args()
    python = scratch_venv(args.venv)
    names = list(READERS)
    with tempfile.TemporaryDirectory() as tmp:
        _, results = make_set(Path(tmp))
        times: dict[str, list[float]] = {n: [] for n in names}
        peaks: dict[str, int] = {}
        for round_ in range(args.pairs):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            checks = {}
            for name in order:
                seconds, peak, checks[name] = run(python, name, results)
                times[name].append(seconds)
                peaks[name] = max(peaks.get(name, 0), peak)
            assert all(c == checks["orjson"] for c in checks.values()), checks
    print(f"{'decoder':10} {'median s':>9} {'peak MiB':>9} {'ratio to orjson (median, range)':>32}")
    for name in names:
        ratios = [a / b for a, b in zip(times[name], times["orjson"])]
        print(f"{name:10} {statistics.median(times[name]):9.3f} {peaks[name] / 1024:9.0f} "
              f"{statistics.median(ratios):>14.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
