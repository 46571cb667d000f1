"""Image sources of raw releases: folders or tar archives, read without holding images in memory."""

from __future__ import annotations

import errno
import os
import shutil
import tarfile
from pathlib import Path
from typing import Any

from PIL.Image import DecompressionBombError

from .errors import FormatError

__all__ = ["extract_needed", "index_folder", "ImageSource", "image_cell"]


def extract_needed(archive: Path, needed: set[str], into: Path) -> int:
    """Stream ``archive`` once, writing only the members whose base name is needed (constant
    memory). Two members with a needed base name are an error: which of them is the image is not
    knowable."""
    found: dict[str, str] = {}
    try:
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:
                name = os.path.basename(member.name)
                if not member.isfile() or name not in needed:
                    continue
                if name in found:
                    raise FormatError(f"two members are named {name!r}: {found[name]} and "
                                      f"{member.name}",
                                      file=str(archive),
                                      fix="keep one file per image name in the archive")
                found[name] = member.name
                src = tar.extractfile(member)
                if src is None:         # a regular file always has a stream: for the type checker
                    continue
                with open(into / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, length=1 << 20)
    except (tarfile.TarError, OSError, EOFError) as exc:
        # the disk written to, not the archive
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise
        raise FormatError(f"cannot read the image archive ({exc})", file=str(archive)) from None
    return len(found)


def index_folder(folder: Path, needed: set[str] | None = None) -> dict[str, Path]:
    """Base name -> path of every file below ``folder``; two files of a ``needed`` base name are an
    error."""
    index: dict[str, Path] = {}
    for p in folder.rglob("*"):
        if not p.is_file():
            continue
        if p.name in index and (needed is None or p.name in needed):
            raise FormatError(f"two files are named {p.name!r}: {index[p.name]} and {p}",
                              file=str(folder),
                              fix="keep one file per image name below the image folder")
        index[p.name] = p
    return index


class ImageSource:
    """Base name -> file for a folder, or for an archive extracted (only the needed members) into
    ``scratch``."""

    def __init__(self, source: Path, needed: set[str], scratch: Path) -> None:
        if source.is_dir():
            index = index_folder(source, needed)
        else:
            extract_needed(source, needed, scratch)
            index = index_folder(scratch)
        self.paths = {name: index[name] for name in needed if name in index}
        self.missing = sorted(needed - set(self.paths))

    def get(self, file_name: str) -> Path | None:
        """The file of an image (by base name), or None when missing."""
        return self.paths.get(os.path.basename(file_name))


#: what PIL raises for bytes that are no image it can read: damaged or foreign bytes (OSError and
#: its UnidentifiedImageError, ValueError, SyntaxError) and an image over its pixel cap
#: (DecompressionBombError)
UNREADABLE: tuple[type[Exception], ...] = (OSError, ValueError, SyntaxError, DecompressionBombError)


def image_cell(path: Path, name: str, *, skip_bad: bool = False,
               report: Any = None) -> tuple[dict | None, Any]:
    """The Hub ``Image`` cell of one file, ``{"path": name, "bytes": ...}``, and its (width,
    height), after a cheap check that it is an image (PIL reads its header and size). A file that is
    not (empty, truncated header, another kind of file, a link to one) is a :class:`FormatError`
    naming it, or with ``skip_bad`` no cell, counted in ``report`` (a
    :class:`~vlbench.benchmarks.validation.BuildReport`). So is an image over Pillow's pixel cap
    (its guard against decompression bombs, ``PIL.Image.MAX_IMAGE_PIXELS``)."""
    import io

    from PIL import Image

    data = path.read_bytes()
    try:
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
    except UNREADABLE as exc:
        if not skip_bad:
            raise FormatError(f"not a readable image ({type(exc).__name__}: {str(exc)[:160]})",
                              file=str(path),
                              fix="replace the file, or pass --skip-bad-images to build without it "
                                  "(counted)") from None
        if report is not None:
            report.count("bad_images",
                         "file(s) that are not readable images were left out (--skip-bad-images)",
                          example=name)
        return None, None
    return {"path": name, "bytes": data}, size
