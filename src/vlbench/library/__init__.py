"""The library and its renderings: ``api`` (score, compare, build, export, metric_path), plain COCO
files (``coco``), text / tables / plots (``report``), model cards, Hub registration, metric cards
and publishing.

A module here imports the benchmarks layer and the engine, never a front (the CLI, the Space, the
model runner).
"""
