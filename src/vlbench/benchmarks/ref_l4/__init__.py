"""Ref-L4 (Chen et al., 2024): referring expression comprehension with long expressions.

Read top to bottom: :mod:`.schema` (columns, features, class table), :mod:`.reader` (official
release -> rows, Hub folder), :mod:`.scorer` (rows + predictions -> :class:`~vlbench.result.Result`).
"""
