"""``vlbench predict --server URL --model NAME``: the same prompts sent to an OpenAI-compatible
chat-completions endpoint (vLLM, SGLang, ``transformers serve``, a provider) instead of a model in
this process.

Each item is one request: the image as a PNG data URL, then the family's prompt, greedy
(``temperature`` 0), at most ``max_new_tokens``; ``concurrency`` requests are in flight at once,
each retried with exponential backoff when the server is unreachable, overloaded (429) or failing
(5xx). The answers go through the same parsers and the same resumable partial file as the in-process
path. When the server returns token log-probabilities (vLLM and SGLang do with ``logprobs``),
generated boxes are scored from them (:mod:`.confidence`); a server that does not (``transformers
serve``) leaves them scored 1, and the run's meta file counts those boxes. The family (prompt and
box convention) comes from NAME's config when it can be read (a local folder or a cached Hub id),
else ``--box-format`` is needed.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import os
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..benchmarks.protocol.predicting import PredictItem
from ..engine.errors import InputError, ServiceError
from .confidence import TokenScores, strip_with_offsets
from .families import GENERATOR, OTHER
from .models import Answer, ModelInfo
from .transport import CertificateError, Connection, Reply, ReplyLate, ReplyTooLarge, TransportError

__all__ = ["ServedModel", "model_info", "connect", "answers_as_completed", "data_url", "RETRIES",
           "MAX_REPLY_BYTES", "REQUEST_TIMEOUT"]

#: attempts per request (waits 1, 2, 4, 8 s between them)
RETRIES = 5
#: seconds one request may take, its retries and waits included (``--request-timeout``)
REQUEST_TIMEOUT = 600.0
#: the longest wait for a connection, in seconds
CONNECT_TIMEOUT = 30.0
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


@dataclass
class ServedModel:
    """A served model: the endpoint, the model name it serves, how many requests go at once, and the
    seconds one request may take (``timeout``: every attempt and wait of it, the reply read
    whole)."""

    url: str
    model: str
    api_key: str | None
    concurrency: int
    info: ModelInfo
    timeout: float = REQUEST_TIMEOUT
    kind: str = GENERATOR
    device: str = "server"

    @property
    def model_type(self) -> str:
        """The served model's ``model_type`` (from its config, or "served")."""
        return self.info.model_type


def model_info(name: str, revision: str | None = None) -> ModelInfo:
    """The family of a served model from its config when one is here (a local folder, or a Hub id
    already in the local cache), else the catch-all family (then ``--box-format`` says how its boxes
    are written). A served name is often no Hub id ("gpt-4o", "my-vlm"): it is never looked up on
    the network."""
    from .models import inspect_model

    local = name if Path(name).is_dir() else _cached_snapshot(name, revision)
    if local is not None:
        try:
            return inspect_model(local, kind=GENERATOR)
        except InputError:
            pass
    return ModelInfo(GENERATOR, "served", OTHER)


def _cached_snapshot(name: str, revision: str | None) -> str | None:
    """The local snapshot folder of Hub id ``name`` when its config is in the Hub cache, else None
    (no network)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(name, "config.json", revision=revision)
    # a name that is no valid repo id (HFValidationError, ValueError)
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def _failed(url: str, message: str, fix: str) -> ServiceError:
    """A server problem, naming the server and the fix (not the user's input: exit status 1)."""
    return ServiceError(f"{url}: {message}. Fix: {fix}")


def _endpoint(url: str, path: str) -> str:
    base = url.rstrip("/")
    return base + (path if base.endswith("/v1") else "/v1" + path)


#: the largest reply read (an answer is a few kB; a proxy or a broken server can send far more)
MAX_REPLY_BYTES = 16 * 2**20
#: the longest ``Retry-After`` honoured, in seconds (a longer one is capped: the run keeps its pace)
MAX_RETRY_AFTER = 60.0


def _retry_after(reply: Reply, attempt: int) -> float:
    """Seconds to wait before the next attempt: the server's ``Retry-After`` (seconds, bounded),
    else 1, 2, 4, 8 s."""
    try:
        return min(max(float(reply.headers.get("retry-after", "")), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 2.0 ** attempt


def _untrusted(url: str, exc: CertificateError) -> ServiceError:
    return _failed(url, f"the server's TLS certificate is not trusted here ({exc})",
                   "check --server; for a server with its own certificate authority, export "
                   "SSL_CERT_FILE=<its file>")


def _late(url: str, timeout: float, problem: str) -> ServiceError:
    return _failed(url, f"no whole answer within {timeout:g} s ({problem})",
                   "check the server (its load, its logs), or allow more time with "
                   "--request-timeout")


def _reply_object(body: bytes, url: str) -> dict[str, Any]:
    """The JSON object of a 2xx reply; anything else (a body cut mid-JSON, a proxy's HTML page, a
    200 carrying ``{"error": ...}``) is a :class:`ServiceError` quoting what came back."""
    try:
        reply = json.loads(body)
    except ValueError:
        shown = body[:200].decode("utf-8", "replace")
        raise _failed(url, f"the server's reply is not JSON (it begins {shown!r})",
                      "check that --server is an OpenAI-compatible server, not a proxy's or a web "
                      "page's address"
                      ) from None
    if isinstance(reply, dict) and "error" in reply and "choices" not in reply:
        error = reply["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise _failed(url, f"the server answered with an error: {str(message)[:300]}",
                      "read the server's message; check --model and the server's logs")
    if not isinstance(reply, dict):
        raise _failed(url, f"the server's reply is a JSON {type(reply).__name__}, not an object",
                      "use an OpenAI-compatible chat-completions server")
    return reply


def _refused(url: str, reply: Reply, timeout: float, deadline: float,
             attempt: int) -> tuple[str, float]:
    """(the problem, the wait before the next attempt) for a reply that is no answer; a refusal that
    no retry can change (a 4xx other than throttling, a ``Retry-After`` beyond the deadline) is a
    :class:`ServiceError`."""
    problem = f"HTTP {reply.status}: {reply.text[:300]}"
    if reply.status in (401, 403):
        raise _failed(url, f"the server refused the credentials ({problem})",
                      "pass the API key through --api-key-env NAME (the variable holding it)")
    if reply.status not in _RETRY_STATUS:
        raise _failed(url, f"the server refused the request ({problem})",
                      "check --model (the name the server serves) and the server's logs")
    wait = _retry_after(reply, attempt)
    if reply.headers.get("retry-after") and time.monotonic() + wait >= deadline:
        raise _failed(url, f"the server asked to retry after {reply.headers['retry-after']} s "
                           f"(Retry-After), beyond the {timeout:g} s --request-timeout allows "
                           f"({problem})",
                      "allow more time with --request-timeout, lower --concurrency, or retry later")
    return problem, wait


def _post(connection: Connection, url: str, body: bytes, headers: dict[str, str],
          timeout: float) -> dict[str, Any]:
    """One request with retries, all within ``timeout`` seconds (a 429's ``Retry-After`` honoured,
    bounded); a refusal (4xx), a reply that is not an answer or a server that does not answer in
    time is a :class:`ServiceError`. The reply is read up to :data:`MAX_REPLY_BYTES` (an answer is a
    few kB)."""
    deadline = time.monotonic() + timeout
    path = urllib.parse.urlsplit(_endpoint(url, "/chat/completions")).path
    problem = "no reply"
    for attempt in range(RETRIES):
        try:
            reply = connection.request("POST", path, body,
                                       {"Content-Type": "application/json", **headers},
                                       deadline=deadline, max_bytes=MAX_REPLY_BYTES)
        except ReplyLate as exc:
            raise _late(url, timeout, str(exc)) from None
        except ReplyTooLarge:
            raise _failed(url, f"the server's reply is larger than {MAX_REPLY_BYTES // 2**20} MiB",
                          "check that --server is the chat-completions server and --max-new-tokens "
                          "is sensible"
                          ) from None
        except CertificateError as exc:
            raise _untrusted(url, exc) from None
        except TransportError as exc:
            problem, wait = str(exc), 2.0 ** attempt
        else:
            if reply.status < 300:
                return _reply_object(reply.body, url)
            problem, wait = _refused(url, reply, timeout, deadline, attempt)
        if time.monotonic() + (wait if attempt + 1 < RETRIES else 0) >= deadline:
            raise _late(url, timeout, problem)
        if attempt + 1 < RETRIES:
            time.sleep(wait)
    raise _failed(url, f"the server did not answer after {RETRIES} attempts ({problem})",
                  "check that the server runs and --server is its address; rerun to continue the "
                  "run")


def _check_address(url: str) -> None:
    """Refuse a ``--server`` that is not an http(s) address with a host (and a port, if any, that
    parses)."""
    fix = "pass e.g. --server http://127.0.0.1:8000"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port                                          # noqa: B018 (parsing it is the check)
    except ValueError as exc:
        raise InputError(f"--server {url!r} is not a valid address ({exc})", fix=fix) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"--server {url!r} is not an http(s) address", fix=fix)


def connect(url: str, model: str, info: ModelInfo, *, concurrency: int = 8,
            api_key_env: str | None = None, timeout: float = REQUEST_TIMEOUT) -> ServedModel:
    """Check that the server answers and serves ``model`` (its ``/v1/models``), before any item is
    sent."""
    _check_address(url)
    if concurrency < 1:
        raise InputError(f"--concurrency {concurrency} must be at least 1",
                         fix="pass e.g. --concurrency 8")
    files = _open_file_limit()
    # one socket per request in flight, and room for the rest
    if files is not None and concurrency > files - 64:
        raise InputError(f"--concurrency {concurrency} needs a connection each, and this process "
                         f"may open only {files} files",
                         fix=f"pass at most --concurrency {max(1, files - 64)}, or raise the limit "
                                               "(ulimit -n)")
    if not timeout > 0:
        raise InputError(f"--request-timeout {timeout} must be a positive number of seconds",
                         fix="pass e.g. --request-timeout 600")
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise InputError(f"the environment variable {api_key_env} is not set",
                         fix=f"export {api_key_env}=<key>")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    connection = Connection(url, connect_timeout=min(CONNECT_TIMEOUT, timeout))
    try:
        reply = connection.request("GET", urllib.parse.urlsplit(_endpoint(url, "/models")).path,
                                   None, headers,
                                   deadline=time.monotonic() + min(CONNECT_TIMEOUT, timeout),
                                   max_bytes=MAX_REPLY_BYTES)
    except CertificateError as exc:
        raise _untrusted(url, exc) from None
    except (TransportError, ReplyLate, ReplyTooLarge) as exc:
        raise _failed(url, f"cannot reach the server ({exc})", "start the server first, or check "
                                                               "--server") from None
    finally:
        connection.close()
    if reply.status >= 300:
        raise _failed(url, f"the server's model list failed (HTTP {reply.status})",
                      "check --server and the API key (--api-key-env)")
    return ServedModel(url, model, api_key, concurrency, info, timeout)


#: encoded formats OpenAI-compatible servers take as they are -> their media type
SENT_AS_IS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


def _open_file_limit() -> int | None:
    """The soft limit on this process's open files (None where the platform has none to read)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def data_url(image: Any) -> str:
    """An image as the data URL a chat message carries (:func:`data_url_bytes`, as text)."""
    return data_url_bytes(image).decode("ascii")


def data_url_bytes(image: Any) -> bytes:
    """An image as the data URL a chat message carries, in ASCII bytes. A dataset's image in a
    format servers take (JPEG, PNG, WebP) is sent as its own bytes: the server decodes the pixels
    the dataset holds, and the client spends only base64 on it (re-encoding a 640x480 photo as PNG
    cost tens of milliseconds and several times the bytes). Anything else, or an image already
    decoded, is encoded once as PNG (lossless)."""
    from .streaming import LazyImage

    if isinstance(image, LazyImage):
        data, kind = image.encoded()
        if kind in SENT_AS_IS and _whole(data, kind):
            return f"data:{SENT_AS_IS[kind]};base64,".encode("ascii") + base64.b64encode(data)
        # a cut-off file fails here, as a decode would, naming the item
        image = image.convert("RGB")
    buf = io.BytesIO()
    # lossless: the server sees the pixels the dataset holds
    image.convert("RGB").save(buf, format="PNG")
    return b"data:image/png;base64," + base64.b64encode(buf.getvalue())


def chat_request(model: str, image_url: bytes, text: str, max_tokens: int, logprobs: bool) -> bytes:
    """The chat-completions request body: one user message of the image, then the text; greedy, at
    most ``max_tokens``. The image's data URL is joined in as bytes: its alphabet (base64,
    ``data:``, ``;``, ``/``) needs no JSON escape, and ``json.dumps`` of the whole message scanned
    and copied its ~100 kB three times, about a third of the client's CPU per item
    (bench/serving.py)."""
    settings: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": 0}
    if logprobs:
        settings["logprobs"] = True
    return b"".join(
        (
            json.dumps(settings)[:-1].encode(),
            b', "messages": [{"role": "user", "content": '
            b'[{"type": "image_url", "image_url": {"url": "',
            image_url,
            b'"}}, {"type": "text", "text": ',
            json.dumps(text).encode(),
            b"}]}]}",
        )
    )


def _whole(data: bytes, kind: str) -> bool:
    """Whether encoded bytes reach their format's end marker (JPEG's EOI, PNG's IEND chunk, the RIFF
    length of WebP): a file cut off in the dataset is then decoded here, and refused by name,
    instead of being sent."""
    if kind == "JPEG":
        return data.rstrip(b"\0").endswith(b"\xff\xd9")
    if kind == "PNG":
        return data.endswith(b"IEND\xaeB`\x82")
    return len(data) >= 12 and int.from_bytes(data[4:8], "little") + 8 <= len(data)


def _tokens(content: str, logprobs: Any) -> TokenScores | None:
    """The answer's tokens from the server's ``logprobs.content`` (their texts must spell the
    answer, each log-probability a number; else None: the boxes are then scored 1 and counted
    so)."""
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("content"), list):
        return None
    entries = [e for e in logprobs["content"] if isinstance(e, dict) and isinstance(e.get("token"),
                                                                                    str)]
    if not entries or "".join(e["token"] for e in entries) != content:
        return None
    if not all(
        isinstance(e.get("logprob"), (int, float)) and not isinstance(e.get("logprob"), bool)
        for e in entries
    ):
        return None
    _, position = strip_with_offsets(content, set())
    length = np.array([len(e["token"]) for e in entries], dtype=np.int64)
    end = np.cumsum(length)
    values = np.array([float(e["logprob"]) for e in entries])
    return TokenScores(values, position[end - length], position[end])


def _content(reply: dict[str, Any], url: str) -> tuple[str, dict[str, Any]]:
    """(the answer text, its choice) of a chat-completions reply; any other shape is a
    :class:`ServiceError`."""
    try:
        choice = reply["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _failed(url, "the server's reply has no choices[0].message.content",
                      "use an OpenAI-compatible chat-completions server") from None
    if isinstance(content, list):  # content parts
        content = "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    if content is None:
        content = ""
    if not isinstance(content, str) or not isinstance(choice, dict):
        raise _failed(url, f"the reply's message content is a {type(content).__name__}, not text",
                      "use an OpenAI-compatible chat-completions server")
    return content, choice


#: image placeholders of processor-only prompts (PaliGemma's ``<image>``): over chat the image is
#: its own part
PROCESSOR_IMAGE_TOKENS = ("<image>",)


def chat_text(prompt: str) -> str:
    """A family's prompt as the text part of a chat message: processor-only image placeholders
    removed (the server's chat template places the image part; a literal ``<image>`` would be read
    as words or a second image)."""
    for token in PROCESSOR_IMAGE_TOKENS:
        prompt = prompt.replace(token, "")
    return prompt.strip()


def _ask(served: ServedModel, connection: Connection, item: PredictItem, prompt: str,
         max_new_tokens: int, token_scores: bool, skip_bad: bool) -> Answer:
    from ..engine.images import UNREADABLE
    from .streaming import undecodable, what_is_wrong

    try:
        image = data_url_bytes(item.image)
    except UNREADABLE as exc:
        if skip_bad:        # nothing is sent: the caller counts the item
            return Answer("", unreadable=what_is_wrong(item, exc))
        raise undecodable(item, exc) from None
    body = chat_request(served.model, image, chat_text(prompt), max_new_tokens, token_scores)
    headers = {"Authorization": f"Bearer {served.api_key}"} if served.api_key else {}
    try:
        reply = _post(connection, served.url, body, headers, served.timeout)
        content, choice = _content(reply, served.url)
    # which item met it: the run stops there, every finished answer kept
    except ServiceError as exc:
        raise ServiceError(f"item {item.key}: {exc}") from None
    text, _ = strip_with_offsets(content, set())
    model = reply.get("model")
    return Answer(text, None, truncated=choice.get("finish_reason") == "length",
                  tokens=_tokens(content, choice.get("logprobs")) if token_scores else None,
                  model=model if isinstance(model, str) else None)


def answers_as_completed(served: ServedModel, items: Iterable[PredictItem], prompts: Iterable[str],
                         *, max_new_tokens: int, token_scores: bool = False,
                         skip_bad: bool = False) -> Iterator[tuple[Any, Answer]]:
    """(item key, answer) as each request completes, with ``served.concurrency`` requests in flight
    over the whole run: a sliding window refilled as each completes (as lmms-eval's OpenAI clients
    keep), so a slow request holds one slot, not a batch. ``served.concurrency`` worker threads each
    hold one keep-alive connection, so no more connections are opened than requests are in flight.
    With ``skip_bad`` an image that does not decode is an answer marked ``unreadable`` (no request
    sent). The workers are daemon threads: Ctrl-C or an error stops the run at once, without waiting
    for requests a hung server holds (a thread pool's workers are joined at exit); the answers
    already yielded are the caller's to keep."""
    import queue
    import threading

    pending = zip(items, prompts)
    work: queue.SimpleQueue[tuple[PredictItem, str] | None] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[Any, Answer | BaseException]] = queue.SimpleQueue()

    def worker() -> None:
        connection = Connection(served.url, connect_timeout=min(CONNECT_TIMEOUT, served.timeout))
        try:
            while (task := work.get()) is not None:
                item, prompt = task
                try:
                    done.put((item.key,
                              _ask(served, connection, item, prompt, max_new_tokens, token_scores,
                                             skip_bad)))
                except BaseException as exc:        # handed to the caller's thread, which raises it
                    done.put((item.key, exc))
        finally:
            connection.close()

    in_flight = 0
    for task in itertools.islice(pending, served.concurrency):
        work.put(task)
        in_flight += 1
    workers = [
        threading.Thread(target=worker, daemon=True, name=f"vlbench-ask-{n}")
        for n in range(in_flight)
    ]
    for thread in workers:
        thread.start()
    try:
        while in_flight:
            key, got = done.get()
            in_flight -= 1
            if isinstance(got, BaseException):
                raise got
            yield key, got
            for task in itertools.islice(pending, 1):
                work.put(task)
                in_flight += 1
    finally:
        # each worker ends after the request it holds (a hung one is a daemon: not waited)
        for _ in workers:
            work.put(None)
