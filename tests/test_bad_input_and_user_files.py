"""Issue #27, the contract on the surfaces added in rounds 1-2: bad input exits 2 with a message
naming the file, the entry and the fix; never a traceback; nothing dropped silently; a user's files
never overwritten, deleted or made less readable. One test per class the issue names, through the
real CLI (subprocesses), the real ``datasets`` and ``evaluate`` loaders, real Parquet and real
``huggingface_hub`` card parsing. Each failed on the code before the fix (the issue's probe,
reproduced)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, run_cli, stop_after_first_batch


def _clear(proc: subprocess.CompletedProcess, *needles: str, code: int = 2) -> None:
    """Exit ``code``, no traceback, every needle in the message."""
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == code, (proc.returncode, proc.stderr[-3000:])
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr[-3000:])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Tiny random OWL-ViT and LLaVA checkpoints (tiny_models.py), built offline from configs."""
    pytest.importorskip("torch")
    from tiny_models import tiny_llava, tiny_owlvit

    root = tmp_path_factory.mktemp("models")
    return {"detector": tiny_owlvit(root / "owlvit"), "vlm": tiny_llava(root / "llava")}


def _cli(*args: str, cwd: Path, umask: int | None = None,
         env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a subprocess (stderr a pipe, as in a CI log), optionally under another umask."""
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run([sys.executable, "-m", "vlbench", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600, preexec_fn=pre, env=env)


# -- silent loss or a wrong result without a word --------------------------------------------------

@pytest.mark.parametrize("bench, raw", [("nocaps", "nocaps/nocaps_val_captions.json"),
                                        ("omnilabel", "omnilabel/dataset_val.json")])
@pytest.mark.heavy
def test_a_build_without_images_is_refused_unless_asked_and_then_says_so(bench, raw, tmp_path,
                                                                         models):
    """Without --images the build used to exit 0 with every image empty and a card saying
    "embedded"; now it is refused, --allow-missing-images builds it with a card saying which images
    are not there, and predict refuses the rows without an image (it used to end in
    AttributeError)."""
    samples = ROOT / "src" / "vlbench" / "samples"
    proc = _cli("build", bench, "--raw", str(samples / raw), "--out", str(tmp_path / "hub"),
                cwd=tmp_path)
    _clear(proc, "--images", "--allow-missing-images")
    assert not (tmp_path / "hub").exists()
    proc = _cli("build", bench, "--raw", str(samples / raw), "--out", str(tmp_path / "hub"),
                "--allow-missing-images", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(tmp_path / "hub" / "README.md")
    assert "**not embedded**" in card.text
    if bench == "nocaps":
        proc = _cli("predict", bench, "--model", str(models["vlm"]), "--data",
                    str(tmp_path / "hub"), "--out", str(tmp_path / "p.json"), cwd=tmp_path)
        _clear(proc, "hold no image", "--images")


@pytest.mark.heavy
def test_ref_l4_export_under_a_parquet_name_is_parquet_and_builds_back(tmp_path, sample_release):
    """`export ... --out ref-l4-val.parquet` used to write JSON under that name, which build could
    not read."""
    import pyarrow.parquet as pq

    hub = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(hub), check=True)
    release = tmp_path / "release"
    for split in ("val", "test"):
        run_cli("export", "ref_l4", "--folder", str(hub), "--split", split, "--out",
                str(release / f"ref-l4-{split}.parquet"), check=True)
    table = pq.read_table(release / "ref-l4-val.parquet")          # real Parquet, not JSON
    original = pq.read_table(sample_release / "ref-l4-val.parquet")
    assert table.num_rows == original.num_rows == 8
    assert table.column("id").to_pylist() == original.column("id").to_pylist()
    assert table.column("bbox").to_pylist() == original.column("bbox").to_pylist()
    (release / "images.tar.gz").symlink_to(sample_release / "images.tar.gz")
    proc = run_cli("build", "ref_l4", "--raw", str(release), "--out", str(tmp_path / "again"))
    assert proc.returncode == 0, proc.stderr


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600)])
@pytest.mark.heavy
def test_written_files_follow_the_umask_and_an_edited_card_keeps_its_mode(umask, expected, tmp_path,
                                                                          sample_release):
    """Results, exports and cards were created 0600 whatever the umask; `report --into` turned a
    0644 card into
    0600. Now a new file gets what the umask allows (as open() would) and an edited file keeps its
          own mode."""
    result, export, card = tmp_path / "r.json", tmp_path / "e.json", tmp_path / "README.md"
    proc = _cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                str(sample_release / "predictions_good.json"), "--split", "val", "--dataset-id",
                "me/ref-l4", "--output", str(result), "--quiet", cwd=tmp_path, umask=umask)
    assert proc.returncode == 0, proc.stderr
    hub = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(hub), check=True)
    assert _cli("export", "ref_l4", "--folder", str(hub), "--split", "val", "--out", str(export),
                cwd=tmp_path, umask=umask).returncode == 0
    assert _mode(result) == expected and _mode(export) == expected
    card.write_text("---\nlicense: mit\n---\n# m\n")
    os.chmod(card, 0o664)
    assert (
        _cli("report", str(result), "--into", str(card), cwd=tmp_path, umask=umask).returncode == 0
    )
    assert _mode(card) == 0o664 and "model-index" in card.read_text()


def test_the_task_pack_leaves_out_splits_it_cannot_score_and_says_so(built_samples, tmp_path):
    """The pack used to write vlbench_nocaps_test, whose references are private: found only after
    inference."""
    proc = subprocess.run([sys.executable, "-m", "vlbench.lmms_eval_tasks", "--data",
                           f"nocaps={built_samples / 'nocaps'}", "--out", str(tmp_path / "pack")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = {p.stem for p in (tmp_path / "pack").rglob("*.yaml")}
    assert "vlbench_nocaps_validation" in names and not any("test" in n for n in names)


# -- tracebacks ------------------------------------------------------------------------------------

@pytest.mark.heavy
def test_hub_calls_without_a_network_are_a_clear_error(tmp_path, sample_release):
    """`report --push` and `publish dataset` with a token and no network: an 80-line ConnectError
    before."""
    result = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
            str(sample_release / "predictions_good.json"), "--split", "val", "--dataset-id",
            "me/ref-l4", "--output", str(result), "--quiet", check=True)
    env = {**os.environ, "HF_TOKEN": "hf_" + "x" * 34, "HF_ENDPOINT": "http://127.0.0.1:9",
           "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2"}
    proc = _cli("report", str(result), "--push", "me/det-x", cwd=tmp_path, env=env)
    _clear(proc, "Hugging Face Hub", code=1)
    hub = tmp_path / "hub"
    run_cli("build", "ref_l4", "--raw", str(sample_release), "--out", str(hub), "--eval-framework",
            "vlbench", check=True)
    proc = _cli("publish", "dataset", "ref_l4", "--folder", str(hub), "--repo-id", "me/ref-l4",
                cwd=tmp_path, env=env)
    # refused before any upload
    _clear(proc, "evaluation_framework 'vlbench' is not on the Hub's list", "eval.ts")
    spec = (hub / "eval.yaml").read_text()
    (hub / "eval.yaml").write_text(spec.replace("evaluation_framework: vlbench",
                                                "evaluation_framework: inspect-ai"))
    proc = _cli("publish", "dataset", "ref_l4", "--folder", str(hub), "--repo-id", "me/ref-l4",
                cwd=tmp_path, env=env)
    _clear(proc, "Hugging Face Hub", code=1)


def test_unsupported_error_takes_a_fix():
    from vlbench.engine.errors import InputError, UnsupportedError

    error = UnsupportedError("no sample", fix="pass --references")
    assert isinstance(error, InputError) and "pass --references" in str(error)


def test_ref_l4_build_with_an_unknown_category_id_names_the_row(tmp_path):
    from vlbench.benchmarks.ref_l4 import synthetic

    rows = synthetic.make_rows(6, seed=1, n_images=3)
    rows[2]["ori_category_id"] = "lvis_17"
    release = synthetic.make_release(tmp_path / "release", rows)
    proc = run_cli("build", "ref_l4", "--raw", str(release), "--out", str(tmp_path / "hub"))
    _clear(proc, "lvis_17", f"row id {rows[2]['id']}", "refcoco_")


@pytest.mark.parametrize("bench, prediction, needle", [
    ("ovdeval", {"boxes": [[0.0, 0.0, 5.0, 5.0]], "scores": [0.5]}, "labels"),
    ("ref_l4", {}, "pred_bbox"),
])
def test_an_evaluate_module_names_a_missing_prediction_key(bench, prediction, needle):
    """evaluate's own feature encoding used to leak a bare KeyError before vlbench saw the
    example."""
    import evaluate

    from vlbench.engine.errors import VlbenchError

    metric = evaluate.load(str(ROOT / "metrics" / bench))
    with pytest.raises(VlbenchError, match=needle):
        metric.add(prediction=prediction, reference={})


@pytest.mark.parametrize("caption, needle", [(None, "null"), ("a dog \ud800", "surrogate")])
def test_the_nocaps_module_names_captions_arrow_cannot_hold(caption, needle):
    """A None caption (evaluate's ValueError) and a lone surrogate (Arrow's UnicodeEncodeError)
    leaked."""
    import evaluate

    from vlbench.engine.errors import VlbenchError

    metric = evaluate.load(str(ROOT / "metrics" / "nocaps"))
    with pytest.raises(VlbenchError, match=needle):
        metric.add_batch(
            predictions=["a cat", caption],
            references=[{"image_id": 1, "captions": ["a cat"], "domain": "in-domain"}] * 2,
        )


def test_the_ref_l4_module_refuses_text_as_a_number():
    """evaluate used to cast the string "12" to a number before vlbench saw it."""
    import evaluate

    from vlbench.engine.errors import VlbenchError

    metric = evaluate.load(str(ROOT / "metrics" / "ref_l4"))
    with pytest.raises(VlbenchError, match="pred_bbox"):
        metric.add(prediction={"pred_bbox": ["12", 0, 5, 5], "format": "xywh"}, reference={})


# -- surprises -------------------------------------------------------------------------------------

def test_a_metric_published_under_another_name_loads_with_evaluate(tmp_path):
    """--repo-id ORG/ref-l4 shipped ref_l4.py, which evaluate.load cannot find (it looks for
    ref-l4.py)."""
    import evaluate

    wheel = tmp_path / "vlbench-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    out = tmp_path / "space"
    run_cli("publish", "metric", "ref_l4", "--folder", str(ROOT / "metrics" / "ref_l4"),
            "--repo-id", "me/ref-l4", "--dry-run", "--wheel", str(wheel), "--out", str(out),
            check=True)
    assert (out / "ref-l4.py").is_file() and not (out / "ref_l4.py").exists()
    metric = evaluate.load(str(out / "ref-l4.py"))
    assert metric.name and "pred_bbox" in str(metric.features)


def test_non_interactive_logs_get_no_progress_bars(tmp_path, nocaps_sample):
    proc = _cli("build", "nocaps", "--raw", str(nocaps_sample / "nocaps_val_captions.json"),
                "--images", str(nocaps_sample / "images"), "--out", str(tmp_path / "hub"),
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "it/s" not in proc.stderr and "%|" not in proc.stderr, proc.stderr


def test_every_cli_flag_has_help():
    from vlbench.cli import _parser as build_parser

    missing = []

    def walk(parser, path):
        for action in parser._actions:
            # sub-commands
            if getattr(action, "choices", None) and isinstance(action.choices, dict):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif action.option_strings and action.help in (None, "") and action.dest != "help":
                missing.append(f"{path} {action.option_strings[0]}")

    walk(build_parser(), "vlbench")
    assert not missing, missing


def test_the_readme_lmms_eval_commands_run_as_written():
    """`lmms_eval` is no console script (`lmms-eval` is), and a real run needs lmms-eval's own
    dependencies."""
    import re

    text = (ROOT / "README.md").read_text()
    runs = re.findall(r"^\s*(lmms[-_]eval) --model", text, flags=re.M)
    assert runs and set(runs) == {"lmms-eval"}
    assert 'pip install "lmms-eval==0.7.3"' in text


# -- the probe of `vlbench predict` / `vlbench run` ------------------------------------------------

def _damaged_model(models: dict, tmp_path: Path, damage: str) -> Path:
    """A copy of the tiny OWL-ViT folder with one kind of damage."""
    import shutil

    folder = tmp_path / f"model-{damage}"
    shutil.copytree(models["detector"], folder)
    weights = next(folder.glob("*.safetensors"))
    if damage == "no-config":
        (folder / "config.json").unlink()
    elif damage == "bad-config-field":
        config = json.loads((folder / "config.json").read_text())
        config["text_config"]["hidden_size"] = "wide"
        (folder / "config.json").write_text(json.dumps(config))
    elif damage == "no-weights":
        weights.unlink()
    elif damage == "truncated-weights":
        weights.write_bytes(weights.read_bytes()[:5000])
    elif damage == "nan-box-head":         # a box head of NaN weights: every predicted box is NaN
        import torch
        from safetensors.torch import load_file, save_file

        tensors = load_file(weights)
        save_file({k: torch.full_like(v, float("nan")) if "box_head" in k else v for k,
                   v in tensors.items()},
                  weights, metadata={"format": "pt"})
    # every tensor under another name: nothing of the model would load
    elif damage == "foreign-weights":
        from safetensors.torch import load_file, save_file

        save_file({f"other.{k}": v for k, v in load_file(weights).items()}, weights,
                  metadata={"format": "pt"})
    return folder


@pytest.mark.parametrize("damage, needles", [
    ("no-config", ["config"]), ("bad-config-field", ["config", "hidden_size"]),
    ("no-weights", ["weights", "complete checkpoint"]),
    ("truncated-weights", ["weights", "complete checkpoint"]),
    ("foreign-weights", ["lacks", "would be random"]),
])
def test_a_damaged_model_folder_is_named_never_run_at_random(damage, needles, models, built_samples,
                                                             tmp_path):
    """Tracebacks before, and a checkpoint whose weights did not load predicted from random
    initialisation."""
    model = _damaged_model(models, tmp_path, damage)
    proc = _cli("predict", "ref_l4", "--model", str(model), "--data", str(built_samples / "ref_l4"),
                "--out", str(tmp_path / "p.json"), cwd=tmp_path)
    _clear(proc, str(model.name), *needles)
    assert not (tmp_path / "p.json").exists()


def test_non_finite_boxes_are_dropped_and_counted_never_written(models, built_samples, tmp_path):
    """NaN boxes were written as non-standard JSON (NaN) and not counted."""
    model = _damaged_model(models, tmp_path, "nan-box-head")
    out = tmp_path / "p.json"
    proc = _cli("predict", "ref_l4", "--model", str(model), "--data", str(built_samples / "ref_l4"),
                "--split", "val", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (
        json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the file")) == []
    )
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["boxes_non_finite"] > 0 and meta["unanswered"] == 8
    assert "NaN or infinite values dropped" in proc.stdout


def test_bad_devices_and_data_folders_are_named(models, built_samples, tmp_path):
    import shutil

    out = str(tmp_path / "p.json")
    proc = _cli("predict", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "ref_l4"), "--out", out, "--device", "cuda:7", cwd=tmp_path)
    _clear(proc, "cuda:7", "--device")
    proc = _cli("predict", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "nocaps"), "--out", out, cwd=tmp_path)
    # another benchmark's folder (KeyError: 'id' before)
    _clear(proc, "vlbench build ref_l4")
    damaged = tmp_path / "damaged"
    shutil.copytree(built_samples / "ref_l4", damaged)
    shard = next((damaged / "data").glob("test-*.parquet"))
    shard.write_bytes(shard.read_bytes()[:300])
    proc = _cli("predict", "ref_l4", "--model", str(models["detector"]), "--data", str(damaged),
                "--out", out, cwd=tmp_path)
    _clear(proc, "Parquet", "rebuild")


def test_a_prompt_holding_braces_is_sent_as_written(models, built_samples, tmp_path):
    """The prompt went through str.format: braces traced back (KeyError / IndexError)."""
    out = tmp_path / "c.json"
    proc = _cli("predict", "nocaps", "--model", str(models["vlm"]), "--data",
                str(built_samples / "nocaps"), "--out",
                str(out), "--prompt", "Describe {this} {0} image in {} words", "--limit", "1",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["settings"]["prompt"] == "Describe {this} {0} image in {} words"


@pytest.mark.parametrize("damage, needle", [
    ("not-utf8", "not UTF-8"), ("torn-header", "no settings line"), ("no-entries", "not a record"),
    ("other-benchmark", "other settings"),
])
def test_a_damaged_partial_file_is_named(damage, needle, models, built_samples, tmp_path,
                                         monkeypatch):
    """A partial file that is not UTF-8, lacks `entries`, has a torn header or is another
    benchmark's traced back or was carried into the official file."""
    out = tmp_path / "p.json"
    partial = stop_after_first_batch(str(models["detector"]), built_samples / "ref_l4", out,
                                     monkeypatch)
    lines = partial.read_text().splitlines()
    if damage == "not-utf8":
        partial.write_bytes(b"\xff\xfe" + partial.read_bytes())
    elif damage == "torn-header":
        partial.write_text(lines[0][:25])
    elif damage == "no-entries":
        partial.write_text(lines[0] + "\n" + json.dumps({"key": "0"}) + "\n")
    elif damage == "other-benchmark":
        head = json.loads(lines[0])
        head["settings"]["benchmark"] = "omnilabel"
        partial.write_text(json.dumps(head) + "\n" + "\n".join(lines[1:]) + "\n")
    proc = _cli("predict", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "ref_l4"),
                "--split", "test", "--batch-size", "4", "--out", str(out), cwd=tmp_path)
    _clear(proc, partial.name, needle)
    assert not out.exists()


def test_a_torn_last_line_is_dropped_and_the_rerun_equals_a_fresh_run(models, built_samples,
                                                                      tmp_path, monkeypatch):
    """A killed run's cut last line used to be glued to the rerun's first record."""
    out = tmp_path / "p.json"
    partial = stop_after_first_batch(str(models["detector"]), built_samples / "ref_l4", out,
                                     monkeypatch)
    with open(partial, "a") as fh:
        fh.write('{"key": "4", "entries": [{"id": 4, "pred_b')
    proc = _cli("predict", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "ref_l4"),
                "--split", "test", "--batch-size", "4", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    fresh = tmp_path / "fresh.json"
    assert (
        _cli(
            "predict",
            "ref_l4",
            "--model",
            str(models["detector"]),
            "--data",
            str(built_samples / "ref_l4"),
            "--split",
            "test",
            "--batch-size",
            "4",
            "--out",
            str(fresh),
            cwd=tmp_path,
        ).returncode
        == 0
    )
    assert json.loads(out.read_text()) == json.loads(fresh.read_text())


def test_a_user_s_files_are_never_replaced_without_overwrite(models, built_samples, tmp_path):
    """A folder --out replaced the user's own <sub>.json; `run --out` equal to `--output` left the
    result where the predictions were."""
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "color.json").write_text('"mine"')
    args = ["predict", "ovdeval", "--model", str(models["detector"]), "--data",
            str(built_samples / "ovdeval"), "--config", "color", "--out", str(folder)]
    _clear(_cli(*args, cwd=tmp_path), "color.json", "--overwrite")
    assert (folder / "color.json").read_text() == '"mine"'
    proc = _cli(*args, "--overwrite", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads((folder / "color.json").read_text()), list)
    same = str(tmp_path / "x.json")
    proc = _cli("run", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "ref_l4"), "--out", same, "--output", same, cwd=tmp_path)
    _clear(proc, "--out and --output")
    assert not Path(same).exists()


def test_run_with_a_limit_scores_what_it_answered(models, built_samples, tmp_path):
    """`run --limit 2` failed after predicting ("6 of the 8 rows have no prediction"): now the rows
    left out are scored as the official scorer scores a missing answer (a miss), and said."""
    proc = _cli("run", "ref_l4", "--model", str(models["detector"]), "--data",
                str(built_samples / "ref_l4"),
                "--split", "val", "--limit", "2", "--out", str(tmp_path / "p.json"), "--output",
                str(tmp_path / "r.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["counts"]["missing_counted_as_miss"] == 6 and result["counts"]["predictions"] == 2
    assert any("6 row(s) without a prediction" in w for w in result["warnings"])


# -- the probe of `vlbench import` -----------------------------------------------------------------

def _import(harness: str, path: Path, bench: str, data: Path, tmp_path: Path, *extra: str):
    out = tmp_path / "imported.json"
    return _cli("import", harness, str(path), "--benchmark", bench, "--data", str(data), "--out",
                str(out), *extra, cwd=tmp_path), out


def _line(doc_id: int, answer: str) -> str:
    return json.dumps({"doc_id": doc_id, "target": "", "filtered_resps": [answer], "doc_hash": "0"})


@pytest.mark.parametrize("content, needle", [
    (b"\xff\xfe" + _line(0, "a dog").encode(), "not UTF-8"),
    (('{"doc_id": 0, "filtered_resps": ' + "[" * 100_000 + "]" * 100_000 + "}\n").encode(),
     "nested too deep"),
    ((_line(0, "a dog") + "\n" + _line(0, "a cat") + "\n").encode(), "both for item"),
    (("\n".join(_line(n, "a dog") for n in range(10)) + "\n").encode(), "more than 9 answers"),
], ids=["not-utf8", "nested", "duplicate", "endless"])
def test_lmms_eval_samples_that_cannot_be_answers_are_named(content, needle, built_samples,
                                                            tmp_path):
    """Not UTF-8 and nested too deep traced back; duplicates were written twice; an endless file
    read on."""
    samples = tmp_path / "samples_x.jsonl"
    samples.write_bytes(content)
    proc, out = _import("lmms-eval", samples, "nocaps", built_samples / "nocaps", tmp_path)
    _clear(proc, "samples_x.jsonl", needle)
    assert not out.exists()


def test_missing_docs_and_empty_answers_are_counted_not_predictions(built_samples, tmp_path):
    samples = tmp_path / "samples_x.jsonl"
    samples.write_text(
        "\n".join(_line(n, "a dog on grass" if n != 2 else "  ") for n in range(5)) + "\n"
    )
    proc, out = _import("lmms-eval", samples, "nocaps", built_samples / "nocaps", tmp_path)
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(out.read_text())
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    # the empty answer is written as the empty caption the official scorer scores, and counted as a
    # failure
    assert [e["caption"] for e in entries] == ["a dog on grass"] * 2 + [""] + ["a dog on grass"] * 2
    assert meta["skipped"] == 4 and meta["failed_answers"] == {"empty answer": ["  "]}
    assert "4 item(s) of the split not answered" in proc.stdout and "1 empty answer" in proc.stdout


def test_a_real_lmms_eval_log_of_the_ovdeval_task_imports(built_samples, tmp_path):
    """The task logs each document's row; the importer matched OVDEval rows by a key the rows do not
    have ("answer 0 is for id 0, which the split does not have")."""
    from datasets import load_dataset

    rows = load_dataset(str(built_samples / "ovdeval"), "color", split="test").remove_columns(
        "image"
    )
    lines = []
    for n, row in enumerate(rows):
        first = row["labels"][0] if row.get("labels") else "thing"
        answer = json.dumps([{"bbox_2d": [10, 10, 50, 50], "label": first}])
        lines.append(json.dumps({"doc_id": n, "filtered_resps": [answer],
                                 "NMS_AP": {"row": dict(row), "answer": answer}}, default=str))
    samples = tmp_path / "samples_vlbench_ovdeval_color.jsonl"
    samples.write_text("\n".join(reversed(lines)) + "\n")      # any order: the row names the item
    proc, out = _import("lmms-eval", samples, "ovdeval", built_samples / "ovdeval", tmp_path,
                        "--config", "color", "--box-format", "pixel")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(Path(f"{out}.meta.json").read_text())["items"] == len(rows)


def _workbook(path: Path, rows: list[list], header=("index", "question", "prediction")) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(list(header))
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_a_vlmevalkit_workbook_matched_by_index_must_cover_the_split(built_samples, tmp_path):
    """By `index` a missing row shifted every later caption silently; by `image_id` it is exact."""
    from datasets import load_dataset

    ids = load_dataset(str(built_samples / "nocaps"), split="validation")["image_id"]
    book = _workbook(tmp_path / "M_nocaps.xlsx",
                     [[n, "q", f"caption {n}"] for n in range(len(ids)) if n != 3])
    proc, out = _import("vlmevalkit", book, "nocaps", built_samples / "nocaps", tmp_path)
    _clear(proc, "M_nocaps.xlsx", "do not cover", "image_id")
    by_id = _workbook(tmp_path / "M2_nocaps.xlsx",
                      [[n, "q", f"caption {n}", ids[n]] for n in range(len(ids))
                                                    if n != 3],
                      header=("index", "question", "prediction", "image_id"))
    proc, out = _import("vlmevalkit", by_id, "nocaps", built_samples / "nocaps", tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = {e["image_id"]: e["caption"] for e in json.loads(out.read_text())}
    assert got == {ids[n]: f"caption {n}" for n in range(len(ids)) if n != 3}


def test_workbook_formulas_without_values_and_bombs_are_refused(built_samples, tmp_path):
    """A formula cell with no cached value became an empty caption; a zip bomb took gigabytes."""
    book = _workbook(tmp_path / "f_nocaps.xlsx",
                     [[n, "q", "=CONCAT(\"a\",\"b\")" if n == 1 else "a dog"]
                                                  for n in range(9)])
    proc, _ = _import("vlmevalkit", book, "nocaps", built_samples / "nocaps", tmp_path)
    _clear(proc, "f_nocaps.xlsx", "formula", "row 3")
    bomb = tmp_path / "bomb_nocaps.xlsx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/worksheets/sheet1.xml", b"<" + b" " * (300 * 1024**2) + b">")
    proc, _ = _import("vlmevalkit", bomb, "nocaps", built_samples / "nocaps", tmp_path)
    _clear(proc, "bomb_nocaps.xlsx", "unpacks to")


# -- the probe of `report --into` and the bootstrap ------------------------------------------------

@pytest.fixture(scope="module")
def ref_l4_results(tmp_path_factory, sample_release):
    root = tmp_path_factory.mktemp("results")
    for split in ("val", "test"):
        run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                str(sample_release / "predictions_good.json"), "--split", split, "--dataset-id",
                "me/ref-l4", "--output", str(root / f"{split}.json"), "--quiet", check=True)
    return root


@pytest.mark.parametrize("card, needle", [
    (b"---\nlicense: [unclosed\n---\n# m\n", "YAML"),
    (b"---\nmodel-index: 5\n---\n# m\n", "model_index"),
    (b"---\nlicense: mit\n---\n# m \xff\n", "not UTF-8"),
    (b"---\nmodel-index:\n- name: a\n  results: []\n- name: b\n  results: []\n---\n# two\n",
     "2 models"),
], ids=["bad-yaml", "bad-model-index", "not-utf8", "two-models"])
@pytest.mark.heavy
def test_report_into_a_card_it_cannot_merge_is_named_and_left_alone(card, needle, ref_l4_results,
                                                                    tmp_path):
    """Bad YAML, an invalid model-index and non-UTF-8 traced back; a card of two models had every
    result re-attributed to the new one."""
    path = tmp_path / "README.md"
    path.write_bytes(card)
    _clear(_cli("report", str(ref_l4_results / "val.json"), "--into", str(path), cwd=tmp_path),
           "README.md", needle)
    assert path.read_bytes() == card


def test_eval_results_of_another_split_are_kept(ref_l4_results, tmp_path):
    """Writing the test split's .eval_results dropped the val entries without a message."""
    import yaml

    for split in ("val", "test"):
        run_cli("report", str(ref_l4_results / f"{split}.json"), "--eval-results", str(tmp_path),
                check=True)
    entries = yaml.safe_load((tmp_path / ".eval_results" / "ref_l4.yaml").read_text())
    assert sorted(e["dataset"]["task_id"] for e in entries) == ["acc50_test", "acc50_val",
                                                                "macc_test", "macc_val"]


def test_intervals_over_a_single_image_are_said_to_mean_nothing(tmp_path):
    refs = {"images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
            "categories": [{"id": 1, "name": "red car"}, {"id": 2, "name": "blue car"}],
            "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10],
                             "area": 100, "iscrowd": 0}]}
    (tmp_path / "r.json").write_text(json.dumps(refs))
    (tmp_path / "p.json").write_text(json.dumps([{"image_id": 1, "category_id": 1,
                                                  "bbox": [0, 0, 10, 10], "score": 0.9}]))
    proc = _cli("score", "ovdeval", "--references", str(tmp_path / "r.json"), "--predictions",
                str(tmp_path / "p.json"), "--ci", "0.95", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "holds 1 image(s)" in proc.stdout and "no width" in proc.stdout


# -- METEOR on long and repetitive captions --------------------------------------------------------

@pytest.mark.heavy
def test_python_meteor_memory_is_bounded_on_long_and_repetitive_captions():
    """800 hypotheses sharing a 60-word prefix with 5 references each passed 1.5 GB (pair-by-word
    arrays of 4,000 pairs at once); 3 of 1,500 words took 4 GB. Now parts are cut by word pairs and
    long pairs never enter the array path: the peak stays under 1 GB (the child process's VmHWM, as
    the OS counts it, once the paraphrase index is cached: building it takes ~2 GB once)."""
    pytest.importorskip("vlbench.engine.captions.pymeteor")
    script = """
import random
from vlbench.engine.captions.meteor import meteor_stats
random.seed(0)
vocab = ("a dog cat man woman sitting on the table with red blue car street people near "
         "building").split()
prefix = " ".join(random.choice(vocab) for _ in range(60))
hyps = [prefix + f" x{k}" for k in range(800)]
refs = [[prefix + f" y{k} {r}" for r in range(5)] for k in range(800)]
long_h = [" ".join(random.choice(vocab) for _ in range(1500)) for _ in range(2)]
long_r = [[" ".join(random.choice(vocab) for _ in range(1500))] for _ in range(2)]
stats, note = meteor_stats(hyps + long_h, refs + long_r, backend="python")
assert len(stats) == 802 and note.startswith("python"), note
# VmHWM: this program's own peak (ru_maxrss would also count the forking parent's, kept across exec)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""
    warm = ("from vlbench.engine.captions.meteor import meteor_stats; "
            # the paraphrase index built, if it is not
            "meteor_stats(['a dog'], [['a cat']], backend='python')")
    subprocess.run([sys.executable, "-c", warm], capture_output=True, timeout=900, check=True)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.split()[-1]) < 1024 * 1024, (
        f"peak {int(proc.stdout.split()[-1]) // 1024} MB"
    )
