"""Bootstrap intervals and paired comparison (issue #8).

What is checked, each against an independent source:
- the resampled statistic is the metric's own definition: weights 1 give the point estimate, and
  integer weights give what the engine (itself equal to pycocotools / pycocoevalcap) computes on a
  data set where the drawn images are physically copied;
- METEOR's corpus score from summed statistics equals the jar's own ``EVAL`` aggregates (real Java);
- ``--ci`` leaves every golden number unchanged;
- coverage: on synthetic data whose population value is known by simulation, the 95% interval
  covers it in about 95% of repetitions (fast variant here, the full one marked ``slow``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vlbench
from conftest import GOLDEN, agree, run_cli
from test_cocoeval import run_engine, scene
from vlbench.engine import cocoeval, uncertainty as U
from vlbench.engine.errors import InputError

BENCHMARK_CASES = {"ref_l4": "random_all_medium", "omnilabel": "random_medium",
                   "ovdeval": "coco_medium_ids1", "nocaps": "random_medium"}


def _golden(benchmark: str, case: str):
    folder = GOLDEN / benchmark / case
    refs = next(p for p in folder.iterdir() if p.name.startswith("references"))
    expected = json.loads((folder / "expected.json").read_text())
    return folder, refs, folder / "predictions.json", expected


def _assert_same(point: dict, replicated: dict) -> None:
    for key, value in point.items():
        got = replicated[key][0] if key in replicated else None
        if value is None:
            assert got is None or np.isnan(got), key
        else:
            assert got == pytest.approx(value, abs=1e-9), key


@pytest.mark.parametrize("bench_id", sorted(BENCHMARK_CASES))
@pytest.mark.heavy
def test_weights_one_give_the_point_estimate_and_ci_leaves_golden_numbers_alone(bench_id, tmp_path):
    benchmark = bench_id
    folder, refs, preds, expected = _golden(benchmark, BENCHMARK_CASES[benchmark])
    split = expected.get("split")
    options = {"split": split} if benchmark == "ref_l4" and split else {}
    result = vlbench.score(benchmark, refs, preds, protocol=expected["protocol"], **options)
    rep = result.resampler()
    _assert_same(result.metrics, rep(np.ones((1, sum(rep.strata)))))

    out = tmp_path / "result.json"
    args = ["score", benchmark, "--references", str(refs), "--predictions", str(preds),
            "--protocol",
            expected["protocol"], "--ci", "0.9", "--resamples", "200", "--output", str(out)]
    if options:
        args += ["--split", split]
    proc = run_cli(*args, check=True)
    assert "90% percentile bootstrap intervals (200 resamples of images, seed 0)" in proc.stdout
    data = json.loads(out.read_text())
    assert agree(data["metrics"], expected["metrics"]) == []
    ci = data["breakdowns"]["confidence_intervals"]
    assert (ci["level"], ci["resamples"], ci["seed"], ci["unit"]) == (0.9, 200, 0, "image")
    assert set(ci["metrics"]) == set(data["metrics"])
    defined = [k for k, v in data["metrics"].items() if v is not None]
    assert defined and all(ci["metrics"][k]["low"] <= ci["metrics"][k]["high"] for k in defined)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    folder, refs, preds, _ = _golden("ref_l4", "random_all_medium")
    a = vlbench.score("ref_l4", refs, preds, ci=0.95, resamples=300, seed=1)
    b = vlbench.score("ref_l4", refs, preds, ci=0.95, resamples=300, seed=1)
    c = vlbench.score("ref_l4", refs, preds, ci=0.95, resamples=300, seed=2)
    key = lambda r: r.breakdowns["confidence_intervals"]["metrics"]["mAcc"]  # noqa: E731
    assert key(a) == key(b) and key(a) != key(c)


# -- the resampled statistic is the metric's definition: copies of images --------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(scene(), st.data())
@pytest.mark.heavy
def test_weighted_coco_ap_equals_the_engine_on_copied_images(data, draw):
    images, categories, anns, dets = data
    # distinct scores: tie order among copies is not part of the definition
    for k, det in enumerate(dets):
        det["score"] = round(det["score"], 2) + k * 1e-6
    weights = np.array([draw.draw(st.integers(0, 3)) for _ in images])
    res = run_engine(images, categories, anns, dets, id0_quirk=False)
    got = cocoeval.summary_replicates(cocoeval.summary_rankings(res),
                                      weights[None, :].astype(float))
    copies, anns2, dets2 = [], [], []
    for i, img in enumerate(images):
        for c in range(weights[i]):
            new = img * 10 + c
            copies.append(new)
            anns2 += [
                {**a, "image_id": new, "id": a["id"] * 10 + c + 1}
                for a in anns
                if a["image_id"] == img
            ]
            dets2 += [{**d, "image_id": new} for d in dets if d["image_id"] == img]
    if not copies:
        return
    want = run_engine(copies, categories, anns2, dets2, id0_quirk=False).stats
    for name in cocoeval.STAT_NAMES:
        if want[name] == -1:
            assert np.isnan(got[name][0]), name
        else:
            assert got[name][0] == pytest.approx(want[name], abs=1e-12), name


def test_weighted_ref_l4_equals_scoring_the_copied_rows():
    from vlbench.benchmarks.ref_l4 import synthetic
    from vlbench.benchmarks.ref_l4.reader import references_from_rows

    rows = synthetic.make_rows(400, seed=3, n_images=90)
    preds = synthetic.make_predictions(rows, quality="poor", seed=4)
    result = vlbench.score("ref_l4", references_from_rows(rows), preds)
    rep = result.resampler()
    images = sorted({r["file_name"] for r in rows}, key=[r["file_name"] for r in rows].index)
    weights = np.random.default_rng(0).integers(0, 4, len(images))
    copy_rows, copy_preds = [], []
    by_id = {p["id"]: p for p in preds}
    for image, w in zip(images, weights):
        for c in range(w):
            for r in rows:
                if r["file_name"] == image:
                    new_id = len(copy_rows)
                    copy_rows.append({**r, "id": new_id, "file_name": f"{image}#{c}"})
                    copy_preds.append({**by_id[r["id"]], "id": new_id})
    want = vlbench.score("ref_l4", references_from_rows(copy_rows), copy_preds).metrics
    got = rep(weights[None, :].astype(float))
    for key, value in want.items():
        assert got[key][0] == pytest.approx(value, abs=1e-9), key


def test_weighted_cider_d_equals_the_toolkit_call_on_copied_images():
    from vlbench.engine.captions.cider import CiderDResampler, cider_d
    from vlbench.engine.captions.ngrams import count_ngrams
    from vlbench.engine.captions.tokenize import tokenize

    data = json.loads((GOLDEN / "nocaps" / "random_medium" / "references.json").read_text())
    case = GOLDEN / "nocaps" / "random_medium"
    hyps = {
        p["image_id"]: p["caption"] for p in json.loads((case / "predictions.json").read_text())
    }
    ids = [im["id"] for im in data["images"]]
    refs = {i: [] for i in ids}
    for a in data["annotations"]:
        refs[a["image_id"]].append(a["caption"])
    th, _ = tokenize([hyps[i] for i in ids], "python")
    tr, _ = tokenize([c for i in ids for c in refs[i]], "python")
    k = [len(refs[i]) for i in ids]
    starts = np.cumsum(k) - k
    n = len(ids)
    res = CiderDResampler(count_ngrams(th + tr), np.arange(n), n + np.arange(len(tr)),
                          np.repeat(np.arange(n), k), n)
    weights = np.random.default_rng(1).integers(0, 3, n)
    keep = np.repeat(np.arange(n), weights)
    th2 = [th[i] for i in keep]
    tr2 = [r for i in keep for r in tr[starts[i]:starts[i] + k[i]]]
    m = len(keep)
    want = cider_d(count_ngrams(th2 + tr2), np.arange(m), m + np.arange(len(tr2)),
                   np.repeat(np.arange(m), np.asarray(k)[keep]), m)
    got = res(weights[None, :].astype(float))[0]
    np.testing.assert_allclose(got[keep], want, rtol=0, atol=1e-12)


@pytest.mark.skipif(
    not __import__("vlbench.engine.captions.meteor", fromlist=["x"]).meteor_available("java")[0],
    reason="METEOR needs Java",
)
def test_meteor_from_summed_statistics_equals_the_jars_eval():
    from vlbench.engine.captions.meteor import Meteor
    from vlbench.engine.captions.meteor_lines import meteor_from_stats, parse_stats, summable_stats
    from vlbench.engine.captions.tokenize import tokenize

    rng = np.random.default_rng(0)
    for case in ("random_medium", "copies_and_empties", "edge_handmade"):
        data = json.loads((GOLDEN / "nocaps" / case / "references.json").read_text())
        hyps = {
            p["image_id"]: p["caption"]
            for p in json.loads((GOLDEN / "nocaps" / case / "predictions.json").read_text())
        }
        ids = [im["id"] for im in data["images"]]
        refs = {i: [] for i in ids}
        for a in data["annotations"]:
            refs[a["image_id"]].append(a["caption"])
        th, _ = tokenize([hyps.get(i, "") for i in ids], "java")
        tr, _ = tokenize([c for i in ids for c in refs[i]], "java")
        per_image, start = [], 0
        for i in ids:
            per_image.append(tr[start:start + len(refs[i])])
            start += len(refs[i])
        with Meteor() as jar:
            lines = jar.stats(th, per_image)
            stats = summable_stats(parse_stats(lines))
            for subset in [np.arange(len(lines))] + [
                np.flatnonzero(rng.random(len(lines)) < 0.4) for _ in range(3)
            ]:
                if len(subset):
                    per, corpus = jar.evaluate([lines[j] for j in subset])
                    assert abs(meteor_from_stats(stats[subset].sum(axis=0)) - corpus) < 1e-14, case
                    assert np.allclose(meteor_from_stats(parse_stats([lines[j] for j in subset])),
                                       per, rtol=0, atol=1e-15)


# -- paired comparison -----------------------------------------------------------------------------

def test_compare_prints_a_verdict_table_and_writes_json(sample_release, tmp_path):
    out = tmp_path / "cmp.json"
    proc = run_cli("compare", "ref-l4", "--references", str(sample_release), "--predictions",
                   str(sample_release / "predictions_good.json"),
                   str(sample_release / "predictions_poor.json"),
                   "--resamples", "300", "--output", str(out), check=True)
    assert "paired bootstrap, 300 resamples of images" in proc.stdout and "A better" in proc.stdout
    data = json.loads(out.read_text())
    row = next(r for r in data["metrics"] if r["metric"] == "Acc50")
    good = vlbench.score(
        "ref_l4", sample_release, sample_release / "predictions_good.json"
    ).metrics["Acc50"]
    poor = vlbench.score(
        "ref_l4", sample_release, sample_release / "predictions_poor.json"
    ).metrics["Acc50"]
    assert row["diff"] == pytest.approx(good - poor) and row["low"] <= row["diff"] <= row["high"]
    assert row["a_wins"] > 0.95 and row["verdict"] == "A better"


@pytest.mark.heavy
def test_comparing_a_file_with_itself_finds_no_difference():
    folder, refs, preds, _ = _golden("omnilabel", "random_medium")
    cmp, _, _ = vlbench.library.api.compare("omnilabel", refs, preds, preds, resamples=200)
    for row in cmp.rows:
        if row["a"] is not None:
            assert (row["diff"], row["low"], row["high"], row["a_wins"]) == (0, 0, 0, 0)
            assert row["verdict"] == "no clear difference"


def test_compare_needs_the_same_references():
    a = vlbench.score("ref_l4", *_golden("ref_l4", "random_all_medium")[1:3])
    b = vlbench.score("ref_l4", *_golden("ref_l4", "random_test_small")[1:3], split="test")
    with pytest.raises(InputError, match="different references"):
        U.compare(a, b, resamples=50)


def test_bad_ci_settings_are_clear_errors(sample_release):
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                   str(sample_release / "predictions_good.json"), "--ci", "95")
    assert (
        proc.returncode == 2 and "between 0 and 1" in proc.stderr and "Traceback" not in proc.stderr
    )
    proc = run_cli("score", "ref_l4", "--references", str(sample_release), "--predictions",
                   str(sample_release / "predictions_good.json"), "--ci", "0.95", "--resamples",
                   "3")
    assert proc.returncode == 2 and "resamples" in proc.stderr


def test_evaluate_module_returns_intervals():
    import warnings

    import evaluate

    from conftest import ROOT

    metric = evaluate.load(str(ROOT / "metrics" / "ref_l4"))
    refs = [{"id": i, "bbox": [10, 10, 100, 50 + i], "ori_category_id": "o365_1",
             "file_name": f"{i // 3}.jpg"}
            for i in range(30)]
    preds = [{"pred_bbox": [10, 10, 110, 60 + (i % 7) * 9], "format": "xyxy"} for i in range(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = metric.compute(predictions=preds, references=refs, ci=0.9, resamples=200)
        plain = metric.compute(predictions=preds, references=refs)
    assert {k: v for k, v in out.items() if k != "confidence_intervals"} == plain
    low, high = out["confidence_intervals"]["Acc75"]
    assert low < plain["Acc75"] < high


# -- coverage --------------------------------------------------------------------------------------

def _ref_l4_sample(n_rows: int, seed: int):
    from vlbench.benchmarks.ref_l4 import synthetic
    from vlbench.benchmarks.ref_l4.reader import references_from_rows

    rows = synthetic.make_rows(n_rows, seed=seed, n_images=n_rows // 4)
    return vlbench.score("ref_l4", references_from_rows(rows),
                         synthetic.make_predictions(rows, quality="poor", seed=seed + 1))


def _omnilabel_sample(n_images: int, seed: int):
    from vlbench.benchmarks.omnilabel import synthetic
    from vlbench.benchmarks.omnilabel.reader import parse_official

    data = synthetic.make_dataset(n_images, seed=seed)
    return vlbench.score("omnilabel", parse_official(data),
                         synthetic.make_predictions(data, seed=seed + 1), details=False)


def _ovdeval_sample(n_images: int, seed: int):
    from vlbench.benchmarks.ovdeval import synthetic
    from vlbench.benchmarks.ovdeval.reader import parse_official
    from vlbench.benchmarks.ovdeval.records import OVDEvalReferences

    data = synthetic.make_subset(n_images, seed=seed)
    return vlbench.score("ovdeval", OVDEvalReferences({"color": parse_official(data, "color")}),
                         synthetic.make_predictions(data, seed=seed + 1, quality="poor"))


def _nocaps_sample(n_images: int, seed: int):
    from vlbench.benchmarks.nocaps import synthetic
    from vlbench.benchmarks.nocaps.reader import parse_official

    data = synthetic.make_dataset(n_images, seed=seed)
    return vlbench.score("nocaps", parse_official(data),
                         synthetic.make_predictions(data, seed=seed + 1, quality="poor"),
                         meteor=False, spice=False, tokenizer="python")


#: (sample maker, metric, images or rows per sample, size of the sample that stands for the
#: population). AP-type numbers are biased in small samples (measured here: OmniLabel AP_descr at
#: 300 images sits 0.3 sd above its population value, OVDEval NMS-AP at 300 images ~4 sd above, with
#: ~10 GT per category); a percentile bootstrap measures sampling spread, not that bias, so AP
#: intervals under-cover the population value at such sizes. Coverage is checked on nearly unbiased
#: metrics of each benchmark (recall, accuracy, BLEU).
COVERAGE = {"ref_l4": (_ref_l4_sample, "Acc50", 400, 200_000),
            "omnilabel": (_omnilabel_sample, "AR_descr", 300, 20_000),
            "ovdeval": (_ovdeval_sample, "NMS_AR100", 300, 20_000),
            "nocaps": (_nocaps_sample, "B4", 200, 20_000)}


def _coverage(benchmark: str, repetitions: int, resamples: int) -> tuple[float, float]:
    make, metric, n, population = COVERAGE[benchmark]
    truth = make(population, 10**6).metrics[metric]   # the population value, by simulation
    covered = 0
    for r in range(repetitions):
        result = U.add_intervals(make(n, 1000 + 2 * r), 0.95, resamples=resamples, seed=r)
        iv = result.breakdowns["confidence_intervals"]["metrics"][metric]
        covered += iv["low"] <= truth <= iv["high"]
    return covered / repetitions, truth


@pytest.mark.parametrize("bench_id", sorted(COVERAGE))
@pytest.mark.heavy
def test_coverage_fast(bench_id):
    """60 repetitions: catches a badly wrong interval (e.g. expressions resampled alone, 80%
    coverage)."""
    coverage, truth = _coverage(bench_id, 60, 300)
    assert 0.86 <= coverage <= 1.0, (coverage, truth)


@pytest.mark.heavy
def test_coverage_acceptance_within_a_minute():
    """The acceptance check at CI size (~30 s): Ref-L4 Acc50, 400 repetitions of 1,000 resamples
    each (expressions of one image resampled together). With 400 draws the binomial sd of a true 95%
    coverage is 1.1 points, so [92%, 98%] is about +-2.8 sd; fixed seeds make the run reproducible
    (it gives 95.75%)."""
    coverage, truth = _coverage("ref_l4", 400, 1000)
    assert 0.92 <= coverage <= 0.98, (coverage, truth)


@pytest.mark.slow
@pytest.mark.parametrize("bench_id", sorted(COVERAGE))
def test_coverage_slow(bench_id):
    """The acceptance check: 1,000 repetitions, 1,000 resamples each; 93-97% coverage of the 95%
    interval."""
    coverage, truth = _coverage(bench_id, 1000, 1000)
    assert 0.93 <= coverage <= 0.97, (coverage, truth)
