"""Build the OVDEval Hub dataset (one config per sub-dataset, and the default config "all" over
them) from the release and (optionally) publish it.

    python dataset_scripts/ovdeval.py --raw path/to/OVDEval --out hub/ovdeval \\
        [--repo-id ORG/ovdeval] [--dry-run]

The release folder holds annotations/<sub>.json and the images as images/<sub>.tar.gz,
<sub>.tar.gz or images/<sub>/.
"""

from vlbench.dataset_script import main

if __name__ == "__main__":
    raise SystemExit(
        main("ovdeval", raw_help="the OVDEval release folder (annotations/ + image archives)")
    )
