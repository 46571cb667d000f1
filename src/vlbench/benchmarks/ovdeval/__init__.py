"""OVDEval (Yao et al., AAAI 2024): open-vocabulary detection with hard negatives, nine sub-datasets.

Read top to bottom: :mod:`.schema` (sub-datasets, aspects, features), :mod:`.reader` (official
COCO-style JSON <-> records <-> Hub folder), :mod:`.scorer` (NMS-AP and AP on the shared engine).
"""
