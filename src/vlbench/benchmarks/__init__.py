"""The registry of benchmarks: ids, aliases, display names and where each one's code lives."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

from ..errors import InputError

__all__ = ["BenchmarkInfo", "BENCHMARKS", "get_benchmark", "canonical_id"]


@dataclass(frozen=True)
class BenchmarkInfo:
    """Facts about one benchmark that every face needs (CLI, metric, Space, model card)."""

    id: str
    pretty_name: str
    hub_id: str
    task_type: str
    task_name: str
    default_split: str | None
    metric_names: dict[str, str] = field(default_factory=dict)
    implemented: bool = False

    def module(self, part: str) -> ModuleType:
        """Import ``vlbench.benchmarks.<id>.<part>`` (schema, reader, scorer, card) on demand."""
        if not self.implemented:
            raise InputError(f"benchmark {self.id!r} is not implemented in this version of vlbench yet",
                             fix="see the project's issue tracker; implemented now: "
                                 + ", ".join(b.id for b in BENCHMARKS.values() if b.implemented))
        return importlib.import_module(f"{__name__}.{self.id}.{part}")


_COCO_STATS = ("AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large", "AR1", "AR10", "AR100", "AR_small",
               "AR_medium", "AR_large")

BENCHMARKS: dict[str, BenchmarkInfo] = {
    "ref_l4": BenchmarkInfo(
        id="ref_l4", pretty_name="Ref-L4", hub_id="vlbench/ref-l4",
        task_type="object-detection", task_name="Referring Expression Comprehension",
        default_split="all", implemented=True,
        metric_names={
            "Acc50": "Acc@0.5", "Acc75": "Acc@0.75", "Acc90": "Acc@0.9", "mAcc": "mAcc@0.5:0.95",
            "small_Acc50": "Acc@0.5 (small)", "small_mAcc": "mAcc (small)",
            "medium_Acc50": "Acc@0.5 (medium)", "medium_mAcc": "mAcc (medium)",
            "large_Acc50": "Acc@0.5 (large)", "large_mAcc": "mAcc (large)",
            "class_Acc50": "Acc@0.5 (class average)", "class_mAcc": "mAcc (class average)",
        }),
    "omnilabel": BenchmarkInfo(
        id="omnilabel", pretty_name="OmniLabel", hub_id="vlbench/omnilabel",
        task_type="object-detection", task_name="Language-based Object Detection", default_split="validation",
        implemented=True,
        metric_names={
            "AP": "AP (harmonic mean of AP_categ and AP_descr)", "AP_categ": "AP categories",
            "AP_descr": "AP descriptions", "AP_descr_pos": "AP positive descriptions",
            "AP_descr_S": "AP short descriptions (<=3 words)", "AP_descr_M": "AP medium descriptions (4-8 words)",
            "AP_descr_L": "AP long descriptions (>=9 words)", "AP50_descr": "AP@0.5 descriptions",
            "AP75_descr": "AP@0.75 descriptions", "AP50_categ": "AP@0.5 categories", "AP75_categ": "AP@0.75 categories",
            "AR_descr": "AR descriptions", "AR_categ": "AR categories",
        }),
    "ovdeval": BenchmarkInfo(
        id="ovdeval", pretty_name="OVDEval", hub_id="vlbench/ovdeval",
        task_type="object-detection", task_name="Open-Vocabulary Detection", default_split="test",
        implemented=True,
        metric_names={**{f"NMS_{k}": f"NMS-{k}" for k in _COCO_STATS},
                      **{k: f"{k} (without the suppression)" for k in _COCO_STATS},
                      "Total_Average": "NMS-AP Total Average"}),
    "nocaps": BenchmarkInfo(
        id="nocaps", pretty_name="nocaps", hub_id="vlbench/nocaps",
        task_type="image-to-text", task_name="Novel Object Captioning", default_split="validation",
        implemented=True,
        metric_names={**{f"{m}{suf}": f"{m}{' (' + dom + ')' if dom else ''}"
                         for m in ("B1", "B2", "B3", "B4", "METEOR", "ROUGE_L", "CIDEr", "SPICE")
                         for suf, dom in (("", ""), ("_in", "in-domain"), ("_near", "near-domain"),
                                          ("_out", "out-domain"))}}),
}

_ALIASES = {"ref-l4": "ref_l4", "refl4": "ref_l4", "ovd-eval": "ovdeval", "omni-label": "omnilabel"}


def canonical_id(name: str) -> str:
    """``ref-l4`` -> ``ref_l4``; raises :class:`InputError` for an unknown benchmark."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in BENCHMARKS:
        raise InputError(f"unknown benchmark {name!r}", fix="use one of " + ", ".join(BENCHMARKS))
    return key


def get_benchmark(name: str) -> BenchmarkInfo:
    return BENCHMARKS[canonical_id(name)]
