"""OmniLabel (Schulter et al., CVPR 2023): language-based object detection.

Read top to bottom: :mod:`.schema` (features, groups), :mod:`.reader` (official JSON <-> records <->
Hub folder), :mod:`.scorer` (records + predictions -> :class:`~vlbench.result.Result`).
"""
