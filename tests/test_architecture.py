"""The shape of the code (ARCHITECTURE.md): generic modules name no benchmark, imports run one way,
every public definition is documented and short, and a fifth benchmark defined only in tests/ works
through every front (CLI, library, model card, Space) without a generic module changing."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GOLDEN, ROOT, start_space

SRC = ROOT / "src" / "vlbench"
PLUGINS = Path(__file__).parent / "plugins"
#: the layer folders, bottom up: a module imports from its own layer and those below; the fronts
#: (the package's top level: CLI, Space, model runner, task packs) may import any
LAYERS = ("engine", "benchmarks", "library")
#: what a layer may take from the package's top level: its version string
TOP = {"vlbench", "vlbench.__version__"}


#: the faces shipped as package data (each names its benchmark: a metric Space's module, the Space's
#: app)
FACES = ("evaluate_modules", "space_app")


def _generic_modules() -> list[Path]:
    """Every module of src/vlbench outside the benchmark packages benchmarks/<id>/ and the faces."""
    return [p for p in sorted(SRC.rglob("*.py")) if len(_relative_to_benchmarks(p).parts) < 2
            and p.relative_to(SRC).parts[0] not in FACES]


def _relative_to_benchmarks(p: Path) -> Path:
    """``p`` below src/vlbench/benchmarks/, or ``.`` for a module elsewhere."""
    return p.relative_to(SRC / "benchmarks") if (SRC / "benchmarks") in p.parents else Path(".")


def _names() -> list[str]:
    from vlbench.benchmarks import all_benchmarks

    return sorted({n for b in all_benchmarks() for n in (b.id, b.display_name, *b.aliases)})


def test_generic_modules_name_no_benchmark_and_probe_none():
    """No id, alias or display name of a registered benchmark (any case) and no ``hasattr`` outside
    benchmarks/<id>/."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in _names()) + r")(?![\w-])",
                         re.I)
    found = []
    for path in _generic_modules():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) or "hasattr(" in line:
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert len(_names()) >= 8 and not found, "\n".join(found)


def _imports(path: Path) -> list[str]:
    """Absolute names of every vlbench module ``path`` imports (top level and inside functions)."""
    package = ["vlbench", *path.relative_to(SRC).parent.parts]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out += [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return [m for m in out if m.startswith("vlbench")]


def _layer(module: str) -> int:
    """The layer index of a module name ``vlbench.<layer>...`` (a front: above every layer)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_itself_and_the_layers_below(layer):
    """The engine knows nothing of benchmarks, renderings or fronts; the benchmarks nothing of the
    library or fronts; the library no front."""
    modules = sorted((SRC / layer).rglob("*.py"))
    bad = [f"{p.relative_to(SRC)} imports {m}" for p in modules for m in _imports(p)
           if m not in TOP and _layer(m) > LAYERS.index(layer)]
    assert len(modules) >= 8 and not bad, "\n".join(bad)


def test_there_is_no_import_path_shim():
    """The flat import paths of an untagged 0.1 layout are gone (#58): one name per module, no
    finder on ``sys.meta_path``; the generator of the metric cards runs by its one name."""
    code = """
import sys, vlbench
assert not [f for f in sys.meta_path if type(f).__module__.startswith("vlbench")]
try:
    import vlbench.cocoeval
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("an old path imported")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "vlbench.library.metric_card", "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "stale: none" in proc.stdout, proc.stdout + proc.stderr


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
    return names


def test_only_the_model_runner_imports_torch_transformers_accelerate():
    """The ``predict`` extra stays optional: nothing outside vlbench/predict/ imports what it
    brings."""
    heavy = {"torch", "transformers", "accelerate"}
    found = [
        f"{p.relative_to(ROOT)}: {sorted(_third_party_imports(p) & heavy)}"
        for p in sorted(SRC.rglob("*.py"))
        if p.relative_to(SRC).parts[0] != "predict" and _third_party_imports(p) & heavy
    ]
    assert not found, found
    # the checker sees them
    assert {"torch", "transformers"} <= _third_party_imports(SRC / "predict" / "models.py")


def test_import_checker_sees_function_level_imports(tmp_path):
    """The checker itself: a lazy import inside a function is found."""
    probe = SRC / "engine" / "captions" / "_probe_tmp.py"
    probe.write_text("def f():\n    from ...library.report import text\n")
    try:
        assert "vlbench.library.report" in _imports(probe) and _layer("vlbench.library.report") > 0
    finally:
        probe.unlink()


def _definitions(nested: bool):
    """(path, node) of module-level functions and classes and of class members (``nested``: every
    function)."""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        if nested:
            yield from ((path, n) for n in ast.walk(tree) if isinstance(n, defs))
            continue
        for node in tree.body:
            if isinstance(node, defs):
                yield path, node
            if isinstance(node, ast.ClassDef):
                yield from ((path, n) for n in node.body if isinstance(n, defs))


def test_every_public_definition_has_a_docstring():
    missing = [f"{p.relative_to(ROOT)}:{n.lineno} {n.name}" for p, n in _definitions(nested=False)
               if not n.name.startswith("_") and ast.get_docstring(n) is None]
    assert not missing, "\n".join(missing)


def test_the_package_forks_no_child_and_releases_no_pages():
    """#58: no forked child (``os.fork``, ``multiprocessing``, a process pool) and no page-release
    call (``madvise``): the speed they bought was under the 10% rule (bench/RESULTS.md). Found by
    name in the syntax tree, so a comment naming them does not count."""
    banned = {"fork", "forkpty", "register_at_fork", "madvise", "multiprocessing",
              "ProcessPoolExecutor"}
    found = [f"{p.relative_to(ROOT)}:{node.lineno} {name}" for p in sorted(SRC.rglob("*.py"))
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             for name in _names_used(node) if name.split(".")[0] in banned]
    assert not found, "\n".join(found)


def _machinery_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each thread, garbage-collector switch and allocator call a module makes:
    ``Thread`` and ``ThreadPoolExecutor`` by name, ``gc.<call>``, any use of ``ctypes`` or
    ``malloc_trim``."""
    found = []
    for node in ast.walk(tree):
        names = _names_used(node)
        if any(n.split(".")[0] in ("ctypes", "malloc_trim") for n in names):
            found.append((node.lineno, "an allocator call (ctypes)"))
        elif any(n in ("Thread", "ThreadPoolExecutor") for n in names) and not isinstance(
            node, ast.ImportFrom
        ):
            found.append((node.lineno, "a thread"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "gc"
            and node.attr in ("disable", "freeze", "set_threshold", "collect")
        ):
            found.append((node.lineno, f"gc.{node.attr}"))
    return found


def test_threads_and_gc_switches_only_where_the_ledger_names_them_and_no_allocator_calls():
    """#69: speed machinery of these kinds stays only where ``bench/MACHINERY.md`` lists it with its
    paired gain (or, for a thread that is not there for speed, says why): every module that starts a
    thread or switches the garbage collector is named there by its path under ``src/vlbench/``;
    allocator calls (``malloc_trim`` through ``ctypes``) are gone everywhere. Found in the syntax
    tree, so a comment naming them does not count; every module the ledger names must exist."""
    ledger = (ROOT / "bench" / "MACHINERY.md").read_text(encoding="utf-8")
    unlisted, using = [], set()
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        for line, what in _machinery_uses(ast.parse(path.read_text(encoding="utf-8"))):
            using.add(name)
            if what.startswith("an allocator") or f"`{name}" not in ledger:
                unlisted.append(f"src/vlbench/{name}:{line} {what}")
    assert not unlisted, "\n".join(unlisted)
    named = re.findall(r"`((?:engine|benchmarks|predict|library)/[\w/]+\.py)", ledger)
    gone = sorted({m for m in named if not (SRC / m).is_file()})
    assert not gone, f"the ledger names modules that are not there: {gone}"


def _names_used(node: ast.AST) -> list[str]:
    """The names a syntax node uses: an attribute's, a name's, an import's modules and names."""
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.name for a in node.names] + [getattr(node, "module", None) or ""]
    return []


# -- the toy fifth benchmark (tests/plugins/toy_benchmark.py) --------------------------------------

#: hand-derived from tests/plugins/toy_count: counts [3, 1, 4, 1, 5], good predictions [3, 1, 4, 2,
#: 9]: 3 of 5 exact -> accuracy 60; errors 0, 0, 0, 1, 4 -> MAE 1.0
TOY_GOOD = {"accuracy": 60.0, "MAE": 1.0}


@pytest.fixture()
def plugin_env(tmp_path):
    """An installed-distribution stand-in: a dist-info with the ``vlbench.benchmarks`` entry point,
    on PYTHONPATH."""
    info = tmp_path / "toy_count_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-count-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[vlbench.benchmarks]\ntoy_count = "
                                           "toy_benchmark:BENCHMARK\n")
    path = os.pathsep.join([str(tmp_path), str(PLUGINS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "GRADIO_ANALYTICS_ENABLED": "False"}


def _cli(env, *args):
    return subprocess.run([sys.executable, "-m", "vlbench", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def test_listing_the_benchmarks_loads_no_scorer_and_declares_what_each_scorer_holds():
    """The registry lists the built-in benchmarks and the CLI builds its parser from their declared
    options without importing any ``scorer.py`` (each imports numpy and its engines), and parses a
    ``score`` command without importing the model runner; what a lazily loaded scorer declares is
    what the loaded one holds (the same options class, keys and form), checked in a fresh
    process."""
    code = (
        "import sys\n"
        "from vlbench import cli\n"
        "from vlbench.benchmarks import all_benchmarks\n"
        "cli._parse(['score', 'ref_l4', '--references', 'r.json', '--predictions', 'p.json'])\n"
        "assert 'vlbench.predict' not in sys.modules  # the model runner's arguments are built "
        "only for predict / run\n"
        "cli._parser()\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('vlbench.benchmarks.') and "
        "m.endswith('.scorer'))\n"
        "assert not loaded, loaded\n"
        "for b in all_benchmarks(plugins=False):\n"
        "    declared = {k: getattr(b.scorer, k) for k in ('options_type', 'prediction_keys', "
        "'prediction_form')}\n"
        "    b.scorer.score  # loads it\n"
        "    real = b.scorer._loaded\n"
        "    assert {k: getattr(real, k) for k in declared} == declared, b.id\n"
        "    assert type(real).__module__ == f'vlbench.benchmarks.{b.id}.scorer', "
        "type(real).__module__\n"
        "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_toy_benchmark_through_the_library():
    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_benchmark

        import vlbench
        from vlbench.benchmarks import unregister

        vlbench.register(toy_benchmark.BENCHMARK)
        try:
            result = vlbench.score(
                "toy-count",
                toy_benchmark.BENCHMARK.require_showcase().sample_references("default"),
                toy_benchmark.BENCHMARK.require_showcase().example_predictions("good", "default"),
            )
            assert result.metrics == TOY_GOOD
            with pytest.raises(vlbench.InputError,
                               match="option\\(s\\) cider_idf do not apply to toy_count"):
                vlbench.score(
                    "toy_count",
                    toy_benchmark.BENCHMARK.require_showcase().sample_references("default"),
                    [],
                    cider_idf="global",
                )
        finally:
            unregister("toy_count")
    finally:
        sys.path.remove(str(PLUGINS))


def test_toy_benchmark_through_the_cli_and_the_model_card(plugin_env, tmp_path):
    from huggingface_hub import ModelCard

    refs, preds = (
        PLUGINS / "toy_count" / "references.json",
        PLUGINS / "toy_count" / "predictions_good.json",
    )
    out = tmp_path / "result.json"
    proc = _cli(plugin_env, "score", "toy_count", "--references", str(refs), "--predictions",
                str(preds), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["metrics"] == TOY_GOOD and "accuracy" in proc.stdout
    assert "toy_count" in _cli(plugin_env, "score", "--help").stdout
    bad = _cli(plugin_env, "score", "toy_count", "--references", str(refs), "--predictions",
               str(preds), "--cider-idf", "subset")
    assert bad.returncode == 2 and "--cider-idf applies to nocaps only" in bad.stderr

    block = _cli(plugin_env, "report", str(out), "--model-index", "--model-name", "counter",
                 "--dataset-id", "me/toy-count")
    assert block.returncode == 0, block.stderr
    card = ModelCard(f"---\n{block.stdout}---\n# counter\n")
    result = card.data.to_dict()["model-index"][0]["results"][0]
    digest = hashlib.sha256(Path(refs).read_bytes()).hexdigest()
    assert result["dataset"] == {"name": "ToyCount", "type": "me/toy-count", "split": "test",
                                 "args": {
        "source": {"release": Path(refs).name, "files": {Path(refs).name: digest}}}}
    assert {m["type"]: m["value"] for m in result["metrics"]} == TOY_GOOD


@pytest.mark.heavy
def test_a_lower_is_better_metric_gets_the_right_verdict(plugin_env, tmp_path):
    """The toy declares MAE lower-is-better. Good vs poor (hand-derived: good MAE 1.0, poor counts
    all 0, errors 3, 1, 4, 1, 5, MAE 2.8; accuracy 60 vs 0): A - B is -1.8 on MAE and +60 on
    accuracy, and A is better on both, in the CLI's compare, the library's and the Space's
    (run_compare, which its Compare tab calls). The toy has no error analysis: ``analyze`` prints
    its score and says so (exit 0)."""
    refs = PLUGINS / "toy_count" / "references.json"
    good, poor = (
        PLUGINS / "toy_count" / "predictions_good.json",
        PLUGINS / "toy_count" / "predictions_poor.json",
    )
    out = tmp_path / "cmp.json"
    proc = _cli(plugin_env, "compare", "toy_count", "--references", str(refs), "--predictions",
                str(good), str(poor), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = {r["metric"]: r for r in json.loads(out.read_text())["metrics"]}
    assert rows["MAE"]["diff"] == pytest.approx(-1.8) and rows["MAE"]["verdict"] == "A better"
    # ties: d = 0 is no win
    assert rows["accuracy"]["verdict"] == "A better" and rows["MAE"]["a_wins"] > 0.99
    analyze = _cli(plugin_env, "analyze", "toy_count", "--references", str(refs), "--predictions",
                   str(good))
    assert (
        analyze.returncode == 0
        and "toy_count has no error analysis" in analyze.stderr
        and "MAE" in analyze.stdout
    )
    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_benchmark

        import vlbench
        from vlbench.benchmarks import unregister
        from vlbench.space import run_compare

        vlbench.register(toy_benchmark.BENCHMARK)
        try:
            comparison, _, _ = vlbench.compare("toy_count", refs, poor, good, resamples=200)
            assert {r["metric"]: r["verdict"] for r in comparison.rows}["MAE"] == "B better"
            table, _ = run_compare("toy_count", "default", str(good), str(poor), "official")
            assert [line for line in table.splitlines() if line.startswith("| MAE")][0].endswith(
                "**A better** |"
            )
        finally:
            unregister("toy_count")
    finally:
        sys.path.remove(str(PLUGINS))


def test_a_broken_plugin_is_a_warning_and_the_built_in_benchmarks_still_score(tmp_path):
    """A broken plug-in (its module does not import) is a warning naming it wherever the plug-ins
    are looked up (every command: the CLI builds one parser of every benchmark), and a built-in
    benchmark still scores, with abbreviated flags as argparse takes them."""
    info = tmp_path / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[vlbench.benchmarks]\nbroken = "
                                           "no_such_module_here:BENCHMARK\n")
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    case = GOLDEN / "ovdeval" / "coco_medium_ids1"
    warning = "benchmark plug-in 'broken' (no_such_module_here:BENCHMARK) was not loaded"
    built_in = _cli(env, "score", "ovdeval", "--references", str(case / "references.json"),
                    "--predictions", str(case / "predictions.json"), "--quiet")
    assert built_in.returncode == 0 and warning in built_in.stderr, built_in.stderr
    short = _cli(env, "score", "ovdeval", "--ref", str(case / "references.json"), "--pred",
                 str(case / "predictions.json"), "--quiet")
    assert short.returncode == 0, short.stderr
    assert warning in _cli(env, "score", "--help").stderr
    unknown = _cli(env, "score", "no_such_benchmark", "--references", "r.json", "--predictions",
                   "p.json")
    assert (
        unknown.returncode == 2
        and warning in unknown.stderr
        and "unknown benchmark" in unknown.stderr
    )


@pytest.mark.heavy
def test_toy_benchmark_through_the_space(plugin_env):
    from gradio_client import Client, handle_file

    proc, url = start_space(plugin_env)
    try:
        out = Client(url, verbose=False).predict(
            "toy_count", "default",
            handle_file(str(PLUGINS / "toy_count" / "predictions_good.json")), "official",
            "counter", "bundled sample", api_name="/score")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert out[0].startswith("**Scored.**"), out[0]
    assert json.loads(out[-2]) == TOY_GOOD


# -- the toy benchmark through the faces a plug-in adds: dataset, --ci, report, viewer, evaluate,
# predict

#: the toy release: file_name -> count (tests/plugins/toy_count/references.json)
TOY_COUNTS = [3, 1, 4, 1, 5]


def _toy_images(folder: Path) -> Path:
    """Five small PNGs named as the toy references name them (real image files, made with PIL)."""
    from PIL import Image

    folder.mkdir()
    for i in range(len(TOY_COUNTS)):
        Image.new("RGB", (40 + 8 * i, 30), (40 * i, 90, 160)).save(folder / f"{i}.jpg",
                                                                   format="PNG")
    return folder


@pytest.fixture()
def toy_folder(plugin_env, tmp_path) -> Path:
    """The toy release built into a Hub folder by 'vlbench build' (the plug-in's dataset
    builder)."""
    out = tmp_path / "toy_hub"
    proc = _cli(plugin_env, "build", "toy_count", "--raw",
                str(PLUGINS / "toy_count" / "references.json"),
                "--images", str(_toy_images(tmp_path / "images")), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.heavy
def test_toy_dataset_loads_with_datasets_and_scores_with_intervals(plugin_env, toy_folder,
                                                                   tmp_path):
    """build -> load_dataset (the real loader) -> score with --ci -> report --csv -> export, through
    the CLI."""
    from datasets import load_dataset

    assert (toy_folder / "README.md").is_file() and (toy_folder / "eval.yaml").is_file()
    rows = load_dataset(str(toy_folder), split="test")
    assert rows["count"] == TOY_COUNTS and [im.size for im in rows["image"]] == [
        (40 + 8 * i, 30) for i in range(5)
    ]
    result_path = tmp_path / "result.json"
    proc = _cli(plugin_env, "score", "toy_count", "--references", str(toy_folder), "--predictions",
                str(PLUGINS / "toy_count" / "predictions_good.json"), "--ci", "0.9", "--output",
                str(result_path))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(result_path.read_text())
    assert result["metrics"] == TOY_GOOD
    intervals = result["breakdowns"]["confidence_intervals"]["metrics"]
    # errors [0, 0, 0, 1, 4]: a resample's accuracy lies in [0, 100] and its MAE in [0, 4]
    assert 0 <= intervals["accuracy"]["low"] <= 60 <= intervals["accuracy"]["high"] <= 100
    assert 0 <= intervals["MAE"]["low"] <= 1.0 <= intervals["MAE"]["high"] <= 4
    proc = _cli(plugin_env, "report", str(result_path), "--csv", str(tmp_path / "csv"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "csv" / "per_image.csv").read_text().splitlines()[1:] == ["0,0", "1,0",
                                                                                 "2,0", "3,1",
                                                                                 "4,4"]
    proc = _cli(plugin_env, "export", "toy_count", "--folder", str(toy_folder), "--out",
                str(tmp_path / "back.json"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(
        (PLUGINS / "toy_count" / "references.json").read_text())


@pytest.fixture()
def toy_registered():
    """The toy plug-in registered in this process (as a notebook would with vlbench.register)."""
    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_benchmark

        import vlbench
        from vlbench.benchmarks import unregister

        vlbench.register(toy_benchmark.BENCHMARK)
        try:
            yield toy_benchmark.BENCHMARK
        finally:
            unregister("toy_count")
    finally:
        sys.path.remove(str(PLUGINS))


def test_toy_evaluate_module_of_a_plug_in_loads_through_metric_path(toy_registered):
    """The plug-in's own module, found by vlbench.metric_path and loaded by the real
    evaluate.load."""
    import evaluate

    import vlbench

    metric = evaluate.load(vlbench.metric_path("toy_count"))
    rows = [{"image_id": i, "count": c, "file_name": f"{i}.jpg"} for i, c in enumerate(TOY_COUNTS)]
    assert metric.compute(predictions=[3, 1, 4, 2, 9], references=rows) == TOY_GOOD


def test_toy_space_viewer_ranks_the_worst_counted_first(toy_registered):
    """The Space's scoring path keeps the viewer's scenes: errors [0, 0, 0, 1, 4] -> image 4 first,
    then 3."""
    from vlbench import space

    out = space.run_space("toy_count", "default",
                          str(PLUGINS / "toy_count" / "predictions_good.json"), "official", "m")
    assert out[0].startswith("**Scored.**"), out[0]
    state = out[-3]
    assert state["total"] == 5 and [s.image for s in state["scenes"][:2]] == ["4.jpg", "3.jpg"]


@pytest.mark.heavy
def test_toy_is_predicted_by_a_tiny_detector(plugin_env, toy_folder, tmp_path):
    """'vlbench run' with a random-weight OWL-ViT built offline: one entry per image, and the score
    is what the test computes from the written file itself (exact counts / mean absolute error
    against TOY_COUNTS)."""
    from tiny_models import tiny_owlvit

    model = tiny_owlvit(tmp_path / "owl")
    preds, result_path = tmp_path / "preds.json", tmp_path / "result.json"
    proc = _cli(plugin_env, "run", "toy_count", "--model", str(model), "--data", str(toy_folder),
                "--out", str(preds), "--output", str(result_path))
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(preds.read_text())
    assert [e["image_id"] for e in entries] == list(range(5)) and all(
        isinstance(e["count"], int) for e in entries
    )
    errors = [abs(e["count"] - c) for e, c in zip(entries, TOY_COUNTS)]
    metrics = json.loads(result_path.read_text())["metrics"]
    assert metrics == {"accuracy": 100 * sum(e == 0 for e in errors) / 5, "MAE": sum(errors) / 5}


def test_metric_card_check_fails_on_a_card_without_its_generated_regions(tmp_path, capsys):
    """Every registered benchmark's card is checked (not a list of ids): the toy plug-in's card
    lacks every region, so ``--check`` fails naming them; a card with the markers in place is filled
    in, then passes."""
    import dataclasses
    import shutil

    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_benchmark

        import vlbench
        from vlbench.benchmarks import unregister
        from vlbench.library.metric_card import _BEGIN, _END, REGIONS, main

        folder = tmp_path / "toy_count"
        shutil.copytree(PLUGINS / "toy_count", folder)
        (folder / "README.md").write_text("# Toy count\n\nHand-written prose.\n")
        vlbench.register(dataclasses.replace(toy_benchmark.BENCHMARK, evaluate_module=str(folder)))
        try:
            assert main(["--check"]) == 1
            assert "toy_count (" + ", ".join(REGIONS) + ")" in capsys.readouterr().out
            (folder / "README.md").write_text("# Toy count\n\n" + "".join(
                f"{_BEGIN.format(name=n)}\n{_END}\n\n" for n in REGIONS))
            assert main(["--check"]) == 1 and "stale: toy_count" in capsys.readouterr().out
            assert main([]) == 0 and main(["--check"]) == 0
            assert toy_benchmark.BENCHMARK.card.citation in (folder / "README.md").read_text()
        finally:
            unregister("toy_count")
    finally:
        sys.path.remove(str(PLUGINS))
