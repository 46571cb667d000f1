"""The ``--server`` client's HTTP: one keep-alive HTTP/1.1 connection per worker thread, over the
standard library's ``http.client``.

Each request is bounded by one deadline, which covers connecting, sending and every read of the
reply (a server that drips its reply a byte at a time never trips a per-read timeout). Proxies come
from the environment as ``urllib`` reads it (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``; https
through a CONNECT tunnel); TLS is verified against the system's certificates (``SSL_CERT_FILE``
included) and certifi's. httpx served here before; its request alone cost more of the client's CPU
than the rest of an item (bench/serving.py, #67).
"""

from __future__ import annotations

import base64
import http.client
import ssl
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass

from ..engine.errors import InputError

__all__ = ["Connection", "Reply", "TransportError", "CertificateError", "ReplyLate",
           "ReplyTooLarge"]

#: bytes asked of the socket per read of a reply
_CHUNK = 1 << 16


class TransportError(Exception):
    """No whole reply: the server unreachable, the connection dropped or reset, a read timed out."""


class CertificateError(TransportError):
    """The server's TLS certificate is not trusted here (no retry changes that)."""


class ReplyLate(Exception):
    """The reply was still coming at the deadline (``received`` bytes of its body so far)."""

    def __init__(self, received: int) -> None:
        super().__init__(f"the reply was still coming after {received} bytes")
        self.received = received


class ReplyTooLarge(Exception):
    """The reply's body passed the size cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")


@dataclass(frozen=True)
class Reply:
    """A whole reply: its status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced), for messages."""
        return self.body.decode("utf-8", "replace")


@dataclass(frozen=True)
class _Route:
    """Where a connection goes: ``url``'s server, directly or through ``proxy`` (None: directly)."""

    url: urllib.parse.SplitResult
    proxy: urllib.parse.SplitResult | None

    @classmethod
    def of(cls, url: str) -> _Route:
        """The route to ``url`` under the environment's proxy variables."""
        parts = urllib.parse.urlsplit(url)
        proxy = urllib.request.getproxies().get(parts.scheme)
        if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
            return cls(parts, None)
        try:
            route = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
            route.port                                      # noqa: B018 (parsing it is the check)
        except ValueError as exc:
            raise InputError(f"the {parts.scheme}_proxy environment variable {proxy!r} is not a "
                             "valid address "
                             f"({exc})", fix=f"correct or unset {parts.scheme}_proxy") from None
        if not route.hostname:
            raise InputError(f"the {parts.scheme}_proxy environment variable {proxy!r} names no "
                             "host",
                             fix=f"correct or unset {parts.scheme}_proxy")
        return cls(parts, route)

    def target(self, path: str) -> str:
        """The request target: the path, or the absolute URL a plain-http proxy forwards."""
        if self.proxy is not None and self.url.scheme == "http":
            return f"http://{self.url.netloc}{path}"
        return path

    @property
    def forwarded(self) -> dict[str, str]:
        """Headers for a plain-http proxy's forwarding (an https tunnel carries them on its CONNECT
        instead)."""
        return self.proxy_headers() if self.url.scheme == "http" else {}

    def proxy_headers(self) -> dict[str, str]:
        """``Proxy-Authorization`` when the proxy's address carries a user and password."""
        if self.proxy is None or self.proxy.username is None:
            return {}
        user = (
            urllib.parse.unquote(self.proxy.username)
            + ":"
            + urllib.parse.unquote(self.proxy.password or "")
        )
        return {"Proxy-Authorization": "Basic " + base64.b64encode(user.encode()).decode("ascii")}


def _tls() -> ssl.SSLContext:
    """The system's trusted certificates (and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), plus certifi's
    bundle as httpx and requests use it, where it is installed."""
    context = ssl.create_default_context()
    try:
        import certifi
    except ImportError:
        return context
    context.load_verify_locations(certifi.where())
    return context


def _open(route: _Route, timeout: float) -> http.client.HTTPConnection:
    """An unconnected connection for ``route`` (``timeout``: connecting, and a TLS handshake)."""
    url, proxy = route.url, route.proxy
    host, port = (proxy.hostname, proxy.port) if proxy is not None else (url.hostname, url.port)
    if url.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(host or "", port,
                                                                       timeout=timeout,
                                                                       context=_tls())
        if proxy is not None:
            conn.set_tunnel(url.hostname or "", url.port, headers=route.proxy_headers())
        return conn
    return http.client.HTTPConnection(host or "", port, timeout=timeout)


#: failures of a kept-alive connection that the server closed while it was idle
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class Connection:
    """One keep-alive connection to the server at ``url``, opened at the first request and again
    after a failure. Not shared between threads: each worker holds its own."""

    def __init__(self, url: str, *, connect_timeout: float) -> None:
        self.route = _Route.of(url)
        self.connect_timeout = connect_timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str], *,
                deadline: float, max_bytes: int) -> Reply:
        """``method path`` answered whole before ``deadline`` (``time.monotonic()``), its body at
        most ``max_bytes``: else :class:`ReplyLate`, :class:`ReplyTooLarge` or
        :class:`TransportError`."""
        if self._conn is not None:
            try:
                return self._exchange(method, path, body, headers, deadline, max_bytes)
            except _STALE:
                # closed by the server while idle: the request never reached it, sent again below
                pass
        try:
            return self._exchange(method, path, body, headers, deadline, max_bytes)
        except _STALE as exc:
            raise TransportError(
                f"the server closed the connection without a reply ({exc!r})"
            ) from None

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                  deadline: float, max_bytes: int) -> Reply:
        if self._conn is None:
            self._conn = _open(self.route, self.connect_timeout)
        conn = self._conn
        try:
            left = max(deadline - time.monotonic(), 0.001)
            if conn.sock is None:
                conn.timeout = min(self.connect_timeout, left)
                conn.connect()
            conn.sock.settimeout(left)
            conn.request(method, self.route.target(path), body=body,
                         headers={**self.route.forwarded, **headers})
            response = conn.getresponse()
            data = _read(conn, response, deadline, max_bytes)
        except _STALE:
            self.close()
            raise
        except ssl.SSLCertVerificationError as exc:
            self.close()
            raise CertificateError(str(exc)) from None
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise TransportError(f"{type(exc).__name__}: {exc}") from None
        except BaseException:
            # a reply left half read: the connection cannot carry the next request
            self.close()
            raise
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)


def _read(conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float,
          max_bytes: int) -> bytes:
    """The reply's body, each read given only the time left before ``deadline``."""
    body = bytearray()
    while True:
        try:
            chunk = response.read1(_CHUNK)
        except TimeoutError:        # the time left ran out between two pieces of the body
            raise ReplyLate(len(body)) from None
        if not chunk:
            break
        body += chunk
        now = time.monotonic()
        if now > deadline:
            raise ReplyLate(len(body))
        if len(body) > max_bytes:
            raise ReplyTooLarge(max_bytes)
        if conn.sock is not None:
            conn.sock.settimeout(max(deadline - now, 0.001))
    # read whole: the connection takes the next request (read1 leaves it marked busy)
    response.close()
    return bytes(body)
