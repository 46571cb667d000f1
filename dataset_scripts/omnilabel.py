"""Build the OmniLabel Hub dataset from the official dataset JSON(s) and (optionally) publish it.

    python dataset_scripts/omnilabel.py --raw dataset_all_val_v0.1.3.json \\
        [dataset_all_test_v0.1.3.json] --images path/to/images --out hub/omnilabel \\
        [--repo-id ORG/omnilabel] [--dry-run]

--images is the root under which the JSON's file_name paths (coco/..., object365/...,
openimagesv5/...) lie.
"""

from vlbench.dataset_script import main

if __name__ == "__main__":
    raise SystemExit(
        main(
            "omnilabel",
            raw_help="the official dataset JSON(s): validation (with annotations) "
            "and/or test (without)",
        )
    )
