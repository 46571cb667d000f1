"""Every model family ``vlbench predict`` claims, through its real transformers processor and the
real loop.

- Each family's tiny random model (``tiny_models.BUILDERS``) runs on every bundled sample it can
  answer, with batch sizes 1 and 4, and writes a file ``vlbench.score`` accepts; a family that
  cannot answer a benchmark says so before its weights load.
- An oracle per family: the model's output is set by the test to the perfect answer in the family's
  own convention (generated text for image-text-to-text models, logits and boxes for detectors),
  computed from the inputs the real processor built (Qwen2.5-VL's resized input from
  ``image_grid_thw``, a detector's query tokens from ``input_ids``); the loop must give back every
  ground-truth box within 1 px on wide, tall and > 1000 px images and keep it on its query:
  capitals, hyphens, '.' and long expressions (Grounding DINO), unequal query counts in one batch
  (OWL's padding queries set to win).
- Each preset's prompt as the family's processor turns it into tokens.

The expected boxes are the ground truth written into the test datasets; the answer text of each
convention is written here, independently of :mod:`vlbench.predict.parsers` (which reads it back).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import run_cli

torch = pytest.importorskip("torch", reason="predict needs torch (pip install -e '.[test]')")
pytest.importorskip("transformers", reason="predict needs transformers (pip install -e '.[test]')")
pytest.importorskip("torchvision",
                    reason="Qwen-VL, InternVL and OmDet-Turbo processors need torchvision")

from tiny_models import BUILDERS  # noqa: E402
from vlbench.engine.errors import InputError  # noqa: E402
from vlbench.predict import predict  # noqa: E402
from vlbench.predict.families import DETECTOR, family_of  # noqa: E402

#: family -> its model_type (what the config says; decides the family)
MODEL_TYPES = {"OWL-ViT": "owlvit", "OWLv2": "owlv2", "Grounding DINO": "grounding-dino",
               "MM-Grounding-DINO": "mm-grounding-dino", "OmDet-Turbo": "omdet-turbo",
               "Qwen2-VL": "qwen2_vl",
               "Qwen2.5-VL": "qwen2_5_vl", "Qwen3-VL": "qwen3_vl", "Qwen3.5": "qwen3_5",
               "InternVL": "internvl",
               "GLM-4.1V": "glm4v", "PaliGemma": "paligemma", "Florence-2": "florence2",
               "Kosmos-2": "kosmos-2", "LLaVA-1.5": "llava", "Idefics3": "idefics3",
               "SmolVLM": "smolvlm"}
#: bundled sample -> (answer kind, the split / config a run uses)
SAMPLES = {"ref_l4": ("box", {"split": "val"}), "omnilabel": ("boxes", {}),
           "ovdeval": ("boxes", {"config": "color"}), "nocaps": ("text", {})}


@pytest.fixture(scope="module")
def family_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("families")
    return {name: build(root / re.sub(r"\W", "_", name)) for name, build in BUILDERS.items()}


def _answers(name: str, benchmark: str) -> bool:
    """Whether the family can answer the bundled benchmark (its kind and its presets)."""
    from vlbench import get_benchmark

    bench = get_benchmark(benchmark)
    family = family_of(MODEL_TYPES[name], DETECTOR if name in DETECTORS else "image-text-to-text")
    if family.kind not in bench.require_predictor().kinds:
        return False
    return family.kind == DETECTOR or bench.require_predictor().answer_kind in family.presets


DETECTORS = ("OWL-ViT", "OWLv2", "Grounding DINO", "MM-Grounding-DINO", "OmDet-Turbo")


@pytest.mark.parametrize("name", list(BUILDERS))
def test_each_family_runs_on_every_sample_it_can_answer(name, family_models, built_samples,
                                                        tmp_path, monkeypatch):
    """Batch sizes 1 and 4 over five items (4 + 1: unequal batches, unequal query counts); the
    official file scores; a benchmark the family cannot answer is refused with the fix before the
    weights load."""
    import vlbench
    import vlbench.predict.models as models

    real_load = models.load_model
    for benchmark, (_, where) in SAMPLES.items():
        if not _answers(name, benchmark):
            monkeypatch.setattr(models, "load_model", lambda *a, **k: pytest.fail("weights loaded"))
            with pytest.raises(InputError) as info:
                predict(benchmark, str(family_models[name]), built_samples / benchmark,
                        tmp_path / "x.json", progress=False, **where)
            assert info.value.fix
            monkeypatch.setattr(models, "load_model", real_load)
            continue
        files = []
        for batch_size in (1, 4):
            out = tmp_path / f"{benchmark}-{batch_size}.json"
            report = predict(benchmark, str(family_models[name]), built_samples / benchmark, out,
                             limit=5, batch_size=batch_size, max_new_tokens=12, progress=False,
                             **where)
            meta = json.loads(Path(f"{out}.meta.json").read_text())
            assert report.items == meta["items"] == 5 and meta["settings"]["family"] == family_of(
                MODEL_TYPES[name], report.settings.kind).name
            assert meta["unanswered"] <= 5 and sum(meta["failures"].values()) <= 5
            files.append(json.loads(out.read_text()))
            if files[-1]:
                options = (
                    vlbench.get_benchmark(benchmark)
                    .require_predictor()
                    .options_for_run(where.get("config"), report.unanswered + report.skipped)
                )
                result = vlbench.score(benchmark, built_samples / benchmark, out,
                                       split=report.settings.split, **options)
                assert result.metrics
        # greedy decoding and deterministic detectors: the batch size changes nothing that was
        # answered
        assert len(files[0]) == len(files[1])


# -- the oracle datasets ---------------------------------------------------------------------------
WIDE, TALL, LARGE = (1920, 480), (480, 1280), (1600, 1200)
#: Ref-L4 expressions -> (image size, GT box xywh): capitals, a hyphen, '.' and '?' inside, one of
#: 40 words
EXPRESSIONS = {
    "Dog": (WIDE, [101.3, 40.6, 402.2, 300.1]),
    "Taylor Swift": (WIDE, [1203.5, 10.2, 500.4, 455.3]),
    "the red t-shirt on the left": (TALL, [12.7, 300.4, 200.2, 420.6]),
    "U.S. flag near the door.": (TALL, [250.1, 900.3, 180.6, 201.9]),
    ("The tall man in the blue jacket. He stands behind the wooden counter, next to a woman "
     "holding a cup of coffee, and he looks at the camera while talking? Yes, the one on the right "
     "side of the picture, under the lamp."):
        (LARGE, [800.2, 150.7, 650.9, 1000.4]),
}
#: OVDEval images: (size, positive labels with their GT boxes xywh, hard negatives); 3, 2 and 4
#: queries
OVD_IMAGES = [
    (WIDE, {"Puppy": [[101.3, 40.6, 402.2, 300.1], [900.5, 100.5, 300.2, 200.8]],
            "Lady Gaga": [[1203.5, 10.2, 500.4, 455.3]]}, ["Kitten"]),
    (TALL, {"hoodie": [[12.7, 300.4, 200.2, 420.6]], "E.U. banner": [[250.1, 900.3, 180.6, 201.9]]},
     []),
    (LARGE, {"man in a grey coat. He waits at the bus stop": [[800.2, 150.7, 650.9, 1000.4]]},
     ["woman", "mug", "Red Car"]),
]


def _ref_l4_rows() -> list[dict]:
    rows = []
    for n, (caption, (size, box)) in enumerate(EXPRESSIONS.items()):
        image = [WIDE, TALL, LARGE].index(size)
        rows.append({"id": n, "caption": caption, "bbox": box, "bbox_area": box[2] * box[3],
                     "bbox_id": f"o365_{n}",
                     "ori_category_id": "o365_1", "image_id": f"o365_{image}", "height": size[1],
                     "width": size[0],
                     "file_name": f"objects365_v2_{image:012d}.jpg", "is_rewrite": False,
                     "split": "val"})
    rows.append({**rows[0], "id": len(rows), "bbox_id": "o365_99", "split": "test"})
    return rows


def _ovdeval_subset() -> dict:
    names = [label for _, positives, negatives in OVD_IMAGES for label in [*positives, *negatives]]
    categories = [{"supercategory": "object", "id": i, "name": n} for i, n in enumerate(names)]
    images, annotations = [], []
    for i, ((width, height), positives, negatives) in enumerate(OVD_IMAGES):
        images.append({"file_name": f"{i:024x}.jpg", "id": i, "height": height, "width": width,
                       "text": list(positives), "neg_text": negatives})
        for label, boxes in positives.items():
            for box in boxes:
                annotations.append({"id": len(annotations), "bbox": box,
                                    "category_id": names.index(label),
                                    "image_id": i, "iscrowd": 0, "area": box[2] * box[3]})
    return {"categories": categories, "annotations": annotations, "images": images}


@pytest.fixture(scope="module")
def oracle_data(tmp_path_factory) -> Path:
    from vlbench.benchmarks.ovdeval.synthetic import write_release
    from vlbench.benchmarks.ref_l4.synthetic import make_release

    root = tmp_path_factory.mktemp("oracle")
    make_release(root / "raw_ref_l4", _ref_l4_rows())
    write_release(root / "raw_ovdeval", {"color": _ovdeval_subset()})
    run_cli("build", "ref_l4", "--raw", str(root / "raw_ref_l4"), "--out", str(root / "ref_l4"),
            check=True)
    run_cli("build", "ovdeval", "--raw", str(root / "raw_ovdeval"), "--out", str(root / "ovdeval"),
            check=True)
    return root


def _objects() -> dict[str, list[tuple[list[float], tuple[int, int]]]]:
    """Every query of both oracle datasets -> its GT boxes (xyxy) and image size (queries are
    unique)."""
    found: dict[str, list] = {}
    for caption, (size, (x, y, w, h)) in EXPRESSIONS.items():
        found[caption] = [([x, y, x + w, y + h], size)]
    for size, positives, negatives in OVD_IMAGES:
        for label, boxes in positives.items():
            found[label] = [([x, y, x + w, y + h], size) for x, y, w, h in boxes]
        for label in negatives:
            found[label] = []
    return found


def _key(text: str) -> str:
    """Text without case, punctuation or extra spaces (what a tokenizer round trip keeps of a
    query)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


# -- answers in each family's convention (written here, read back by the parsers) ------------------
def _grid(v: float, side: float, n: int = 1000) -> int:
    return round(v / side * n)


def _qwen2(objs, size, _):
    w, h = size
    return "".join(
        f"<|object_ref_start|>{label}<|object_ref_end|>"
        f"<|box_start|>({_grid(x1, w)},{_grid(y1, h)}),"
        f"({_grid(x2, w)},{_grid(y2, h)})<|box_end|>"
        for label, (x1, y1, x2, y2) in objs
    )


def _qwen_json(scale):
    def write(objs, size, input_size):
        sx, sy = scale(size, input_size)
        items = [{"bbox_2d": [round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy)],
                  "label": label}
                 for label, (x1, y1, x2, y2) in objs]
        return "```json\n" + json.dumps(items, indent=2) + "\n```"
    return write


def _internvl(objs, size, _):
    w, h = size
    return "".join(f"<ref>{label}</ref><box>[[{_grid(x1, w)}, {_grid(y1, h)}, {_grid(x2, w)}, "
                   f"{_grid(y2, h)}]]</box>"
                   for label, (x1, y1, x2, y2) in objs)


def _glm(objs, size, _):
    (_, (x1, y1, x2, y2)), (w, h) = objs[0], size
    return (f"The box is <|begin_of_box|>[{_grid(x1, w)}, {_grid(y1, h)}, {_grid(x2, w)}, "
            f"{_grid(y2, h)}]<|end_of_box|>")


def _paligemma(objs, size, _):
    w, h = size  # round(v * 1023), y first (big_vision)
    return " ; ".join(
        "".join(f"<loc{round(v * 1023):04d}>" for v in (y1 / h, x1 / w, y2 / h, x2 / w))
        + f" {label}"
        for label, (x1, y1, x2, y2) in objs
    )


def _florence(objs, size, _):
    w, h = size            # 1000 bins, x first, a value in bin floor(v * 1000)
    return "".join(label + "".join(f"<loc_{min(999, int(v * 1000))}>" for v in (x1 / w, y1 / h,
                                                                                x2 / w, y2 / h))
                   for label, (x1, y1, x2, y2) in objs)


def _kosmos(objs, size, _):
    (_, (x1, y1, x2, y2)), (w, h) = objs[0], size
    cell = [min(31, int(v * 32)) for v in (x1 / w, y1 / h, x2 / w, y2 / h)]
    return (f"<object><patch_index_{cell[1] * 32 + cell[0]:04d}>"
            f"<patch_index_{cell[3] * 32 + cell[2]:04d}></object>")


def _llava(objs, size, _):
    (_, (x1, y1, x2, y2)), (w, h) = objs[0], size
    side = max(w, h)
    ox, oy = (side - w) / 2, (side - h) / 2
    return "[" + ", ".join(f"{v:.3f}" for v in ((x1 + ox) / side, (y1 + oy) / side,
                                                (x2 + ox) / side, (y2 + oy) / side)) + "]"


#: family -> (how its answer is written, answers label lists too)
WRITERS = {
    "Qwen2-VL": (_qwen2, True),
    "Qwen2.5-VL": (_qwen_json(lambda size, inp: (inp[0] / size[0], inp[1] / size[1])), True),
    "Qwen3-VL": (_qwen_json(lambda size, inp: (1000 / size[0], 1000 / size[1])), True),
    "Qwen3.5": (_qwen_json(lambda size, inp: (1000 / size[0], 1000 / size[1])), True),
    "InternVL": (_internvl, True),
    "GLM-4.1V": (_glm, False),
    "PaliGemma": (_paligemma, True),
    "Florence-2": (_florence, True),
    "Kosmos-2": (_kosmos, False),
    "LLaVA-1.5": (_llava, False),
}


def _perfect_generate(writer, folder: Path):
    """A ``generate`` that answers each prompt perfectly in ``writer``'s convention: it finds the
    queries in the prompt the processor built, and (Qwen2.5-VL) the resized input in
    ``image_grid_thw``."""
    from transformers import AutoTokenizer

    objects = _objects()
    tokenizer = AutoTokenizer.from_pretrained(folder)

    def generate(self, input_ids=None, **kwargs):
        answers = []
        for row, prompt in enumerate(tokenizer.batch_decode(input_ids, skip_special_tokens=False)):
            asked = [
                q
                for q in objects
                if q in prompt and not any(q != o and q in o and o in prompt for o in objects)
            ]
            found = [(q.upper(), box, size) for q in asked for box, size in objects[q]]
            grid = kwargs.get("image_grid_thw")
            patch = getattr(getattr(self.config, "vision_config", None), "patch_size", 14)
            input_size = (
                (int(grid[row][2]) * patch, int(grid[row][1]) * patch) if grid is not None else None
            )
            size = found[0][2] if found else (1, 1)
            answers.append(
                writer([(label, box) for label, box, _ in found], size, input_size)
                if found
                else "[]"
            )
        ids = [
            tokenizer(a, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            for a in answers
        ]
        width = max(map(len, ids))
        pad = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )
        new = torch.tensor([i + [pad] * (width - len(i)) for i in ids])
        if self.config.is_encoder_decoder:
            start = self.generation_config.decoder_start_token_id
            return torch.cat([torch.full((len(ids), 1), start), new], 1)
        return torch.cat([input_ids, new], 1)
    return generate


def _close(got: list[float], want: list[float], tol: float = 1.0) -> bool:
    return bool(np.all(np.abs(np.asarray(got) - np.asarray(want)) <= tol))


def _kosmos_cells(box_xyxy: list[float], size: tuple[int, int]) -> list[float]:
    """The GT as Kosmos-2's 32x32 grid can say it: the centres of the cells holding its corners
    (whole cells when they share a row or column)."""
    w, h = size
    cx1, cy1, cx2, cy2 = (min(31, int(v * 32)) for v in (box_xyxy[0] / w, box_xyxy[1] / h,
                                                         box_xyxy[2] / w,
                                                          box_xyxy[3] / h))
    if cx1 == cx2 or cy1 == cy2:
        return [cx1 / 32 * w, cy1 / 32 * h, (cx2 + 1) / 32 * w, (cy2 + 1) / 32 * h]
    return [(cx1 + 0.5) / 32 * w, (cy1 + 0.5) / 32 * h, (cx2 + 0.5) / 32 * w, (cy2 + 0.5) / 32 * h]


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_perfect_vlm_answer_in_its_family_s_convention_gives_back_every_box(name, family_models,
                                                                              oracle_data,
                                                                              tmp_path,
                                                                              monkeypatch):
    """Ref-L4: one box per expression within 1 px (Kosmos-2: of the grid cells that can say it);
    OVDEval (families that list labelled boxes): every GT box on its category, labels written in
    capitals, nothing else."""
    from transformers import GenerationMixin

    writer, lists = WRITERS[name]
    monkeypatch.setattr(GenerationMixin, "generate", _perfect_generate(writer, family_models[name]))
    for batch_size in (1, 4):
        out = tmp_path / f"ref-{batch_size}.json"
        report = predict("ref_l4", str(family_models[name]), oracle_data / "ref_l4", out,
                         split="val", batch_size=batch_size, progress=False)
        assert report.items == len(EXPRESSIONS) and not report.failures, report.answers
        for entry in json.loads(out.read_text()):
            caption = list(EXPRESSIONS)[entry["id"]]
            size, (x, y, w, h) = EXPRESSIONS[caption]
            want = (
                [x, y, x + w, y + h]
                if name != "Kosmos-2"
                else _kosmos_cells([x, y, x + w, y + h], size)
            )
            assert _close(entry["pred_bbox"], want), (caption, entry["pred_bbox"], want)
        if not lists:
            continue
        out = tmp_path / f"ovd-{batch_size}.json"
        report = predict("ovdeval", str(family_models[name]), oracle_data / "ovdeval", out,
                         config="color", batch_size=batch_size, progress=False)
        assert not report.failures, report.answers
        _check_ovdeval(json.loads(out.read_text()), min_score=1.0)


def _check_ovdeval(entries: list[dict], *, min_score: float) -> None:
    """Every GT box of the OVDEval oracle among the entries scoring at least ``min_score``, on its
    category, its corners within 1 px, and no other entry scoring that much."""
    def corners(xywh: list[float]) -> list[float]:
        x, y, w, h = xywh
        return [x, y, x + w, y + h]

    subset = _ovdeval_subset()
    confident = [e for e in entries if e["score"] >= min_score]
    for gt in subset["annotations"]:
        assert any(
            e["image_id"] == gt["image_id"]
            and e["category_id"] == gt["category_id"]
            and _close(corners(e["bbox"]), corners(gt["bbox"]))
            for e in confident
        ), (gt, confident)
    assert len(confident) == len(subset["annotations"]), confident


# -- detectors: logits and boxes set by the test ---------------------------------------------------
def _cxcywh(box: list[float], width: float, height: float) -> list[float]:
    x1, y1, x2, y2 = box
    return [(x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height]


def _owl_forward(v2: bool):
    """OWL: each GT on its own patch with its query's logit high; the padding queries (" ") high on
    every patch."""
    from transformers import AutoTokenizer

    objects = _objects()

    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, **_):
        tokenizer = AutoTokenizer.from_pretrained(self.config._name_or_path)
        batch = pixel_values.shape[0]
        queries = [_key(q) for q in tokenizer.batch_decode(input_ids, skip_special_tokens=True)]
        per_image = len(queries) // batch
        patches = (
            self.config.vision_config.image_size // self.config.vision_config.patch_size
        ) ** 2
        logits = torch.full((batch, patches, per_image), -8.0)
        boxes = torch.full((batch, patches, 4), 0.5)
        for b in range(batch):
            slot = 0
            for q, text in enumerate(queries[b * per_image:(b + 1) * per_image]):
                # a padding query of a shorter list: let it win
                if not text:
                    logits[b, :, q] = 20.0
                    continue
                # OWL reads 16 tokens of a query
                match = [k for k in objects if _key(k).startswith(text)]
                for box, (w, h) in objects[match[0]]:
                    side = max(w, h) if v2 else None
                    logits[b, slot, q] = 8.0
                    boxes[b, slot] = torch.tensor(_cxcywh(box, side or w, side or h))
                    slot += 1
        return SimpleNamespace(logits=logits, pred_boxes=boxes)
    return forward


def _without(ids: list[int], drop: set[int]) -> tuple[list[int], list[int]]:
    """The ids that are not in ``drop`` and their positions."""
    kept = [(i, n) for n, i in enumerate(ids) if i not in drop]
    return [i for i, _ in kept], [n for _, n in kept]


def _grounding_forward(self, input_ids=None, pixel_values=None, **_):
    """Grounding DINO: each GT on its own object query, high probability on its query's tokens
    (found in the caption by token ids, punctuation aside), box relative to the image."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(self.config._name_or_path)
    punctuation = {tokenizer.convert_tokens_to_ids(p) for p in ".,?"}
    logits = torch.full((input_ids.shape[0], self.config.num_queries, 256), -10.0)
    boxes = torch.full((input_ids.shape[0], self.config.num_queries, 4), 0.5)
    for b, row in enumerate(input_ids.tolist()):
        caption, where = _without(row, punctuation)
        slot = 0
        for query, found in _objects().items():
            ids, _ = _without(tokenizer(query, add_special_tokens=False)["input_ids"], punctuation)
            starts = [
                n for n in range(len(caption) - len(ids) + 1) if caption[n : n + len(ids)] == ids
            ]
            if not starts:
                continue
            span = list(range(where[starts[0]], where[starts[0] + len(ids) - 1] + 1))
            for box, (w, h) in found:
                logits[b, slot, span] = 10.0
                boxes[b, slot] = torch.tensor(_cxcywh(box, w, h))
                slot += 1
    return SimpleNamespace(logits=logits, pred_boxes=boxes)


def _omdet_forward(self, pixel_values=None, classes_input_ids=None, classes_structure=None, **_):
    """OmDet-Turbo: each GT on its own object query, high class logit on its class, box relative to
    the image."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(self.config._name_or_path)
    objects = _objects()
    classes = [_key(c) for c in tokenizer.batch_decode(classes_input_ids, skip_special_tokens=True)]
    batch, width = len(classes_structure), int(classes_structure.max())
    logits = torch.full((batch, self.config.num_queries, width), -10.0)
    boxes = torch.full((batch, self.config.num_queries, 4), 0.5)
    start = 0
    for b, count in enumerate(classes_structure.tolist()):
        slot = 0
        for c, text in enumerate(classes[start:start + count]):
            match = [k for k in objects if _key(k).startswith(text)]
            for box, (w, h) in objects[match[0]]:
                logits[b, slot, c] = 10.0
                boxes[b, slot] = torch.tensor(_cxcywh(box, w, h))
                slot += 1
        start += count
    return SimpleNamespace(decoder_coord_logits=boxes, decoder_class_logits=logits,
                           classes_structure=classes_structure)


@pytest.mark.parametrize("name", DETECTORS)
def test_a_perfect_detector_keeps_every_box_on_its_query(name, family_models, oracle_data, tmp_path,
                                                         monkeypatch):
    """Ref-L4 (one query each: capitals, hyphens, '.', '?', 40 words) and OVDEval (3, 2 and 4
    queries in one batch): every GT box comes back within 1 px on its query, whatever the batch
    size."""
    import transformers as T

    classes = {"OWL-ViT": (T.OwlViTForObjectDetection, _owl_forward(False)),
               "OWLv2": (T.Owlv2ForObjectDetection, _owl_forward(True)),
               "Grounding DINO": (T.GroundingDinoForObjectDetection, _grounding_forward),
               "MM-Grounding-DINO": (T.MMGroundingDinoForObjectDetection, _grounding_forward),
               "OmDet-Turbo": (T.OmDetTurboForObjectDetection, _omdet_forward)}
    model_class, forward = classes[name]
    monkeypatch.setattr(model_class, "forward", forward)
    for batch_size in (1, 4):
        out = tmp_path / f"ref-{batch_size}.json"
        predict("ref_l4", str(family_models[name]), oracle_data / "ref_l4", out, split="val",
                batch_size=batch_size, progress=False)
        entries = json.loads(out.read_text())
        assert len(entries) == len(EXPRESSIONS)
        for entry in entries:
            _, (x, y, w, h) = EXPRESSIONS[list(EXPRESSIONS)[entry["id"]]]
            assert _close(entry["pred_bbox"], [x, y, x + w, y + h]), entry
        out = tmp_path / f"ovd-{batch_size}.json"
        predict("ovdeval", str(family_models[name]), oracle_data / "ovdeval", out, config="color",
                batch_size=batch_size, progress=False)
        _check_ovdeval(json.loads(out.read_text()), min_score=0.5)


# -- each preset's prompt as the family's processor sees it ----------------------------------------
#: family -> (answer kind, what the processed input must hold: a text fragment, or a token that must
#: be one id)
PROMPT_CHECKS = {
    "Qwen2-VL": ("box", ["<|object_ref_start|>", "<|object_ref_end|>", "<|vision_start|>"]),
    "Qwen2.5-VL": ("box", ["output its bbox coordinates using JSON format", "<|vision_start|>"]),
    "Qwen3-VL": ("boxes", ["Report bbox coordinates in JSON format", "<|im_start|>"]),
    "InternVL": ("box", ["<ref>", "</ref>", "<img>", "this sentence describes"]),
    "GLM-4.1V": ("box", ["Give the bounding box of", "<|begin_of_image|>"]),
    "PaliGemma": ("boxes", ["detect Dog ; Taylor Swift ; Cat\n"]),
    "Florence-2": ("box", ["Locate the phrases in the caption: Dog"]),
    "Kosmos-2": ("box", ["<grounding>", "<phrase>", "</phrase>"]),
    "LLaVA-1.5": ("box", ["this sentence describes: Dog", "<image>"]),
}


@pytest.mark.parametrize("name", list(PROMPT_CHECKS))
def test_each_preset_prompt_is_what_the_family_s_processor_expects(name, family_models):
    """The processed input (decoded ids) holds the preset's wording, each of the family's tags is
    one token of its vocabulary, and the image placeholders appear once per image (no doubled
    <image>)."""
    from PIL import Image

    from vlbench.benchmarks.benchmark import PredictItem
    from vlbench.predict import models
    from vlbench.predict.families import render_prompt

    kind, wanted = PROMPT_CHECKS[name]
    info = models.inspect_model(str(family_models[name]))
    preset = info.family.preset(kind)
    loaded = models.LoadedModel(None, models._load_processor(str(family_models[name]), None),
                                info.kind, info.model_type, "cpu", info.family)
    item = PredictItem("0", Image.new("RGB", (640, 480)), queries=("Dog", "Taylor Swift", "Cat"))
    inputs = models._inputs(loaded, [item], [render_prompt(preset, kind, item.queries)], preset)
    tokenizer = loaded.processor.tokenizer
    text = tokenizer.decode(inputs["input_ids"][0])
    for fragment in wanted:
        assert fragment in text, (fragment, text[-300:])
        if fragment.startswith("<") and fragment.endswith(">"):
            assert len(tokenizer(fragment, add_special_tokens=False)["input_ids"]) == 1, fragment
    image_token = getattr(loaded.processor, "image_token", None)
    if image_token and name != "Florence-2":
        ids = inputs["input_ids"][0].tolist()
        runs = sum(1 for n, i in enumerate(ids) if i == tokenizer.convert_tokens_to_ids(image_token)
                   and (n == 0 or ids[n - 1] != i))
        assert runs == 1, text


def _llava_crop(objs, size, _):
    """LLaVA-1.5 as the tiny model's centre-cropping processor shows the image: its short side
    resized to 32, a 32 x 32 crop, the geometry computed by transformers' own functions
    (test_predict_parsers._transformers_crop)."""
    from test_predict_parsers import _transformers_crop

    (_, (x1, y1, x2, y2)), (w, h) = objs[0], size
    left, top, fx, fy = _transformers_crop((w, h), 32, 32)
    return "[" + ", ".join(f"{v:.5f}" for v in ((x1 / fx - left) / 32, (y1 / fy - top) / 32,
                                                (x2 / fx - left) / 32, (y2 / fy - top) / 32)) + "]"


@pytest.mark.parametrize("config, want",
                         [({"do_pad": True, "do_center_crop": True}, "normalized-square"),
                                          ({"do_pad": False, "do_center_crop": True},
                                           "normalized-crop-32"),
                                          ({"do_center_crop": True}, "normalized-crop-32"),
                                          ({"do_pad": False, "do_center_crop": False,
                                            "size": {"height": 32, "width": 32}}, "normalized")])
def test_llava_boxes_are_read_in_the_square_its_processor_makes(config, want, family_models,
                                                                oracle_data, tmp_path, monkeypatch):
    """LLaVA-1.5's boxes are fractions of the square the model saw. The reference code pads the
    image to it (expand2square; an image processor with ``do_pad``), the HF-format checkpoints' CLIP
    processor centre-crops it (``do_center_crop``, no ``do_pad``), and one doing neither stretches
    the whole image. The tiny LLaVA with each processor config: the convention chosen is the
    processor's (recorded in the settings), and perfect answers written in it give back every Ref-L4
    box within 1 px (the 32 x 32 crop of the image resized to a short side of 32, at the processor's
    integer offset; the stretched image per axis)."""
    import shutil

    from transformers import GenerationMixin

    folder = tmp_path / "llava"
    shutil.copytree(family_models["LLaVA-1.5"], folder)
    # transformers 5 keeps it here
    saved = json.loads((folder / "processor_config.json").read_text())
    saved["image_processor"].pop("do_pad", None)
    saved["image_processor"].update(config)
    (folder / "processor_config.json").write_text(json.dumps(saved))
    writers = {"normalized-square": _llava, "normalized-crop-32": _llava_crop,
               "normalized": lambda objs, size, _: "[" + ", ".join(
                   f"{v / size[k % 2]:.4f}" for k, v in enumerate(objs[0][1])) + "]"}
    monkeypatch.setattr(GenerationMixin, "generate", _perfect_generate(writers[want], folder))
    out = tmp_path / "ref.json"
    report = predict("ref_l4", str(folder), oracle_data / "ref_l4", out, split="val",
                     progress=False)
    assert report.settings.box_format == want and not report.failures, report.answers
    for entry in json.loads(out.read_text()):
        size, (x, y, w, h) = EXPRESSIONS[list(EXPRESSIONS)[entry["id"]]]
        assert _close(entry["pred_bbox"], [x, y, x + w, y + h]), entry


def test_a_cut_off_florence2_answer_is_truncated_not_no_box(family_models, oracle_data, tmp_path,
                                                            monkeypatch):
    """Florence-2 is an encoder-decoder whose decoder starts from its EOS id (BART's
    decoder_start_token_id), so every generated row opens with that id. Its perfect Ref-L4 answers
    ("DOG<loc_a><loc_b><loc_c><loc_d>") cut after 3 new tokens, no end token: each item is a
    truncated answer (the limit to raise), not "no box" as the leading start id made it look
    before."""
    from transformers import GenerationMixin

    perfect = _perfect_generate(WRITERS["Florence-2"][0], family_models["Florence-2"])

    def cut(self, input_ids=None, max_new_tokens=None, **kwargs):
        # the start id, then 3
        return perfect(self, input_ids=input_ids, **kwargs)[:, :1 + max_new_tokens]

    monkeypatch.setattr(GenerationMixin, "generate", cut)
    out = tmp_path / "cut.json"
    report = predict("ref_l4", str(family_models["Florence-2"]), oracle_data / "ref_l4", out,
                     split="val", max_new_tokens=3, progress=False)
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert list(meta["failures"]) == ["truncated answer"] and report.items == len(EXPRESSIONS)
    assert meta["failures"]["truncated answer"] == len(EXPRESSIONS)


def test_a_cut_off_list_keeps_its_complete_entries_and_says_so(family_models, oracle_data, tmp_path,
                                                               monkeypatch):
    """Qwen3-VL's perfect JSON list cut at the answer length (no end token): the complete entries
    are kept, the item is reported as a truncated answer (not as a label mismatch), and the default
    length is recorded."""
    from transformers import GenerationMixin

    perfect = _perfect_generate(WRITERS["Qwen3-VL"][0], family_models["Qwen3-VL"])

    def cut(self, input_ids=None, max_new_tokens=None, **kwargs):
        full = perfect(self, input_ids=input_ids, **kwargs)
        return full[:, :input_ids.shape[1] + max_new_tokens]

    monkeypatch.setattr(GenerationMixin, "generate", cut)
    out = tmp_path / "cut.json"
    predict("ovdeval", str(family_models["Qwen3-VL"]), oracle_data / "ovdeval", out, config="color",
                     max_new_tokens=120, progress=False)
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["settings"]["max_new_tokens"] == 120 and list(meta["failures"]) == [
        "truncated answer"
    ]
    entries = json.loads(out.read_text())
    # the first entries of each list survive
    assert 0 < len(entries) < len(_ovdeval_subset()["annotations"])
    default = predict("ovdeval", str(family_models["Qwen3-VL"]), oracle_data / "ovdeval",
                      tmp_path / "d.json", config="color", progress=False)
    # the largest label list has 4 labels: 32 + 48 * 4 tokens
    assert default.settings.max_new_tokens == 32 + 48 * 4


def test_detector_queries_the_model_cannot_read_whole_are_counted(family_models, oracle_data,
                                                                  tmp_path):
    """OWL reads 16 tokens of a query (the 40-word expression is cut), OmDet-Turbo 77; Grounding
    DINO's phrase separators '.' and '?' inside a query are written as ','. Both are counted in the
    run record and said in the summary."""
    out = tmp_path / "owl.json"
    report = predict("ref_l4", str(family_models["OWL-ViT"]), oracle_data / "ref_l4", out,
                     split="val", progress=False)
    # the tiny CLIP tokenizer spends a token per character: every expression longer than 14
    # characters is cut
    assert json.loads(Path(f"{out}.meta.json").read_text())["queries_truncated"] == sum(
        len(e) > 14 for e in EXPRESSIONS) and "cut at the text encoder's length" in report.summary()
    # OmDet-Turbo's processor cuts classes at 77 tokens: counted from the batch's own tokenization,
    # as many as the tokenizer, given each expression whole, makes longer than 77 (the 215-character
    # one)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(family_models["OmDet-Turbo"]))
    longer = sum(len(tokenizer(e)["input_ids"]) > 77 for e in EXPRESSIONS)
    out = tmp_path / "omdet.json"
    predict("ref_l4", str(family_models["OmDet-Turbo"]), oracle_data / "ref_l4", out, split="val",
            progress=False)
    assert json.loads(Path(f"{out}.meta.json").read_text())["queries_truncated"] == longer >= 1
    out = tmp_path / "gd.json"
    report = predict("ref_l4", str(family_models["Grounding DINO"]), oracle_data / "ref_l4", out,
                     split="val", progress=False)
    assert json.loads(Path(f"{out}.meta.json").read_text())["queries_escaped"] == sum(
        "." in e or "?" in e for e in EXPRESSIONS) == 2


def test_out_in_a_missing_folder_is_made_and_settings_are_checked_before_the_model(family_models,
                                                                                   built_samples,
                                                                                   tmp_path):
    proc = run_cli("predict", "ref_l4", "--model", str(family_models["OWL-ViT"]), "--data",
                   str(built_samples / "ref_l4"), "--split", "val", "--out",
                   str(tmp_path / "new" / "dir" / "p.json"))
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads((tmp_path / "new" / "dir" / "p.json").read_text())) == 8
    bad = run_cli("predict", "ref_l4", "--model", str(family_models["Qwen3-VL"]), "--data",
                  str(built_samples / "ref_l4"), "--out", str(tmp_path / "q.json"), "--prompt",
                  "Where is it?")
    assert bad.returncode == 2 and "{expression}" in bad.stderr and "Traceback" not in bad.stderr


def test_a_caption_holds_no_tag_tokens(family_models, built_samples, tmp_path, monkeypatch):
    """Kosmos-2 answers with its tags (<phrase>, <object>, patch indices are tokens of its
    vocabulary): the caption written is the words alone."""
    from transformers import AutoTokenizer, GenerationMixin

    tokenizer = AutoTokenizer.from_pretrained(family_models["Kosmos-2"])

    def tagged(self, input_ids=None, **kwargs):
        answer = (" a<phrase> snowman</phrase><object><patch_index_0044><patch_index_0863></object>"
                  " by a fire.")
        ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        return torch.cat([input_ids, torch.tensor([ids] * len(input_ids))], 1)

    monkeypatch.setattr(GenerationMixin, "generate", tagged)
    out = tmp_path / "captions.json"
    predict("nocaps", str(family_models["Kosmos-2"]), built_samples / "nocaps", out, limit=2,
            progress=False)
    assert {c["caption"] for c in json.loads(out.read_text())} == {"a snowman by a fire."}


def test_a_processor_package_that_does_not_load_is_named_before_the_model(family_models,
                                                                          built_samples, tmp_path):
    """Qwen-VL processors need torchvision: without it (here hidden) the run stops with the install
    command."""
    import subprocess
    import sys

    hide = ("import sys; sys.modules['torchvision'] = None; from vlbench.cli import main; raise "
            "SystemExit(main())")
    proc = subprocess.run([sys.executable, "-c", hide, "predict", "nocaps", "--model",
                           str(family_models["Qwen3-VL"]),
                           "--data", str(built_samples / "nocaps"), "--out",
                           str(tmp_path / "c.json")],
                          capture_output=True, text=True, timeout=600)
    assert (
        proc.returncode == 2
        and "torchvision" in proc.stderr
        and 'pip install "vlbench[predict]"' in proc.stderr
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["OWL-ViT", "OWLv2"])
def test_owl_queries_padded_to_the_batch_s_longest_answer_as_the_processor_s_full_length_padding(
    name, family_models
):
    """The loop pads OWL queries to the longest of the batch (less work) where the family's
    processor pads to the text encoder's 16 tokens. The reference is the model run on the
    processor's own ``padding="max_length"`` inputs: every image's kept boxes, scores and queries
    must be the same (the text tower is causal and pools at the end token). Queries of 2 to 9
    tokens, unequal list lengths."""
    from PIL import Image

    from vlbench.predict import detectors, models

    info = models.inspect_model(str(family_models[name]))
    loaded = models.load_model(str(family_models[name]), info, device="cpu")
    rng = np.random.default_rng(0)
    images = [
        Image.fromarray(rng.integers(0, 255, (48 + 16 * n, 64, 3), dtype=np.uint8))
        for n in range(3)
    ]
    queries = [["a", "red car"], ["dog"], ["tall man", "cup", "sky"]]
    got = detectors.owl(loaded, images, queries, threshold=0.0)
    inputs = loaded.processor(text=queries, images=images, return_tensors="pt",
                              padding="max_length", truncation=True, max_length=16)
    assert (
        inputs["input_ids"].shape[-1] == 16
        and max(map(len, (q for qs in queries for q in qs))) + 2 < 16
    )
    with torch.inference_mode():
        outputs = loaded.model(**inputs)
    for n, qs in enumerate(queries):
        logits = outputs.logits[n, :, :len(qs)]
        best, label = logits.max(-1)
        mine = got.boxes[n]
        assert [q for _, _, q in mine] == label.tolist()
        np.testing.assert_allclose([s for s, _, _ in mine], torch.sigmoid(best).numpy(), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("name", ["OWL-ViT", "Grounding DINO", "OmDet-Turbo"])
def test_a_detector_keeps_its_best_top_k_on_the_device_as_a_stable_sort_of_all_its_boxes(
    name, family_models
):
    """The detector keeps each image's best ``top_k`` boxes itself (on the device, one transfer per
    tensor rather than one per box, which cost a synchronisation per box on a GPU): exactly the
    first ``top_k`` of every box it finds without the cap, sorted by descending score with ties in
    the order found (Python's stable sort, as the loop merges passes); without a cap, every box in
    the order found."""
    from PIL import Image

    from vlbench.predict import detectors, models

    info = models.inspect_model(str(family_models[name]))
    loaded = models.load_model(str(family_models[name]), info, device="cpu")
    run = getattr(detectors, info.family.detector)
    rng = np.random.default_rng(1)
    images = [
        Image.fromarray(rng.integers(0, 255, (48 + 16 * n, 64, 3), dtype=np.uint8))
        for n in range(3)
    ]
    queries = [["a", "red car"], ["dog"], ["tall man", "cup", "sky"]]
    every = run(loaded, images, queries, 0.0)
    assert max(map(len, every.boxes)) > 7
    for k in (1, 3, 7):
        capped = run(loaded, images, queries, 0.0, k)
        assert capped.boxes == [sorted(boxes, key=lambda b: -b[0])[:k] for boxes in every.boxes]
        assert capped.non_finite == every.non_finite == [0, 0, 0]


def test_a_kind_the_model_is_not_is_named_for_what_the_model_is(family_models):
    """``--kind image-text-to-text`` on an OWL-ViT folder (a zero-shot detector) and ``--kind
    detector`` on a Qwen2-VL folder: each refusal says what the model is and to drop --kind (before,
    the first answered "OWL-ViT models have no documented way to answer with boxes", as if a VLM
    lacked a prompt)."""
    from vlbench.engine.errors import InputError
    from vlbench.predict import models

    with pytest.raises(InputError, match=r"OWL-ViT models are zero-shot object detectors: --kind "
                                         r"image-text-to-text cannot run them.*drop --kind"):
        models.inspect_model(str(family_models["OWL-ViT"]), kind="image-text-to-text")
    with pytest.raises(InputError,
                       match=r"Qwen2-VL models are image-text-to-text models: --kind detector"):
        models.inspect_model(str(family_models["Qwen2-VL"]), kind="detector")
    assert models.inspect_model(str(family_models["OWL-ViT"])).kind == "detector"
