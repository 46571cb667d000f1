"""The Space's sample viewer: each image of a scored upload drawn with its boxes, the worst first,
as the benchmark's own matching reads them (its ``views`` capability); the states kept per upload,
the least recently used dropped. Wired into Gradio by :mod:`vlbench.space`; nothing here imports
Gradio.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .benchmarks import get_benchmark
from .benchmarks.protocol.views import ALL_QUERIES, SHOW_SCORE

#: Viewer states (the scenes of one scored upload, ~0.6 MB) kept at once, all sessions together, the
#: least recently used dropped first; ``VLBENCH_SPACE_VIEWERS`` overrides it. A session keeps only
#: its state's key.
MAX_VIEWER_STATES = int(os.environ.get("VLBENCH_SPACE_VIEWERS", "32"))

#: images of one upload the viewer keeps (worst first), shown PAGE_SIZE to a page
MAX_SCENES = 500
PAGE_SIZE = 20
LEGEND_WORDS = {"gt": "ground truth found", "miss": "ground truth missed",
                "match": "prediction matching a ground truth of its label (IoU ≥ 0.5)",
                "negative": "hard negative: a negative label of the image on an object (an error)",
                "wrong_label": "another object's label on an object (an error)",
                "fp": "false positive on nothing",
                "suppressed": "removed by the benchmark's suppression before scoring (no match, no "
                              "error)"}


def legend() -> str:
    """The viewer's legend (HTML in Markdown), in the colours :func:`vlbench.library.report.draw`
    uses."""
    from .library.report import COLOURS

    keys = " · ".join(f'<span style="color: rgb{COLOURS[k]}; font-weight: bold">■ {words}</span>'
                      for k, words in LEGEND_WORDS.items())
    return (keys + ". Predictions scoring below the threshold are hidden; each image is shown "
                   "whole, grown in grey where a box reaches beyond it.")


#: predicted boxes a kept scene holds at most (its highest-scoring ones): a session's state stays
#: small
MAX_SCENE_BOXES = 300


def viewer_state(benchmark: str, references: Any, predictions: Any, result: Any,
                 references_path: str) -> dict:
    """What the viewer of one upload needs (kept per browser session for an hour): its scenes worst
    first, at most MAX_SCENES, each with at most MAX_SCENE_BOXES predicted boxes."""
    import dataclasses

    ranked = sorted(get_benchmark(benchmark).views.scenes(references, predictions, result),
                    key=lambda s: -s.badness)
    wanted = {
        _example_key(e)
        for examples in (result.analysis or {}).get("examples", {}).values()
        for e in examples
    }
    # the Errors tab's too
    chosen = ranked[:MAX_SCENES] + [s for s in ranked[MAX_SCENES:] if wanted & set(s.keys)]
    kept = [
        scene
        if len(scene.predicted) <= MAX_SCENE_BOXES
        else dataclasses.replace(
            scene,
            predicted=sorted(scene.predicted, key=lambda p: -(1.0 if p[2] is None else p[2]))[
                :MAX_SCENE_BOXES
            ],
        )
        for scene in chosen
    ]
    examples = (result.analysis or {}).get("examples", {})
    return {"scenes": kept, "total": len(ranked), "references": references_path,
            "examples": error_examples(kept, result.analysis),
            "example_labels": {k: e[0].get("label") for k, e in examples.items() if e}}


def _example_key(example: dict) -> Any:
    """The id an analysis example names its image or row by."""
    return example.get("image_id", example.get("id"))


def error_examples(scenes: list[Any], analysis: dict | None) -> dict[str, list[int]]:
    """Per error type of the analysis, the viewer ranks of the scenes its examples are on (worst
    example first)."""
    rank_of: dict[Any, int] = {}
    for rank, scene in enumerate(scenes):
        for key in scene.keys:
            rank_of.setdefault(key, rank)
    out = {}
    for kind, examples in (analysis or {}).get("examples", {}).items():
        ranks = list(dict.fromkeys(rank_of[k] for k in map(_example_key, examples) if k in rank_of))
        if ranks:
            out[kind] = ranks
    return out


class ViewerStore:
    """The viewer states of the latest uploads, at most ``size`` (least recently used dropped
    first), each under a random key: what the Space keeps per session is bounded however many
    sessions come and stay."""

    def __init__(self, size: int = MAX_VIEWER_STATES) -> None:
        import threading
        from collections import OrderedDict

        self.size = max(1, size)
        self._states: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, state: dict) -> str:
        """Keep ``state``; its key (what the session holds)."""
        import secrets

        key = secrets.token_urlsafe(16)
        with self._lock:
            self._states[key] = state
            while len(self._states) > self.size:
                self._states.popitem(last=False)
        return key

    def get(self, key: Any) -> dict | None:
        """The state under ``key``, or None (never stored, or dropped for newer uploads)."""
        with self._lock:
            state = self._states.get(key) if isinstance(key, str) else None
            if state is not None:
                self._states.move_to_end(key)
            return state

    def __len__(self) -> int:
        return len(self._states)


def viewer_page(state: Any, page: Any) -> tuple[int, list[tuple[str, int]], str]:
    """(page shown, its image choices as (label, rank), "page k of n"); the page is clamped to the
    ones there are."""
    scenes = state["scenes"] if isinstance(state, dict) else []
    pages = max(1, -(-len(scenes) // PAGE_SIZE))
    page = min(max(int(page) if isinstance(page, (int, float)) else 0, 0), pages - 1)
    first = page * PAGE_SIZE
    shown = [(f"#{first + n + 1} {scene.title}", first + n) for n,
             scene in enumerate(scenes[first:first + PAGE_SIZE])]
    kept = (
        f" (the worst {len(scenes)} of {state['total']})"
        if scenes and state["total"] > len(scenes)
        else ""
    )
    return (
        page,
        shown,
        f"page {page + 1} of {pages}, worst first{kept}" if scenes else "no images to show",
    )


def _scene(state: Any, rank: Any) -> Any:
    scenes = state["scenes"] if isinstance(state, dict) else []
    return scenes[rank] if isinstance(rank, int) and 0 <= rank < len(scenes) else None


def viewer_queries(state: Any, rank: Any) -> list[str]:
    """The query choices of an image: all boxes, then each description / category / expression."""
    scene = _scene(state, rank)
    return [ALL_QUERIES] + scene.queries() if scene is not None else []


def viewer_draw(state: Any, rank: Any, query: Any, threshold: Any) -> tuple[Any, str, str]:
    """(drawn image, caption, the drawn boxes as JSON in the drawn image's pixels) of one image and
    query."""
    from .library import report

    scene = _scene(state, rank)
    if scene is None:
        return None, "", "[]"
    query = query if query in scene.queries() else ALL_QUERIES
    threshold = (
        min(max(float(threshold), 0.0), 1.0) if isinstance(threshold, (int, float)) else SHOW_SCORE
    )
    sample = scene.sample(query, threshold)
    image_bytes = report.image_reader(state["references"])(scene.image) if scene.image else None
    image, placed = report.draw_placed(sample, image_bytes)
    boxes = {"size": list(image.size),
             "boxes": [{"xyxy": [round(v, 1) for v in xyxy], "kind": kind, "label": label}
                                                 for xyxy, label, kind in placed]}
    caption = f"**{scene.title}**" + (f" — query: {query}" if query != ALL_QUERIES else "")
    return image, caption + (f"\n\n{scene.text}" if scene.text else ""), json.dumps(boxes)
