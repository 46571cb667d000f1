"""Bad input off the happy path (issue #15): exit 2 with a message naming the file, the entry and
the fix, never a traceback, nothing dropped silently. Through the real CLI."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli


def _score(bench, refs, preds, tmp_path, *extra):
    r, p = tmp_path / "refs.json", tmp_path / "preds.json"
    r.write_text(json.dumps(refs) if not isinstance(refs, str) else refs)
    p.write_text(json.dumps(preds) if not isinstance(preds, str) else preds)
    return run_cli("score", bench, "--references", str(r), "--predictions", str(p), *extra)


def _ok_or_clear(proc, *needles):
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode:
        assert proc.returncode == 2 and all(n in proc.stderr for n in needles), proc.stderr


def test_a_lone_surrogate_in_a_caption_is_named(nocaps_sample, tmp_path):
    preds = json.loads((nocaps_sample / "predictions_good.json").read_text())
    preds[3]["caption"] = "a dog \ud800"
    proc = _score("nocaps", (nocaps_sample / "nocaps_val_captions.json").read_text(),
                  json.dumps(preds), tmp_path)
    assert proc.returncode == 2 and f"the caption of image {preds[3]['image_id']}" in proc.stderr
    assert "not valid Unicode" in proc.stderr and "Traceback" not in proc.stderr


def test_nocaps_references_without_images(tmp_path):
    proc = _score("nocaps", {"images": [], "annotations": []}, [], tmp_path)
    assert proc.returncode == 2 and "no image" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("refs", [
    {"images": [{"id": 1, "file_name": "coco/1.jpg"}], "descriptions": [], "annotations": []},
    {"images": [{"id": 1, "file_name": "coco/1.jpg"}],
     "descriptions": [{"id": 7, "text": "Cup", "anno_info": {"type": "object_category"},
                       "image_ids": []}],
     "annotations": [{"id": 1, "image_id": 1, "bbox": [0, 0, 5, 5], "area": 25, "iscrowd": 0,
                      "description_ids": [7]}]},
])
def test_omnilabel_empty_label_spaces_or_no_descriptions(refs, tmp_path):
    """Nothing to evaluate (the official evaluator gives -1 everywhere): most likely the wrong file,
    so a clear error naming it and the file to pass (#27; every metric null with exit 0 before)."""
    proc = _score("omnilabel", refs,
                  [{"image_id": 1, "bbox": [0, 0, 5, 5], "description_ids": [7], "scores": [0.5]}],
                  tmp_path, "--output", str(tmp_path / "r.json"))
    _ok_or_clear(proc, "refs.json", "no image has a label space", "dataset JSON")
    assert proc.returncode == 2 and not (tmp_path / "r.json").exists()


def test_omnilabel_three_value_bbox_in_the_references_is_named(tmp_path):
    refs = {"images": [{"id": 1, "file_name": "coco/1.jpg"}],
            "descriptions": [{"id": 7, "text": "Cup", "anno_info": {"type": "object_category"},
                              "image_ids": [1]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": [0, 0, 5], "area": 25, "iscrowd": 0,
                             "description_ids": [7]}]}
    proc = _score("omnilabel", refs, [], tmp_path)
    _ok_or_clear(proc, "bbox", "annotations[0]")
    assert proc.returncode == 2


def test_ids_beyond_int64_are_named(tmp_path, ovdeval_sample):
    """pycocotools' loadRes asserts that every result's image is one of the annotation file's:
    refused, named."""
    entry = {"image_id": 2**64, "category_id": 0, "bbox": [0, 0, 1, 1], "score": 0.5}
    proc = _score("ovdeval", (ovdeval_sample / "annotations" / "color.json").read_text(),
                  json.dumps([entry]), tmp_path)
    assert proc.returncode == 2 and "entry 0" in proc.stderr and "image_id" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_omnilabel_image_id_beyond_int64_is_dropped_with_a_warning(tmp_path, omnilabel_sample):
    """omnilabeltools files a prediction under its image id and looks up only the references' ids
    (no assertion): an id beyond int64 equals none, so the entry is dropped, scored as an empty file
    (AP 0), and the drop named."""
    entry = {"image_id": 2**64, "bbox": [0, 0, 1, 1], "description_ids": [1], "scores": [0.5]}
    proc = _score("omnilabel", (omnilabel_sample / "dataset_val.json").read_text(),
                  json.dumps([entry]), tmp_path, "--output", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    assert (
        "1 prediction(s) for 1 image id(s) not in the references were dropped"
        in proc.stdout + proc.stderr
    )
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]["AP_categ"] == 0.0


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("max_values", [None, 10**6])
def test_a_file_over_the_byte_limit_is_named_and_one_at_it_is_read(gz, max_values, tmp_path):
    """The byte limit holds on each reading path (a plain file sized and read at once; a gzip or a
    value-bounded file read in chunks): 101 bytes of JSON pass a 101-byte limit and fail a 100-byte
    one, naming the file."""
    import gzip

    from vlbench.engine.errors import FormatError
    from vlbench.engine.io import read_json

    text = b"[" + b"1," * 48 + b"100]"
    assert len(text) == 101
    path = tmp_path / ("x.json.gz" if gz else "x.json")
    path.write_bytes(gzip.compress(text) if gz else text)
    assert read_json(path, max_bytes=101, max_values=max_values) == [1] * 48 + [100]
    with pytest.raises(FormatError, match="larger than 100 bytes") as err:
        read_json(path, max_bytes=100, max_values=max_values)
    assert str(path) in str(err.value)
