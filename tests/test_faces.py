"""One number through every face (#65): a built Hub folder loads what it holds now, through the real
``datasets.load_dataset`` and its cache, and every golden case gives the official number through the
faces that read a built folder: ``--references <folder>``, and the ``evaluate`` module fed from the
folder's rows in one call, in batches and shuffled where the number does not depend on the order.
The face is named in the test id, so a face that drifts fails by name. A case a build cannot carry
faithfully must be refused by the build itself, with the project's own error (never a number that
differs later)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from conftest import ADVERSARIAL, GOLDEN, agree
from vlbench.engine.errors import PredictionError, VlbenchError
from vlbench.library import api

#: a notebook's load of the folder, with whatever cache ``HF_DATASETS_CACHE`` names
_LOAD_FIRST_BOX = ("from datasets import load_dataset; ds = load_dataset({folder!r}, 'all', "
                   "split='validation'); print(ds[0]['boxes'][0]['bbox'])")


def _omnilabel_refs(box: list[float]) -> dict[str, Any]:
    """A two-image OmniLabel file whose first box is ``box``."""
    return {"images": [{"id": 1, "file_name": "coco/a.jpg"}, {"id": 2, "file_name": "coco/b.jpg"}],
            "descriptions": [{"id": 1, "text": "cat", "type": "C", "image_ids": [1, 2]}],
            "annotations": [{"id": 1, "image_id": 1, "bbox": box, "description_ids": [1]},
                            {"id": 2, "image_id": 2, "bbox": [5.0, 5.0, 10.0, 10.0],
                             "description_ids": [1]}]}


def _build_omnilabel(raw: Path, box: list[float], out: Path) -> None:
    raw.write_text(json.dumps(_omnilabel_refs(box)))
    api.build("omnilabel", raw, out, overwrite=True, allow_missing_images=True)


def _first_box(folder: Path, cache: Path) -> list[float]:
    from datasets import load_dataset

    ds = load_dataset(str(folder), "all", split="validation", cache_dir=str(cache))
    return ds[0]["boxes"][0]["bbox"]


def _first_box_in_a_new_process(folder: Path, cache: Path) -> list[float]:
    import os

    proc = subprocess.run([sys.executable, "-c", _LOAD_FIRST_BOX.format(folder=str(folder))],
                          capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HF_DATASETS_CACHE": str(cache)}, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_rebuilt_folder_loads_its_new_rows_in_the_same_process_and_a_new_one(tmp_path):
    """Build, load, change one box, rebuild into the same path, load again: the new box, in this
    process (the cache already holds the first build) and in a new one sharing that cache. Before
    #65 the second load gave the first build's box: ``datasets`` keyed the cache by the card
    alone."""
    folder, cache = tmp_path / "F" / "omnilabel", tmp_path / "cache"
    _build_omnilabel(tmp_path / "refs.json", [10.0, 10.0, 50.0, 100.0], folder)
    assert _first_box(folder, cache) == [10.0, 10.0, 50.0, 100.0]
    assert _first_box_in_a_new_process(folder, cache) == [10.0, 10.0, 50.0, 100.0]
    _build_omnilabel(tmp_path / "refs.json", [11.0, 10.0, 50.0, 100.0], folder)
    assert _first_box(folder, cache) == [11.0, 10.0, 50.0, 100.0]
    assert _first_box_in_a_new_process(folder, cache) == [11.0, 10.0, 50.0, 100.0]


def test_two_folders_of_one_name_never_share_cached_rows(tmp_path):
    """``a/omnilabel`` and ``b/omnilabel`` have the same name and the same card layout; each loads
    its own box."""
    cache = tmp_path / "cache"
    _build_omnilabel(tmp_path / "a.json", [1.0, 2.0, 3.0, 4.0], tmp_path / "a" / "omnilabel")
    _build_omnilabel(tmp_path / "b.json", [9.0, 8.0, 7.0, 6.0], tmp_path / "b" / "omnilabel")
    assert _first_box(tmp_path / "a" / "omnilabel", cache) == [1.0, 2.0, 3.0, 4.0]
    assert _first_box(tmp_path / "b" / "omnilabel", cache) == [9.0, 8.0, 7.0, 6.0]
    assert _first_box(tmp_path / "a" / "omnilabel", cache) == [1.0, 2.0, 3.0, 4.0]


# -- every golden case through the faces that read a built folder ----------------------------------

def _cases() -> list[Path]:
    rounds = (GOLDEN, *ADVERSARIAL)
    return sorted(
        (
            case
            for r in rounds
            for bench in ("ref_l4", "omnilabel", "ovdeval", "nocaps")
            if (r / bench).is_dir()
            for case in (r / bench).iterdir()
            if (case / "expected.json").is_file()
        ),
        key=lambda c: (c.parent.name, c.parent.parent.name, c.name),
    )


CASES = _cases()
#: cases a Hub dataset cannot hold as they are: the build refuses each, naming the entry and the fix
#: (ids written as text, which Arrow's integer ids would change; an image listed twice; class values
#: that give a row no source)
REFUSED_BY_THE_BUILD = {"description_id_types", "text_image_ids", "text_image_ids_mixed",
                        "duplicate_image_entries", "text_category_ids", "string_image_ids",
                        "unusual_class_names"}
#: cases whose prediction file the module's documented form cannot hold: it refuses them, naming the
#: example (category names where OVDEval's labels are class ids; integer scores beyond float64's
#: exact 2^53)
REFUSED_BY_THE_MODULE = {"category_id_as_name": "expected a number, got str",
                         "int_scores_above_2p53": "beyond what the module's float64 column "
                                                       "holds exactly"}


def _behaviour(case: Path) -> str:
    """The case's name without the round prefix (``adv3_``) a shared folder's rounds carry."""
    return re.sub(r"^adv\d+_", "", case.name)


FACES = ("hub-cli", "space", "module-one-call", "module-batched", "module-shuffled", "harness")


def _raw(case: Path, tmp: Path) -> Path:
    """The case's references as the release a build takes (Ref-L4: one ``ref-l4-<split>.parquet``
    per split)."""
    if case.parent.name != "ref_l4":
        return case / "references.json"
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(case / "references.parquet")
    # the cases have no images (built with allow_missing_images)
    (tmp / "images").mkdir(parents=True)
    for split in ("val", "test"):
        pq.write_table(table.filter(pc.equal(table["split"], split)),
                       tmp / f"ref-l4-{split}.parquet")
    return tmp


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[Path, Path | VlbenchError]:
    """Each case built once into its own folder (or the build's refusal), on first use."""
    return {}


def _built(case: Path, builds: dict, tmp_path_factory) -> Path | VlbenchError:
    if case not in builds:
        root = tmp_path_factory.mktemp(case.name)
        try:
            builds[case] = api.build(case.parent.name, _raw(case, root / "raw"), root / "hub",
                                     allow_missing_images=True) and root / "hub"
        except VlbenchError as exc:
            builds[case] = exc
    return builds[case]


def _rows(bench: str, folder: Path, split: str | None) -> list[dict[str, Any]]:
    """The folder's rows of the case's split, as a notebook loads them (images left out: the cases
    have none)."""
    from datasets import concatenate_datasets, load_dataset

    if bench == "ref_l4":
        ds = load_dataset(str(folder))
        ds = (
            concatenate_datasets([ds[s] for s in ("val", "test") if s in ds])
            if split == "all"
            else ds[split]
        )
    elif bench == "ovdeval":
        ds = load_dataset(str(folder), "references", split="test")
    else:
        ds = load_dataset(str(folder), split="validation")
    return [{k: v for k, v in row.items() if k != "image"} for row in ds]


def _module_predictions(bench: str, case: Path, rows: list[dict[str, Any]]) -> list[Any]:
    """The case's official prediction file as the module takes it, one prediction per row (its
    card's form)."""
    entries = json.loads((case / "predictions.json").read_text())
    if bench == "ref_l4":
        by_id = {p["id"]: p for p in entries}
        return [
            {"pred_bbox": by_id[r["id"]]["pred_bbox"], "format": by_id[r["id"]]["format"]}
            for r in rows
        ]
    if bench == "nocaps":
        captions = {p["image_id"]: p["caption"] for p in entries}
        return [captions[r["image_id"]] for r in rows]
    by_image: dict[Any, list[dict]] = {}
    for p in entries:
        by_image.setdefault(p["image_id"], []).append(p)
    if bench == "omnilabel":
        return [
            {
                "boxes": [p["bbox"] for p in by_image.get(r["image_id"], [])],
                "scores": [p["scores"] for p in by_image.get(r["image_id"], [])],
                "description_ids": [p["description_ids"] for p in by_image.get(r["image_id"], [])],
            }
            for r in rows
        ]
    return [{"boxes": [p["bbox"] for p in by_image.get(r["image_id"], [])],
             "scores": [p["score"] for p in by_image.get(r["image_id"], [])],
             "labels": [p["category_id"] for p in by_image.get(r["image_id"], [])]} for r in rows]


def _answers(bench: str, case: Path, rows: list[dict[str, Any]]) -> list[str] | None:
    """The case's predictions written as a model's answers (Ref-L4: the box as xyxy pixels; nocaps:
    the caption), or None where a prediction cannot be written as an answer (a non-finite box)."""
    import math

    if bench == "nocaps":
        return _module_predictions(bench, case, rows)
    answers = []
    for p in _module_predictions(bench, case, rows):
        box = [float(v) for v in p["pred_bbox"]]
        if len(box) < 4 or not all(math.isfinite(v) for v in box):
            return None
        if p["format"] == "xywh":
            box = [box[0], box[1], box[0] + box[2], box[1] + box[3]]
        answers.append("[" + ", ".join(f"{v:.17f}".rstrip("0").rstrip(".") for v in box[:4]) + "]")
    return answers


def _through_module(bench: str, face: str, rows: list[dict],
                    predictions: list[Any]) -> dict[str, Any]:
    import evaluate

    metric = evaluate.load(api.metric_path(bench))
    if face == "module-one-call":
        return metric.compute(predictions=predictions, references=rows)
    pairs = list(zip(predictions, rows))
    if face == "module-shuffled":
        random.Random(0).shuffle(pairs)
    for start in range(0, len(pairs), 3):
        batch = pairs[start:start + 3]
        metric.add_batch(predictions=[p for p, _ in batch], references=[r for _, r in batch])
    return metric.compute()


def _applies(case: Path, face: str) -> bool:
    """Whether ``face`` can take ``case``: nocaps' module is fed in the file's order only (its
    number follows the order of images where captions hold line breaks); the harness aggregation is
    held on the benchmarks whose answer is one box or one caption (a detection answer carries no
    score the official file ranks by), for predictions that can be written as an answer (finite
    boxes)."""
    bench = case.parent.name
    if face == "module-shuffled":
        return bench != "nocaps"
    if face == "harness":
        return bench == "nocaps" or (bench == "ref_l4" and "nonfinite" not in case.name)
    return True


PAIRS = [(case, face) for case in CASES for face in FACES if _applies(case, face)]


@pytest.mark.heavy
@pytest.mark.parametrize("case, face", PAIRS,
                         ids=[f"{c.parent.name}-{c.name}-{f}" for c, f in PAIRS])
def test_every_golden_case_through_every_face(case, face, builds, tmp_path_factory):
    """official file -> vlbench build -> the face -> the official number (``expected.json``), or the
    build's own refusal (which faces take which cases: :func:`_applies`)."""
    bench, expected = case.parent.name, json.loads((case / "expected.json").read_text())
    folder = _built(case, builds, tmp_path_factory)
    if _behaviour(case) in REFUSED_BY_THE_BUILD:
        assert isinstance(folder, VlbenchError) and folder.fix, (
            f"the build of {case.name} gave {folder}"
        )
        return
    assert not isinstance(folder, VlbenchError), f"the build refused {case.name}: {folder}"
    split = expected.get("split") or None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if face == "hub-cli":
            got = api.score(bench, folder, case / "predictions.json",
                            **({"split": split} if bench == "ref_l4" else {})).metrics
        # the Space's scoring of an upload against a Hub folder its operator placed
        elif face == "space":
            from vlbench import space

            subset = split if bench == "ref_l4" else space.choices(bench)[0]
            got = space._score(bench, subset, str(case / "predictions.json"), str(folder))[
                0
            ].metrics
        elif face == "harness":
            from vlbench.harnesses import score_answers

            rows = _rows(bench, folder, split)
            answers = _answers(bench, case, rows)
            assert answers is not None, (
                "a non-finite predicted box: _applies should have left this case out"
            )
            got = score_answers(bench, rows, answers, "pixel" if bench == "ref_l4" else None,
                                folder)
        elif _behaviour(case) in REFUSED_BY_THE_MODULE:
            rows = _rows(bench, folder, split)
            with pytest.raises(PredictionError, match=REFUSED_BY_THE_MODULE[_behaviour(case)]):
                _through_module(bench, face, rows, _module_predictions(bench, case, rows))
            return
        else:
            rows = _rows(bench, folder, split)
            got = _through_module(bench, face, rows, _module_predictions(bench, case, rows))
    assert not agree(got, expected["metrics"])


def test_ovdeval_boxes_under_an_unlisted_category_through_the_built_folder_and_the_module(tmp_path):
    """Five ground-truth boxes moved to a category id the file does not list: the official eval.py
    lets them guide the suppression and never evaluates them (the path of ``vlbench score`` on the
    file, held to eval.py by the golden case ``text_category_ids``). The built folder and the module
    fed its rows give that same number; before #65 the rows listed every category of their boxes, so
    the module evaluated the unlisted one."""
    import evaluate

    case = GOLDEN / "ovdeval" / "color_small_ids0"
    data = json.loads((case / "references.json").read_text())
    unlisted = max(c["id"] for c in data["categories"]) + 100
    for annotation in data["annotations"][:5]:
        annotation["category_id"] = unlisted
    (tmp_path / "color.json").write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        official = api.score("ovdeval", tmp_path / "color.json", case / "predictions.json").metrics
        api.build("ovdeval", tmp_path / "color.json", tmp_path / "hub", allow_missing_images=True)
        from datasets import load_dataset

        rows = [{k: v for k, v in r.items() if k != "image"}
                for r in load_dataset(str(tmp_path / "hub"), "color", split="test")]
        module = evaluate.load(api.metric_path("ovdeval")).compute(
            predictions=_module_predictions("ovdeval", case, rows), references=rows)
        folder = api.score("ovdeval", tmp_path / "hub", case / "predictions.json").metrics
    plain = json.loads((case / "expected.json").read_text())["metrics"]["NMS_AP"]
    assert official["NMS_AP"] != plain                      # the moved boxes change the number
    assert not agree(module, official) and not agree(folder, official)


def test_ref_l4_rows_that_share_an_id_through_the_module():
    """Every row of ``edge_val`` given twice (the official evaluator keeps reference rows that share
    an id, each scored with the id's one prediction): every ratio is unchanged, so the golden
    numbers hold. Two different boxes for one id cannot be an official file: refused, naming the
    example."""
    import evaluate
    import pyarrow.parquet as pq

    case = GOLDEN / "ref_l4" / "edge_val"
    expected = json.loads((case / "expected.json").read_text())
    rows = [
        r
        for r in pq.read_table(case / "references.parquet").to_pylist()
        if r["split"] == expected["split"]
    ]
    predictions = _module_predictions("ref_l4", case, rows)
    metric = evaluate.load(api.metric_path("ref_l4"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = metric.compute(predictions=predictions + predictions, references=rows + rows)
    assert not agree(got, expected["metrics"])
    other = [{**predictions[0], "pred_bbox": [0, 0, 1, 1]}]
    with pytest.raises(PredictionError, match="share id .* but were given different boxes"):
        metric.compute(predictions=predictions + other, references=rows + rows[:1])


@pytest.mark.parametrize("iscrowd", [True, "0", 0.5])
def test_a_build_names_a_value_its_typed_column_cannot_hold(iscrowd, tmp_path):
    """``vlbench score`` reads an OmniLabel ``iscrowd`` of true, "0" or 0.5 as the official
    evaluator does (truthiness for ``ignore``, ``int()`` for crowd matching); the Hub column is
    int64, which would make "0" a 0 (not ignored) or refuse the value in pyarrow's words. The build
    names the file, the row and the field, exit 2, no traceback, and leaves no folder."""
    from conftest import run_cli

    data = _omnilabel_refs([10.0, 10.0, 50.0, 100.0])
    data["annotations"][1]["iscrowd"] = iscrowd
    (tmp_path / "refs.json").write_text(json.dumps(data))
    proc = run_cli("build", "omnilabel", "--raw", str(tmp_path / "refs.json"), "--out",
                   str(tmp_path / "hub"), "--allow-missing-images")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "refs.json" in proc.stderr and "image_id 2" in proc.stderr and "iscrowd" in proc.stderr
    assert not (tmp_path / "hub").exists()


def test_the_module_names_a_boolean_where_its_column_holds_numbers():
    """An OmniLabel reference whose box has ``iscrowd: true``: the module's int64 column cannot take
    it, so the module names the example and the field (before #65 evaluate's encoder said only that
    the format did not match)."""
    import evaluate

    row = {"image_id": 1,
           "boxes": [{"id": 1, "bbox": [0.0, 0.0, 5.0, 5.0], "description_ids": [1],
                      "iscrowd": True}],
           "labelspace": [{"id": 1, "text": "cat", "type": "C"}]}
    metric = evaluate.load(api.metric_path("omnilabel"))
    with pytest.raises(PredictionError,
                       match=r"references\[0\]\.boxes\[0\]\.iscrowd.*boolean True"):
        metric.compute(predictions=[{"boxes": [], "scores": [], "description_ids": []}],
                       references=[row])


def test_an_ovdeval_file_of_any_name_builds_under_its_sub_dataset(tmp_path):
    """A sub-dataset's JSON copied as ``references.json`` builds (config 'references', no eval.yaml:
    no leaderboard names it), and ``--config color`` builds it as color with its leaderboard task;
    before #65 the first was refused with a message telling the user to run the command just run."""
    from conftest import run_cli

    raw = GOLDEN / "ovdeval" / "color_small_ids0" / "references.json"
    plain = run_cli("build", "ovdeval", "--raw", str(raw), "--out", str(tmp_path / "a"),
                    "--allow-missing-images")
    assert plain.returncode == 0 and "without eval.yaml" in plain.stdout, plain.stderr
    assert not (tmp_path / "a" / "eval.yaml").exists()
    named = run_cli("build", "ovdeval", "--raw", str(raw), "--config", "color", "--out",
                    str(tmp_path / "b"), "--allow-missing-images")
    assert named.returncode == 0 and "nms_ap_color" in (tmp_path / "b" / "eval.yaml").read_text()
    folder = api.score("ovdeval", tmp_path / "b", raw.with_name("predictions.json")).metrics
    assert not agree(folder, json.loads(raw.with_name("expected.json").read_text())["metrics"])


def test_a_result_names_the_references_it_was_scored_against(tmp_path):
    """CONTRACT.md's ``source``: scored from the official file, the file's SHA-256; scored from a
    folder built from it, the same record (the build keeps it in the card), with the folder's name.
    The digest is hashlib's own."""
    import hashlib

    case = GOLDEN / "ovdeval" / "color_small_ids0"
    raw = case / "references.json"
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    api.build("ovdeval", raw, tmp_path / "hub", config="color", allow_missing_images=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_file = api.score("ovdeval", raw, case / "predictions.json").to_dict()["source"]
        from_folder = api.score("ovdeval", tmp_path / "hub", case / "predictions.json").to_dict()[
            "source"
        ]
    assert from_file == {"release": "references.json", "files": {"references.json": digest}}
    assert from_folder == {**from_file, "folder": "hub"}
