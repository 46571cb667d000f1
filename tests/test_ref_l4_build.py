"""Official release -> vlbench build -> load_dataset(folder): lossless, declared features, flat
memory."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import textwrap

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from conftest import run_cli
from vlbench.benchmarks.ref_l4 import schema, synthetic
from vlbench.benchmarks.ref_l4.reader import build
from vlbench.engine.errors import FormatError


@pytest.fixture(scope="module")
def built(small_release, tmp_path_factory):
    raw, rows = small_release
    out = tmp_path_factory.mktemp("hub")
    run_cli("build", "ref_l4", "--raw", str(raw), "--out", str(out), check=True)
    return raw, rows, out


def test_round_trip_rows_unchanged(built):
    raw, rows, out = built
    ds = load_dataset(str(out))
    assert set(ds) == {"val", "test"}
    assert ds["val"].features == schema.features()
    back = [r for split in ("val", "test") for r in ds[split]]
    assert len(back) == len(rows)
    for original, row in zip(rows, back):
        assert {k: row[k] for k in schema.OFFICIAL_COLUMNS} == original
        assert row["category"] == schema.category_name(original["ori_category_id"])
        assert ds["val"].features["source"].int2str(row["source"]) == schema.source_of(
            original["ori_category_id"]
        )
        assert ds["val"].features["size"].int2str(row["size"]) == schema.size_bucket(
            *original["bbox"][2:]
        )


def test_images_decode_and_keep_their_bytes(built):
    raw, rows, out = built
    with tarfile.open(raw / "images.tar.gz") as tar:
        originals = {m.name.split("/")[-1]: tar.extractfile(m).read() for m in tar if m.isfile()}
    ds = load_dataset(str(out), split="test")
    for row in ds:
        assert row["image"].size == (row["width"], row["height"])
    raw_bytes = ds.cast_column("image", ds.features["image"].__class__(decode=False))
    for row in raw_bytes:
        assert row["image"]["bytes"] == originals[row["file_name"]]


def test_card_declares_configs_and_license(built):
    _, _, out = built
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-nc-4.0"
    # each split's shards by name (their names carry their digest)
    files = data["configs"][0]["data_files"]
    assert [f["split"] for f in files] == ["val", "test"]
    assert [f["path"] for f in files] == [[p.relative_to(out).as_posix()] for s in ("val", "test")
                                          for p in (out / "data").glob(f"{s}-*.parquet")]
    assert "[x, y, w, h]" in card.text and "pixels" in card.text


def test_row_groups_of_100(tmp_path):
    rows = synthetic.make_rows(250, seed=5, n_images=20, image_size=(320, 240), val_fraction=0.0)
    raw = synthetic.make_release(tmp_path / "raw", rows, archive=False)
    build(raw, tmp_path / "hub")
    (shard,) = (tmp_path / "hub" / "data").glob("test-*.parquet")
    meta = pq.ParquetFile(shard).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [100, 100, 50]


def test_small_shards_roll_over(tmp_path):
    rows = synthetic.make_rows(40, seed=6, n_images=10, image_size=(320, 240), val_fraction=0.0)
    raw = synthetic.make_release(tmp_path / "raw", rows, archive=True, noise=True)
    report = build(raw, tmp_path / "hub", max_shard_bytes=200_000, rows_per_group=10)
    shards = sorted((tmp_path / "hub" / "data").glob("test-*.parquet"))
    assert len(shards) > 1 and shards[0].name.startswith(f"test-00000-of-{len(shards):05d}-")
    assert len(load_dataset(str(tmp_path / "hub"), split="test")) == 40 == report.rows["test"]


def test_scoring_the_hub_folder_equals_scoring_the_release(built, tmp_path):
    raw, rows, out = built
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps(synthetic.make_predictions(rows, quality="poor", seed=9)))
    results = []
    for refs in (raw, out):
        res = tmp_path / "r.json"
        run_cli("score", "ref_l4", "--references", str(refs), "--predictions", str(preds),
                "--split", "test", "--output", str(res), "--quiet", check=True)
        results.append(json.loads(res.read_text())["metrics"])
    assert results[0] == results[1]


def test_missing_images_are_an_error_or_reported(tmp_path):
    rows = synthetic.make_rows(12, seed=8, n_images=4, image_size=(320, 240))
    raw = synthetic.make_release(tmp_path / "raw", rows, archive=False)
    victim = sorted((raw / "images").iterdir())[0]
    victim.unlink()
    with pytest.raises(FormatError,
                       match=rf"1 of 4 images .* not in the image source, e.g. {victim.name}"):
        build(raw, tmp_path / "hub")
    report = build(raw, tmp_path / "hub2", allow_missing_images=True)
    assert report.missing_images == [victim.name]
    ds = load_dataset(str(tmp_path / "hub2"))
    missing_rows = [r for s in ds for r in ds[s] if r["file_name"] == victim.name]
    assert missing_rows and all(r["image"] is None for r in missing_rows)


def test_boxes_outside_the_image_are_counted(tmp_path):
    rows = synthetic.make_rows(8, seed=2, n_images=2, image_size=(320, 240))
    rows[0]["bbox"] = [300.0, 200.0, 50.0, 60.0]
    raw = synthetic.make_release(tmp_path / "raw", rows, archive=False)
    report = build(raw, tmp_path / "hub")
    assert report.counts["boxes_outside_image"] == 1
    assert any("1 box(es) extend beyond" in line for line in report.lines())


def test_broken_archive_is_a_clear_error(tmp_path):
    rows = synthetic.make_rows(4, seed=2, n_images=2, image_size=(64, 48))
    raw = synthetic.make_release(tmp_path / "raw", rows, archive=True)
    data = (raw / "images.tar.gz").read_bytes()
    (raw / "images.tar.gz").write_bytes(data[: len(data) // 2])
    proc = run_cli("build", "ref_l4", "--raw", str(raw), "--out", str(tmp_path / "hub"))
    assert proc.returncode == 2 and "cannot read the image archive" in proc.stderr


_MEASURE = textwrap.dedent("""
    import resource, sys
    from vlbench.benchmarks.ref_l4.reader import build
    build(sys.argv[1], sys.argv[2], max_shard_bytes=8 * 1024**2)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


@pytest.mark.heavy
def test_build_peak_memory_is_flat_in_the_number_of_images(tmp_path):
    peaks, sizes = [], []
    for n_images in (20, 120):
        rows = synthetic.make_rows(n_images * 2, seed=n_images, n_images=n_images,
                                   image_size=(640, 480))
        raw = synthetic.make_release(tmp_path / f"raw{n_images}", rows, archive=True, noise=True)
        sizes.append((raw / "images.tar.gz").stat().st_size)
        proc = subprocess.run([sys.executable, "-c", _MEASURE, str(raw),
                               str(tmp_path / f"hub{n_images}")],
                              capture_output=True, text=True, check=True)
        peaks.append(int(proc.stdout.split()[-1]) * 1024)
    grown_data = (sizes[1] - sizes[0]) * 2  # two rows per image: each image is embedded twice
    assert grown_data > 40 * 1024**2
    # Six times the images, and the embedded bytes grow by > 40 MB; peak memory may not follow.
    assert peaks[1] - peaks[0] < 0.25 * grown_data, (peaks, sizes)
