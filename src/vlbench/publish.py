"""Publishing a Hub-layout folder with ``huggingface_hub`` (one thin call), with a dry run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

__all__ = ["UploadPlan", "plan_upload", "publish_folder"]

_SKIP_PREFIXES = (".", "__pycache__")


@dataclass(frozen=True)
class UploadPlan:
    """What an upload would send: repo-relative paths and sizes in bytes."""

    folder: Path
    files: tuple[tuple[str, int], ...]

    @property
    def total_bytes(self) -> int:
        """Bytes the upload sends."""
        return sum(size for _, size in self.files)

    def lines(self) -> list[str]:
        """The plan as terminal lines, one per file and a total."""
        out = [f"{size:>14,}  {path}" for path, size in self.files]
        out.append(f"{self.total_bytes:>14,}  total, {len(self.files)} file(s)")
        return out


def plan_upload(folder: str | os.PathLike) -> UploadPlan:
    """List the files of ``folder`` that an upload sends (hidden files and build temporaries excluded)."""
    root = Path(folder)
    if not (root / "README.md").exists():
        raise InputError("the folder has no README.md (dataset card)", file=str(root),
                         fix="build it with 'vlbench build' first")
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(part.startswith(_SKIP_PREFIXES) for part in rel.parts):
            files.append((rel.as_posix(), path.stat().st_size))
    return UploadPlan(root, tuple(files))


def publish_folder(folder: str | os.PathLike, repo_id: str, *, repo_type: str = "dataset", dry_run: bool = False,
                   private: bool = False, token: str | None = None, revision: str | None = None) -> UploadPlan:
    """Create ``repo_id`` if needed and upload the folder; with ``dry_run`` only return the plan."""
    plan = plan_upload(folder)
    if dry_run:
        return plan
    from huggingface_hub import HfApi
    from huggingface_hub.utils import get_token

    token = token or get_token()
    if not token:
        raise InputError("no Hugging Face token is available", fix="run 'hf auth login' or set HF_TOKEN, "
                         "or use --dry-run to see what would be uploaded")
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
    api.upload_folder(folder_path=str(plan.folder), repo_id=repo_id, repo_type=repo_type, revision=revision,
                      allow_patterns=[path for path, _ in plan.files],
                      commit_message=f"vlbench: upload {len(plan.files)} file(s)")
    return plan
