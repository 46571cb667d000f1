"""Build the nocaps Hub dataset from the official captions JSON(s) and (optionally) publish it.

    python dataset_scripts/nocaps.py --raw nocaps_val_4500_captions.json \\
        [nocaps_test_image_info.json] --images path/to/images --out hub/nocaps \\
        [--repo-id ORG/nocaps] [--dry-run]
"""

from vlbench.dataset_script import main

if __name__ == "__main__":
    raise SystemExit(
        main("nocaps", raw_help="nocaps_val_4500_captions.json and/or nocaps_test_image_info.json")
    )
