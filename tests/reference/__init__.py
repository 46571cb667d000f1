"""Straightforward per-sample re-statements of official algorithms, for property tests and
benchmarks."""
