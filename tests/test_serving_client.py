"""The ``--server`` client against a local fake OpenAI-compatible server (tests/fake_server.py; the
faults a real server cannot be made to show on demand): a sliding window of ``--concurrency``
requests whatever the batch size, every reply that is not an answer a clear error naming the server
and the item, ``Retry-After`` honoured, a reply size cap. The real-server path (`transformers
serve`) is in tests/test_serving.py."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from fake_server import answer, serve
from vlbench.benchmarks.protocol.predicting import PredictItem
from vlbench.engine.errors import ServiceError
from vlbench.predict import serving
from vlbench.predict.families import OTHER
from vlbench.predict.models import ModelInfo

IMAGE = Image.new("RGB", (8, 8))


def _served(url: str, concurrency: int = 8) -> serving.ServedModel:
    return serving.ServedModel(url, "fake", None, concurrency,
                               ModelInfo("image-text-to-text", "served", OTHER), timeout=30)


def _items(n: int) -> list[PredictItem]:
    return [PredictItem(key=f"item{i}", image=IMAGE, queries=("dog",)) for i in range(n)]


def _ask_all(url: str, n: int = 4, concurrency: int = 8, **kw) -> dict:
    return dict(serving.answers_as_completed(_served(url, concurrency), _items(n), ["q"] * n,
                                             max_new_tokens=8, **kw))


def test_concurrency_requests_stay_in_flight_over_the_whole_run():
    """24 items, --concurrency 8, one slow request among them: the server sees 8 at once (the old
    batches of min(concurrency, batch size) saw 4), and the slow one holds only its slot: the others
    all finish."""
    import itertools
    import threading

    calls = itertools.count()
    lock = threading.Lock()

    def latency() -> float:
        with lock:
            return 1.5 if next(calls) == 0 else 0.4

    with serve(latency=latency) as (url, fake):
        got = _ask_all(url, n=24, concurrency=8)
    assert len(got) == 24 and fake.max_in_flight == 8 and fake.requests == 24
    assert {a.text for a in got.values()} == {"a dog"}


@pytest.mark.parametrize("reply, says", [
    ((200, {"Content-Type": "text/html"}, b"<html>proxy login</html>"),
     "is not JSON (it begins '<html>proxy login"),
    ((200, {}, answer("x")[:25]), "is not JSON"),
    ((200, {}, json.dumps({"choices": [{"message": {"content": 42}}]}).encode()),
     "content is a int, not text"),
    ((200, {}, json.dumps({"error": {"message": "model overloaded: try later"}}).encode()),
     "answered with an error: model overloaded: try later"),
    ((200, {}, b"[1, 2]"), "a JSON list, not an object"),
    ((401, {}, b'{"error": "no key"}'), "--api-key-env"),
    ((404, {}, b'{"error": "no such model"}'), "check --model"),
])
@pytest.mark.heavy
def test_a_reply_that_is_not_an_answer_is_a_clear_error_naming_server_and_item(reply, says):
    with serve(lambda n, body: reply) as (url, _):
        with pytest.raises(ServiceError) as err:
            _ask_all(url, n=1)
    assert says in str(err.value) and url in str(err.value) and "item item0" in str(err.value)


def test_a_reply_over_the_size_cap_is_refused(monkeypatch):
    monkeypatch.setattr(serving, "MAX_REPLY_BYTES", 1000)
    with serve(lambda n, body: (200, {}, answer("x" * 5000))) as (url, _):
        with pytest.raises(ServiceError, match="larger than"):
            _ask_all(url, n=1)


def test_retry_after_is_honoured_then_the_answer_comes(monkeypatch):
    """A 429 with Retry-After: 0 is retried at once (not after the fixed 1 s backoff), and the
    answer counts."""
    waits = []
    monkeypatch.setattr(serving.time, "sleep", waits.append)
    with serve(
        lambda n, body: (429, {"Retry-After": "0"}, b"{}") if n == 1 else (200, {}, answer("a cat"))
    ) as (url, _):
        got = _ask_all(url, n=1)
    assert got["item0"].text == "a cat" and waits == [0.0]


def test_a_log_probability_that_is_no_number_leaves_the_box_unscored_not_a_crash():
    logprobs = {"content": [{"token": "a cat", "logprob": "high"}]}
    with serve(lambda n, body: (200, {}, answer("a cat", logprobs=logprobs))) as (url, _):
        got = _ask_all(url, n=1, token_scores=True)
    assert got["item0"].text == "a cat" and got["item0"].tokens is None


@pytest.mark.heavy
def test_a_server_that_drips_its_reply_is_stopped_at_the_request_deadline():
    """A reply of 2,000 bytes sent a byte every 0.2 s (400 s whole) never trips a read timeout: the
    2 s whole-request deadline ends it, naming the item and --request-timeout."""
    served = serving.ServedModel("", "fake", None, 1,
                                 ModelInfo("image-text-to-text", "served", OTHER), timeout=2)
    with serve(lambda n, body: (200, {"X-Drip-Seconds": "0.2"}, answer("x" * 2000))) as (url, _):
        served.url = url
        with pytest.raises(ServiceError) as err:
            dict(serving.answers_as_completed(served, _items(1), ["q"], max_new_tokens=8))
    assert "no whole answer within 2 s" in str(err.value) and "--request-timeout" in str(err.value)
    assert "item item0" in str(err.value) and "the reply was still coming" in str(err.value)


def test_a_run_records_which_model_the_server_says_answered_and_counts_boxes_it_could_not_score(
        built_samples, tmp_path):
    """A whole `predict` against a server that names another model in its replies and sends no
    log-probabilities: every one of the sample's 16 Ref-L4 test rows is answered with the box
    "(1,2),(30,40)" in pixels; the meta file records the reply's model for all 16, the summary warns
    that another model answered, and the 16 boxes scored 1 under the token-probability rule are
    counted (none were before)."""
    from vlbench.predict import predict

    out = tmp_path / "p.json"
    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)", model="other/vlm-7b"))) as (
        url,
        fake,
    ):
        report = predict("ref_l4", "asked/vlm", built_samples / "ref_l4", out, split="test",
                         server=url, box_format="pixel", concurrency=4, progress=False)
    meta = json.loads(out.with_name("p.json.meta.json").read_text())
    assert fake.requests == 16 and meta["served_by"] == {"other/vlm-7b": 16}
    assert meta["boxes_scored_1"] == 16 and meta["settings"]["box_scores"] == "token-probability"
    assert (
        "another model answered: 'other/vlm-7b' (16 item(s)), not 'asked/vlm'" in report.summary()
    )
    assert {(tuple(p["pred_bbox"]), p["format"]) for p in json.loads(out.read_text())} == {
        ((1, 2, 30, 40), "xyxy")
    }


def test_a_run_stopped_on_one_server_continues_on_another_address(built_samples, tmp_path):
    """The server at the first address refuses from its 6th request on (one request at a time, so 5
    answers are in the partial file when the run stops); the same command with another address
    finishes the run from there, and the meta file says which address answered how many of the 16
    rows."""
    from vlbench.predict import predict

    out = tmp_path / "p.json"
    options = dict(split="test", box_format="pixel", box_scores="constant", progress=False)

    def refuse_late(n: int, body: dict) -> tuple[int, dict, bytes]:
        return (200, {}, answer("(1,2),(30,40)")) if n <= 5 else (404, {}, b'{"error": "gone"}')

    with serve(refuse_late) as (first, _):
        with pytest.raises(ServiceError, match="refused the request"):
            predict("ref_l4", "fake", built_samples / "ref_l4", out, server=first, concurrency=1,
                    **options)
    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (second, fake):
        report = predict("ref_l4", "fake", built_samples / "ref_l4", out, server=second,
                         concurrency=4, **options)
    meta = json.loads(out.with_name("p.json.meta.json").read_text())
    assert report.resumed == 5 and fake.requests == 11 and meta["servers"] == {first: 5, second: 11}
    assert len(json.loads(out.read_text())) == 16


def test_a_served_name_that_is_no_local_folder_or_cached_id_is_never_looked_up(monkeypatch,
                                                                               tmp_path):
    """'gpt-4o', 'my-org/my-vlm' (valid repo-id form, not in the cache) and 'a b:c' (no repo id):
    the catch-all family, without transformers ever asked for a config (which would go to the Hub);
    a Hub id whose config is in the local cache is read from the cache's snapshot folder, not
    fetched."""
    import huggingface_hub.constants
    import transformers

    asked = []
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", lambda name,
                        **kw: asked.append(name) or 1 / 0)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    for name in ("gpt-4o", "my-org/my-vlm", "a b:c"):
        assert serving.model_info(name).family is OTHER
    assert asked == []
    snapshot = tmp_path / "cache" / "models--org--vlm" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "cache" / "models--org--vlm" / "refs").mkdir()
    (tmp_path / "cache" / "models--org--vlm" / "refs" / "main").write_text("0" * 40)
    assert serving.model_info("org/vlm").family is OTHER and asked == [str(snapshot)]


def test_a_processor_only_image_placeholder_is_not_sent_as_chat_text():
    """PaliGemma's preset prompt '<image>detect cat' (its processor expands <image>): over chat the
    image is the message's image part, so the text part the server receives is 'detect cat', and the
    image part comes first."""
    from vlbench.predict.families import family_named, render_prompt

    seen = []
    prompt = render_prompt(family_named("PaliGemma").preset("box", None, None), "box", ("cat",))
    assert prompt == "<image>detect cat"
    with serve(lambda n, body: seen.append(body) or (200, {}, answer("x"))) as (url, _):
        dict(serving.answers_as_completed(_served(url), _items(1), [prompt], max_new_tokens=8))
    parts = seen[0]["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text"] and parts[1]["text"] == "detect cat"


def _terminal_sigint() -> None:
    """In the child before it starts: SIGINT handled and unblocked, as in a terminal. A child
    inherits its parent's ignored signals and signal mask across exec, and the test process's may
    have been changed by what ran in it before (the whole suite's run timed out here twice, the
    module alone passed)."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_a_run_whose_server_hangs_at_once_keeping_the_partial_file(built_samples,
                                                                                tmp_path):
    """A server that takes 60 s per answer: SIGINT once 4 requests are in flight ends `vlbench
    predict` with exit 130 and a line saying the answers are kept, while the server still holds all
    4 (it used to wait for every request in flight: a thread pool's workers are joined at exit)."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "p.json"
    with serve(latency=lambda: 60.0) as (url, fake):
        proc = subprocess.Popen([sys.executable, "-m", "vlbench", "predict", "ref_l4", "--server",
                                 url, "--model", "x",
                                 "--data", str(built_samples / "ref_l4"), "--split", "test",
                                 "--box-format", "pixel", "--concurrency", "4", "--out", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_terminal_sigint)
        deadline = time.monotonic() + 120
        while fake.in_flight < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert fake.in_flight == 4, proc.stderr.read() if proc.poll() is not None else "no requests"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        # still 4: the run ended before the server could answer any
        unanswered = fake.in_flight
    assert (
        proc.returncode == 130
        and unanswered == 4
        and "interrupted" in err
        and "Traceback" not in err
    )
    assert out.with_name("p.json.partial.jsonl").exists() and not out.exists()


@pytest.mark.heavy
def test_a_damaged_image_cell_stops_the_run_by_name_or_is_skipped_and_counted(sample_release,
                                                                              tmp_path):
    """A built Ref-L4 folder whose test shard's row 3 holds cut-off JPEG bytes (rewritten with
    pyarrow): predict stops with an error naming the item, its row and column and the flag; with
    --skip-bad-images the other 15 rows are answered (15 requests), the item is counted under its
    own failure in the summary and the meta file, and it has no entry in the official file."""
    from conftest import built_with_a_cut_image
    from vlbench.engine.errors import FormatError
    from vlbench.predict import BAD_IMAGE, predict

    folder, victim, ids = built_with_a_cut_image(sample_release, tmp_path / "hub")
    options = dict(split="test", box_format="pixel", box_scores="constant", progress=False)
    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (url, _):
        with pytest.raises(FormatError) as err:
            predict("ref_l4", "fake", folder, tmp_path / "stop.json", server=url, **options)
    assert f"item {victim} (row 3, column 'image') does not decode" in str(err.value)
    assert "--skip-bad-images" in str(err.value)
    out = tmp_path / "p.json"
    # a server of its own
    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (url, fake):
        report = predict("ref_l4", "fake", folder, out, server=url, skip_bad_images=True, **options)
    meta = json.loads(out.with_name("p.json.meta.json").read_text())
    assert (
        fake.requests == 15
        and meta["failures"] == {BAD_IMAGE: 1}
        and f"1 {BAD_IMAGE}" in report.summary()
    )
    assert sorted(str(p["id"]) for p in json.loads(out.read_text())) == sorted(
        i for i in ids if i != victim
    )


@pytest.mark.heavy
def test_the_server_gets_the_dataset_s_own_jpeg_bytes(sample_release, tmp_path):
    """Each request of a run over the built Ref-L4 sample carries its image as
    ``data:image/jpeg;base64,...`` whose bytes are the JPEG of the release's archive, byte for byte
    (no PNG re-encoding: the server decodes the same pixels, and the client spends only base64)."""
    import base64
    import tarfile

    from conftest import run_cli
    from vlbench.predict import predict

    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(tmp_path / "hub"),
            check=True)
    with tarfile.open(sample_release / "images.tar.gz") as tar:
        originals = {tar.extractfile(m).read() for m in tar if m.isfile()}
    sent = []

    def reply(n: int, body: dict):
        url = body["messages"][0]["content"][0]["image_url"]["url"]
        sent.append(url)
        return 200, {}, answer("(1,2),(30,40)")

    with serve(reply) as (url, _):
        predict("ref_l4", "fake", tmp_path / "hub", tmp_path / "p.json", server=url, split="test",
                box_format="pixel", box_scores="constant", progress=False)
    assert len(sent) == 16 and all(u.startswith("data:image/jpeg;base64,") for u in sent)
    assert {base64.b64decode(u.split(",", 1)[1]) for u in sent} <= originals


@pytest.mark.heavy
def test_concurrency_150_keeps_150_in_flight_on_as_many_connections():
    """300 items at --concurrency 150 against a server answering in 2 s: 150 requests in flight (the
    httpx client this project used before held 100 in its default pool), and at most 150 connections
    for the 300 requests (a worker's connection kept alive for its next request; that pool kept 20
    alive and opened a connection for most requests above that)."""
    with serve(latency=lambda: 2.0) as (url, fake):
        got = _ask_all(url, n=300, concurrency=150)
    assert len(got) == 300 and fake.max_in_flight == 150
    assert fake.connections <= 150, fake.connections


def test_a_retry_after_beyond_the_request_timeout_is_named_at_once():
    """A 429 whose Retry-After (30 s) is beyond --request-timeout (5 s): the error names Retry-After
    and the timeout at once (before #68: "no whole answer within 5 s" after 0.2 s, not saying
    why)."""
    import time

    with serve(lambda n, body: (429, {"Retry-After": "30"}, b"{}")) as (url, fake):
        served = serving.ServedModel(url, "fake", None, 1,
                                     ModelInfo("image-text-to-text", "served", OTHER), timeout=5)
        start = time.monotonic()
        with pytest.raises(ServiceError,
                           match=r"retry after 30 s \(Retry-After\), beyond the 5 s "
                                 r"--request-timeout"):
            dict(serving.answers_as_completed(served, _items(1), ["q"], max_new_tokens=8))
    assert time.monotonic() - start < 3 and fake.requests == 1


@pytest.mark.heavy
def test_a_read_only_datasets_cache_is_named_not_the_dataset(sample_release, tmp_path):
    """``HF_HOME`` on a read-only tmpfs (mounted here as root): predict says the datasets cache
    cannot be written and how to point it elsewhere (before #68: "pass a folder written by vlbench
    build ... rebuild it", though the folder was fine), exit 2, and asks the server nothing."""
    import os
    import subprocess
    import sys

    from conftest import run_cli, tmpfs

    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(tmp_path / "hub"),
            check=True)
    with tmpfs(tmp_path / "home", "ro,size=1m") as home, serve() as (url, fake):
        proc = subprocess.run([sys.executable, "-m", "vlbench", "predict", "ref_l4", "--model",
                               "fake", "--server",
                               url, "--data", str(tmp_path / "hub"), "--split", "test",
                               "--box-format", "pixel",
                               "--box-scores", "constant", "--out", str(tmp_path / "p.json")],
                              capture_output=True, text=True, timeout=300,
                              env={**{k: v for k,
                                      v in os.environ.items() if k != "HF_DATASETS_CACHE"},
                                   "HF_HOME": str(home)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert (
        "the datasets cache cannot be written" in proc.stderr and "HF_DATASETS_CACHE" in proc.stderr
    )
    assert fake.requests == 0


@pytest.mark.heavy
def test_a_run_stopped_while_writing_its_files_is_finished_by_the_same_command(sample_release,
                                                                               tmp_path):
    """Every answer is in the partial file, the prediction file written, then the meta file cannot
    be written (a folder in its way stands for a full disk): the run stops with a clear error and
    keeps its partial file. Once the way is clear, the same command finishes without asking the
    server again (before #68 it refused: "the prediction file already exists ... --overwrite")."""
    import subprocess
    import sys

    from conftest import run_cli

    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(tmp_path / "hub"),
            check=True)
    out = tmp_path / "p.json"
    blocker = tmp_path / "p.json.meta.json"
    blocker.mkdir()
    (blocker / "x").write_text("")

    def run(url: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "vlbench", "predict", "ref_l4", "--model",
                               "fake", "--server",
                               url, "--data", str(tmp_path / "hub"), "--split", "test",
                               "--box-format", "pixel",
                               "--box-scores", "constant", "--out", str(out)], capture_output=True,
                              text=True, timeout=300)

    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (url, fake):
        first = run(url)
        assert (
            first.returncode == 2
            and "cannot write" in first.stderr
            and "Traceback" not in first.stderr
        )
        assert fake.requests == 16 and out.with_name("p.json.partial.jsonl").exists()
        (blocker / "x").unlink()
        blocker.rmdir()
        again = run(url)
    assert again.returncode == 0, again.stderr
    assert fake.requests == 16 and len(json.loads(out.read_text())) == 16 and blocker.is_file()
    assert not out.with_name("p.json.partial.jsonl").exists()


def test_the_request_body_is_the_json_of_the_chat_message():
    """The body joins the image's data URL in as bytes; parsed back, it is the message written out
    plainly here, for a prompt with quotes, a backslash, a NUL, a line break and non-ASCII text."""
    text = 'Find "the dog" \\ left\0\nof the café'
    body = serving.chat_request("org/vlm-7b", b"data:image/jpeg;base64,/9j/4AA+Q==", text, 64, True)
    assert json.loads(body) == {
        "model": "org/vlm-7b", "max_tokens": 64, "temperature": 0, "logprobs": True,
        "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AA+Q=="}},
            {"type": "text", "text": text}]}]}
    assert "logprobs" not in json.loads(serving.chat_request("m", b"data:,", "q", 8, False))


def _proxies(monkeypatch, **values: str) -> None:
    """The proxy variables set to ``values`` only (lower case: urllib prefers it), every other one
    removed."""
    import os

    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_a_proxy_in_the_environment_carries_the_requests_and_no_proxy_bypasses_it(monkeypatch):
    """http_proxy names a fake server standing in for the proxy: both requests for a server that
    does not exist reach it as absolute URLs (how a plain-http proxy is asked); with no_proxy naming
    the server, the server gets the request itself and the proxy none."""
    with serve() as (proxy, via):
        _proxies(monkeypatch, http_proxy=proxy)
        got = _ask_all("http://model-server.invalid:8000/v1", n=2)
    assert (
        len(got) == 2
        and via.targets == ["http://model-server.invalid:8000/v1/chat/completions"] * 2
    )
    with serve() as (url, direct), serve() as (proxy, via):
        _proxies(monkeypatch, http_proxy=proxy, no_proxy="127.0.0.1")
        _ask_all(url, n=1)
    assert direct.targets == ["/v1/chat/completions"] and via.requests == 0


def _self_signed(folder) -> tuple:
    """(certificate file, key file) of a self-signed certificate for localhost, made with
    cryptography."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_https_is_verified_and_an_untrusted_certificate_is_named_at_once(tmp_path, monkeypatch):
    """A fake server on https://localhost with a self-signed certificate: trusted through
    SSL_CERT_FILE, the answers come; not trusted, the run stops at its first request naming the
    certificate and SSL_CERT_FILE, without the retries' waits (no retry changes a certificate)."""
    import ssl
    import time

    cert, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    _proxies(monkeypatch)
    with serve(tls=tls) as (url, fake):
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        got = _ask_all(url, n=2)
        monkeypatch.delenv("SSL_CERT_FILE")
        start = time.monotonic()
        with pytest.raises(ServiceError) as err:
            _ask_all(url, n=1)
    assert url.startswith("https://") and len(got) == 2 and fake.requests == 2
    assert "certificate is not trusted" in str(err.value) and "SSL_CERT_FILE" in str(err.value)
    assert time.monotonic() - start < 1


def test_a_connection_the_server_closed_while_idle_is_reopened_without_a_retry(monkeypatch):
    """A server that closes each connection after its reply without saying so (no ``Connection:
    close``): each next request fails on the closed connection and is sent again at once on a new
    one: six answers, six requests, no retry wait."""
    waits = []
    monkeypatch.setattr(serving.time, "sleep", waits.append)
    with serve() as (url, fake):
        fake.keep_alive = False
        got = _ask_all(url, n=6, concurrency=1)
    assert len(got) == 6 and fake.requests == 6 and fake.connections == 6 and waits == []
