"""A local stand-in for the Hugging Face Hub's file API and for a plain https file host, on
127.0.0.1, for the fetch tests (``HF_ENDPOINT`` names it; the real ``huggingface_hub`` client talks
to it).

It answers what ``hf_hub_download`` asks: ``HEAD`` / ``GET
/datasets/OWNER/NAME/resolve/REVISION/FILE`` with the Hub's headers (``X-Repo-Commit``; ``ETag`` the
file's SHA-256 for LFS files, parquet and archives, the git blob SHA-1 for the others), byte ranges
for a resumed download, and the Hub's 404 error codes; and ``GET /files/NAME`` for a plain host.
``corrupt`` serves other bytes under a file's true hash; ``slow`` makes each response trickle.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _etag(name: str, data: bytes) -> str:
    if name.endswith((".parquet", ".tar.gz", ".tar")):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class HubStandIn:
    """``repos``: repo id -> commit -> {file: bytes}; ``branches``: repo id -> branch -> commit;
    ``plain``: name -> bytes served at /files/NAME."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, dict[str, bytes]]] = {}
        self.branches: dict[str, dict[str, str]] = {}
        self.plain: dict[str, bytes] = {}
        self.corrupt: set[str] = set()
        self.slow: float = 0.0
        self.requests: list[str] = []
        self.ranges: list[str] = []        # the Range headers asked for (a resumed download)
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                standin._answer(self, body=False)

            def do_GET(self) -> None:
                standin._answer(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, repo: str, commit: str, files: dict[str, bytes], branch: str = "main") -> None:
        self.repos.setdefault(repo, {})[commit] = files
        self.branches.setdefault(repo, {})[branch] = commit

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        self.requests.append(f"{handler.command} {handler.path}")
        if handler.headers.get("Range"):
            self.ranges.append(handler.headers["Range"])
        found = self._find(handler.path)
        if isinstance(found, str):
            handler.send_response(404)
            handler.send_header("X-Error-Code", found)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        name, data, commit = found
        etag = _etag(name, data)
        if name in self.corrupt:
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        start = 0
        match = re.match(r"bytes=(\d+)-", handler.headers.get("Range") or "")
        if match and body:
            start = int(match.group(1))
        handler.send_response(206 if start else 200)
        if commit:
            handler.send_header("X-Repo-Commit", commit)
        handler.send_header("ETag", f'"{etag}"')
        handler.send_header("Content-Length", str(len(data) - start))
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        if not body:
            return
        rest = data[start:]
        step = max(1, len(rest) // 20) if self.slow else len(rest) or 1
        for i in range(0, len(rest), step):
            try:
                handler.wfile.write(rest[i:i + step])
                handler.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return
            if self.slow:
                time.sleep(self.slow)

    def _find(self, path: str) -> tuple[str, bytes, str | None] | str:
        path = path.split("?")[0]
        plain = re.fullmatch(r"/files/(.+)", path)
        if plain:
            name = plain.group(1)
            return (name, self.plain[name], None) if name in self.plain else "EntryNotFound"
        match = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if not match or match.group(1) not in self.repos:
            return "RepoNotFound"
        repo, revision, name = match.groups()
        commit = self.branches[repo].get(revision, revision)
        files = self.repos[repo].get(commit)
        if files is None:
            return "RevisionNotFound"
        if name not in files:
            return "EntryNotFound"
        return name, files[name], commit
