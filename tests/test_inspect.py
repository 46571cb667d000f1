"""vlbench's Inspect task pack run by inspect-ai's own runner (``inspect_ai.eval``) against a real
OpenAI-compatible server on 127.0.0.1 (``transformers serve`` with the scripted tiny Qwen2-VL of
tests/tiny_models.py, whose greedy answer is known), offline: the task's metrics equal ``vlbench
score`` on the file ``vlbench predict --server`` writes for the same model, and ``vlbench import
inspect`` turns the task's log into that same file."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("fastapi",
                    reason="transformers serve needs transformers[serving] (pip install -e "
                           "'.[test]')")
pytest.importorskip("inspect_ai",
                    reason="the Inspect task pack needs inspect-ai (pip install -e '.[test]')")

from test_serving import _cli, served  # noqa: F401  (the server fixture and the CLI runner)

#: benchmark -> (the task's arguments, the same rows for predict / import, scoring options, box
#: format)
CASES = {"ovdeval": ({"config": "color"}, ["--config", "color"], {"sub_dataset": "color"},
                     "loc-1024"),
         "ref_l4": ({"split": "val"}, ["--split", "val"], {"split": "val"}, "loc-1024"),
         "nocaps": ({}, [], {}, None)}


@pytest.mark.parametrize("bench_id", list(CASES))
def test_the_inspect_task_scores_as_vlbench_scores_the_served_run_s_file(
    bench_id,
    served,  # noqa: F811
    built_samples,
    tmp_path,
    monkeypatch,
):
    """The task run by ``inspect_ai.eval`` on every row (the scripted answer: a PaliGemma box and a
    label, read as a box, a labelled box or a caption); its metrics against ``vlbench score`` of
    ``vlbench predict --server``'s file; ``vlbench import inspect`` of its log against that file.
    For OVDEval also the ``inspect eval`` command line."""
    from inspect_ai import eval as inspect_eval

    from vlbench import score
    from vlbench.inspect_tasks import vlbench

    task_args, rows, options, box_format = CASES[bench_id]
    model, url = served
    data = built_samples / bench_id
    monkeypatch.setenv("LOCAL_BASE_URL", url + "/v1")
    monkeypatch.setenv("LOCAL_API_KEY", "unused")
    task = vlbench(benchmark=bench_id, data=str(data), family="PaliGemma", max_tokens=12,
                   **task_args)
    log, = inspect_eval(task, model=f"openai-api/local/{model}", log_dir=str(tmp_path / "logs"),
                        display="none", max_connections=2)
    assert log.status == "success", log.error
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}

    boxes = ["--box-format", box_format, "--box-scores", "constant"] if box_format else []
    served_file = tmp_path / "served.json"
    proc = _cli("predict", bench_id, "--server", url, "--model", str(model), "--data", str(data),
                *rows, *boxes, "--max-new-tokens", "12", "--out", str(served_file))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(served_file.read_text()), "the scripted answer gives entries"
    expected = score(bench_id, data, served_file, **options).metrics
    if bench_id == "ovdeval":
        # a number the comparison can get wrong
        assert any(v for v in expected.values()), expected
    # an undefined number (None: SPICE without its jars) is left out
    for key, value in expected.items():
        assert (
            metrics[key] == pytest.approx(value, abs=1e-9)
            if value is not None
            else metrics.get(key) is None
        ), key

    imported = tmp_path / "imported.json"
    fmt = ["--box-format", box_format] if box_format else []
    proc = _cli("import", "inspect", str(log.location), "--benchmark", bench_id, "--data",
                str(data), *rows, *fmt, "--out", str(imported))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(imported.read_text()) == json.loads(served_file.read_text())
    if bench_id == "ovdeval":
        _the_command_line_gives_the_same_metrics(url, model, data, tmp_path, metrics)


def _the_command_line_gives_the_same_metrics(url, model, data, tmp_path, metrics):
    """The same task through the `inspect eval` command line, the file found in the installed
    package."""
    import os
    import subprocess
    import sys

    from inspect_ai.log import list_eval_logs, read_eval_log

    import vlbench.inspect_tasks as pack

    env = {**os.environ, "LOCAL_BASE_URL": url + "/v1", "LOCAL_API_KEY": "unused"}
    proc = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", f"{pack.__file__}@vlbench",
                           "-T",
                           "benchmark=ovdeval", "-T", f"data={data}", "-T", "config=color", "-T",
                           "family=PaliGemma",
                           "-T", "max_tokens=12", "--model", f"openai-api/local/{model}",
                           "--log-dir",
                           str(tmp_path / "cli-logs"), "--display", "none"], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cli_log = read_eval_log(list_eval_logs(str(tmp_path / "cli-logs"))[0])
    assert {n: m.value for s in cli_log.results.scores for n, m in s.metrics.items()} == metrics


def test_a_file_that_is_not_an_inspect_log_is_a_clear_error(built_samples, tmp_path):
    bad = tmp_path / "run.eval"
    bad.write_bytes(b"not a zip, not a log")
    proc = _cli("import", "inspect", str(bad), "--benchmark", "ovdeval", "--data",
                str(built_samples / "ovdeval"),
                "--config", "color", "--box-format", "loc-1024", "--out", str(tmp_path / "p.json"))
    assert (
        proc.returncode == 2
        and "not an Inspect eval log" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    assert str(bad) in proc.stderr and not (tmp_path / "p.json").exists()


def offline_mock_model(text: str = "Default output from mockllm/model"):
    """inspect-ai's ``mockllm/model`` answering ``text`` every time, with its usage given: without
    it the runner counts the prompt's tokens with tiktoken, which downloads an encoding, so offline
    every sample errored (and, before #68, imported as an all-miss file)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def outputs():
        while True:
            output = ModelOutput.from_content(model="mockllm/model", content=text)
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            yield output

    return get_model("mockllm/model", custom_outputs=outputs())


def _mock_log(tmp_path, built_samples, task=None, **eval_options):
    """A real log made by inspect-ai's runner with its offline ``mockllm/model`` (every answer the
    same text; every sample answered): the task is vlbench's for the Ref-L4 sample's test split
    unless another ``task`` is given."""
    from inspect_ai import eval as inspect_eval

    from vlbench.inspect_tasks import vlbench as vlbench_task

    task = task or vlbench_task(benchmark="ref_l4", data=str(built_samples / "ref_l4"),
                                split="test", box_format="pixel")
    log, = inspect_eval(task, model=offline_mock_model(), log_dir=str(tmp_path / "logs"),
                        display="none", **eval_options)
    assert log.status == "success" and not any(s.error for s in log.samples or []), log.error
    return log


def _import(log_path, built_samples, tmp_path, benchmark="ref_l4"):
    from vlbench.harnesses import import_answers

    where = {"ref_l4": {"split": "test", "box_format": "pixel"}, "nocaps": {}}[benchmark]
    return import_answers("inspect", log_path, benchmark, built_samples / benchmark,
                          tmp_path / "p.json", **where)


def test_an_inspect_log_of_another_task_benchmark_or_shape_is_refused_by_name(built_samples,
                                                                              tmp_path):
    """Logs inspect-ai's runner wrote: two epochs; vlbench's task run for Ref-L4 imported as nocaps;
    another task (a one-question 'mmlu'); the same log rewritten (``write_eval_log``, as a .json
    log: an .eval archive keeps one member per sample id and epoch) without samples and with a
    sample twice. Each is a FormatError saying what is wrong; the log of one epoch imports (16 rows,
    none skipped)."""
    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log

    from vlbench.engine.errors import FormatError

    twice = _mock_log(tmp_path, built_samples, epochs=2)
    with pytest.raises(FormatError, match=r"2 epochs \(1, 2\)"):
        _import(twice.location, built_samples, tmp_path)
    with pytest.raises(FormatError, match="run for 'ref_l4', not 'nocaps'"):
        _import(twice.location, built_samples, tmp_path, benchmark="nocaps")

    @task
    def mmlu():
        return Task(dataset=[Sample(input="2 + 2?", target="4")])

    with pytest.raises(FormatError, match="of the task 'mmlu', not of vlbench's"):
        _import(_mock_log(tmp_path, built_samples, task=mmlu()).location, built_samples, tmp_path)

    once = _mock_log(tmp_path, built_samples)
    assert _import(once.location, built_samples, tmp_path).skipped == 0
    log = read_eval_log(once.location)
    for samples, says in (([], "holds no samples"),
                          (log.samples + log.samples[:1], "appear more than once")):
        changed = tmp_path / f"changed-{len(samples)}.json"
        write_eval_log(log.model_copy(update={"samples": samples}), str(changed))
        with pytest.raises(FormatError, match=says):
            _import(changed, built_samples, tmp_path)
    # a run that ended in error: its samples carry inspect-ai's EvalError and no answer (before #68:
    # an all-miss file, exit 0, a 0 for a model that never answered)
    from inspect_ai.log import EvalError

    failed = [sample.model_copy(update={"error": EvalError(message="ConnectionError: the model "
                                                                   "server is down",
                                                           traceback="", traceback_ansi=""),
                                        "output": None})
              for sample in log.samples]
    errored = tmp_path / "errored.json"
    write_eval_log(log.model_copy(update={"samples": failed, "status": "error"}), str(errored))
    with pytest.raises(FormatError,
                       match=r"16 of 16 samples errored without an answer \(log status 'error'; "
                             r"e\.g\. "
                                          r"sample .*ConnectionError: the model server is down\)"):
        _import(errored, built_samples, tmp_path)


def test_an_inspect_log_member_larger_than_the_cap_is_refused_before_it_is_inflated(built_samples,
                                                                                    tmp_path,
                                                                                     monkeypatch):
    """The cap lowered to 1,000 bytes: the log's members are larger once inflated, and the refusal
    names the member and the cap before inspect-ai reads anything."""
    import inspect_ai.log

    import vlbench.harnesses as harnesses
    from vlbench.engine.errors import FormatError

    log = _mock_log(tmp_path, built_samples)
    monkeypatch.setattr(harnesses, "MAX_INSPECT_MEMBER_BYTES", 1000)
    monkeypatch.setattr(inspect_ai.log, "read_eval_log", lambda *a,
                        **k: pytest.fail("the log was read"))
    with pytest.raises(FormatError,
                       match=r"unpacks to [\d,]+ bytes in .*more than it can hold \(1,000\)"):
        harnesses.read_inspect(log.location, 16, "ref_l4")


def test_a_relative_data_folder_is_the_caller_s_on_the_inspect_command_line(built_samples,
                                                                            tmp_path):
    """The README's Inspect recipe as written (``LOCAL_BASE_URL=... LOCAL_API_KEY=none inspect eval
    <pack>@vlbench ... --model openai-api/local/MODEL``), its server a local fake OpenAI-compatible
    one answering "(1,2),(30,40)", run from a folder holding hub/ref_l4 (a copy of the built
    sample): inspect-ai creates the task inside the pack's own folder, yet the rows are the caller's
    folder's; the log's 16 test samples were all answered by the model (status success, no sample
    errored, each completion the server's answer)."""
    import os
    import shutil
    import subprocess
    import sys

    from inspect_ai.log import list_eval_logs, read_eval_log

    import vlbench.inspect_tasks as pack
    from fake_server import answer, serve

    shutil.copytree(built_samples / "ref_l4", tmp_path / "hub" / "ref_l4")
    with serve(lambda n, body: (200, {}, answer("(1,2),(30,40)"))) as (url, fake):
        env = {**os.environ,
               # what the shell sets when the command is typed in tmp_path
               "PWD": str(tmp_path),
               "LOCAL_BASE_URL": f"{url}/v1", "LOCAL_API_KEY": "none"}
        proc = subprocess.run([sys.executable, "-m", "inspect_ai", "eval",
                               f"{pack.__file__}@vlbench", "-T",
                               "benchmark=ref_l4", "-T", "data=hub/ref_l4", "-T", "split=test",
                               "-T",
                               "box_format=pixel", "--model", "openai-api/local/fake", "--log-dir",
                               "logs",
                               "--display", "none"], capture_output=True, text=True, timeout=600,
                              env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert (
        len(log.samples) == 16
        and log.eval.task_args["data"] == "hub/ref_l4"
        and fake.requests == 16
    )
    assert log.status == "success" and not any(s.error for s in log.samples)
    assert {s.output.completion for s in log.samples} == {"(1,2),(30,40)"}


def test_a_scaffolded_benchmark_is_an_inspect_task(tmp_path):
    """``vlbench new-benchmark``'s package, registered in this process and built with images, run as
    the Inspect task by inspect-ai's runner with the offline ``mockllm/model`` answering "There are
    3 objects." every time (its usage given, so the runner counts no tokens): counts 3 against 3, 1,
    4, 1, 5 give accuracy 100 * 1 / 5 = 20.0 and MAE (0 + 2 + 1 + 2 + 2) / 5 = 1.4, and ``vlbench
    import inspect`` turns the log into a file vlbench scores the same."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from PIL import Image

    from conftest import scaffolded
    from vlbench.harnesses import import_answers
    from vlbench.inspect_tasks import vlbench as vlbench_task
    from vlbench.library import api

    def answer(*_):
        output = ModelOutput.from_content(model="mockllm/model", content="There are 3 objects.")
        output.usage = ModelUsage(input_tokens=1, output_tokens=5, total_tokens=6)
        return output

    want = {"accuracy": 20.0, "MAE": 1.4}
    with scaffolded(tmp_path / "pkg") as samples:
        images = tmp_path / "images"
        images.mkdir()
        for i in range(5):
            Image.new("RGB", (32 + 4 * i, 24), (40 * i, 90, 160)).save(images / f"{i}.jpg",
                                                                       format="JPEG")
        api.build("count_demo", samples / "references.json", tmp_path / "hub", images=images)
        model = get_model("mockllm/model", custom_outputs=answer)
        log, = inspect_eval(vlbench_task(benchmark="count_demo", data=str(tmp_path / "hub")),
                            model=model, log_dir=str(tmp_path / "logs"), display="none")
        assert log.status == "success", log.error
        metrics = {name: m.value for score in log.results.scores for name,
                   m in score.metrics.items()}
        assert metrics == pytest.approx(want)
        out = tmp_path / "p.json"
        import_answers("inspect", log.location, "count_demo", tmp_path / "hub", out)
        assert api.score("count_demo", tmp_path / "hub", out).metrics == pytest.approx(want)


def test_the_inspect_task_reads_llava_s_square_from_the_evaluated_model_s_processor(built_samples,
                                                                                    tmp_path,
                                                                                      monkeypatch):
    """As the lmms-eval pack (test_harnesses): ``-T processor=`` names the evaluated model's folder
    (relative to the caller's directory, as ``data``), and LLaVA-1.5's convention follows its image
    processor: a centre-cropping one gives ``normalized-crop-336`` (its resize edge and crop);
    without it the family's padded square stands."""
    import vlbench.inspect_tasks as pack

    (tmp_path / "llava").mkdir()
    (tmp_path / "llava" / "preprocessor_config.json").write_text(
        json.dumps({"image_processor_type": "CLIPImageProcessor", "do_center_crop": True,
                    "crop_size": 336, "size": {"shortest_edge": 336}}))
    monkeypatch.setenv("PWD", str(tmp_path))
    args = {"benchmark": "ref_l4", "data": str(built_samples / "ref_l4"), "split": "test",
            "family": "llava"}
    assert pack.vlbench(**args, processor="llava").metadata["box_format"] == "normalized-crop-336"
    assert pack.vlbench(**args).metadata["box_format"] == "normalized-square"
