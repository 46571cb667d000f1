"""Build the Ref-L4 Hub dataset from the official release and (optionally) publish it.

    python dataset_scripts/ref_l4.py --raw path/to/Ref-L4 --out hub/ref_l4 \\
        [--repo-id ORG/ref-l4] [--dry-run]

The release folder holds ref-l4-val.parquet, ref-l4-test.parquet and images.tar.gz (or images/).
"""

from vlbench.dataset_script import main

if __name__ == "__main__":
    raise SystemExit(
        main(
            "ref_l4", raw_help="folder with ref-l4-val.parquet, ref-l4-test.parquet, images.tar.gz"
        )
    )
