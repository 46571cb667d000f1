"""Image sources of raw releases: folders or tar archives, read without holding images in memory."""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

from .errors import FormatError

__all__ = ["extract_needed", "index_folder", "ImageSource"]


def extract_needed(archive: Path, needed: set[str], into: Path) -> int:
    """Stream ``archive`` once, writing only the members whose base name is needed (constant memory)."""
    found = 0
    try:
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:
                name = os.path.basename(member.name)
                if not member.isfile() or name not in needed or (into / name).exists():
                    continue
                src = tar.extractfile(member)
                with open(into / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, length=1 << 20)
                found += 1
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise FormatError(f"cannot read the image archive ({exc})", file=str(archive)) from None
    return found


def index_folder(folder: Path) -> dict[str, Path]:
    """Base name -> path of every file below ``folder``."""
    return {p.name: p for p in folder.rglob("*") if p.is_file()}


class ImageSource:
    """Base name -> file for a folder, or for an archive extracted (only the needed members) into ``scratch``."""

    def __init__(self, source: Path, needed: set[str], scratch: Path) -> None:
        if source.is_dir():
            index = index_folder(source)
        else:
            extract_needed(source, needed, scratch)
            index = index_folder(scratch)
        self.paths = {name: index[name] for name in needed if name in index}
        self.missing = sorted(needed - set(self.paths))

    def get(self, file_name: str) -> Path | None:
        """The file of an image (by base name), or None when missing."""
        return self.paths.get(os.path.basename(file_name))
