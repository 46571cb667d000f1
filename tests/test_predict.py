"""`vlbench predict` / `vlbench run` end to end with tiny random models built from configs, offline
(see tiny_models.py): a zero-shot detector (OWL-ViT) on the Ref-L4, OmniLabel and OVDEval samples,
an image-text-to-text model (LLaVA) on nocaps and Ref-L4. The numbers are meaningless; what is
checked is that the files are the official formats (`vlbench score` reads them), what a run records,
resuming, and the failures a run reports instead of hiding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import stop_after_first_batch

pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("transformers", reason="predict needs transformers (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from tiny_models import tiny_idefics3, tiny_llava, tiny_owlvit

    root = tmp_path_factory.mktemp("models")
    return {"detector": str(tiny_owlvit(root / "owlvit")), "vlm": str(tiny_llava(root / "llava")),
            "captioner": str(tiny_idefics3(root / "idefics3"))}


@pytest.fixture(scope="module")
def data(built_samples):
    return built_samples


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vlbench", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_a_detector_answers_ref_l4_one_float_box_per_expression(models, data, tmp_path):
    out, result = tmp_path / "preds.json", tmp_path / "result.json"
    proc = _run("run", "ref_l4", "--model", models["detector"], "--data", str(data / "ref_l4"),
                "--split", "val", "--out", str(out), "--output", str(result), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(out.read_text())
    # the 8 val expressions
    assert len(entries) == 8 and {e["id"] for e in entries} == set(range(8))
    assert all(
        set(e) == {"id", "pred_bbox", "format"}
        and e["format"] == "xyxy"
        and len(e["pred_bbox"]) == 4
        and all(isinstance(v, float) for v in e["pred_bbox"])
        for e in entries
    )
    scored = json.loads(result.read_text())
    assert (
        scored["options"]["split"] == "val"
        and scored["options"]["predicted_by"]["model"] == models["detector"]
    )
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert (
        meta["settings"]["kind"] == "detector"
        and meta["settings"]["threshold"] == 0.01
        and meta["items"] == 8
    )
    assert not Path(f"{out}.partial.jsonl").exists()
    # no --split: Ref-L4's default, "all" (not a Hub split): both splits, scored as all
    both = _run("run", "ref_l4", "--model", models["detector"], "--data", str(data / "ref_l4"),
                "--out",
                str(tmp_path / "all.json"), "--output", str(tmp_path / "all_result.json"),
                cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert len(json.loads((tmp_path / "all.json").read_text())) == 8 + 16
    assert json.loads((tmp_path / "all_result.json").read_text())["options"]["split"] == "all"


def test_a_detector_answers_omnilabel_with_the_label_space(models, data, tmp_path):
    out, result = tmp_path / "preds.json", tmp_path / "result.json"
    proc = _run("run", "omnilabel", "--model", models["detector"], "--data",
                str(data / "omnilabel"), "--out", str(out), "--output", str(result), "--top-k", "5",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {r["image_id"]: {d["id"] for d in r["labelspace"]} for r in _rows(data / "omnilabel",
                                                                             "validation")}
    entries = json.loads(out.read_text())
    assert 0 < len(entries) <= 5 * len(rows)
    assert all(
        set(e) == {"image_id", "bbox", "description_ids", "scores"}
        and e["description_ids"][0] in rows[e["image_id"]]
        and e["scores"][0] >= 0.01
        for e in entries
    )
    assert set(json.loads(result.read_text())["metrics"]) >= {"AP", "AP_categ", "AP_descr"}


def test_a_detector_answers_every_ovdeval_sub_dataset_into_the_official_folder(models, data,
                                                                               tmp_path):
    out, result = tmp_path / "preds", tmp_path / "result.json"
    proc = _run("run", "ovdeval", "--model", models["detector"], "--data", str(data / "ovdeval"),
                "--out", str(out), "--output", str(result), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["color.json", "material.json"]
    assert "Total_Average" in json.loads(result.read_text())["metrics"]
    one = _run("predict", "ovdeval", "--model", models["detector"], "--data", str(data / "ovdeval"),
               "--out", str(tmp_path / "all.json"), cwd=tmp_path)
    assert (
        one.returncode == 2
        and "name a folder for --out" in one.stderr
        and "Traceback" not in one.stderr
    )


def test_a_vlm_captions_nocaps(models, data, tmp_path):
    out, result = tmp_path / "captions.json", tmp_path / "result.json"
    proc = _run("run", "nocaps", "--model", models["vlm"], "--data", str(data / "nocaps"), "--out",
                str(out), "--output", str(result), "--max-new-tokens", "6", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    captions = json.loads(out.read_text())
    assert len(captions) == 9 and all(set(c) == {"image_id", "caption"} and "\n" not in c["caption"]
                                      for c in captions)
    assert json.loads(result.read_text())["counts"]["images"] == 9


def test_a_vlm_is_asked_for_each_ovdeval_image_s_labels(models, data, tmp_path):
    """An image-text-to-text model on one sub-dataset: each image's labels and hard negatives in the
    prompt (recorded in the run), every answer parsed as a list of labelled boxes (the tiny model's
    words hold none)."""
    out = tmp_path / "color.json"
    proc = _run("predict", "ovdeval", "--model", models["vlm"], "--data", str(data / "ovdeval"),
                "--config", "color",
                "--box-format", "normalized", "--max-new-tokens", "6", "--out", str(out),
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["items"] == 6 and meta["settings"]["config"] == "color" and meta["unanswered"] == 6
    assert json.loads(out.read_text()) == []


def test_unparseable_grounding_answers_are_counted_and_kept_never_zero_boxes(models, data,
                                                                             tmp_path):
    """The tiny LLaVA's random words hold no normalised box: every answer is a reported failure with
    its raw text, the prediction file has no [0, 0, 0, 0], and `run` stops with a clear message
    instead of scoring nothing."""
    out = tmp_path / "boxes.json"
    proc = _run("run", "ref_l4", "--model", models["vlm"], "--data", str(data / "ref_l4"),
                "--split", "val",
                "--out", str(out), "--output", str(tmp_path / "r.json"), "--box-format",
                "normalized", "--max-new-tokens", "8", cwd=tmp_path)
    assert (
        proc.returncode == 2
        and "no usable answer" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["unanswered"] == 8 and sum(meta["failures"].values()) == 8
    assert all(1 <= len(kept) <= 5 for kept in meta["failed_answers"].values())
    assert json.loads(out.read_text()) == []
    family = _run("predict", "ref_l4", "--model", models["captioner"], "--data",
                  str(data / "ref_l4"), "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    # Idefics3 documents no box convention: said before the model loads, with the flags that would
    # try anyway
    assert (
        family.returncode == 2
        and "--box-format" in family.stderr
        and "Traceback" not in family.stderr
    )
    assert not (tmp_path / "x.json.partial.jsonl").exists()


def test_a_stopped_run_resumes_where_it_stopped(models, data, tmp_path, monkeypatch):
    """A crash after the first batch (injected in the detector call) leaves that batch in the
    partial file; the rerun answers only the rest and writes the same file a run without a crash
    writes (greedy, deterministic)."""
    from vlbench.predict import predict

    out = tmp_path / "preds.json"
    stop_after_first_batch(models["detector"], data / "ref_l4", out, monkeypatch)
    # settings + first batch
    assert len(Path(f"{out}.partial.jsonl").read_text().splitlines()) == 1 + 4
    with pytest.raises(Exception, match="other settings"):
        predict("ref_l4", models["detector"], data / "ref_l4", out, split="test", threshold=0.5,
                progress=False)
    report = predict("ref_l4", models["detector"], data / "ref_l4", out, split="test", batch_size=4,
                     progress=False)
    assert report.resumed == 4 and report.items == 16
    fresh = tmp_path / "fresh.json"
    predict("ref_l4", models["detector"], data / "ref_l4", fresh, split="test", batch_size=4,
            progress=False)
    assert json.loads(out.read_text()) == json.loads(fresh.read_text())


def _served_run(launch: list[str], data: Path, out: Path, url: str, env: dict | None = None):
    return subprocess.run([*launch, "-m", "vlbench", "predict", "ref_l4", "--model", "fake",
                           "--server", url, "--data",
                           str(data / "ref_l4"), "--split", "test", "--box-format", "pixel",
                           "--box-scores", "constant",
                           "--out", str(out)], capture_output=True, text=True, cwd=out.parent,
                          timeout=600, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_two_real_processes_ask_each_item_once_and_merge_in_order(launcher, data, tmp_path):
    """``torchrun --nproc_per_node 2`` and ``accelerate launch --multi_gpu --num_processes 2`` (on
    this machine without GPUs; before #67 its two processes both believed they were rank 0 and asked
    every item) against a fake server that counts requests: the 16 test items are asked exactly once
    in all, and the merged file equals a single process's."""
    from fake_server import answer, serve

    found = shutil.which(launcher)
    assert found, f"{launcher} is not on PATH (pip install -e '.[test]')"
    launch = ([found, "--nproc_per_node", "2"] if launcher == "torchrun" else
              [found, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
               "--mixed_precision", "no", "--dynamo_backend", "no"])
    reply = lambda n, body: (200, {}, answer("(1,2),(30,40)"))      # noqa: E731
    with serve(reply) as (url, fake):
        two = _served_run(launch, data, tmp_path / "two.json", url)
        assert two.returncode == 0, two.stderr[-3000:]
        assert fake.requests == 16
    with serve(reply) as (url, _):
        one = _served_run([sys.executable], data, tmp_path / "one.json", url)
    assert one.returncode == 0, one.stderr[-3000:]
    assert two.stdout.count("wrote ") == 1  # the main process reports once
    assert json.loads((tmp_path / "two.json").read_text()) == json.loads(
        (tmp_path / "one.json").read_text()
    )
    assert not list(tmp_path.glob("two.json.partial*"))


def test_a_launch_whose_processes_cannot_agree_is_refused_before_any_request(data, tmp_path):
    """WORLD_SIZE=2 in the environment of one plain process (no launcher: no RANK, no rendezvous
    address): it would answer every item as if it were one of two. Refused, naming the cause and the
    launch to use; the server is never asked."""
    from fake_server import answer, serve

    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (url, fake):
        proc = _served_run([sys.executable], data, tmp_path / "p.json", url,
                           env={"WORLD_SIZE": "2"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        "WORLD_SIZE is 2 but RANK, MASTER_ADDR, MASTER_PORT is not set" in proc.stderr
        and "torchrun" in proc.stderr
    )
    assert fake.requests == 0 and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("flag, value",
                         [("--batch-size", "0"), ("--top-k", "-1"), ("--threshold", "1.5"),
                                         ("--max-new-tokens", "0")])
def test_bad_settings_are_refused_before_any_work(data, tmp_path, flag, value):
    proc = _run("predict", "ref_l4", "--model", "unused", "--data", str(data / "ref_l4"), "--out",
                str(tmp_path / "p.json"), flag, value, cwd=tmp_path)
    assert (
        proc.returncode == 2 and flag.lstrip("-") in proc.stderr and "Traceback" not in proc.stderr
    )


def test_without_the_extra_the_command_says_what_to_install(data, tmp_path):
    hide = ("import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None; "
            "from vlbench.cli import main; raise SystemExit(main())")
    proc = subprocess.run([sys.executable, "-c", hide, "predict", "ref_l4", "--model", "x",
                           "--data",
                           str(data / "ref_l4"), "--out", str(tmp_path / "p.json")],
                          capture_output=True, text=True, env={**os.environ})
    assert proc.returncode == 2 and 'pip install "vlbench[predict]"' in proc.stderr


def _rows(folder: Path, split: str) -> list[dict]:
    from datasets import load_dataset

    return list(load_dataset(str(folder), split=split).remove_columns("image"))


def test_batches_hold_alike_items_within_a_window_and_every_item_once():
    """Hand-derived: batches of 2, windows of 2 batches (4 items). Window 1 holds query counts 3, 1,
    2, 1 -> sorted one query each ("short" before "long query": less text), two, three; window 2:
    one query each, the 10x20 image before the 20x10 (size compared width first), then two queries.
    Nothing is lost or repeated."""
    from PIL import Image

    from vlbench.benchmarks.protocol.predicting import PredictItem
    from vlbench.predict.streaming import grouped

    def item(key: str, queries: tuple[str, ...], wh: tuple[int, int] = (8, 8)) -> PredictItem:
        return PredictItem(key, Image.new("RGB", wh), queries)

    items = [item("a", ("x", "y", "z")), item("b", ("long query",)), item("c", ("q", "r")),
             item("d", ("short",)),
             item("e", ("x",), (20, 10)), item("f", ("x",), (10, 20)), item("g", ("x", "y"))]
    order = [it.key for it in grouped(items, size=2, window=2)]
    assert order == ["d", "b", "c", "a", "f", "e", "g"]


def test_items_are_grouped_by_the_size_their_row_states_without_opening_the_image(tmp_path):
    """A dataset whose rows state ``width`` and ``height`` (Ref-L4, nocaps and OVDEval rows do):
    grouping sorts by the stated size, so an image whose bytes do not decode still sorts by it (its
    header is never read); the decoded image keeps its own size. Rows without the columns sort by
    the header (a dataset of images alone keeps its rows). Hand-derived: stated widths
    30, 10, 20 -> order 1, 2, 0; header widths 9, 5 -> order 1, 0."""
    import io

    import datasets
    from PIL import Image

    from vlbench.benchmarks.protocol.predicting import PredictItem
    from vlbench.predict.streaming import LazyRows, grouped

    def png(width: int) -> dict:
        buf = io.BytesIO()
        Image.new("RGB", (width, 3)).save(buf, format="PNG")
        return {"bytes": buf.getvalue(), "path": None}

    image = datasets.Image()
    stated = datasets.Dataset.from_dict(
        {"image": [png(4), {"bytes": b"not an image", "path": None}, png(6)], "width": [30, 10, 20],
         "height": [3, 3, 3]},
        features=datasets.Features({"image": image, "width": datasets.Value("int64"),
                                    "height": datasets.Value("int64")}))
    items = [PredictItem(str(i), row["image"], ("q",)) for i, row in enumerate(LazyRows(stated))]
    assert [it.key for it in grouped(items, 8)] == ["1", "2", "0"]
    assert items[0].image.size == (4, 3) and items[0].image.declared == (30, 3)
    # the rows' other values are the ones datasets gives row by row, through an indices mapping too
    for dataset in (stated, stated.select([2, 0])):
        assert [
            {k: v for k, v in row.items() if k != "image"} for row in LazyRows(dataset)
        ] == list(dataset.remove_columns("image"))
    bare = datasets.Dataset.from_dict({"image": [png(9), png(5)]},
                                      features=datasets.Features({"image": image}))
    items = [PredictItem(str(i), row["image"], ("q",)) for i, row in enumerate(LazyRows(bare))]
    assert [it.key for it in grouped(items, 8)] == ["1", "0"] and items[0].image.declared is None


def test_image_cells_sliced_from_the_arrow_columns_are_the_dataset_s_cells(tmp_path):
    """The image bytes :class:`ImageCells` slices from the dataset's Arrow columns equal the cells
    ``datasets`` itself gives (decode=False) for every row, for a dataset of one file and for a
    concatenation of two (row order across files and chunks). A dataset seen through an indices
    mapping (``select``) is read through ``datasets``."""
    import io

    import datasets
    from PIL import Image

    from vlbench.predict.streaming import ImageCells

    def part(n: int, shade: int) -> datasets.Dataset:
        def png(k: int) -> bytes:
            buf = io.BytesIO()
            Image.new("RGB", (4 + k, 3), (shade, k, 0)).save(buf, format="PNG")
            return buf.getvalue()

        rows = {"id": list(range(n)), "image": [{"bytes": png(k), "path": None} for k in range(n)]}
        ds = datasets.Dataset.from_dict(rows, features=datasets.Features(
            {"id": datasets.Value("int64"), "image": datasets.Image()}))
        ds.save_to_disk(str(tmp_path / f"part{shade}"))
        return datasets.load_from_disk(str(tmp_path / f"part{shade}"))

    def read(file) -> bytes:
        return file.read()

    one, two = part(5, 10), part(3, 200)
    for dataset, mapped in ((one, True), (datasets.concatenate_datasets([one, two]), True),
                            (one.select([4, 0, 2]), False)):
        expected = [
            row["image"]["bytes"]
            for row in dataset.cast_column("image", datasets.Image(decode=False))
        ]
        cells = ImageCells(dataset, ["image"])
        assert cells.direct == mapped
        assert [read(cells.open(i, "image")) for i in range(len(dataset))] == expected


def test_mapped_images_open_whatever_order_pil_registered_its_formats_in(tmp_path):
    """PIL tries each registered format's reader in turn; after ``PIL.Image.init()`` runs before any
    image is opened (some libraries' imports do it) the IM reader, which calls ``readline``, comes
    before JPEG's and reads a JPEG whose first 100 bytes hold a newline. The run that fails in this
    order (the full suite's, once) opens the images of a dataset on disk in a fresh interpreter:
    header sizes, decoded sizes, and a damaged image named by its row and column (or, with
    ``skip_bad``, put aside as Unreadable). Expected sizes are the ones the images were made
    with."""
    import io

    import datasets
    from PIL import Image

    def jpeg(width: int) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (width, 7), (90, 30, 200)).save(buf, format="JPEG", quality=75)
        return buf.getvalue()

    images = [jpeg(5), jpeg(9)]
    assert all(b"\n" in data[:100] for data in images), (
        "the case needs a newline where the IM reader looks"
    )
    rows = {
        "id": [0, 1, 2],
        "image": [{"bytes": data, "path": None} for data in images]
        + [{"bytes": b"\nnot an image", "path": None}],
    }
    features = datasets.Features({"id": datasets.Value("int64"), "image": datasets.Image()})
    datasets.Dataset.from_dict(rows, features=features).save_to_disk(
        str(tmp_path / "ds"))
    code = f"""
import PIL.Image
PIL.Image.init()
import datasets
from vlbench.benchmarks.protocol.predicting import PredictItem
from vlbench.engine.errors import FormatError
from vlbench.predict.streaming import LazyRows, Unreadable, grouped, loaded
rows = LazyRows(datasets.load_from_disk({str(tmp_path / "ds")!r}))
items = [PredictItem(str(i), row["image"], ("q",)) for i, row in enumerate(rows)]
print([it.image.size for it in items[:2]], [it.image.size for it in loaded(items[:2])])
print(sorted(it.key for it in grouped(items, 4)))
try:
    loaded(items[2:])
except FormatError as exc:
    print(exc)
print([type(it.image).__name__ for it in loaded(items, skip_bad=True)])
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "[(5, 7), (9, 7)] [(5, 7), (9, 7)]"
    assert (
        lines[1] == "['0', '1', '2']"
        and "item 2 (row 2, column 'image') does not decode" in lines[2]
    )
    assert lines[3] == "['JpegImageFile', 'JpegImageFile', 'Unreadable']" and len(lines) == 4


def test_a_folder_rewritten_in_place_is_read_as_it_is_now_and_its_partial_run_is_refused(
    sample_release, tmp_path
):
    """A built Ref-L4 folder whose test shard is rewritten in place (every caption changed) with its
    modification time set back, as ``datasets`` keys its cache by it: the rows read are the new ones
    (not the cached old ones), and a partial run written before the change is refused as a run over
    another version of the dataset."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.parquet as pq

    from conftest import run_cli
    from vlbench.engine.errors import InputError
    from vlbench.predict import PredictSettings, _resume, data_version, load_data

    folder = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(folder), check=True)
    shard = next((folder / "data").glob("test-*.parquet"))
    before = [row["caption"] for row in load_data("ref_l4", folder, split="test")[0].rows]
    old_version = data_version(folder)

    table = pq.read_table(shard)
    stat = shard.stat()
    captions = pa.array([f"changed {i}" for i in range(table.num_rows)])
    pq.write_table(table.set_column(table.schema.get_field_index("caption"), "caption", captions),
                   shard)
    os.utime(shard, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    after = [row["caption"] for row in load_data("ref_l4", folder, split="test")[0].rows]
    assert after == [f"changed {i}" for i in range(len(before))] != before
    assert data_version(folder) != old_version

    settings = PredictSettings("ref_l4", "m", None, "zero-shot-object-detection", None, "test",
                               data_version=old_version)
    partial = tmp_path / "p.json.partial.jsonl"
    partial.write_text(json.dumps({"settings": dataclasses.asdict(settings)}) + "\n")
    now = dataclasses.replace(settings, data_version=data_version(folder))
    with pytest.raises(InputError, match="another version of the dataset"):
        _resume(partial, now)
    assert _resume(partial, settings) == {}


def test_a_detector_run_skips_an_image_that_does_not_decode_when_asked(models, sample_release,
                                                                       tmp_path):
    """The in-process path (a tiny OWL-ViT, batches of 4): the sample's test row 3 holds a cut-off
    JPEG; with skip_bad_images the other 15 rows are answered, the item is counted under its
    failure, and its row has no entry; without it the run stops naming the row (before writing any
    official file)."""
    from conftest import built_with_a_cut_image
    from vlbench.engine.errors import FormatError
    from vlbench.predict import BAD_IMAGE, predict

    folder, victim, ids = built_with_a_cut_image(sample_release, tmp_path / "hub")
    with pytest.raises(FormatError, match=r"\(row 3, column 'image'\) does not decode"):
        predict("ref_l4", models["detector"], folder, tmp_path / "stop.json", split="test",
                progress=False)
    assert not (tmp_path / "stop.json").exists()
    out = tmp_path / "p.json"
    report = predict("ref_l4", models["detector"], folder, out, split="test", skip_bad_images=True,
                     progress=False)
    assert report.items == 16 and report.failures == {BAD_IMAGE: 1}
    assert {str(p["id"]) for p in json.loads(out.read_text())} == {i for i in ids if i != victim}



def test_a_partial_file_holding_another_benchmarks_entries_is_refused(tmp_path):
    """A resumed record is merged into the official file as it stands, so an entry that is no
    prediction of this benchmark (here an OVDEval entry under a Ref-L4 run's settings: a copied or
    hand-edited file) would reach it under a duplicate or foreign id. Every entry must carry the
    benchmark's prediction keys (Ref-L4: ``pred_bbox``); the error names the file and the line."""
    import dataclasses

    from vlbench.engine.errors import FormatError
    from vlbench.predict import PredictSettings, _resume

    settings = PredictSettings("ref_l4", "m", None, "zero-shot-object-detection", None, "test")
    partial = tmp_path / "p.json.partial.jsonl"
    good = {"key": "0", "entries": [{"id": 0, "pred_bbox": [1, 2, 3, 4]}]}
    foreign = {"key": "1",
               "entries": [{"image_id": 1, "category_id": 3, "bbox": [1, 2, 3, 4], "score": 0.5}]}
    partial.write_text(
        "\n".join(json.dumps(x) for x in ({"settings": dataclasses.asdict(settings)}, good)) + "\n"
    )
    assert list(_resume(partial, settings)) == ["0"]
    with partial.open("a") as fh:
        fh.write(json.dumps(foreign) + "\n")
    with pytest.raises(FormatError,
                       match="line 3: a line of the partial file holds an entry that is no ref_l4 "
                                          "prediction .every one has pred_bbox.") as err:
        _resume(partial, settings)
    assert str(partial) in str(err.value)


def test_rgb_keeps_a_decoded_rgb_image_and_decodes_a_lazy_one():
    """``models.rgb``: a decoded RGB image comes back as the same object (no copy before the
    processor's own conversion), a grey one converted, and an image still in its dataset cell
    (``LazyImage``, as a caller of ``detect`` or ``_inputs`` may pass) decoded to RGB with its
    pixels (the bench's bare loop passed one and failed)."""
    import io

    from PIL import Image

    from vlbench.predict.models import rgb
    from vlbench.predict.streaming import LazyImage

    image = Image.new("RGB", (4, 3), (10, 20, 30))
    assert rgb(image) is image
    assert rgb(Image.new("L", (4, 3), 7)).getpixel((0, 0)) == (7, 7, 7)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    lazy = rgb(LazyImage([{"image": {"bytes": buf.getvalue(), "path": None}}], 0, "image"))
    assert lazy.mode == "RGB" and lazy.size == (4, 3) and lazy.getpixel((3, 2)) == (10, 20, 30)
