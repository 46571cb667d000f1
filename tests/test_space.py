"""The Space end to end: a real Gradio server on 127.0.0.1, driven through gradio_client and through
a real headless Chromium (Debian's /usr/bin/chromium with Playwright). Screenshots go to
test-artifacts/ (kept by CI runs as artifacts)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, start_app, start_space
from vlbench.library import api
from vlbench.space import example_predictions, sample_references

ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CASES = [("ref_l4", "val", "Ref-L4"), ("omnilabel", "validation", "OmniLabel"),
         ("ovdeval", "color", "OVDEval"), ("nocaps", "validation", "nocaps")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # an operator-provided Hub folder the visitor may pick (VLBENCH_SPACE_DATA/<benchmark>/<name>)
    data = tmp_path_factory.mktemp("space-data")
    from vlbench.benchmarks.ref_l4.reader import build

    build(sample_references("ref_l4"), data / "ref_l4" / "ref-l4-hub")
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "VLBENCH_SPACE_DATA": str(data)}
    proc, url = start_space(env)
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def _cli_metrics(bench: str, subset: str) -> dict:
    split = subset if bench == "ref_l4" else None
    return api.score(bench, sample_references(bench, subset),
                     example_predictions(bench, "good", subset), split=split).metrics


@pytest.mark.parametrize("bench, subset, _", CASES, ids=[c[0] for c in CASES])
@pytest.mark.heavy
def test_api_through_gradio_client(server, bench, subset, _):
    from gradio_client import Client, handle_file

    client = Client(server, verbose=False)
    out = client.predict(bench, subset, handle_file(example_predictions(bench, "good", subset)),
                         "official", "m", "bundled sample", f"me/{bench}", api_name="/score")
    status, metrics_json, files = out[0], out[-2], out[-1]
    assert status.startswith("**Scored.**")
    assert json.loads(metrics_json) == pytest.approx(_cli_metrics(bench, subset), nan_ok=True) or \
        json.loads(metrics_json) == _cli_metrics(bench, subset)
    assert {Path(f).name for f in files} >= {"result.json", "model-index.yaml"}
    card = Path(next(f for f in files if f.endswith("model-index.yaml"))).read_text()
    assert f"type: me/{bench}" in card
    # the download names the references it was scored against: each annotation file's SHA-256
    # (hashlib's), no path
    source = json.loads(Path(next(f for f in files if f.endswith("result.json"))).read_text())[
        "source"
    ]
    refs = Path(sample_references(bench, subset))
    assert source["files"] and "/" not in source["release"]
    for name, digest in source["files"].items():
        assert (
            hashlib.sha256((refs if refs.is_file() else refs / name).read_bytes()).hexdigest()
            == digest
        )
    assert yaml.safe_load(card)["model-index"][0]["results"][0]["dataset"]["args"] == {
        "source": source
    }
    # no dataset id given: no model-card block (never a guessed id), and the page says what to enter
    out = client.predict(bench, subset, handle_file(example_predictions(bench, "good", subset)),
                         "official", "m", "bundled sample", api_name="/score")
    assert "enter the dataset's id on the Hub" in out[0]
    assert "model-index.yaml" not in {Path(f).name for f in out[-1]}


def test_api_malformed_upload_gives_the_scorer_error(server, tmp_path):
    from gradio_client import Client, handle_file

    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    out = Client(server, verbose=False).predict("ref_l4", "all", handle_file(str(bad)), "official",
                                                "m", "bundled sample", api_name="/score")
    assert out[0].startswith("**Error:**") and "must be a JSON list" in out[0]


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def _open(page, url: str) -> None:
    """Load the app; not "networkidle": the viewer's per-session state keeps a heartbeat stream
    open."""
    page.goto(url, wait_until="load")
    page.locator("#score").wait_for(timeout=30_000)


def _choose(page, elem_id: str, option: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def _scored_ovdeval_color_poor(browser, server: str, height: int):
    """A new page of the Space with OVDEval's 'color' poor example scored."""
    page = browser.new_page(viewport={"width": 1280, "height": height})
    _open(page, server)
    _choose(page, "bench", "OVDEval")
    page.wait_for_timeout(500)
    _choose(page, "subset", "color")
    page.locator("#example-poor").click()
    page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
    return page


def _headline(page) -> dict[str, float | None]:
    """metric -> value of the headline table (a third column, the tie bounds, is there when scores
    tie)."""
    rows = [r.split("\t") for r in page.locator("#headline").inner_text().splitlines()[1:]]
    return {r[0]: (None if r[1] == "null" else float(r[1])) for r in rows}


def _wait_for_view(page) -> None:
    page.wait_for_function("() => { const i = document.querySelector('#view img'); "
                           "return i && i.complete && i.naturalWidth > 0 }", timeout=30_000)
    page.wait_for_timeout(300)


def _shown_boxes(page) -> tuple[dict, dict]:
    """(the drawn image as the browser shows it, the drawn boxes the page lists in the image's
    pixels)."""
    shown = page.evaluate("""() => { const i = document.querySelector('#view img');
        const r = i.getBoundingClientRect();
        return {natural: [i.naturalWidth, i.naturalHeight], rect: [r.x, r.y, r.width, r.height],
                fit: getComputedStyle(i).objectFit} }""")
    accordion = page.get_by_text("the drawn boxes, in pixels")
    if not page.locator("#view-boxes").is_visible():
        accordion.click()
    page.locator("#view-boxes .cm-content").wait_for(timeout=10_000)
    listed = json.loads(page.locator("#view-boxes .cm-content").inner_text())
    return shown, listed


def _content_box(shown: dict) -> tuple[float, float, float]:
    """(scale, left, top) of the image inside its <img> element as CSS lays it out: "contain" fits
    it whole, "scale-down" also never enlarges it; both centre it (the other fits crop or stretch,
    and are refused)."""
    assert shown["fit"] in ("contain", "scale-down"), shown["fit"]
    (nw, nh), (_, _, w, h) = shown["natural"], shown["rect"]
    scale = min(w / nw, h / nh, *([1.0] if shown["fit"] == "scale-down" else []))
    return scale, (w - nw * scale) / 2, (h - nh * scale) / 2


def _outline_seen(pixels, box, colour, placement) -> int:
    """How many of the four edges of ``box`` (xyxy, image pixels) show ``colour`` at their middle in
    the screenshot of the <img> element (``pixels``; ``placement`` from :func:`_content_box`),
    looking 3 pixels around."""
    import numpy as np

    scale, left, top = placement
    x0, x1 = (left + v * scale for v in box[0::2])
    y0, y1 = (top + v * scale for v in box[1::2])
    seen = 0
    for x, y in (((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1), (x0, (y0 + y1) / 2),
                 (x1, (y0 + y1) / 2)):
        patch = pixels[
            max(0, round(y) - 3) : round(y) + 4, max(0, round(x) - 3) : round(x) + 4, :3
        ].astype(int)
        seen += bool(patch.size and (np.abs(patch - np.asarray(colour)).sum(axis=-1) < 60).any())
    return seen


@pytest.mark.parametrize("bench, subset, label", CASES, ids=[c[0] for c in CASES])
def test_browser_scores_an_example_like_the_cli(server, browser, bench, subset, label):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 1800}, accept_downloads=True)
    _open(page, server)
    _choose(page, "bench", label)
    page.wait_for_timeout(500)
    _choose(page, "subset", subset)
    page.locator("#dataset-id textarea, #dataset-id input").first.fill(f"me/{bench}")
    page.locator("#example-good").click()
    # wait for the file itself (the label also mentions ".json")
    page.locator("#upload").get_by_text(
        Path(example_predictions(bench, "good", subset)).stem
    ).first.wait_for(timeout=20_000)
    # an example click scores at once (no Score click)
    page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
    page.locator("#headline").get_by_text("metric").first.wait_for(timeout=20_000)
    shown = _headline(page)
    cli = _cli_metrics(bench, subset)
    # the page shows two decimals, as the papers and leaderboards do
    assert shown and all((v is None and cli[k] is None) or abs(v - cli[k]) <= 0.005 for k,
                         v in shown.items())
    from vlbench.library.report import tie_bounds, tie_orders

    scored = api.score(bench, sample_references(bench, subset),
                       example_predictions(bench, "good", subset),
                       split=subset if bench == "ref_l4" else None)
    header = page.locator("#headline").inner_text().splitlines()[0]
    # bounds or random orders that move, beside the score
    ties = bool(tie_bounds(scored) or tie_orders(scored))
    assert ("over every order of tied scores" in header and "random orders" in header) == ties
    page.screenshot(path=str(ARTIFACTS / f"space_{bench}_result.png"), full_page=True)
    page.get_by_role("tab", name="Samples").click()
    _wait_for_view(page)
    # the worst image first
    assert page.locator("#image-pick input").input_value().startswith("#1 ")
    page.screenshot(path=str(ARTIFACTS / f"space_{bench}_samples.png"), full_page=True)
    page.get_by_role("tab", name="Downloads").click()
    with page.expect_download() as download:
        page.locator("#downloads a[href*='model-index.yaml']").first.click()
    text = Path(download.value.path()).read_text()
    assert "model-index:" in text and "metrics:" in text
    page.close()


@pytest.mark.parametrize("name, content, expected",
                         [("broken.json", "[{'id': 0,", "not valid JSON"),
                                                     ("not-a-list.json", '{"id": 1}',
                                                      "must be a JSON list")])
def test_browser_malformed_upload_shows_the_error(server, browser, tmp_path, name, content,
                                                  expected):
    """The page names the file as uploaded and says what is wrong, never a path of the server."""
    bad = tmp_path / name
    bad.write_text(content)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    _open(page, server)
    page.locator("#upload input[type=file]").set_input_files(str(bad))
    page.locator("#upload").get_by_text(bad.stem).first.wait_for(timeout=20_000)
    page.locator("#score").click()
    page.locator("#status").get_by_text(expected).wait_for(timeout=60_000)
    text = page.locator("#status").inner_text()
    assert (
        name in text and "/tmp" not in text and "site-packages" not in text and "/root" not in text
    )
    page.screenshot(path=str(ARTIFACTS / f"space_malformed_upload_{bad.stem}.png"))
    page.close()


def test_browser_ovdeval_all_sub_datasets_table_3_and_radar(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 1800}, accept_downloads=True)
    _open(page, server)
    _choose(page, "bench", "OVDEval")
    page.wait_for_timeout(500)
    _choose(page, "subset", "all (Table 3)")
    page.locator("#example-good").click()
    page.locator("#upload").get_by_text("ovdeval_predictions_good").first.wait_for(timeout=20_000)
    # the click scores
    page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
    page.locator("#headline").get_by_text("Total_Average").first.wait_for(timeout=20_000)
    shown = _headline(page)
    folder = Path(sample_references("ovdeval", "all (Table 3)"))
    cli = api.score("ovdeval", folder, folder / "predictions_good").metrics
    assert abs(shown["Total_Average"] - cli["Total_Average"]) <= 0.005
    page.get_by_role("tab", name="Plots").click()
    page.wait_for_timeout(1000)
    assert page.get_by_text("aspects").count() >= 1  # the radar chart's label
    page.screenshot(path=str(ARTIFACTS / "space_ovdeval_all_radar.png"), full_page=True)
    page.close()


@pytest.mark.heavy
def test_api_scores_against_an_operator_hub_folder(server):
    from gradio_client import Client, handle_file

    client = Client(server, verbose=False)
    pred = example_predictions("ref_l4", "poor", "val")
    bundled = json.loads(client.predict("ref_l4", "val", handle_file(pred), "official", "m",
                                        "bundled sample", api_name="/score")[-2])
    hub = json.loads(client.predict("ref_l4", "val", handle_file(pred), "official", "m",
                                    "ref-l4-hub", api_name="/score")[-2])
    assert hub == bundled
    from gradio_client.exceptions import AppError

    # a typed path never reaches the engine
    with pytest.raises(AppError, match="not in the list of choices"):
        client.predict("ref_l4", "val", handle_file(pred), "official", "m", "../../etc",
                       api_name="/score")


def test_api_compare_two_uploads_is_the_paired_bootstrap(server):
    from gradio_client import Client, handle_file

    from vlbench.engine.uncertainty import compare

    good, poor = (example_predictions("ref_l4", q, "val") for q in ("good", "poor"))
    table, files = Client(server, verbose=False).predict("ref_l4", "val", handle_file(good),
                                                         handle_file(poor), "official",
                                                         "bundled sample", api_name="/compare")
    refs = sample_references("ref_l4", "val")
    want = compare(api.score("ref_l4", refs, good, split="val",
                             analysis=True),          # the Space analyses too
                   api.score("ref_l4", refs, poor, split="val", analysis=True))
    row = next(r for r in want.rows if r["metric"] == "mAcc")
    shown = next(line for line in table.splitlines() if line.startswith("| mAcc |"))
    assert (
        f"| {row['diff']:.2f} | [{row['low']:.2f}, {row['high']:.2f}] |" in shown
        and "A better" in shown
    )
    saved = json.loads(Path(files[0]).read_text())
    assert saved["metrics"] == json.loads(json.dumps(want.to_dict()["metrics"]))


def test_browser_compare_tab(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 1600})
    _open(page, server)
    page.locator("#example-good").click()
    page.locator("#upload").get_by_text("predictions_good").first.wait_for(timeout=20_000)
    page.get_by_role("tab", name="Compare with another model").click()
    page.locator("#upload-b input[type=file]").set_input_files(example_predictions("ref_l4", "poor",
                                                                                   "all"))
    page.locator("#upload-b").get_by_text("predictions_poor").first.wait_for(timeout=20_000)
    page.locator("#compare").click()
    page.locator("#comparison").get_by_text("A better").first.wait_for(timeout=120_000)
    assert (
        "Paired bootstrap over images (1000 resamples" in page.locator("#comparison").inner_text()
    )
    page.screenshot(path=str(ARTIFACTS / "space_compare.png"), full_page=True)
    page.close()


@pytest.mark.parametrize("bench, subset", [("ovdeval", "material"), ("nocaps", "validation")])
@pytest.mark.heavy
def test_metric_space_app_is_the_space_restricted_to_its_benchmark(bench, subset):
    """metrics/<id>/app.py, started as a Space starts it (python app.py), scores like the CLI and
    offers one benchmark."""
    from gradio_client import Client, handle_file

    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    proc, url = start_app([sys.executable, "app.py"], env, cwd=ROOT / "metrics" / bench)
    try:
        config = json.loads(urllib.request.urlopen(url + "config", timeout=10).read())
        choices = next(
            c["props"]["choices"]
            for c in config["components"]
            if c["props"].get("elem_id") == "bench"
        )
        assert [value for _, value in choices] == [bench]
        out = Client(url, verbose=False).predict(bench, subset,
                                                 handle_file(example_predictions(bench, "good",
                                                                                 subset)),
                                                 "official", "m", "bundled sample",
                                                 api_name="/score")
        assert json.loads(out[-2]) == pytest.approx(_cli_metrics(bench, subset), nan_ok=True)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_browser_viewer_draws_every_box_inside_the_shown_image(server, browser, tmp_path):
    """A Ref-L4 upload whose first prediction reaches far beyond its image (xyxy [-150, -80, 60,
    40]): in the real browser, the drawn image is shown whole (not cropped: its shown aspect is its
    own), every box the page lists lies inside it, and each listed box shows its colour on its four
    edges in a screenshot of the shown image; picking that expression and raising the threshold
    redraw it."""
    import io

    import numpy as np
    from PIL import Image

    from vlbench.library.report import COLOURS

    preds = json.loads(Path(example_predictions("ref_l4", "good", "val")).read_text())
    preds[0]["pred_bbox"], preds[0]["format"] = [-150, -80, 60, 40], "xyxy"
    import pyarrow.parquet as pq

    rows = pq.read_table(
        Path(sample_references("ref_l4", "val")) / "ref-l4-val.parquet"
    ).to_pylist()
    image = next(r["file_name"] for r in rows if r["id"] == preds[0]["id"])
    upload = tmp_path / "wild.json"
    upload.write_text(json.dumps(preds))
    page = browser.new_page(viewport={"width": 1280, "height": 2200})
    _open(page, server)
    page.locator("#upload input[type=file]").set_input_files(str(upload))
    page.locator("#upload").get_by_text("wild").first.wait_for(timeout=20_000)
    page.locator("#score").click()
    page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
    page.get_by_role("tab", name="Samples").click()
    _wait_for_view(page)
    # the expression of the wild box, then every query of its image, each checked
    page.locator("#image-pick input").click()
    page.get_by_role("option", name=re.compile(re.escape(image))).click()
    page.wait_for_timeout(1500)
    page.locator("#query-pick input").click()
    page.get_by_role("option", name=re.compile(rf"^{preds[0]['id']}: ")).click()
    page.wait_for_timeout(1500)
    _wait_for_view(page)
    shown, listed = _shown_boxes(page)
    assert shown["natural"] == listed["size"]
    width, height = listed["size"]
    placement = _content_box(shown)          # shown whole: contained in its element, never cropped
    # readable
    assert placement[1] >= -0.5 and placement[2] >= -0.5 and placement[0] * min(width, height) > 200
    assert listed["boxes"], "no box listed"
    for b in listed["boxes"]:
        x0, y0, x1, y1 = b["xyxy"]
        assert 0 <= x0 <= x1 <= width and 0 <= y0 <= y1 <= height, b
    assert any(b["kind"] == "fp" for b in listed["boxes"])       # the wild box is there, whole
    shot = tmp_path / "view.png"
    page.locator("#view img").screenshot(path=str(shot))
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "space_viewer_wild_box.png")
    pixels = np.asarray(Image.open(io.BytesIO(shot.read_bytes())))
    assert abs(pixels.shape[1] - shown["rect"][2]) <= 1
    for b in listed["boxes"]:
        assert _outline_seen(pixels, b["xyxy"], COLOURS[b["kind"]], placement) == 4, b
    message = page.locator("#status").inner_text()
    assert "/tmp" not in message and "site-packages" not in message
    page.close()


# -- issue #27: the Space bounded, named and without server paths ----------------------------------

def test_api_outputs_are_named(server):
    """gradio_client listed the outputs as value_15 and the like: each output component has a
    label."""
    from gradio_client import Client

    info = Client(server, verbose=False).view_api(return_format="dict", print_info=False)
    labels = [r["label"] for r in info["named_endpoints"]["/score"]["returns"]]
    assert labels[0] == "status" and "metrics (JSON)" in labels
    assert not [label for label in labels if not label or label.startswith("value_")], labels


def test_api_nocaps_warnings_show_no_server_path(server):
    """The SPICE warning named the installation's site-packages folder (CoreNLP is not installed
    here)."""
    from gradio_client import Client, handle_file

    out = Client(server, verbose=False).predict("nocaps", "validation",
                                                handle_file(example_predictions("nocaps", "good",
                                                                                "validation")),
                                                "official", "m", "bundled sample", "me/nocaps",
                                                api_name="/score")
    status, files = out[0], out[-1]
    assert "SPICE" in status and "site-packages" not in status and "/root" not in status
    result = json.loads(Path(next(f for f in files if f.endswith("result.json"))).read_text())
    assert not any("site-packages" in w for w in result["warnings"])


def test_api_refuses_captions_too_long_to_score_within_the_bound(server, tmp_path):
    """An upload of 2,000-word captions held a scoring slot for ~58 s and ~750 MB; it is refused at
    once with the bound and the CLI to use instead."""
    from gradio_client import Client, handle_file

    preds = json.loads(Path(example_predictions("nocaps", "good", "validation")).read_text())
    preds[4]["caption"] = " ".join(["a dog on the grass"] * 500)
    upload = tmp_path / "long.json"
    upload.write_text(json.dumps(preds))
    out = Client(server, verbose=False).predict("nocaps", "validation", handle_file(str(upload)),
                                                "official", "m", "bundled sample",
                                                api_name="/score")
    assert out[0].startswith("**Error:**") and "entry 4" in out[0] and "2,500 words" in out[0]
    assert "vlbench score nocaps" in out[0]


def test_viewer_store_keeps_the_latest_states_only():
    from vlbench.space_viewer import ViewerStore

    store = ViewerStore(2)
    first, second = store.put({"n": 1}), store.put({"n": 2})
    assert store.get(first) == {"n": 1}           # used: now the most recent
    third = store.put({"n": 3})
    assert (
        store.get(second) is None and store.get(first) == {"n": 1} and store.get(third) == {"n": 3}
    )
    assert len(store) == 2 and store.get(None) is None and store.get(["not", "a", "key"]) is None


def test_browser_nocaps_samples_show_no_box_controls(server, browser):
    """The nocaps Samples tab showed the query, threshold and box legend, which do not apply to
    captions."""
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    _open(page, server)
    page.get_by_role("tab", name="Samples").click()
    # Ref-L4 first
    assert page.locator("#threshold").is_visible() and page.locator("#legend").is_visible()
    _choose(page, "bench", "nocaps")
    page.locator("#threshold").wait_for(state="hidden", timeout=10_000)
    for elem in ("#query-pick", "#legend", "#view-boxes-panel"):
        assert not page.locator(elem).is_visible(), elem
    _choose(page, "bench", "OVDEval")
    page.locator("#threshold").wait_for(state="visible", timeout=10_000)
    page.close()


@contextlib.contextmanager
def _two_visitors(browser, **env_vars):
    """A Space started with ``env_vars``, and two visitors' pages that have each scored the poor
    example and opened the Samples tab, in that order (closed, and the Space stopped, on
    leaving)."""
    proc, url = start_space({**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", **env_vars})
    pages = []
    try:
        for _ in range(2):
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            pages.append(page)
            _open(page, url)
            page.locator("#example-poor").click()
            page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
            page.get_by_role("tab", name="Samples").click()
            page.locator("#page-label").get_by_text("worst first").wait_for(timeout=20_000)
        yield pages
    finally:
        for page in pages:
            page.close()
        proc.terminate()
        proc.wait(timeout=20)


def test_browser_sessions_beyond_the_store_see_their_images_dropped(browser):
    """Each session's viewer state stayed in memory for an hour (~0.6 MB each, 240 sessions: +143
    MB); now the server keeps VLBENCH_SPACE_VIEWERS of them and a session holds a key. With a store
    of 1, the first of two sessions is told its images were dropped for newer uploads."""
    with _two_visitors(browser, VLBENCH_SPACE_VIEWERS="1") as pages:
        pages[0].locator("#page-next").click()
        pages[0].locator("#page-label").get_by_text("dropped for newer uploads").wait_for(
            timeout=20_000
        )
        pages[1].locator("#page-next").click()
        pages[1].wait_for_timeout(1000)
        assert "dropped" not in pages[1].locator("#page-label").inner_text()


def test_browser_a_session_gradio_no_longer_keeps_starts_over_without_an_error(browser):
    """Gradio keeps each session's copy of the page with its last outputs (~0.35 MB after a scoring)
    for up to 10,000 sessions; the Space keeps VLBENCH_SPACE_SESSIONS of them. With 1, the first of
    two visitors has lost its session once the second has scored: picking an image shows no error
    (the dropdown's choices were set in the lost session, so a strict dropdown refuses the pick),
    turning its page shows no images, and scoring again works."""
    with _two_visitors(browser, VLBENCH_SPACE_SESSIONS="1") as (first, _):
        # the choices its lost session had set
        first.locator("#image-pick input").click()
        first.get_by_role("option", name=re.compile("^#2 ")).click()
        first.wait_for_timeout(2000)
        assert first.locator(".toast-body.error").count() == 0
        assert "not in the list of choices" not in first.content()
        first.locator("#page-next").click()
        first.locator("#page-label").get_by_text("no images to show").wait_for(timeout=20_000)
        first.locator("#example-good").click()
        first.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=120_000)
        first.locator("#page-label").get_by_text("worst first").wait_for(timeout=20_000)


# -- issue #30: the Errors tab ---------------------------------------------------------------------

def test_browser_errors_tab_opens_the_worst_examples_of_a_type(server, browser):
    """OVDEval 'color', the poor example: the Errors tab lists the error types with the NMS-AP50
    each costs, the same counts as `vlbench analyze`; picking hard_negative opens the Samples tab on
    the image of its worst example (the highest-scoring box named with one of the image's neg_text
    labels while lying on an object)."""
    ARTIFACTS.mkdir(exist_ok=True)
    expected = api.score(
        "ovdeval",
        sample_references("ovdeval", "color"),
        example_predictions("ovdeval", "poor", "color"),
        analysis=True,
    )
    worst = expected.analysis["examples"]["hard_negative"][0]
    page = _scored_ovdeval_color_poor(browser, server, height=1800)
    page.get_by_role("tab", name="Errors").click()
    table = page.locator("#errors-table")
    table.get_by_text("hard_negative").first.wait_for(timeout=20_000)
    text = table.inner_text()
    for kind in ("localisation", "hard_negative", "background", "missed"):
        assert kind in text
    assert str(expected.analysis["errors"]["hard_negative"]["count"]) in text
    page.locator("#errors-plot").wait_for(timeout=20_000)      # the costs as bars
    page.screenshot(path=str(ARTIFACTS / "space_errors_tab.png"), full_page=True)
    page.locator("#error-pick input").click()
    page.get_by_role("option").filter(has_text="hard_negative (").first.click()
    _wait_for_view(page)
    assert page.locator("#samples-tab").is_visible()
    assert f"image {worst['image_id']}:" in page.locator("#image-pick input").input_value()
    # that label's boxes only
    assert page.locator("#query-pick input").input_value() == worst["label"]
    # drawn as what it is (#55): a hard negative in its own colour, named so by the legend, never as
    # a match
    listed = _shown_boxes(page)[1]["boxes"]
    assert any(b["kind"] == "negative" for b in listed) and not any(
        b["kind"] == "match" for b in listed
    )
    assert "hard negative" in page.locator("#legend").inner_text()
    page.screenshot(path=str(ARTIFACTS / "space_errors_examples.png"), full_page=True)
    page.close()


def test_browser_viewer_draws_the_suppressed_boxes_in_their_own_colour(server, browser, tmp_path):
    """OVDEval 'color', the poor example, on the image where the GT-guided suppression removes the
    most boxes (the per-image reference loop, ``reference/ovdeval_nms.py``, counts those scoring at
    least the viewer's first threshold): in the real browser, every query shown, the page lists that
    many boxes as ``suppressed``, each shows the grey of ``report.COLOURS`` on its four edges in a
    screenshot of the drawn image, and the legend names them."""
    import io
    from collections import Counter

    import numpy as np
    from PIL import Image

    from reference import ovdeval_nms
    from vlbench.benchmarks.protocol.views import SHOW_SCORE
    from vlbench.library.report import COLOURS

    gt_json = json.loads(Path(sample_references("ovdeval", "color")).read_text())
    preds = json.loads(Path(example_predictions("ovdeval", "poor", "color")).read_text())
    kept = ovdeval_nms.suppress(gt_json["annotations"], preds)
    # shown at first
    removed = Counter(p["image_id"] for p in preds if p not in kept and p["score"] >= SHOW_SCORE)
    image, count = removed.most_common(1)[0]
    page = _scored_ovdeval_color_poor(browser, server, height=2200)
    page.get_by_role("tab", name="Samples").click()
    _wait_for_view(page)
    page.locator("#image-pick input").click()
    page.get_by_role("option", name=re.compile(rf"image {image}:")).click()
    page.wait_for_timeout(1500)
    _wait_for_view(page)
    shown, listed = _shown_boxes(page)
    suppressed = [b for b in listed["boxes"] if b["kind"] == "suppressed"]
    assert len(suppressed) == count, listed["boxes"]
    assert "suppression" in page.locator("#legend").inner_text()
    shot = tmp_path / "view.png"
    page.locator("#view img").screenshot(path=str(shot))
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "space_viewer_suppressed.png")
    pixels = np.asarray(Image.open(io.BytesIO(shot.read_bytes())))
    for b in suppressed:
        assert _outline_seen(pixels, b["xyxy"], COLOURS["suppressed"], _content_box(shown)) == 4, b
    page.close()


def test_browser_nocaps_errors_tab_shows_what_nocaps_has(server, browser):
    """nocaps' analysis has no error types (#55): the Errors tab says what it holds (its note),
    never the detection text about error types, and its "worst examples" dropdown offers what nocaps
    has (the lowest-CIDEr images, hidden where an analysis has no examples); the bars of the
    detection benchmarks are labelled with their unit (checked in the PNG the same page draws for
    OVDEval, test above)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    _open(page, server)
    _choose(page, "bench", "nocaps")
    page.wait_for_timeout(500)
    _choose(page, "subset", "validation")
    page.locator("#example-poor").click()
    page.locator("#upload").get_by_text(
        Path(example_predictions("nocaps", "poor", "validation")).stem
    ).first.wait_for(timeout=20_000)
    page.locator("#status").get_by_text("Scored.", exact=True).wait_for(timeout=180_000)
    page.get_by_role("tab", name="Errors").click()
    intro = page.locator("#errors-intro")
    intro.get_by_text("Where the model falls short").wait_for(timeout=20_000)
    assert "error type" not in intro.inner_text() and "domain gaps" in intro.inner_text()
    # what the dropdown offers is what nocaps has: its worst images
    page.locator("#error-pick input").click()
    assert page.get_by_role("option").filter(has_text="lowest_CIDEr (").count() == 1
    page.screenshot(path=str(ARTIFACTS / "space_nocaps_errors_tab.png"), full_page=True)
    page.close()


def test_the_cost_bars_say_points_and_boxes():
    """Each bar of the Errors tab's plot is labelled with the points it gains and its count, with
    units."""
    result = api.score("ovdeval", sample_references("ovdeval", "color"),
                       example_predictions("ovdeval", "poor", "color"), analysis=True)
    from vlbench.library.report import analysis_plot

    labels = [t.get_text() for t in analysis_plot(result).axes[0].texts]
    hard = result.analysis["errors"]["hard_negative"]
    assert f" {hard['delta_NMS_AP50']:+.2f} pts ({hard['count']} boxes)" in labels


def test_a_hard_negative_is_never_drawn_as_a_match():
    """#55: the viewer drew a box blue ("matching a ground truth") by its IoU with any GT of any
    label, so OVDEval's hard negatives ("metal chair" on a wooden chair) looked right. Now a box
    matches only a GT of its own label; on an object under one of the image's negatives it is a hard
    negative, under another label a label error. Checked on every scene of the OVDEval poor example
    (11 hard-negative errors in its analysis) in both views, and OmniLabel's. A negative box the
    suppression removed is drawn ``suppressed`` (never a match either)."""
    from vlbench.benchmarks import get_benchmark
    from vlbench.benchmarks.protocol.views import ALL_QUERIES

    seen = {"negative": 0, "match": 0}
    for bench, subset in (("ovdeval", "color"), ("omnilabel", "validation")):
        b = get_benchmark(bench)
        refs = b.scorer.load_references(sample_references(bench, subset), None)
        preds = json.loads(Path(example_predictions(bench, "poor", subset)).read_text())
        result = api.score(bench, sample_references(bench, subset), preds)
        for scene in b.views.scenes(refs, preds, result):
            for _box, label, kind in scene.boxes(ALL_QUERIES, 0.0)[0]:
                if kind in seen:
                    seen[kind] += 1
                if label.rsplit(" ", 1)[0] in scene.negatives:
                    # or removed by OVDEval's suppression before scoring: drawn as such, still never
                    # a match
                    assert kind in ("negative", "fp", "suppressed"), (bench, scene.title, label,
                                                                      kind)
            for query in scene.negatives:
                assert all(kind != "match" for _, _, kind in scene.boxes(query, 0.0)[0])
    assert seen["negative"] > 0 and seen["match"] > 0


def test_the_space_api_names_its_parameters():
    """gradio_client shows each endpoint's parameters by their Python names: readable ones (before
    #68: b, s, f, pr)."""
    from vlbench.space import build_app

    endpoints = build_app().get_api_info()["named_endpoints"]
    names = {name: [p["parameter_name"] for p in ep["parameters"]] for name,
             ep in endpoints.items()}
    assert names["/score"] == ["benchmark", "subset", "predictions", "protocol", "model_name",
                               "references", "dataset_id"]
    assert names["/compare"] == ["benchmark", "subset", "predictions_a", "predictions_b",
                                 "protocol", "references"]
    assert all(len(p) > 2 for params in names.values() for p in params)
