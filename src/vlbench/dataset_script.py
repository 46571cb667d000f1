"""The command line shared by ``dataset_scripts/<id>.py``: build a benchmark's Hub folder from its
official release, then optionally publish it (or show, with ``--dry-run``, what would be
uploaded)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .benchmarks import get_benchmark
from .engine.errors import VlbenchError
from .library.api import build
from .library.publish import publish_folder

__all__ = ["main"]


def main(benchmark: str, argv: Sequence[str] | None = None, *,
         raw_help: str = "the official release") -> int:
    """Build one benchmark's Hub folder from its release (and publish it with ``--repo-id``);
    returns the exit status."""
    info = get_benchmark(benchmark)
    ap = argparse.ArgumentParser(prog=f"dataset_scripts/{info.id}.py",
                                 description=f"Build the {info.display_name} Hub dataset and "
                                             "optionally publish it.")
    ap.add_argument("--raw", required=True, nargs="+", help=raw_help)
    ap.add_argument("--out", required=True, help="output folder in the Hub repo layout")
    ap.add_argument("--images", default=None, help="image folder or archive")
    ap.add_argument("--allow-missing-images", action="store_true")
    ap.add_argument("--overwrite", action="store_true",
                    help="update a folder an earlier build wrote")
    ap.add_argument("--repo-id", default=None,
                    help="publish to this Hub dataset repo after building")
    ap.add_argument("--dry-run", action="store_true",
                    help="list what would be uploaded, upload nothing")
    args = ap.parse_args(argv)
    try:
        raw = args.raw[0] if len(args.raw) == 1 else args.raw
        report = build(info.id, raw, args.out, images=args.images,
                       allow_missing_images=args.allow_missing_images, overwrite=args.overwrite)
        print("\n".join(report.lines()))
        if args.repo_id or args.dry_run:
            plan = publish_folder(args.out, args.repo_id or f"ORG/{info.id}", dry_run=args.dry_run)
            print(("would upload" if args.dry_run else f"uploaded to {args.repo_id}") + ":")
            print("\n".join(plan.lines()))
    except VlbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
