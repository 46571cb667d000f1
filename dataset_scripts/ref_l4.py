"""Build the Ref-L4 Hub dataset from the official release and (optionally) publish it.

    python dataset_scripts/ref_l4.py --raw path/to/Ref-L4 --out hub/ref_l4 [--repo-id ORG/ref-l4] [--dry-run]

A thin face over ``vlbench.benchmarks.ref_l4.reader.build`` and ``vlbench.publish``.
"""

from __future__ import annotations

import argparse
import sys

from vlbench.benchmarks.ref_l4.reader import build
from vlbench.errors import VlbenchError
from vlbench.publish import publish_folder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True, help="folder with ref-l4-val.parquet, ref-l4-test.parquet, images.tar.gz")
    ap.add_argument("--out", required=True, help="output folder in the Hub repo layout")
    ap.add_argument("--images", default=None, help="image folder or archive, if not inside --raw")
    ap.add_argument("--repo-id", default=None, help="publish to this Hub dataset repo after building")
    ap.add_argument("--dry-run", action="store_true", help="list what would be uploaded, upload nothing")
    args = ap.parse_args(argv)
    try:
        report = build(args.raw, args.out, images=args.images)
        print("\n".join(report.lines()))
        if args.repo_id or args.dry_run:
            plan = publish_folder(args.out, args.repo_id or "ORG/ref-l4", dry_run=args.dry_run)
            print(("would upload" if args.dry_run else f"uploaded to {args.repo_id}") + ":")
            print("\n".join(plan.lines()))
    except VlbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
