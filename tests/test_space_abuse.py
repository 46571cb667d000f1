"""The Space as an adversary would use it (issue #16): a real server on 127.0.0.1 with its own
TMPDIR, driven through gradio_client; memory read from the server process itself (VmHWM, its peak
resident size)."""

from __future__ import annotations

import gzip
import io
import json
import os
import time
import zipfile
from pathlib import Path

import pytest

from conftest import start_space
from vlbench.engine.errors import VlbenchError
from vlbench.engine.io import json_values_bound
from vlbench.space import example_predictions, sample_references


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("server-tmp")
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "TMPDIR": str(tmp),
           "GRADIO_TEMP_DIR": str(tmp / "g")}
    proc, url = start_space(env)
    yield proc, url, tmp
    proc.terminate()
    proc.wait(timeout=20)


def _score(url: str, bench: str, subset: str, path: Path):
    from gradio_client import Client, handle_file

    return Client(url, verbose=False).predict(bench, subset, handle_file(str(path)), "official",
                                              "m", "bundled sample", api_name="/score")


def _status_bytes(pid: int, field: str) -> int:
    """A size field of /proc/<pid>/status (``VmHWM``: peak resident size; ``VmRSS``: resident size),
    in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    return (
        int(next(line.split()[1] for line in status.splitlines() if line.startswith(field + ":")))
        * 1024
    )


def _peak_rss(pid: int) -> int:
    return _status_bytes(pid, "VmHWM")


@pytest.mark.parametrize("subset",
                         ["../annotations/color", "../../../../etc/hostname", "color/../material"])
@pytest.mark.heavy
def test_choices_are_enumerated_never_joined_into_paths(space, subset):
    _, url, _ = space
    out = _score(url, "ovdeval", subset, Path(example_predictions("ovdeval", "good", "color")))
    assert out[0].startswith("**Error:**") and "unknown" in out[0]
    with pytest.raises(VlbenchError, match="unknown choice"):
        example_predictions("ovdeval", "good", subset)
    with pytest.raises(VlbenchError, match="unknown choice"):
        example_predictions("ref_l4", "../../x", "val")
    with pytest.raises(VlbenchError, match="unknown choice"):
        sample_references("ovdeval", subset)


@pytest.mark.heavy
def test_a_decompression_bomb_is_refused_within_a_memory_bound(space, tmp_path):
    """256 MiB of JSON in a ~0.3 MB gzip: refused while reading (the cap is 64 MiB), the server's
    peak RSS stays under 1.5 GB (unbounded parsing of 256 MiB took ~8 GB)."""
    proc, url, _ = space
    bomb = tmp_path / "preds.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        fh.write(b"[" + b"0," * (128 * 1024**2) + b"0]")
    assert bomb.stat().st_size < 2 * 1024**2
    out = _score(url, "ref_l4", "val", bomb)
    # Ref-L4's whole split
    assert out[0].startswith("**Error:**") and "more than 500,000 JSON values" in out[0]
    assert _peak_rss(proc.pid) < 1.5 * 1024**3


def test_a_bomb_of_empty_lists_is_refused_by_its_count_of_values(space, tmp_path):
    """20 MiB of ``[],`` (under the byte cap) would be 7 million lists, ~450 MB parsed: refused
    while reading by OVDEval's value bound (the per-request budget: 1024 MiB / 400 bytes = 2,684,354
    values)."""
    proc, url, _ = space
    bomb = tmp_path / "color.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        fh.write(b"[" + b"[]," * (7 * 1024**2) + b"[]]")
    out = _score(url, "ovdeval", "color", bomb)
    assert out[0].startswith("**Error:**") and "more than 2,684,354 JSON values" in out[0], out[0]
    assert _peak_rss(proc.pid) < 1.5 * 1024**3


@pytest.mark.heavy
def test_requests_at_once_stay_within_the_memory_budget(tmp_path):
    """A Space with a 200 MiB budget per request (524,288 values: 200 MiB / 400 bytes): four uploads
    of ~240,000 values each at once (two run, two queue); the server's peak resident size grows by
    less than two budgets over its size after a warm-up request (measured from /proc, VmHWM reset
    through clear_refs)."""
    import concurrent.futures

    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "TMPDIR": str(tmp_path),
           "VLBENCH_SPACE_MEMORY_MB": "200"}
    proc, url = start_space(env)
    try:
        gt = json.loads(Path(sample_references("omnilabel")).read_text())
        images, descr = [im["id"] for im in gt["images"]], [d["id"] for d in gt["descriptions"]][:3]
        entries = [{"image_id": images[i % len(images)], "bbox": [i % 50, 3, 40, 30],
                    "description_ids": descr, "scores": [0.9, 0.5, 0.1]} for i in range(16_000)]
        upload = tmp_path / "preds.json"
        upload.write_text(json.dumps(entries))
        assert 230_000 < json_values_bound(upload.read_bytes()) < 250_000      # 15 per entry
        # warm-up
        assert _score(url, "omnilabel", "validation", upload)[0].startswith("**Scored.**")
        base = _status_bytes(proc.pid, "VmRSS")
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")    # VmHWM := VmRSS
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            outs = list(pool.map(lambda _: _score(url, "omnilabel", "validation", upload),
                                 range(4)))
        assert all(out[0].startswith("**Scored.**") for out in outs)
        assert _peak_rss(proc.pid) - base < 2 * 200 * 1024**2      # measured here: ~45 MiB
        too_many = tmp_path / "more.json"
        too_many.write_text(json.dumps(entries * 3))
        out = _score(url, "omnilabel", "validation", too_many)
        assert out[0].startswith("**Error:**") and "more than 524,288 JSON values" in out[0], out[0]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_zip_members_with_one_name_are_reported(space, tmp_path):
    _, url, _ = space
    color = Path(example_predictions("ovdeval", "good", "color")).read_bytes()
    upload = tmp_path / "preds.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        zf.writestr("a/color.json", color)
        zf.writestr("b/color.json", b"[]")
    out = _score(url, "ovdeval", "all (Table 3)", upload)
    assert out[0].startswith("**Error:**") and "two members are named color.json" in out[0]


def test_errors_show_no_server_path(space, tmp_path):
    _, url, _ = space
    bad = tmp_path / "preds.json"
    bad.write_text('{"not": "a list"}')
    out = _score(url, "ref_l4", "val", bad)
    assert out[0].startswith("**Error:**") and "preds.json" in out[0]
    assert "/tmp" not in out[0] and "site-packages" not in out[0] and str(tmp_path) not in out[0]


@pytest.mark.heavy
def test_temp_folders_are_gone_after_each_request(space, tmp_path):
    """Uploads unpacked, downloads written: after the request only Gradio's own cache and the one
    folder of example archives remain (no vlbench-upload-*, vlbench-space-*)."""
    _, url, tmp = space
    zipped = Path(example_predictions("ovdeval", "good", "all (Table 3)"))
    for _ in range(3):
        out = _score(url, "ovdeval", "all (Table 3)", zipped)
        assert out[0].startswith("**Scored.**")
    deadline = time.time() + 10
    while time.time() < deadline:
        left = sorted(
            p.name
            for p in tmp.iterdir()
            if p.name.startswith("vlbench-") and "examples" not in p.name
        )
        if not left:
            break
        time.sleep(0.5)
    assert not left, left


def test_messages_speak_the_page_s_language(space, tmp_path):
    """Another benchmark's file: the page says which benchmark to choose, not which command to
    type."""
    _, url, _ = space
    out = _score(url, "ref_l4", "val", Path(example_predictions("omnilabel", "good")))
    assert out[0].startswith("**Error:**") and "choose OmniLabel as the benchmark" in out[0]
    assert "vlbench score" not in out[0]


def test_a_drawn_sample_holds_every_box_whole():
    """A box reaching beyond the image (a wild prediction) is drawn whole on a grown canvas: its
    outline colour appears at all four of its corners. By hand: image 100x80, box [80, 60, 50, 40]
    ends at (130, 100), outside."""
    import numpy as np
    from PIL import Image

    from vlbench.benchmarks.benchmark import Sample
    from vlbench.library.report import COLOURS, draw

    buf = io.BytesIO()
    Image.new("RGB", (100, 80), (255, 255, 255)).save(buf, format="PNG")
    box = [80.0, 60.0, 50.0, 40.0]
    img = np.asarray(draw(Sample(image="x.png", caption="", boxes=[(box, "", "fp")]),
                          buf.getvalue()))
    red = np.all(img == COLOURS["fp"], axis=-1)
    ys, xs = np.nonzero(red)
    # the outline is closed: its right and bottom edges are drawn in full (clipped at the image
    # border they would be missing, leaving only the ends of the top and left edges in the last
    # column and row)
    assert red[:, xs.max()].sum() >= 0.8 * (ys.max() - ys.min())
    assert red[ys.max(), :].sum() >= 0.8 * (xs.max() - xs.min())
    assert (xs.max() - xs.min()) / (ys.max() - ys.min()) == pytest.approx(50 / 40, rel=0.05)
