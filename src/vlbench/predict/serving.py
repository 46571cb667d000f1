"""``vlbench predict --server URL --model NAME``: the same prompts sent to an OpenAI-compatible chat-completions
endpoint (vLLM, SGLang, ``transformers serve``, a provider) instead of a model in this process.

Each item is one request: the image as a PNG data URL, then the family's prompt, greedy (``temperature`` 0), at most
``max_new_tokens``; ``concurrency`` requests are in flight at once, each retried with exponential backoff when the
server is unreachable, overloaded (429) or failing (5xx). The answers go through the same parsers and the same
resumable partial file as the in-process path. When the server returns token log-probabilities (vLLM and SGLang do
with ``logprobs``), generated boxes are scored from them (:mod:`.confidence`); a server that does not (``transformers
serve``) leaves them scored 1, and the run's meta file counts those boxes. The family (prompt and box convention)
comes from NAME's config when it can be read (a local folder or a cached Hub id), else ``--box-format`` is needed.
"""

from __future__ import annotations

import base64
import io
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..benchmarks.protocol.predicting import PredictItem
from ..engine.errors import InputError, ServiceError
from .confidence import TokenScores, strip_with_offsets
from .families import GENERATOR, OTHER, Preset
from .models import Answer, ModelInfo

__all__ = ["ServedModel", "model_info", "connect", "generate", "data_url", "RETRIES"]

#: attempts per request (waits 1, 2, 4, 8 s between them)
RETRIES = 5
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


@dataclass
class ServedModel:
    """A served model: the endpoint, the model name it serves, how many requests go at once."""

    url: str
    model: str
    api_key: str | None
    concurrency: int
    info: ModelInfo
    timeout: float = 600.0
    kind: str = GENERATOR
    device: str = "server"

    @property
    def model_type(self) -> str:
        """The served model's ``model_type`` (from its config, or "served")."""
        return self.info.model_type


def model_info(name: str, revision: str | None = None) -> ModelInfo:
    """The family of a served model from its config when it can be read, else the catch-all family (then
    ``--box-format`` says how its boxes are written)."""
    from .models import inspect_model

    try:
        return inspect_model(name, revision=revision, kind=GENERATOR)
    except InputError:
        return ModelInfo(GENERATOR, "served", OTHER)


def _failed(url: str, message: str, fix: str) -> ServiceError:
    """A server problem, naming the server and the fix (not the user's input: exit status 1)."""
    return ServiceError(f"{url}: {message}. Fix: {fix}")


def _endpoint(url: str, path: str) -> str:
    base = url.rstrip("/")
    return base + (path if base.endswith("/v1") else "/v1" + path)


def _post(client: Any, url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One request with retries; a refusal (4xx) or a server that never answers is a :class:`ServiceError`."""
    import httpx

    for attempt in range(RETRIES):
        try:
            response = client.post(url, json=body, headers=headers)
        except httpx.TransportError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if response.status_code < 300:
                return response.json()
            problem = f"HTTP {response.status_code}: {response.text[:300]}"
            if response.status_code not in _RETRY_STATUS:
                raise _failed(url, f"the server refused the request ({problem})",
                     "check --model (the name the server serves) and the server's logs")
        if attempt + 1 < RETRIES:
            time.sleep(2.0 ** attempt)
    raise _failed(url, f"the server did not answer after {RETRIES} attempts ({problem})",
                     "check that the server runs and --server is its address; rerun to continue the run")


def connect(url: str, model: str, info: ModelInfo, *, concurrency: int = 8, api_key_env: str | None = None,
            timeout: float = 600.0) -> ServedModel:
    """Check that the server answers and serves ``model`` (its ``/v1/models``), before any item is sent."""
    import httpx

    if not url.startswith(("http://", "https://")):
        raise InputError(f"--server {url!r} is not an http(s) address", fix="pass e.g. --server http://127.0.0.1:8000")
    if concurrency < 1:
        raise InputError(f"--concurrency {concurrency} must be at least 1", fix="pass e.g. --concurrency 8")
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise InputError(f"the environment variable {api_key_env} is not set", fix=f"export {api_key_env}=<key>")
    try:
        response = httpx.get(_endpoint(url, "/models"), timeout=30,
                             headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
    except httpx.TransportError as exc:
        raise _failed(url, f"cannot reach the server ({type(exc).__name__}: {exc})",
                     "start the server first, or check --server") from None
    if response.status_code >= 300:
        raise _failed(url, f"the server's model list failed (HTTP {response.status_code})",
                     "check --server and the API key (--api-key-env)")
    return ServedModel(url, model, api_key, concurrency, info, timeout)


def data_url(image: Any) -> str:
    """An image as a PNG data URL, what a chat message carries (lossless: the server sees the dataset's pixels)."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")       # lossless: the server sees the pixels the dataset holds
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _tokens(content: str, logprobs: Any) -> TokenScores | None:
    """The answer's tokens from the server's ``logprobs.content`` (their texts must spell the answer)."""
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("content"), list):
        return None
    entries = [e for e in logprobs["content"] if isinstance(e, dict) and isinstance(e.get("token"), str)]
    if not entries or "".join(e["token"] for e in entries) != content:
        return None
    _, position = strip_with_offsets(content, set())
    length = np.array([len(e["token"]) for e in entries], dtype=np.int64)
    end = np.cumsum(length)
    values = np.array([float(e.get("logprob", np.nan)) for e in entries])
    return TokenScores(values, position[end - length], position[end])


def _ask(served: ServedModel, client: Any, item: PredictItem, prompt: str, max_new_tokens: int,
         token_scores: bool) -> Answer:
    body: dict[str, Any] = {
        "model": served.model, "max_tokens": max_new_tokens, "temperature": 0,
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": data_url(item.image)}},
                                                  {"type": "text", "text": prompt}]}]}
    if token_scores:
        body["logprobs"] = True
    headers = {"Authorization": f"Bearer {served.api_key}"} if served.api_key else {}
    reply = _post(client, _endpoint(served.url, "/chat/completions"), body, headers)
    try:
        choice = reply["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _failed(served.url, "the server's reply has no choices[0].message.content",
                     "use an OpenAI-compatible chat-completions server") from None
    if isinstance(content, list):           # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    content = content or ""
    text, _ = strip_with_offsets(content, set())
    return Answer(text, None, truncated=choice.get("finish_reason") == "length",
                  tokens=_tokens(content, choice.get("logprobs")) if token_scores else None)


def generate(served: ServedModel, items: list[PredictItem], prompts: list[str], preset: Preset, *,
             max_new_tokens: int, text_answer: bool, token_scores: bool = False) -> list[Answer]:
    """Each item's answer, ``served.concurrency`` requests at a time, in item order."""
    import httpx

    with httpx.Client(timeout=served.timeout) as client, ThreadPoolExecutor(served.concurrency) as pool:
        return list(pool.map(lambda pair: _ask(served, client, pair[0], pair[1], max_new_tokens, token_scores),
                             zip(items, prompts)))
