"""From nothing to a built dataset (#66): ``vlbench build ID`` without ``--raw`` fetches the
official release through the real ``huggingface_hub`` client (``HF_ENDPOINT`` pointing at
:mod:`hub_standin`, a local stand-in for the Hub's file API serving the bundled samples laid out as
each official release) or over https (the same stand-in as a plain file host), verifies it, builds,
and records the release, revision and files' SHA-256 in the card and in every result scored against
the folder. Failure paths: a corrupted file, an unknown or moved revision, offline, a download
killed half-way (resumed, never taken as complete)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import run_cli
from hub_standin import HubStandIn

# each test runs builds in child processes against a local server
pytestmark = pytest.mark.heavy

REF_L4_FILES = ("ref-l4-val.parquet", "ref-l4-test.parquet", "images.tar.gz")


@pytest.fixture()
def hub():
    with HubStandIn() as standin:
        yield standin


def _env(hub: HubStandIn, home: Path, offline: bool = False) -> dict[str, str]:
    return {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1" if offline else "0",
            "HF_HOME": str(home),
            "HF_HUB_DISABLE_XET": "1", "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}


def _ref_l4_files(sample_release: Path) -> dict[str, bytes]:
    return {name: (sample_release / name).read_bytes() for name in REF_L4_FILES}


def _card_source(folder: Path) -> dict:
    from vlbench.benchmarks.validation import read_card_metadata

    return read_card_metadata(folder)["vlbench"]["source"]


def _data_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted((folder / "data").rglob("*.parquet"))
    }


def test_ref_l4_from_its_hub_home_equals_the_build_from_the_same_files(hub, sample_release,
                                                                       tmp_path):
    """``vlbench build ref_l4 --out DIR``: the three files fetched from the Hub stand-in at ``main``
    (resolved to its commit), their SHA-256 checked against the Hub's hash names, the folder's
    shards byte-identical to a build from the same files given with ``--raw``, and the card and a
    score against it naming release, commit and hashes (the hashes are hashlib's over the served
    bytes)."""
    files = _ref_l4_files(sample_release)
    hub.add("JierunChen/Ref-L4", "c" * 40, files)
    proc = subprocess.run([sys.executable, "-m", "vlbench", "build", "ref_l4", "--out",
                           str(tmp_path / "fetched")],
                          env=_env(hub, tmp_path / "hf"), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(tmp_path / "given"),
            check=True)
    assert _data_files(tmp_path / "fetched") == _data_files(tmp_path / "given")
    record = {"release": "hf://JierunChen/Ref-L4", "revision": "c" * 40,
              "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}}
    assert _card_source(tmp_path / "fetched") == record
    out = tmp_path / "result.json"
    run_cli("score", "ref_l4", "--references", str(tmp_path / "fetched"), "--predictions",
            str(sample_release / "predictions_good.json"), "--split", "val", "--output", str(out),
            "--quiet", check=True)
    assert json.loads(out.read_text())["source"] == {**record, "folder": "fetched"}
    # the model-card block and the Hub's evaluation results name the same release, commit and hashes
    block = yaml.safe_load(run_cli("report", str(out), "--model-index", "--dataset-id", "me/ref-l4",
                                   check=True).stdout)
    assert block["model-index"][0]["results"][0]["dataset"]["args"] == {
        "source": {**record, "folder": "fetched"}
    }
    run_cli("report", str(out), "--dataset-id", "me/ref-l4", "--eval-results",
            str(tmp_path / "card"), check=True)
    for entry in yaml.safe_load((tmp_path / "card" / ".eval_results" / "ref_l4.yaml").read_text()):
        assert f"hf://JierunChen/Ref-L4@{'c' * 40}" in entry["notes"]
        assert all(f"{name}={digest}" in entry["notes"] for name, digest in record["files"].items())


@pytest.mark.parametrize("with_coco", [False, True], ids=["eight-files", "with-coco"])
def test_ovdeval_from_its_flat_hub_home_at_the_pinned_commit(hub, ovdeval_sample, tmp_path,
                                                             with_coco):
    """OVDEval's Hub dataset is flat (``<sub-dataset>.json``, ``<sub-dataset>.tar.gz``) and, at the
    commit the package pins (../shared/realdata/ovdeval/PROVENANCE.md), holds eight annotation files
    and no coco.json: each sub-dataset, served here as the bundled color sample, builds into its
    config, and coco is built when the commit has it and said when it has not."""
    from vlbench.benchmarks.ovdeval.card import RELEASE

    color = (ovdeval_sample / "annotations" / "color.json").read_bytes()
    images = (ovdeval_sample / "images" / "color.tar.gz").read_bytes()
    names = ("celebrity", "color", "landmark", "logo", "material", "negation", "position",
             "relationship")
    names += ("coco",) * with_coco
    hub.add("omlab/OVDEval", RELEASE.revision, {f"{n}.{ext}": data for n in names
                                                for ext, data in (("json", color),
                                                                  ("tar.gz", images))})
    proc = subprocess.run([sys.executable, "-m", "vlbench", "build", "ovdeval", "--out",
                           str(tmp_path / "hub")],
                          env=_env(hub, tmp_path / "hf"), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "hub" / "data").iterdir()) == sorted(names)
    assert _card_source(tmp_path / "hub")["revision"] == RELEASE.revision
    assert ("has no coco.json" in proc.stderr) is not with_coco


def test_a_corrupted_download_is_refused_by_its_hash_and_removed(hub, sample_release, tmp_path):
    """The stand-in serves other bytes under images.tar.gz's SHA-256: refused (exit 2, no
    traceback), nothing built, the bad copy gone from the cache; served right, the same command
    builds."""
    hub.add("JierunChen/Ref-L4", "e" * 40, _ref_l4_files(sample_release))
    hub.corrupt.add("images.tar.gz")
    env = _env(hub, tmp_path / "hf")
    args = [sys.executable, "-m", "vlbench", "build", "ref_l4", "--out", str(tmp_path / "hub")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert (
        proc.returncode == 2
        and "does not match its hash" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    assert not (tmp_path / "hub").exists()
    assert not [p for p in (tmp_path / "hf").rglob("images.tar.gz") if p.exists()]
    hub.corrupt.clear()
    assert (
        subprocess.run(args, env=env, capture_output=True, text=True, timeout=600).returncode == 0
    )


def test_a_moved_revision_is_fetched_anew_and_a_pinned_one_stays(hub, sample_release, tmp_path):
    """``main`` moves from commit A to B (one file changed): a build follows it and records B;
    ``hf://...@A`` still builds A's files. An unknown revision is a clear error."""
    files = _ref_l4_files(sample_release)
    hub.add("JierunChen/Ref-L4", "a" * 40, files)
    env = _env(hub, tmp_path / "hf")

    def build(out: str, *raw: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "vlbench", "build", "ref_l4", *raw, "--out",
                               str(tmp_path / out)],
                              env=env, capture_output=True, text=True, timeout=600)

    assert build("first").returncode == 0
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(sample_release / "ref-l4-val.parquet")
    sink = pa.BufferOutputStream()
    pq.write_table(table.slice(0, table.num_rows - 1), sink)
    hub.add("JierunChen/Ref-L4", "b" * 40,
            {**files, "ref-l4-val.parquet": sink.getvalue().to_pybytes()})
    assert build("second").returncode == 0
    assert _card_source(tmp_path / "second")["revision"] == "b" * 40
    assert _data_files(tmp_path / "second") != _data_files(tmp_path / "first")
    assert build("pinned", "--raw", f"hf://JierunChen/Ref-L4@{'a' * 40}").returncode == 0
    assert _data_files(tmp_path / "pinned") == _data_files(tmp_path / "first")
    proc = build("nowhere", "--raw", "hf://JierunChen/Ref-L4@v9")
    assert (
        proc.returncode == 2
        and "has no ref-l4-val.parquet" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_offline_or_unreachable_names_the_source_and_the_way_by_hand(hub, tmp_path):
    """Offline with an empty cache, and online with the stand-in down: exit 1, the repository named,
    the files to place by hand, no traceback, no folder."""
    offline = subprocess.run([sys.executable, "-m", "vlbench", "build", "ref_l4", "--out",
                              str(tmp_path / "a")],
                             env=_env(hub, tmp_path / "hf", offline=True), capture_output=True,
                             text=True, timeout=600)
    env = _env(hub, tmp_path / "hf")
    env["HF_ENDPOINT"] = "http://127.0.0.1:9"          # the discard port: nothing answers
    down = subprocess.run([sys.executable, "-m", "vlbench", "build", "ref_l4", "--out",
                           str(tmp_path / "b")],
                          env=env, capture_output=True, text=True, timeout=600)
    for proc in (offline, down):
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "hf://JierunChen/Ref-L4" in proc.stderr and "ref-l4-val.parquet" in proc.stderr
        assert "JierunChen/Ref-L4 into one folder and pass it as --raw" in proc.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_download_killed_half_way_is_never_taken_as_complete(hub, sample_release, tmp_path):
    """A build killed (SIGKILL) while a file trickles in from the Hub stand-in leaves its
    ``.incomplete`` file and no snapshot entry for it: every file the cache then offers holds
    exactly the served bytes, no folder is built, and the same command afterwards builds
    (huggingface_hub's own cache and locks; the https path's resume by a Range request is tested
    below)."""
    files = _ref_l4_files(sample_release)
    hub.add("JierunChen/Ref-L4", "f" * 40, files)
    hub.slow = 0.3
    env = _env(hub, tmp_path / "hf")
    args = [sys.executable, "-m", "vlbench", "build", "ref_l4", "--out", str(tmp_path / "hub")]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((tmp_path / "hf").rglob("*.incomplete")):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert list((tmp_path / "hf").rglob("*.incomplete")), "the kill came before any download began"
    assert not (tmp_path / "hub").exists()
    for entry in (tmp_path / "hf").rglob("snapshots/*/*"):
        assert entry.read_bytes() == files[entry.name], entry.name
    hub.slow = 0.0
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (
        _card_source(tmp_path / "hub")["files"]["images.tar.gz"]
        == hashlib.sha256(files["images.tar.gz"]).hexdigest()
    )


def test_an_https_release_is_downloaded_resumed_and_verified(hub, nocaps_sample, tmp_path):
    """nocaps' captions JSON from a plain https-style host: downloaded into the cache, resumed from
    a partial ``.incomplete`` file by a Range request, built with the bundled images, and the file's
    SHA-256 recorded."""
    captions = (nocaps_sample / "nocaps_val_captions.json").read_bytes()
    hub.plain["nocaps_val_4500_captions.json"] = captions
    url = f"{hub.url}/files/nocaps_val_4500_captions.json"
    env = _env(hub, tmp_path / "hf")
    probe = subprocess.run([sys.executable, "-c",
                            "from vlbench.library.fetch import _cache_root; print(_cache_root())"],
                           env=env, capture_output=True, text=True, check=True)
    folder = Path(probe.stdout.strip()) / hashlib.sha256(url.encode()).hexdigest()[:16]
    folder.mkdir(parents=True)
    (folder / "nocaps_val_4500_captions.json.incomplete").write_bytes(captions[:1000])
    proc = subprocess.run([sys.executable, "-m", "vlbench", "build", "nocaps", "--raw", url,
                           "--images", str(nocaps_sample / "images"), "--out",
                           str(tmp_path / "hub")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "bytes=1000-" in hub.ranges
    assert (folder / "nocaps_val_4500_captions.json").read_bytes() == captions
    assert _card_source(tmp_path / "hub")["files"] == {
        "nocaps_val_4500_captions.json": hashlib.sha256(captions).hexdigest()}


def test_omnilabel_names_the_missing_images_per_source_collection_before_any_work(omnilabel_sample,
                                                                                  tmp_path):
    """The bundled OmniLabel sample's JSON with one image of each collection removed from a copy of
    its images root: refused before any shard is written, a count per source collection (1 of N
    each, counted from the JSON here) with an example and where that collection comes from."""
    import shutil

    data = json.loads((omnilabel_sample / "dataset_val.json").read_text())
    images = tmp_path / "images"
    shutil.copytree(omnilabel_sample / "images", images)
    first = {}
    for img in data["images"]:
        first.setdefault(img["file_name"].split("/")[0], img["file_name"])
    for name in first.values():
        (images / name).unlink()
    proc = run_cli("build", "omnilabel", "--raw", str(omnilabel_sample / "dataset_val.json"),
                   "--images", str(images), "--out", str(tmp_path / "hub"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    for folder, name in first.items():
        n = sum(img["file_name"].startswith(folder + "/") for img in data["images"])
        assert f"of {n} (e.g. {name}; from " in proc.stderr, (folder, proc.stderr)
    assert not (tmp_path / "hub").exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "images"
    ]
