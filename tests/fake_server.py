"""A local fake OpenAI-compatible chat-completions server for the serving client's tests and bench:
a fixed (or drawn) latency, a record of how many requests were in flight at once, and scripted
misbehaviour (replies that are not answers, throttling). Loopback only; it stops with the test."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


#: a chat-completions reply whose answer is ``text``
def answer(text: str, model: str = "fake", **choice: Any) -> bytes:
    return json.dumps({"id": "x", "model": model, "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop", **choice}]}).encode()


class FakeServer:
    """``reply(request_number, body) -> (status, headers, bytes)`` decides each reply; ``latency()``
    its delay."""

    def __init__(self, reply: Callable[[int, dict], tuple[int, dict, bytes]],
                 latency: Callable[[], float]) -> None:
        self.reply, self.latency = reply, latency
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = self.requests = 0
        # TCP connections accepted (HTTP/1.1 keeps each alive for the next request)
        self.connections = 0
        # each request's target as sent (a path, or a proxy's absolute URL)
        self.targets: list[str] = []
        # False: each connection closed after its reply, without saying so
        self.keep_alive = True

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body are two writes: no 40 ms wait for a delayed ACK
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with server.lock:
                    server.connections += 1

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, headers: dict, body: bytes) -> None:
                # a byte at a time, this far apart
                drip = float(headers.pop("X-Drip-Seconds", 0))
                self.send_response(status)
                for k, v in {
                    "Content-Type": "application/json",
                    "Content-Length": str(len(body)),
                    **headers,
                }.items():
                    self.send_header(k, v)
                self.end_headers()
                step = 1 if drip else max(len(body), 1)
                for at in range(0, len(body), step):
                    self.wfile.write(body[at:at + step])
                    self.wfile.flush()
                    if drip:
                        time.sleep(drip)

            def do_GET(self) -> None:
                self._send(
                    200, {}, json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode()
                )

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.targets.append(self.path)
                    server.requests += 1
                    number = server.requests
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    delay = server.latency()
                    if delay:
                        time.sleep(delay)
                    self._send(*server.reply(number, body))
                    self.close_connection = not server.keep_alive
                finally:
                    with server.lock:
                        server.in_flight -= 1

        return Handler


@contextmanager
def serve(reply: Callable[[int, dict], tuple[int, dict, bytes]] = lambda n,
          b: (200, {}, answer("a dog")), latency: Callable[[], float] = lambda: 0.0,
          tls: ssl.SSLContext | None = None) -> Iterator[tuple[str, FakeServer]]:
    """(URL, the server's record) of a fake server on a free loopback port, for the block's
    duration; https on ``localhost`` with ``tls`` (a server-side context holding its
    certificate)."""
    fake = FakeServer(reply, latency)
    # many clients connecting at once (the default backlog is 5)
    ThreadingHTTPServer.request_queue_size = 512
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    httpd.daemon_threads = True
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        host = "https://localhost" if tls is not None else "http://127.0.0.1"
        yield f"{host}:{httpd.server_address[1]}", fake
    finally:
        httpd.shutdown()
        httpd.server_close()
