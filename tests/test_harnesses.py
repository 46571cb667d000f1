"""vlbench in the harnesses VLM researchers use: the lmms-eval task pack, loaded by lmms-eval's own
TaskManager, scoring recorded answers through its process_results and aggregations exactly as
`vlbench score` scores the equivalent prediction file; and the importers of lmms-eval samples files
and VLMEvalKit workbooks (written in each harness's documented output format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from vlbench.library import api

pytest.importorskip(
    "lmms_eval", reason="the task-pack tests need lmms-eval (see .ci/run: pip install --no-deps)"
)


def _xyxy(p: dict) -> list[float]:
    x, y, w, h = p["pred_bbox"]
    return [x, y, x + w, y + h] if p.get("format") == "xywh" else list(p["pred_bbox"])


@pytest.fixture(scope="module")
def hub(tmp_path_factory, sample_release, nocaps_sample):
    root = tmp_path_factory.mktemp("hub")
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(root / "ref_l4"),
            check=True)
    run_cli("build", "nocaps", "--raw", str(nocaps_sample / "nocaps_val_captions.json"), "--images",
            str(nocaps_sample / "images"), "--out", str(root / "nocaps"), check=True)
    return root


@pytest.fixture(scope="module")
def ref_l4_answers(sample_release):
    """Per val expression id: a Qwen-style JSON answer holding the good example's box in original
    pixels, except expression 3, whose answer holds no box (so the equivalent file lacks it, and it
    counts as a miss)."""
    preds = {p["id"]: p for p in json.loads((sample_release / "predictions_good.json").read_text())}
    answers = {i: json.dumps([{"bbox_2d": _xyxy(preds[i]), "label": "it"}]) for i in range(8)}
    answers[3] = "I am not sure which object is meant."
    equivalent = [
        {"id": i, "pred_bbox": _xyxy(preds[i]), "format": "xyxy"} for i in range(8) if i != 3
    ]
    return answers, equivalent


def _task(pack: Path, name: str):
    from lmms_eval.tasks import TaskManager, get_task_dict

    return get_task_dict([name], TaskManager(include_path=str(pack), include_defaults=False))[name]


def _aggregate(task, answer_of) -> dict:
    per_metric: dict[str, list] = {}
    for doc in task.test_docs():
        for key, value in task.process_results(doc, [answer_of(doc)]).items():
            per_metric.setdefault(key, []).append(value)
    aggregations = task.aggregation()
    return {key: aggregations[key](values) for key, values in per_metric.items()}


def test_ref_l4_task_scores_recorded_answers_like_vlbench_score(hub, ref_l4_answers, tmp_path):
    answers, equivalent = ref_l4_answers
    pack = tmp_path / "pack"
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "vlbench.lmms_eval_tasks", "--data",
                           f"ref_l4={hub / 'ref_l4'}",
                           "--box-format", "pixel", "--out", str(pack)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == str(pack.resolve()), proc.stderr
    task = _task(pack, "vlbench_ref_l4_val")
    assert task.OUTPUT_TYPE == "generate_until"
    got = _aggregate(task, lambda doc: answers[doc["id"]])
    (tmp_path / "equivalent.json").write_text(json.dumps(equivalent))
    expected = api.score(
        "ref_l4", hub / "ref_l4", tmp_path / "equivalent.json", split="val", missing="miss"
    ).metrics
    assert got == expected
    # the expression is asked
    assert task.doc_to_text(next(iter(task.test_docs()))).endswith("partly hidden.")


def test_nocaps_task_scores_recorded_captions_like_vlbench_score(hub, nocaps_sample, tmp_path):
    from vlbench.lmms_eval_tasks import write_task_pack

    pack = write_task_pack(tmp_path / "pack", {"nocaps": hub / "nocaps"})
    captions = {
        p["image_id"]: p["caption"]
        for p in json.loads((nocaps_sample / "predictions_good.json").read_text())
    }
    got = _aggregate(_task(pack, "vlbench_nocaps_validation"),
                     lambda doc: captions[doc["image_id"]])
    expected = api.score("nocaps", hub / "nocaps", nocaps_sample / "predictions_good.json").metrics
    assert got == expected and got["CIDEr_out"] is not None


def test_two_packs_into_one_folder_keep_both_sets_of_tasks_loadable(hub, nocaps_sample, tmp_path):
    """The pack for nocaps, then the pack for Ref-L4 into the same folder: lmms-eval's own task
    loader still loads the first pack's task (before #68 the second ``vlbench_lmms.py`` held only
    its own functions: AttributeError) and scores it as vlbench does."""
    from vlbench.lmms_eval_tasks import write_task_pack

    pack = write_task_pack(tmp_path / "pack", {"nocaps": hub / "nocaps"})
    write_task_pack(pack, {"ref_l4": hub / "ref_l4"}, box_format="pixel")
    assert _task(pack, "vlbench_ref_l4_val").OUTPUT_TYPE == "generate_until"
    captions = {
        p["image_id"]: p["caption"]
        for p in json.loads((nocaps_sample / "predictions_good.json").read_text())
    }
    got = _aggregate(_task(pack, "vlbench_nocaps_validation"),
                     lambda doc: captions[doc["image_id"]])
    assert (
        got == api.score("nocaps", hub / "nocaps", nocaps_sample / "predictions_good.json").metrics
    )


def test_ovdeval_task_scores_listed_boxes_with_nms_ap_like_vlbench_score(tmp_path, ovdeval_sample):
    """Per image of sub-dataset color, an answer listing the good example's boxes whose category is
    among the image's labels and hard negatives (a detection answer carries no score: each box
    scores 1), plus one box of a label the image does not list (left out, counted). The good example
    has boxes reaching several pixels beyond the image: scored as written, as the official scorer
    scores a file holding them (#65), and counted as reaching outside. The equivalent file holds
    the same boxes as COCO results (xywh = x0, y0, x1 - x0, y1 - y0; score 1), scored by `vlbench
    score` on that sub-dataset."""
    from datasets import load_dataset

    from vlbench.lmms_eval_tasks import write_task_pack

    hub = tmp_path / "hub"
    run_cli("build", "ovdeval", "--raw", str(ovdeval_sample), "--out", str(hub), check=True)
    gt = json.loads((ovdeval_sample / "annotations" / "color.json").read_text())
    name_of = {c["id"]: c["name"] for c in gt["categories"]}
    good: dict[int, list] = {}
    for p in json.loads((ovdeval_sample / "predictions_good" / "color.json").read_text()):
        good.setdefault(p["image_id"], []).append(p)
    answers, equivalent = {}, []
    for row in load_dataset(str(hub), "color", split="test").remove_columns("image"):
        asked = set(row["text"] or []) | set(row["neg_text"] or [])
        listed = []
        for p in good.get(row["image_id"], []):
            if name_of[p["category_id"]] in asked:
                x, y, w, h = p["bbox"]
                box = [x, y, x + w, y + h]
                listed.append({"bbox_2d": box, "label": name_of[p["category_id"]]})
                equivalent.append({"image_id": row["image_id"], "category_id": p["category_id"],
                                   "bbox": [box[0], box[1], box[2] - box[0], box[3] - box[1]],
                                   "score": 1.0})
        listed.append({"bbox_2d": [1, 1, 5, 5], "label": "a label nobody asked for"})
        answers[row["image_id"]] = json.dumps(listed)
    pack = write_task_pack(tmp_path / "pack", {"ovdeval": hub}, box_format="pixel")
    task = _task(pack, "vlbench_ovdeval_color_test")
    # the image's labels are asked
    assert "white chair" in task.doc_to_text(next(iter(task.test_docs())))
    got = _aggregate(task, lambda doc: answers[doc["image_id"]])
    (tmp_path / "color.json").write_text(json.dumps(equivalent))
    expected = api.score(
        "ovdeval", ovdeval_sample / "annotations" / "color.json", tmp_path / "color.json"
    ).metrics
    assert got == expected and 0 < got["NMS_AP"] < 100


def test_the_pack_refuses_what_it_cannot_score(hub, tmp_path):
    from vlbench.engine.errors import InputError
    from vlbench.lmms_eval_tasks import write_task_pack

    with pytest.raises(InputError, match="--box-format"):
        write_task_pack(tmp_path / "a", {"ref_l4": hub / "ref_l4"})
    with pytest.raises(InputError, match="detectors"):
        write_task_pack(tmp_path / "b", {"omnilabel": hub / "ref_l4"})


def _samples_line(doc_id: int, answer: str, row: dict | None = None) -> str:
    """A line of lmms-eval's --log_samples file as 0.7.x writes it (doc popped, one response
    unwrapped)."""
    line = {"doc_id": doc_id, "target": "", "filtered_resps": answer, "token_counts": [None],
            "doc_hash": f"{doc_id:064x}"}
    # vlbench's own tasks log the row each answer is for, under every metric key
    if row is not None:
        line.update({key: {"row": row, "answer": answer} for key in ("Acc50", "mAcc")})
    return json.dumps(line)


@pytest.mark.parametrize("with_rows", [True, False], ids=["vlbench-task", "doc_id-only"])
def test_import_lmms_eval_samples(hub, ref_l4_answers, tmp_path, with_rows):
    """Lines of vlbench's tasks name their row (here shuffled: the id decides); other lines are
    placed by doc_id."""
    answers, equivalent = ref_l4_answers
    order = [5, 0, 7, 3, 1, 6, 2, 4] if with_rows else list(range(8))
    samples = tmp_path / "samples_vlbench_ref_l4_val.jsonl"
    samples.write_text("\n".join(_samples_line(n, answers[i], {"id": i} if with_rows else None)
                                 for n, i in enumerate(order)) + "\n")
    out = tmp_path / "preds.json"
    proc = run_cli("import", "lmms-eval", str(samples), "--benchmark", "ref_l4", "--data",
                   str(hub / "ref_l4"), "--split", "val", "--box-format", "pixel", "--out",
                   str(out))
    assert proc.returncode == 0, proc.stderr
    assert "1 answer(s) without a usable prediction" in proc.stdout
    assert sorted(json.loads(out.read_text()), key=lambda e: e["id"]) == equivalent
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["failed_answers"] == {"no box in the pixel convention": [answers[3]]}
    # a harness's answers carry no token probabilities
    assert meta["settings"]["box_scores"] == "constant"


def test_an_lmms_eval_doc_answered_twice_is_named(hub, ref_l4_answers, tmp_path):
    """The 8 val answers with doc 3 answered a second time (9 lines for 8 rows): the error names the
    doc and both lines (before #68: "more answers than the split has rows"), exit 2, no file."""
    answers, _ = ref_l4_answers
    samples = tmp_path / "samples_vlbench_ref_l4_val.jsonl"
    lines = [_samples_line(n, answers[n]) for n in range(8)]
    samples.write_text("\n".join(lines[:6] + [_samples_line(3, answers[3])] + lines[6:]) + "\n")
    out = tmp_path / "preds.json"
    proc = run_cli("import", "lmms-eval", str(samples), "--benchmark", "ref_l4", "--data",
                   str(hub / "ref_l4"), "--split", "val", "--box-format", "pixel", "--out",
                   str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        "doc_id 3 is answered twice: the answers of lines 4 and 7" in proc.stderr
        and not out.exists()
    )


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_a_samples_file_without_answers_is_refused_not_scored_as_misses(hub, tmp_path, text):
    """An empty samples file (a run that wrote no answer) wrote an all-miss file with exit 0 before:
    scored, a 0 for a model that never answered. Now exit 2 naming the file, no prediction file."""
    samples = tmp_path / "samples_vlbench_ref_l4_val.jsonl"
    samples.write_text(text)
    out = tmp_path / "preds.json"
    proc = run_cli("import", "lmms-eval", str(samples), "--benchmark", "ref_l4", "--data",
                   str(hub / "ref_l4"), "--split", "val", "--box-format", "pixel", "--out",
                   str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "the file holds no answers" in proc.stderr and not out.exists()


def test_import_vlmevalkit_workbook(hub, nocaps_sample, tmp_path):
    """A <model>_<dataset>.xlsx as VLMEvalKit writes it (index, question, prediction, ...): captions
    by index."""
    from datasets import load_dataset
    from openpyxl import Workbook

    rows = load_dataset(str(hub / "nocaps"), split="validation").remove_columns("image")
    captions = {
        p["image_id"]: p["caption"]
        for p in json.loads((nocaps_sample / "predictions_good.json").read_text())
    }
    book = Workbook()
    sheet = book.active
    sheet.append(["index", "question", "prediction", "split"])
    for n, row in enumerate(rows):
        sheet.append([n, "Describe this image in one short sentence.", captions[row["image_id"]],
                      "validation"])
    book.save(tmp_path / "Model_nocaps.xlsx")
    out = tmp_path / "captions.json"
    proc = run_cli("import", "vlmevalkit", str(tmp_path / "Model_nocaps.xlsx"), "--benchmark",
                   "nocaps", "--data", str(hub / "nocaps"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert {e["image_id"]: e["caption"] for e in json.loads(out.read_text())} == captions
    bad = tmp_path / "bad.xlsx"
    bad.write_text("not a workbook")
    proc = run_cli("import", "vlmevalkit", str(bad), "--benchmark", "nocaps", "--data",
                   str(hub / "nocaps"), "--out", str(tmp_path / "x.json"))
    assert (
        proc.returncode == 2
        and "not a readable .xlsx" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_a_scaffolded_benchmark_is_an_lmms_eval_task_with_its_metric_directions(tmp_path):
    """``vlbench new-benchmark``'s package, registered in this process, built and written into a
    task pack: lmms-eval's TaskManager loads its task, MAE is declared lower-is-better, accuracy
    higher, and answers in words aggregate to the hand-derived numbers of its good predictions
    (counts 3, 1, 4, 2, 9 against 3, 1, 4, 1, 5: accuracy 100 * 3 / 5 = 60.0, MAE 5 / 5 = 1.0); the
    answer without a number counts as no prediction."""
    from conftest import scaffolded
    from vlbench.lmms_eval_tasks import write_task_pack

    with scaffolded(tmp_path / "pkg") as samples:
        api.build("count_demo", samples / "references.json", tmp_path / "hub",
                  allow_missing_images=True)
        pack = write_task_pack(tmp_path / "pack", {"count_demo": tmp_path / "hub"})
        task = _task(pack, "vlbench_count_demo_test")
        assert task.higher_is_better() == {"accuracy": True, "MAE": False}
        counts = {
            p["image_id"]: p["count"]
            for p in json.loads((samples / "predictions_good.json").read_text())
        }
        assert _aggregate(task, lambda doc: f"I count {counts[doc['image_id']]} objects.") == {
            "accuracy": 60.0,
            "MAE": 1.0,
        }
        unanswered = _aggregate(
            task, lambda doc: "many" if doc["image_id"] == 0 else str(counts[doc["image_id"]])
        )
        # image 0 as -1: |-1 - 3| = 4 more, one hit less
        assert unanswered == {"accuracy": 40.0, "MAE": 1.8}


@pytest.mark.parametrize("processor, want", [({"do_center_crop": True, "crop_size": 336,
                                               "size": {"shortest_edge": 336}},
                                              "normalized-crop-336"),
                                             ({"do_pad": True, "do_center_crop": True},
                                              "normalized-square"),
                                             (None, "normalized-square")])
def test_the_pack_reads_llava_s_square_from_the_evaluated_model_s_processor(hub, tmp_path,
                                                                            processor, want):
    """LLaVA-1.5's boxes are fractions of the square the model saw: padded in the reference code,
    centre-cropped by the HF-format checkpoints' CLIP processor (``do_center_crop``, no ``do_pad``).
    ``--processor`` names the evaluated model's folder (here one holding only its
    ``preprocessor_config.json``, read by transformers' own loader) and the task's convention
    follows it, as ``vlbench predict`` does; without it the family's stands."""
    import subprocess
    import sys

    args = []
    if processor is not None:
        (tmp_path / "model").mkdir()
        (tmp_path / "model" / "preprocessor_config.json").write_text(
            json.dumps({"image_processor_type": "CLIPImageProcessor", **processor}))
        args = ["--processor", str(tmp_path / "model")]
    pack = tmp_path / "pack"
    proc = subprocess.run([sys.executable, "-m", "vlbench.lmms_eval_tasks", "--data",
                           f"ref_l4={hub / 'ref_l4'}",
                           "--family", "llava", "--out", str(pack), *args], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"box_format: {want}" in (pack / "vlbench_ref_l4_val.yaml").read_text()
    assert f"{want!r}" in (pack / "vlbench_lmms.py").read_text()


def _readme_lines(prefix: str) -> list[str]:
    """The README's indented command lines that start with ``prefix``."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    return [line.strip() for line in text.splitlines() if line.strip().startswith(prefix)]


@pytest.mark.heavy
def test_the_readme_lmms_eval_recipe_runs_and_the_model_answers(hub, tmp_path):
    """The README's three lmms-eval lines run for real, offline: the pack command, lmms-eval's own
    CLI (``python -m lmms_eval`` with the README's arguments; its qwen3_vl model, loaded by
    lmms-eval, on a tiny random Qwen3-VL with the README's CPU arguments, the Ref-L4 task only),
    then ``vlbench import lmms-eval`` of the samples file it logged. Every one of the sample's 16
    test rows must have an answer the model generated (lmms-eval logs the text it got back; a run
    whose requests failed logs none), and the import must place all 16."""
    import os
    import shlex
    import subprocess
    import sys

    from tiny_models import tiny_qwen_vl

    (pack_line,) = _readme_lines("python -m vlbench.lmms_eval_tasks")
    (install_line,) = _readme_lines('pip install "lmms-eval')
    (run_line,) = _readme_lines("lmms-eval --model")
    assert "decord" in install_line and '"filelock<4"' in install_line
    model = tiny_qwen_vl(tmp_path / "tiny-qwen3-vl", "3")
    pack = shlex.split(pack_line.replace("hub/", f"{hub}/"))[1:]
    at = pack.index(f"nocaps={hub}/nocaps")         # the Ref-L4 task only: a shorter run
    del pack[at - 1:at + 1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    made = subprocess.run([sys.executable, *pack], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    args = shlex.split(run_line)[1:]
    args[args.index("--model_args") + 1] = f"pretrained={model},device=cpu,device_map=cpu"
    args[args.index("--tasks") + 1] = "vlbench_ref_l4_test"
    run = subprocess.run([sys.executable, "-m", "lmms_eval", *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    (samples,) = (tmp_path / "logs").rglob("*_samples_vlbench_ref_l4_test.jsonl")
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    assert run.returncode == 0 and len(lines) == 16, run.stderr[-2000:]
    answers = [line["filtered_resps"] for line in lines]
    answers = [a[0] if isinstance(a, list) else a for a in answers]
    assert all(isinstance(a, str) and a.strip() for a in answers), answers
    out = tmp_path / "preds.json"
    imported = run_cli("import", "lmms-eval", str(samples), "--benchmark", "ref_l4", "--data",
                       str(hub / "ref_l4"), "--split", "test", "--box-format", "grid-1000", "--out",
                       str(out))
    assert imported.returncode == 0, imported.stderr
    assert json.loads(Path(f"{out}.meta.json").read_text())["items"] == 16
