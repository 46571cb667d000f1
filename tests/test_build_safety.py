"""Building never loses a file vlbench did not write, never leaves a half-built folder, and always
embeds the image bytes (issue #15). Real builds through the CLI, real Parquet, the real ``datasets``
loader."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import run_cli


def _build(sample_release, out, *extra, cwd=None):
    return subprocess.run([sys.executable, "-m", "vlbench", "build", "ref_l4", "--raw",
                           str(sample_release), "--out",
                           str(out), *extra], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_an_output_folder_overlapping_the_release_it_reads_is_refused(sample_release, tmp_path):
    """--out the release folder itself, a folder inside it, or a folder holding it, even with
    --overwrite (which keeps a user's files, so the build's would be mixed into the release's and
    read by a later build): exit 2 and the release's folder left as it was."""
    import shutil

    release = tmp_path / "release"
    shutil.copytree(sample_release, release)
    before = sorted(p.relative_to(release).as_posix() for p in release.rglob("*"))
    for out in (release, release / "hub", tmp_path):
        proc = _build(release, out, "--overwrite")
        assert proc.returncode == 2 and "the release it reads" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert sorted(p.relative_to(release).as_posix() for p in release.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_a_folder_with_user_files_is_refused_and_left_as_it_was(sample_release, tmp_path):
    out = tmp_path / "mine"
    (out / "data").mkdir(parents=True)
    (out / "README.md").write_text("my notes")
    (out / "data" / "val-00000-of-00001.parquet").write_bytes(b"my own file")
    proc = _build(sample_release, out)
    assert proc.returncode == 2 and "not empty" in proc.stderr and "Traceback" not in proc.stderr
    assert (out / "README.md").read_text() == "my notes"
    assert (out / "data" / "val-00000-of-00001.parquet").read_bytes() == b"my own file"
    # --overwrite still never replaces a file vlbench did not write
    proc = _build(sample_release, out, "--overwrite")
    assert (
        proc.returncode == 2
        and "vlbench did not write" in proc.stderr
        and "README.md" in proc.stderr
    )
    assert (out / "README.md").read_text() == "my notes"
    # no staging folder left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.heavy
def test_overwrite_replaces_only_the_earlier_build(sample_release, tmp_path):
    out = tmp_path / "hub"
    assert _build(sample_release, out).returncode == 0
    (out / "notes.txt").write_text("keep me")
    (out / "data" / "mine.csv").write_text("keep me too")
    (stale,) = (out / "data").glob("val-*.parquet")
    # a file of the earlier build
    stale.write_bytes(b"stale")
    assert _build(sample_release, out).returncode == 2                   # not without --overwrite
    assert _build(sample_release, out, "--overwrite").returncode == 0
    assert (out / "notes.txt").read_text() == "keep me" and (
        out / "data" / "mine.csv"
    ).read_text() == "keep me too"
    # the earlier build's shard replaced
    (rebuilt,) = (out / "data").glob("val-*.parquet")
    assert rebuilt.read_bytes()[:4] == b"PAR1"
    from datasets import load_dataset

    assert len(load_dataset(str(out), split="val")) > 0


def _release_with(sample_release, raw, replace: dict[str, bytes],
                  extra: dict[str, bytes] | None = None):
    """A copy of the bundled release whose archive has some members' bytes replaced (and extra
    members)."""
    import io
    import tarfile

    raw.mkdir()
    for f in sample_release.glob("*.parquet"):
        (raw / f.name).write_bytes(f.read_bytes())
    with (
        tarfile.open(sample_release / "images.tar.gz") as src,
        tarfile.open(raw / "images.tar.gz", "w:gz") as dst,
    ):
        members = [(m, src.extractfile(m).read() if m.isfile() else None) for m in src.getmembers()]
        for member, data in members + [(tarfile.TarInfo(n), b) for n, b in (extra or {}).items()]:
            if data is not None:
                data = replace.get(member.name.rsplit("/", 1)[-1], data)
                member.size = len(data)
                dst.addfile(member, io.BytesIO(data))
    return [m.name.rsplit("/", 1)[-1] for m, d in members if d is not None]


@pytest.mark.heavy
def test_a_failing_build_leaves_the_folder_untouched(sample_release, tmp_path):
    """The last image of the archive is not an image: the build fails while writing shards, in its
    staging folder; the earlier build stays byte for byte and no staging folder is left."""
    out = tmp_path / "hub"
    assert _build(sample_release, out).returncode == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    probe = tmp_path / "probe"
    names = _release_with(sample_release, probe, {})
    raw = tmp_path / "raw"
    _release_with(sample_release, raw, {names[-1]: b"root:x:0:0:root:/root:/bin/bash\n"})
    proc = _build(raw, out, "--overwrite")
    assert (
        proc.returncode == 2 and "not a readable image" in proc.stderr and names[-1] in proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hub", "probe", "raw"]


def bomb_png(width: int = 30000, height: int = 30000) -> bytes:
    """A PNG whose header declares ``width`` x ``height`` pixels (9e8 by default, over Pillow's cap
    of 2 x 89.5 M, where opening it raises DecompressionBombError) and holds no pixel data."""
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
        + struct.pack(">I", 0)
        + b"IEND"
        + struct.pack(">I", zlib.crc32(b"IEND"))
    )


@pytest.mark.parametrize("bad", [b"", b"\xff\xd8\xff", b"GIF89a-not-really", bomb_png()],
                         ids=["empty", "cut-jpeg", "not-gif", "pixel-bomb"])
@pytest.mark.heavy
def test_unreadable_images_are_refused_or_skipped_and_counted(sample_release, tmp_path, bad):
    probe = tmp_path / "probe"
    victim = _release_with(sample_release, probe, {})[0]
    raw = tmp_path / "raw"
    _release_with(sample_release, raw, {victim: bad})
    proc = _build(raw, tmp_path / "hub")
    assert proc.returncode == 2 and victim in proc.stderr and "--skip-bad-images" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _build(raw, tmp_path / "hub2", "--skip-bad-images")
    assert proc.returncode == 0 and "not readable images" in proc.stdout, proc.stderr


def test_two_archive_members_with_one_name_are_an_error(sample_release, tmp_path):
    probe = tmp_path / "probe"
    victim = _release_with(sample_release, probe, {})[0]
    raw = tmp_path / "raw"
    _release_with(sample_release, raw, {}, extra={f"other/{victim}": b"second copy"})
    proc = _build(raw, tmp_path / "hub")
    assert proc.returncode == 2 and "two members are named" in proc.stderr and victim in proc.stderr


@pytest.mark.parametrize("bbox", [None, [1.0, 2.0, 3.0]])
def test_a_broken_bbox_in_the_release_is_named(sample_release, tmp_path, bbox):
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = tmp_path / "raw"
    _release_with(sample_release, raw, {})
    table = pq.read_table(raw / "ref-l4-val.parquet")
    boxes = table["bbox"].to_pylist()
    boxes[1] = bbox
    table = table.set_column(table.column_names.index("bbox"), "bbox",
                             pa.array(boxes, table.schema.field("bbox").type))
    pq.write_table(table, raw / "ref-l4-val.parquet")
    proc = _build(raw, tmp_path / "hub")
    assert (
        proc.returncode == 2 and "'bbox' of row 1" in proc.stderr and "Traceback" not in proc.stderr
    )


def test_a_corrupt_parquet_is_named(sample_release, tmp_path):
    raw = tmp_path / "raw"
    _release_with(sample_release, raw, {})
    (raw / "ref-l4-val.parquet").write_bytes(b"PAR1 truncated")
    proc = _build(raw, tmp_path / "hub")
    assert (
        proc.returncode == 2
        and "ref-l4-val.parquet" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_a_second_nocaps_validation_file_is_refused(nocaps_sample, tmp_path):
    captions = nocaps_sample / "nocaps_val_captions.json"
    proc = run_cli("build", "nocaps", "--raw", str(captions), str(captions), "--images",
                   str(nocaps_sample / "images"), "--out", str(tmp_path / "hub"))
    assert proc.returncode == 2 and "two validation files" in proc.stderr


def test_built_inside_the_image_folder_the_bytes_are_embedded(sample_release, tmp_path,
                                                              monkeypatch):
    """Run from the folder holding the images (their paths exist relative to the working directory):
    the shards must still carry every image's bytes, and load from any other directory."""
    import tarfile

    images = tmp_path / "imgs"
    images.mkdir()
    with tarfile.open(sample_release / "images.tar.gz") as tar:
        tar.extractall(images, filter="data")
    folder = next(p.parent for p in images.rglob("*.jpg"))
    out = tmp_path / "hub"
    proc = _build(sample_release, out, "--images", ".", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    from datasets import load_dataset

    monkeypatch.chdir(tmp_path)                                          # load from elsewhere
    ds = load_dataset(str(out), split="val")
    assert all(row["image"] is not None and row["image"].size[0] > 0 for row in ds)


def test_output_destinations_are_checked_before_the_work(sample_release, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for args in (["score", "ref_l4", "--references", str(sample_release), "--predictions",
                  str(sample_release / "predictions_good.json"), "--output",
                  str(blocker / "r.json")],
                 ["build", "ref_l4", "--raw", str(sample_release), "--out", str(blocker / "hub")],
                 ["export", "omnilabel", "--folder", str(tmp_path), "--out",
                  str(blocker / "x.json")]):
        proc = run_cli(*args)
        assert (
            proc.returncode == 2
            and "is a file, not a folder" in proc.stderr
            and "Traceback" not in proc.stderr
        )


def test_a_pipe_is_refused_not_read(sample_release, tmp_path):
    fifo = tmp_path / "preds.json"
    os.mkfifo(fifo)
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                   str(fifo))
    assert proc.returncode == 2 and "not a regular file" in proc.stderr


def test_deeply_nested_json_is_a_clear_error(sample_release, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                   str(deep))
    assert proc.returncode == 2 and "nests" in proc.stderr and "Traceback" not in proc.stderr


def test_a_killed_build_s_staging_folder_is_removed_by_the_next_build_and_named(sample_release,
                                                                                tmp_path):
    """A build killed with SIGKILL leaves ``.vlbench-staging-<out>-<pid>-*`` beside the output (as
    large as the shards written). The next build of the same output removes it, as its process is
    gone, and says so; a staging folder of a live process (this one) is left alone."""
    import signal
    import time

    out = tmp_path / "hub"
    proc = subprocess.Popen([sys.executable, "-m", "vlbench", "build", "ref_l4", "--raw",
                             str(sample_release), "--out",
                             str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob(".vlbench-staging-hub-*")):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = list(tmp_path.glob(".vlbench-staging-hub-*"))
    assert left, "the build finished before the kill"
    alive = tmp_path / f".vlbench-staging-hub-{os.getpid()}-keep"
    alive.mkdir()
    done = _build(sample_release, out, "--overwrite")
    assert done.returncode == 0, done.stderr
    assert (
        "staging folder(s) left by a killed build were removed" in done.stdout
        and left[0].name in done.stdout
    )
    assert not any(p.exists() for p in left) and alive.is_dir()


@pytest.mark.heavy
def test_a_build_onto_a_full_disk_says_so_and_changes_nothing(sample_release, tmp_path):
    """The output on a 40 KiB tmpfs (mounted here as root: the project's machines and CI run as
    root): the build stops with exit 1 and "no space left on the device of ...", no traceback
    (before #68: pyarrow's OSError, or 'cannot read the image archive'), and nothing is left on the
    small disk."""
    from conftest import tmpfs

    with tmpfs(tmp_path / "small", "size=40k") as disk:
        proc = _build(sample_release, disk / "hub")
        left = sorted(p.name for p in disk.iterdir())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"no space left on the device of {disk}" in proc.stderr and left == []


def test_a_new_package_or_csv_tables_onto_a_full_disk_say_so_and_leave_nothing(ovdeval_sample,
                                                                               tmp_path):
    """On a 40 KiB tmpfs nearly filled (mounted here as root): ``new-benchmark`` stops with exit 1
    naming the full disk (before: OSError [Errno 28] as a traceback), ``report --csv`` with exit 2
    naming the table it could not write; neither leaves a folder or a half set of tables behind."""
    from conftest import run_cli, tmpfs

    result = tmp_path / "r.json"
    run_cli("score", "ovdeval", "--references", str(ovdeval_sample / "annotations" / "color.json"),
            "--predictions",
            str(ovdeval_sample / "predictions_good" / "color.json"), "--output", str(result),
            "--quiet", check=True)
    with tmpfs(tmp_path / "small", "size=40k") as disk:
        (disk / "fill").write_bytes(bytes(36 * 1024))
        package = run_cli("new-benchmark", "zed_bench", "--out", str(disk / "zed"))
        tables = run_cli("report", str(result), "--csv", str(disk / "tables"))
        left = sorted(p.name for p in disk.iterdir())
    assert package.returncode == 1 and "No space left on device" in package.stderr, package.stderr
    assert tables.returncode == 2 and "cannot write the CSV table" in tables.stderr, tables.stderr
    assert "Traceback" not in package.stderr + tables.stderr and left == ["fill"]
