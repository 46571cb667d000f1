"""`vlbench predict --server`: a real OpenAI-compatible server (`transformers serve`, from
transformers[serving], in the test extra) started by the test on 127.0.0.1, serving the scripted
tiny Qwen2-VL of tests/tiny_models.py (whose greedy answer is known). The served run writes the same
prediction file as the in-process run; a run killed mid-way resumes from its partial file; an
unreachable server is a clear error."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("fastapi",
                    reason="transformers serve needs transformers[serving] (pip install -e "
                           "'.[test]')")


@pytest.fixture(scope="module")
def served(built_samples, tmp_path_factory):
    """(model folder, server URL): the scripted model answering
    '<loc0000><loc0100><loc0500><loc0600> LABEL' (LABEL the first label of the OVDEval sample's
    first 'color' image), served by `transformers serve`."""
    from tiny_models import scripted_qwen_vl
    from vlbench.benchmarks import get_benchmark
    from vlbench.predict import _items, load_data

    data = built_samples / "ovdeval"
    rows, _ = load_data("ovdeval", data, config="color")
    label = _items(get_benchmark("ovdeval"), rows, "image-text-to-text", data)[0].queries[0]
    model = scripted_qwen_vl(tmp_path_factory.mktemp("served") / "model",
                             ["<loc0000>", "<loc0100>", "<loc0500>", "<loc0600>", " ", label,
                              "<|im_end|>"],
                             [3.0, 1.0, 2.0, 4.0, 5.0, 0.5, 6.0])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("serve-log") / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-c",
                             "from transformers.cli.transformers import main; main()", "serve",
                             str(model), "--host", "127.0.0.1", "--port", str(port)], stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/health", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("transformers serve exited: "
                                   f"{Path(log.name).read_text()[-2000:]}") from None
            time.sleep(1)
    else:
        proc.kill()
        raise RuntimeError("transformers serve did not start")
    yield model, url
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vlbench", *args], capture_output=True, text=True,
                          timeout=600, env=env)


def test_the_served_run_writes_the_in_process_run_s_file(served, built_samples, tmp_path):
    """Every 'color' image of the sample, scores constant (transformers serve returns no
    log-probabilities): the file from the server equals the file from the model run in this process,
    entry for entry, and the meta file names the server."""
    from vlbench.predict import predict

    model, url = served
    data = built_samples / "ovdeval"
    local = tmp_path / "local.json"
    predict("ovdeval", str(model), data, local, config="color", batch_size=2, max_new_tokens=12,
            box_format="loc-1024", box_scores="constant", progress=False)
    remote = tmp_path / "remote.json"
    proc = _cli("predict", "ovdeval", "--server", url, "--model", str(model), "--data", str(data),
                "--config",
                "color", "--box-format", "loc-1024", "--box-scores", "constant", "--max-new-tokens",
                "12", "--concurrency", "3", "--out", str(remote))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(remote.read_text()) == json.loads(local.read_text()) and json.loads(
        local.read_text()
    )
    settings = json.loads(Path(f"{remote}.meta.json").read_text())["settings"]
    assert settings["server"] == url and settings["input"] == "server chat"


def test_a_served_run_killed_mid_way_resumes(served, built_samples, tmp_path):
    """The same run, one request at a time, killed (SIGKILL) once its partial file holds an answer:
    rerunning the command finishes it from the partial file, and the file equals an uninterrupted
    run's."""
    model, url = served
    data = built_samples / "ovdeval"
    args = ["predict", "ovdeval", "--server", url, "--model", str(model), "--data", str(data),
            "--config", "color",
            "--box-format", "loc-1024", "--box-scores", "constant", "--max-new-tokens", "12",
            "--concurrency", "1", "--batch-size", "1"]
    whole = tmp_path / "whole.json"
    assert _cli(*args, "--out", str(whole)).returncode == 0
    out = tmp_path / "resumed.json"
    proc = subprocess.Popen([sys.executable, "-m", "vlbench", *args, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = Path(f"{out}.partial.jsonl")
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if partial.exists() and len(partial.read_text().splitlines()) >= 2:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait(timeout=30)
    assert not out.exists() and partial.exists(), "the run finished before it could be killed"
    done = len(partial.read_text().splitlines()) - 1
    again = _cli(*args, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert f"{done} resumed" in again.stdout
    assert json.loads(out.read_text()) == json.loads(whole.read_text())


def test_an_unreachable_server_is_a_clear_error(built_samples, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # nothing listens there once the socket is closed
    proc = _cli("predict", "ovdeval", "--server", f"http://127.0.0.1:{port}", "--model",
                "some/model", "--data",
                str(built_samples / "ovdeval"), "--config", "color", "--box-format", "loc-1024",
                "--out", str(tmp_path / "p.json"))
    assert (
        proc.returncode == 1
        and "cannot reach the server" in proc.stderr
        and "Traceback" not in proc.stderr
    )


@pytest.mark.parametrize("address, env, said", [
    ("http://[::1", {}, "is not a valid address (Invalid IPv6 URL)"),
    ("http://127.0.0.1:99999", {}, "is not a valid address (Port out of range"),
    ("http://:8000", {}, "is not an http(s) address"),
    ("127.0.0.1:8000", {}, "is not an http(s) address"),
    ("http://127.0.0.2:9", {"http_proxy": "http://[proxy", "no_proxy": ""},
     "http_proxy environment variable"),
])
def test_a_malformed_server_or_proxy_address_is_a_clear_error(address, env, said, built_samples,
                                                              tmp_path):
    """Each refused before any request, naming the address and its fix (the IPv6 one and a bad proxy
    variable were tracebacks from urllib's parser); nothing written."""
    proc = _cli("predict", "ovdeval", "--server", address, "--model", "some/model", "--data",
                str(built_samples / "ovdeval"), "--config", "color", "--box-format", "loc-1024",
                "--out", str(tmp_path / "p.json"), env={**os.environ, **env})
    assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, (
        proc.stderr
    )
    assert list(tmp_path.iterdir()) == []


def test_server_log_probabilities_score_the_boxes():
    """vLLM-style ``logprobs.content`` (token texts spelling the answer): token offsets follow the
    texts, so 'car(1,2),(3,4)' (tokens 'car(1,2),' and '(3,4)', log-probabilities -0.2 and -0.6)
    scores exp(-0.4)."""
    import math

    from vlbench.predict.confidence import box_confidence
    from vlbench.predict.serving import _tokens

    content = "car(1,2),(3,4)"
    tokens = _tokens(content, {"content": [{"token": "car(1,2),", "logprob": -0.2},
                                           {"token": "(3,4)", "logprob": -0.6}]})
    assert tokens is not None and box_confidence(tokens, (0, 14)) == pytest.approx(math.exp(-0.4))
    # not this answer's
    assert _tokens(content, {"content": [{"token": "other", "logprob": -1.0}]}) is None
