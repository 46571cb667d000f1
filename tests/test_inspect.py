"""vlbench's Inspect task pack run by inspect-ai's own runner (``inspect_ai.eval``) against a real OpenAI-compatible
server on 127.0.0.1 (``transformers serve`` with the scripted tiny Qwen2-VL of tests/tiny_models.py, whose greedy
answer is known), offline: the task's metrics equal ``vlbench score`` on the file ``vlbench predict --server`` writes
for the same model, and ``vlbench import inspect`` turns the task's log into that same file."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("fastapi", reason="transformers serve needs transformers[serving] (pip install -e '.[test]')")
pytest.importorskip("inspect_ai", reason="the Inspect task pack needs inspect-ai (pip install -e '.[test]')")

from test_serving import _cli, served  # noqa: F401  (the server fixture and the CLI runner)


def test_the_inspect_task_scores_as_vlbench_scores_the_served_run_s_file(served, built_samples, tmp_path,  # noqa: F811
                                                                         monkeypatch):
    from inspect_ai import eval as inspect_eval

    from vlbench import score
    from vlbench.inspect_tasks import vlbench

    model, url = served
    data = built_samples / "ovdeval"
    monkeypatch.setenv("LOCAL_BASE_URL", url + "/v1")
    monkeypatch.setenv("LOCAL_API_KEY", "unused")
    task = vlbench(benchmark="ovdeval", data=str(data), config="color", family="PaliGemma", max_tokens=12)
    log, = inspect_eval(task, model=f"openai-api/local/{model}", log_dir=str(tmp_path / "logs"), display="none",
                        max_connections=2)
    assert log.status == "success", log.error
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}

    served_file = tmp_path / "served.json"
    proc = _cli("predict", "ovdeval", "--server", url, "--model", str(model), "--data", str(data), "--config",
                "color", "--box-format", "loc-1024", "--box-scores", "constant", "--max-new-tokens", "12",
                "--out", str(served_file))
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = score("ovdeval", data, served_file, sub_dataset="color").metrics
    assert json.loads(served_file.read_text()), "the scripted answer gives boxes"
    assert any(v for v in expected.values()), expected       # a number the comparison can get wrong
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, abs=1e-9) if value is not None else metrics[key] is None, key

    # the same task through the `inspect eval` command line, the file found in the installed package
    import os
    import subprocess
    import sys

    from inspect_ai.log import list_eval_logs, read_eval_log

    import vlbench.inspect_tasks as pack

    env = {**os.environ, "LOCAL_BASE_URL": url + "/v1", "LOCAL_API_KEY": "unused"}
    proc = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", f"{pack.__file__}@vlbench", "-T",
                           "benchmark=ovdeval", "-T", f"data={data}", "-T", "config=color", "-T", "family=PaliGemma",
                           "-T", "max_tokens=12", "--model", f"openai-api/local/{model}", "--log-dir",
                           str(tmp_path / "cli-logs"), "--display", "none"], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cli_log = read_eval_log(list_eval_logs(str(tmp_path / "cli-logs"))[0])
    assert {n: m.value for s in cli_log.results.scores for n, m in s.metrics.items()} == metrics

    imported = tmp_path / "imported.json"
    proc = _cli("import", "inspect", str(log.location), "--benchmark", "ovdeval", "--data", str(data), "--config",
                "color", "--box-format", "loc-1024", "--out", str(imported))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(imported.read_text()) == json.loads(served_file.read_text())


def test_a_file_that_is_not_an_inspect_log_is_a_clear_error(built_samples, tmp_path):
    bad = tmp_path / "run.eval"
    bad.write_bytes(b"not a zip, not a log")
    proc = _cli("import", "inspect", str(bad), "--benchmark", "ovdeval", "--data", str(built_samples / "ovdeval"),
                "--config", "color", "--box-format", "loc-1024", "--out", str(tmp_path / "p.json"))
    assert proc.returncode == 2 and "not an Inspect eval log" in proc.stderr and "Traceback" not in proc.stderr
    assert str(bad) in proc.stderr and not (tmp_path / "p.json").exists()
