"""An official release fetched from its home into the usual Hugging Face cache, verified, for
``vlbench build``.

Hub releases (``hf://OWNER/NAME``) go through ``huggingface_hub.hf_hub_download``: its cache, its
resume of a cut download, its locks. Each file is then checked against the hash the Hub names it by
(an LFS file's blob is named by its SHA-256, a plain git file's by its git blob SHA-1), and against
the SHA-256 the package pins, if any. Other releases are https URLs, downloaded with resume into
``<HF_HOME>/vlbench/releases/``: the bytes go to a ``.incomplete`` file that only a complete,
verified download renames, so nothing half-downloaded is ever taken as complete. Offline
(``HF_HUB_OFFLINE=1``) only what the cache holds is used.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from ..benchmarks.benchmark import Release
from ..engine.errors import FormatError, InputError, ServiceError
from ..engine.hub import file_digest

__all__ = ["fetch", "release_of", "Fetched"]

_CHUNK = 1 << 20


class Fetched:
    """A fetched release: where it lies, what a build reads (the folder of a Hub release, the files
    of a URL one), and the record a result carries (``source``)."""

    def __init__(self, folder: Path, record: dict[str, Any], hub: bool) -> None:
        self.folder = folder
        self.record = record
        files = [folder / name for name in record["files"]]
        self.raw: Path | list[Path] = folder if hub else (files[0] if len(files) == 1 else files)


def release_of(default: Release | None, raw: str | None, name: str) -> Release:
    """The release to fetch: ``raw`` as ``hf://OWNER/NAME[@REVISION]`` (the benchmark's files from
    that repo) or an https URL (that one file), else the benchmark's own ``default``."""
    if raw is None:
        if default is None or not default.files:
            raise InputError(
                f"{name} has no release vlbench can fetch"
                + (f" ({default.home})" if default else ""),
                fix=(
                    default.by_hand
                    if default and default.by_hand
                    else "pass --raw with the release"
                ),
            )
        return default
    if raw.startswith("hf://"):
        repo, _, revision = raw[5:].partition("@")
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise InputError(f"{raw!r} is not hf://OWNER/NAME[@REVISION]",
                             fix="e.g. hf://OWNER/NAME@main, or a commit after the @")
        hub_default = default if default and default.home.startswith("hf://") else None
        files = hub_default.files if hub_default else ()
        if not files:
            raise InputError(f"{name} does not know which files of {raw} to fetch",
                             fix="download them by hand and pass the folder as --raw")
        return Release(home=f"hf://{repo}", files=files,
                       optional=hub_default.optional if hub_default else (),
                       revision=revision or "main", by_hand=default.by_hand if default else "")
    return Release(home=raw, files=(raw,), by_hand=default.by_hand if default else "")


def fetch(release: Release) -> Fetched:
    """Fetch every file of ``release`` (or find it in the cache), verify it, and return where it
    lies."""
    if release.home.startswith("hf://"):
        return _fetch_hub(release)
    return _fetch_urls(release)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _by_hand(release: Release, what: str, reason: str) -> ServiceError:
    fix = release.by_hand or "download the release by hand and pass it as --raw"
    return ServiceError(f"cannot fetch {what} ({reason}). Fix: {fix} (or run where the source can "
                        "be reached, or with the files in the Hugging Face cache)")


def _fetch_hub(release: Release) -> Fetched:
    """The files of a Hub dataset at ``release.revision``, through ``huggingface_hub``'s cache."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        LocalEntryNotFoundError,
        RevisionNotFoundError,
    )

    repo = release.home[5:]
    paths: dict[str, Path] = {}
    for name in release.files + release.optional:
        _say(f"fetching {name} from {release.home}@{release.revision}")
        try:
            paths[name] = Path(hf_hub_download(repo, name, repo_type="dataset",
                                               revision=release.revision))
        except (EntryNotFoundError, RevisionNotFoundError) as exc:
            # offline or unreachable, not in the cache
            if isinstance(exc, LocalEntryNotFoundError):
                raise _by_hand(
                    release,
                    f"{name} from {release.home}@{release.revision}",
                    "offline or unreachable, and not in the Hugging Face cache",
                ) from None
            if name in release.optional and not isinstance(exc, RevisionNotFoundError):
                _say(f"note: {release.home}@{release.revision} has no {name}: what it holds is "
                     "built without it")
                continue
            raise FormatError(
                f"{release.home}@{release.revision} has no {name} ({type(exc).__name__})",
                fix="check the revision (a commit, branch or tag of the dataset)",
            ) from None
        # offline, unreachable, refused: huggingface_hub and httpx raise many types
        except Exception as exc:
            if isinstance(exc, (KeyboardInterrupt, MemoryError)):
                raise
            raise _by_hand(
                release,
                f"{name} from {release.home}@{release.revision}",
                f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}",
            ) from None
    commit = paths[release.files[0]].parent.name if paths else release.revision
    files = {name: _verified_blob(path, release, name) for name, path in paths.items()}
    return Fetched(paths[release.files[0]].parent,
                   {"release": release.home, "revision": commit, "files": files}, hub=True)


def _verified_blob(path: Path, release: Release, name: str) -> str:
    """The SHA-256 of a fetched Hub file, checked against the name of its blob (SHA-256 for an LFS
    file, the git blob SHA-1 otherwise) and the package's pin; a mismatch removes the cached copy
    and is an error."""
    blob = Path(os.path.realpath(path))
    sha256, sha1 = hashlib.sha256(), hashlib.sha1(f"blob {blob.stat().st_size}\0".encode())
    with open(blob, "rb") as f:
        while chunk := f.read(_CHUNK):
            sha256.update(chunk)
            sha1.update(chunk)
    got = sha256.hexdigest()
    expected = blob.name
    pinned = release.sha256.get(name)
    if (
        (len(expected) == 64 and got != expected)
        or (len(expected) == 40 and sha1.hexdigest() != expected)
        or (pinned and got != pinned)
    ):
        for stale in (path, blob):
            stale.unlink(missing_ok=True)
        raise FormatError(f"{name} from {release.home} does not match its hash (SHA-256 "
                          f"{got[:16]}..., expected {(pinned or expected)[:16]}...): the copy was "
                          "removed from the cache",
                          file=str(path), fix="run the command again to download it anew")
    return got


def _cache_root() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "vlbench" / "releases"


def _fetch_urls(release: Release) -> Fetched:
    """Each URL of ``release`` into the cache (resumed where a ``.incomplete`` file is left),
    verified."""
    from huggingface_hub import constants

    folder = _cache_root() / hashlib.sha256(release.home.encode()).hexdigest()[:16]
    files = {}
    for url in release.files:
        name = url.rstrip("/").rsplit("/", 1)[-1]
        target = folder / name
        if not target.is_file():
            if constants.HF_HUB_OFFLINE:
                raise _by_hand(release, url,
                               "HF_HUB_OFFLINE is set and the file is not in the cache")
            _download(url, target, release)
        digest = file_digest(target)
        pinned = release.sha256.get(name)
        if pinned and digest != pinned:
            target.unlink()
            raise FormatError(f"{name} from {url} does not match its pinned SHA-256 (got "
                              f"{digest[:16]}..., "
                              f"expected {pinned[:16]}...): the copy was removed", file=str(target),
                              fix="run the command again to download it anew")
        files[name] = digest
    return Fetched(folder, {"release": release.home, "revision": release.revision, "files": files},
                   hub=False)


def _download(url: str, target: Path, release: Release) -> None:
    """``url`` -> ``target`` through ``target.incomplete``, resuming it with a Range request."""
    import urllib.error
    import urllib.request

    part = target.with_name(target.name + ".incomplete")
    target.parent.mkdir(parents=True, exist_ok=True)
    done = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={done}-"} if done else {})
    _say(f"fetching {url}" + (f" (resuming after {done:,} bytes)" if done else ""))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            if done and response.status != 206:       # the server ignored the range: start over
                done = 0
            total = done + int(response.headers.get("Content-Length") or 0)
            with open(part, "ab" if done else "wb") as out:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    done += len(chunk)
            if total and done != total:
                raise OSError(f"the connection closed after {done:,} of {total:,} bytes")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _by_hand(release, url,
                       f"{type(exc).__name__}: {str(exc)[:200]}; what arrived is kept and resumed "
                                     "next time") from None
    part.replace(target)
