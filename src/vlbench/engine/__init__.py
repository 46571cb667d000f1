"""The engine: geometry, the COCO-style AP engine, error analysis, the caption metrics
(``captions/``), uncertainty, file I/O, errors, the ``Result`` record and the Hub writer.

A module here imports only other modules here (``tests/test_architecture.py`` checks it): nothing of
a benchmark, a rendering, the CLI or the Space.
"""
