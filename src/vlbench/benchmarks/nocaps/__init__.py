"""nocaps (Agrawal et al., ICCV 2019): novel object captioning, scored by domain.

Read top to bottom: :mod:`.schema` (domains, features), :mod:`.reader` (captions JSON <-> records
<-> Hub folder), :mod:`.scorer` (the COCO caption toolkit's metrics, overall and per domain).
"""
