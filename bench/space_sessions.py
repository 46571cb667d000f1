"""What the Space keeps in memory per visitor session, after each has scored an example.

    python bench/space_sessions.py [--sessions 60] [--bench ovdeval]

Starts ``vlbench demo`` on a loopback port, then, as separate visitors (a new
``gradio_client.Client``, hence a new session, each), scores the bundled poor example through the
Space's ``/score`` endpoint. The server's resident size (VmRSS of its process) is read after a first
warm-up visitor and after every tenth; printed: MB per session (the slope of a least-squares line
through the readings) once the viewer states kept (``MAX_VIEWER_STATES``) are full, and once the
sessions kept (``MAX_SESSIONS``) are too: what each further visitor costs.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def _rss_mb(pid: int) -> float:
    line = next(
        t for t in Path(f"/proc/{pid}/status").read_text().splitlines() if t.startswith("VmRSS:")
    )
    return int(line.split()[1]) / 1024


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--bench", default="ovdeval")
    args = parser.parse_args()
    from gradio_client import Client, handle_file

    from vlbench import space

    port = _free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    proc = subprocess.Popen([sys.executable, "-m", "vlbench", "demo", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(180):
            try:
                Client(url, verbose=False)
                break
            except Exception:
                time.sleep(1)
        subset = space.choices(args.bench)[0]
        example = space.example_predictions(args.bench, "poor", subset)
        readings = []
        for n in range(args.sessions + 1):
            client = Client(url, verbose=False)
            client.predict(
                args.bench,
                subset,
                handle_file(example),
                "official",
                "my-model",
                space.BUNDLED,
                "",
                api_name="/score",
            )
            client.close()
            if n % 10 == 0:
                time.sleep(1)
                readings.append((n, _rss_mb(proc.pid)))
                print(f"after {n:4d} sessions: {readings[-1][1]:8.1f} MB", flush=True)
        x, y = np.array(readings).T
        # past each store's bound
        for start in (space.MAX_VIEWER_STATES + 10, space.MAX_SESSIONS + 10):
            kept = x >= start
            if kept.sum() >= 2:
                slope = np.polyfit(x[kept], y[kept], 1)[0]
                print(f"{args.bench}: {slope:.3f} MB per session from the {start}th session on")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
