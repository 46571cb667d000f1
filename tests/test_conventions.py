"""The convention check (#29): a file written in another common box convention is recognised, named
with its fix, and scored side by side by ``vlbench conventions``; correct files and every golden
case stay quiet.

Files are made from the golden references' own GT boxes, written in each convention (declared
"xyxy", as a VLM's answers usually are), so the right reading scores Acc@0.5 = 100 by
construction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import vlbench
from conftest import ADVERSARIAL, GOLDEN, run_cli
from vlbench.library.api import conventions

REFS = GOLDEN / "ref_l4" / "random_all_medium" / "references.parquet"


def _file(convention: str) -> list[dict]:
    """The GT boxes of REFS written in ``convention``."""
    table = pq.read_table(REFS).to_pylist()
    out = []
    for row in table:
        x, y, w, h = row["bbox"]
        W, H = row["width"], row["height"]
        box = {"xyxy pixels": [x, y, x + w, y + h], "xywh pixels": [x, y, w, h],
               "xyxy 0-1 of the image": [x / W, y / H, (x + w) / W, (y + h) / H],
               "xywh 0-1 of the image": [x / W, y / H, w / W, h / H],
               "xyxy 0-1000 of the image": [1000 * x / W, 1000 * y / H, 1000 * (x + w) / W,
                                            1000 * (y + h) / H],
               "yxyx 0-1000 of the image": [1000 * y / H, 1000 * x / W, 1000 * (y + h) / H,
                                            1000 * (x + w) / W],
               }[convention]
        out.append({"id": row["id"], "pred_bbox": box, "format": "xyxy"})
    return out


@pytest.mark.parametrize("convention",
                         ["xywh pixels", "xyxy 0-1 of the image", "xywh 0-1 of the image",
                                        "xyxy 0-1000 of the image", "yxyx 0-1000 of the image"])
def test_a_file_in_another_convention_is_named_with_its_fix(convention):
    result = vlbench.score("ref_l4", REFS, _file(convention))
    named = [w for w in result.warnings if "read as" in w]
    assert (
        len(named) == 1 and f"but 100.0 read as {convention}" in named[0] and "fix:" in named[0]
    ), result.warnings
    key, values = conventions("ref_l4", REFS, _file(convention))
    assert key == "Acc50" and values[convention] == 100.0 and values["as written"] < 50


def test_a_correct_file_is_quiet_and_the_cli_prints_every_reading(tmp_path):
    right = _file("xyxy pixels")
    assert not [w for w in vlbench.score("ref_l4", REFS, right).warnings if "read as" in w]
    as_xywh = [
        {
            **e,
            "pred_bbox": [
                e["pred_bbox"][0],
                e["pred_bbox"][1],
                e["pred_bbox"][2] - e["pred_bbox"][0],
                e["pred_bbox"][3] - e["pred_bbox"][1],
            ],
            "format": "xywh",
        }
        for e in right
    ]
    assert not [w for w in vlbench.score("ref_l4", REFS, as_xywh).warnings if "read as" in w]
    path = tmp_path / "normalized.json"
    path.write_text(json.dumps(_file("xyxy 0-1 of the image")))
    proc = run_cli("conventions", "ref_l4", "--references", str(REFS), "--predictions", str(path))
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.rsplit(None, 1) for line in proc.stdout.splitlines()[1:])
    assert float(lines["xyxy 0-1 of the image"]) == 100.0 and float(lines["as written"]) < 50


def test_without_image_sizes_the_grid_readings_are_not_guessed(tmp_path):
    """References without width/height: only the pixel readings are compared."""
    rows = [
        {k: v for k, v in r.items() if k not in ("width", "height")}
        for r in pq.read_table(REFS).to_pylist()
    ]
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(rows))
    _, values = conventions("ref_l4", path, _file("xyxy 0-1 of the image"))
    assert values["xyxy 0-1 of the image"] is None and values["xywh pixels"] is not None


def _golden(folder: Path, benchmark: str = "ref_l4") -> list[Path]:
    return sorted(p for p in (folder / benchmark).iterdir() if (p / "expected.json").exists()) \
        if (folder / benchmark).is_dir() else []


_DETECTION = ("ovdeval", "omnilabel")


@pytest.mark.parametrize("case", [c for b in ("ref_l4", *_DETECTION)
                                  for folder in (GOLDEN, *ADVERSARIAL) for c in _golden(folder, b)],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.heavy
def test_every_golden_case_is_quiet(case):
    expected = json.loads((case / "expected.json").read_text())
    refs = next(p for p in case.iterdir() if p.name.startswith("references"))
    result = vlbench.score(case.parent.name, refs, case / "predictions.json",
                           protocol=expected.get("protocol", "official"),
                           split=expected.get("split"))
    assert not [w for w in result.warnings if "read as" in w]
    assert np.isfinite([v for v in result.metrics.values() if v is not None]).all()


def test_the_evaluate_module_warns_too():
    """The Ref-L4 evaluate module on Hub-style rows with boxes on a 0-1000 grid declared xyxy: the
    warning."""
    import warnings

    import evaluate

    rows = pq.read_table(REFS).to_pylist()
    preds = [{"pred_bbox": e["pred_bbox"], "format": "xyxy"} for e in _file("xyxy 0-1000 of the "
                                                                            "image")]
    metric = evaluate.load(vlbench.metric_path("ref_l4"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metric.compute(predictions=preds, references=rows)
    assert any("read as xyxy 0-1000 of the image" in str(w.message) for w in caught)


# -- the detection benchmarks (COCO results: bbox [x, y, w, h] pixels) -----------------------------
OVD_REFS = GOLDEN / "ovdeval" / "coco_medium_ids1" / "references.json"
OMNI_REFS = GOLDEN / "omnilabel" / "random_medium" / "references.json"


def _as(convention: str, box: list[float], size: tuple[float, float] | None) -> list[float]:
    """A GT box ``[x, y, w, h]`` written in ``convention`` (sizes (W, H) for the fractions and
    grids)."""
    x, y, w, h = box
    W, H = size or (1.0, 1.0)
    return {"xywh pixels": [x, y, w, h], "xyxy pixels": [x, y, x + w, y + h],
            "xyxy 0-1 of the image": [x / W, y / H, (x + w) / W, (y + h) / H],
            "xywh 0-1 of the image": [x / W, y / H, w / W, h / H],
            "xyxy 0-1000 of the image": [1000 * x / W, 1000 * y / H, 1000 * (x + w) / W,
                                         1000 * (y + h) / H],
            "yxyx 0-1000 of the image": [1000 * y / H, 1000 * x / W, 1000 * (y + h) / H,
                                         1000 * (x + w) / W],
            }[convention]


def _ovdeval_file(convention: str) -> list[dict]:
    """Every GT box of OVD_REFS as a prediction of its own category, written in ``convention``
    (score 1)."""
    data = json.loads(OVD_REFS.read_text())
    size = {img["id"]: (img["width"], img["height"]) for img in data["images"]}
    return [{"image_id": a["image_id"], "category_id": a["category_id"], "score": 1.0,
             "bbox": _as(convention, a["bbox"], size[a["image_id"]])} for a in data["annotations"]]


def _omnilabel_file(convention: str) -> list[dict]:
    """Every GT box of OMNI_REFS as a prediction of its descriptions, written in ``convention``
    (score 1)."""
    data = json.loads(OMNI_REFS.read_text())
    return [{"image_id": a["image_id"], "description_ids": a["description_ids"],
             "scores": [1.0] * len(a["description_ids"]), "bbox": _as(convention, a["bbox"], None)}
            for a in data["annotations"]]


@pytest.mark.parametrize("convention",
                         ["xyxy pixels", "xyxy 0-1 of the image", "xywh 0-1 of the image",
                                        "xyxy 0-1000 of the image", "yxyx 0-1000 of the image"])
@pytest.mark.heavy
def test_an_ovdeval_file_in_another_convention_is_named_with_its_fix(convention):
    """The GT boxes themselves in another convention: read right, every (non-crowd) GT box is
    covered (100); as written (xywh pixels) almost none is. The warning names the reading and its
    fix; the official number is the file's own."""
    result = vlbench.score("ovdeval", OVD_REFS, _ovdeval_file(convention))
    named = [w for w in result.warnings if "read as" in w]
    assert (
        len(named) == 1 and f"but 100.0 read as {convention}" in named[0] and "fix:" in named[0]
    ), result.warnings
    assert result.metrics["NMS_AP"] < 50
    key, values = conventions("ovdeval", OVD_REFS, _ovdeval_file(convention))
    assert key == "R50 (any score)" and values[convention] == 100.0 and values["as written"] < 50


def test_an_omnilabel_file_in_xyxy_is_named_and_grids_need_image_sizes():
    """OmniLabel's dataset JSON has no image sizes: the xyxy-pixels reading is compared, the grids
    are not."""
    result = vlbench.score("omnilabel", OMNI_REFS, _omnilabel_file("xyxy pixels"))
    named = [w for w in result.warnings if "read as" in w]
    assert len(named) == 1 and "but 100.0 read as xyxy pixels" in named[0], result.warnings
    _, values = conventions("omnilabel", OMNI_REFS, _omnilabel_file("xyxy pixels"))
    assert (
        values["xyxy pixels"] == 100.0
        and values["as written"] < 50
        and values["xyxy 0-1 of the image"] is None
    )


@pytest.mark.parametrize("bench_id, refs, make", [("ovdeval", OVD_REFS, _ovdeval_file),
                                                   ("omnilabel", OMNI_REFS, _omnilabel_file)])
@pytest.mark.heavy
def test_a_correct_detection_file_is_quiet(bench_id, refs, make):
    result = vlbench.score(bench_id, refs, make("xywh pixels"))
    assert not [w for w in result.warnings if "read as" in w]
    assert conventions(bench_id, refs, make("xywh pixels"))[1]["as written"] == 100.0


def test_an_ovdeval_folder_is_checked_as_one(tmp_path, ovdeval_sample):
    """The sample's two sub-datasets, their GT boxes written as xyxy pixels in a folder: one
    warning."""
    folder = tmp_path / "preds"
    folder.mkdir()
    for name in ("color", "material"):
        data = json.loads((ovdeval_sample / "annotations" / f"{name}.json").read_text())
        (folder / f"{name}.json").write_text(json.dumps([
            {"image_id": a["image_id"], "category_id": a["category_id"], "score": 1.0,
             "bbox": _as("xyxy pixels", a["bbox"], None)} for a in data["annotations"]]))
    result = vlbench.score("ovdeval", ovdeval_sample / "annotations", folder)
    assert len([w for w in result.warnings if "but 100.0 read as xyxy pixels" in w]) == 1


def test_ovdeval_row_keys_group_rows_as_numpy_does():
    """``_row_keys`` (one integer per (sub-dataset, image, category) row) must put two rows under
    one key exactly when ``np.unique(rows, axis=0)`` does: the same partition, checked as a
    bijection between the two labellings."""
    from vlbench.benchmarks.ovdeval.conventions import _row_keys

    rng = np.random.default_rng(7)
    for n, high in [(0, 5), (1, 5), (500, 4), (5_000, 60), (5_000, 2**40)]:
        rows = rng.integers(-high, high, size=(n, 3), dtype=np.int64)
        rows[: n // 3] = rows[n // 3: 2 * (n // 3)]        # repeated rows for sure
        ours = _row_keys(rows)
        theirs = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
        pairs = np.unique(np.column_stack([ours, theirs]), axis=0)
        assert len(pairs) == len(np.unique(ours)) == len(np.unique(theirs))


def test_degenerate_boxes_are_warned_about_alike_on_every_detection_benchmark():
    """A zero-width box (a random OWL-ViT writes them) is scored as the official scorers score it
    (IoU 0 with every GT box), and each detection benchmark says so in the same words, naming the
    entry."""
    from vlbench.benchmarks.ref_l4.reader import references_from_rows
    from vlbench.benchmarks.ref_l4.scorer import score as ref_l4_score

    refs = references_from_rows(
        [{"id": i, "bbox": [0, 0, 50, 50], "ori_category_id": "o365_1"} for i in range(3)]
    )
    preds = [
        {"id": i, "pred_bbox": [0, 0, 0 if i == 2 else 50, 50], "format": "xywh"} for i in range(3)
    ]
    warnings = {"ref_l4": ref_l4_score(refs, preds).warnings}
    ovd = json.loads(OVD_REFS.read_text())
    ovd_preds = [{"image_id": a["image_id"], "category_id": a["category_id"],
                  "bbox": a["bbox"][:2] + [0, 5], "score": 0.5} for a in ovd["annotations"][:2]]
    warnings["ovdeval"] = vlbench.score("ovdeval", OVD_REFS, ovd_preds).warnings
    omni = json.loads(OMNI_REFS.read_text())
    img = omni["images"][0]["id"]
    descr = next(d["id"] for d in omni["descriptions"] if img in d["image_ids"])
    warnings["omnilabel"] = vlbench.score(
        "omnilabel",
        OMNI_REFS,
        [
            {"image_id": img, "bbox": [1, 1, 10, 10], "description_ids": [descr], "scores": [0.9]},
            {"image_id": img, "bbox": [1, 1, 10, -3], "description_ids": [descr], "scores": [0.8]},
        ],
    ).warnings
    expected = {"ref_l4": "e.g. entry 2", "ovdeval": "e.g. entry 0", "omnilabel": "e.g. entry 1"}
    for bench, entry in expected.items():
        said = [w for w in warnings[bench] if "zero or negative width or height" in w]
        assert (
            said and entry in said[0] and "scored as the official scorer does (IoU 0" in said[0]
        ), bench
