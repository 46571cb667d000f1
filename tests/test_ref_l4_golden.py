"""Parity with the official RefL4Evaluator on every golden case, through the CLI and through
evaluate."""

from __future__ import annotations

import json
import warnings

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, agree, golden_cases, run_cli

CASES = golden_cases("ref_l4")
#: with the adversarial cases, for the face that reads the official files
ALL_CASES = golden_cases("ref_l4", adversarial=True)




@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_cli_matches_official(case, tmp_path):
    expected = json.loads((case / "expected.json").read_text())
    out = tmp_path / "result.json"
    run_cli("score", "ref_l4", "--references", str(case / "references.parquet"),
            "--predictions", str(case / "predictions.json"), "--split", expected["split"],
            "--protocol", expected["protocol"], "--output", str(out), "--quiet", check=True)
    result = json.loads(out.read_text())
    assert result["benchmark"] == "ref_l4" and result["protocol"] == "official"
    assert not agree(result["metrics"], expected["metrics"])


@pytest.fixture(scope="module")
def ref_l4_metric():
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "ref_l4"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_evaluate_module_matches_official(case, ref_l4_metric):
    expected = json.loads((case / "expected.json").read_text())
    rows = pq.read_table(case / "references.parquet").to_pylist()
    if expected["split"] != "all":
        rows = [r for r in rows if r["split"] == expected["split"]]
    by_id = {p["id"]: p for p in json.loads((case / "predictions.json").read_text())}
    # the scorer's warnings (ignored ids, class table) are tested elsewhere
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in rows:  # the notebook loop of the README: whole rows as references
            p = by_id[row["id"]]
            ref_l4_metric.add(prediction={"pred_bbox": p["pred_bbox"], "format": p["format"]},
                              reference=row)
        got = ref_l4_metric.compute()
    assert not agree(got, expected["metrics"])


def test_corrected_protocol_changes_only_class_metrics(tmp_path):
    case = next(c for c in CASES if c.name == "mapping_all")
    results = {}
    for protocol in ("official", "corrected"):
        out = tmp_path / f"{protocol}.json"
        run_cli("score", "ref-l4", "--references", str(case / "references.parquet"),
                "--predictions",
                str(case / "predictions.json"), "--protocol", protocol, "--output", str(out),
                "--quiet", check=True)
        results[protocol] = json.loads(out.read_text())
    off, cor = results["official"]["metrics"], results["corrected"]["metrics"]
    changed = {k for k in off if off[k] != cor[k]}
    assert changed == {"class_Acc50", "class_mAcc"}
    # The golden README gives the corrected-table values of this case: 80.47 / 64.63 (rounded).
    assert round(cor["class_Acc50"], 2) == 80.47 and round(cor["class_mAcc"], 2) == 64.63
    assert any("off-by-one" in w for w in results["official"]["warnings"])
    assert not any("off-by-one" in w for w in results["corrected"]["warnings"])


def test_predictions_for_the_other_split_are_ignored_quietly(tmp_path):
    # golden README: random_test_small is scored on test; "predictions for val rows and two unknown
    # ids are ignored"
    case = next(c for c in CASES if c.name == "random_test_small")
    out = tmp_path / "r.json"
    run_cli("score", "ref_l4", "--references", str(case / "references.parquet"), "--predictions",
            str(case / "predictions.json"), "--split", "test", "--output", str(out), "--quiet",
            check=True)
    result = json.loads(out.read_text())
    n_val = pq.read_table(case / "references.parquet").column("split").to_pylist().count("val")
    assert result["counts"]["other_split_ids_ignored"] == n_val
    assert result["counts"]["unknown_ids_ignored"] == 2
    assert sum("not rows of the references" in w for w in result["warnings"]) == 1
