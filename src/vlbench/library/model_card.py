"""A result on a model card: the ``model-index`` block, merged into a card through
``huggingface_hub``'s card API, and the Hub's ``.eval_results`` entries written to a folder or
pushed with the card in one commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..benchmarks import get_benchmark
from ..engine.result import Result
from .registration import eval_results, merge_eval_results, require_dataset_id

__all__ = ["model_index", "model_index_yaml", "merge_model_index", "write_eval_results",
           "update_model_card", "read_text"]


def model_index(result: Result, model_name: str, *, dataset_id: str | None = None,
                config: str | None = None,
                split: str | None = None, revision: str | None = None) -> dict[str, Any]:
    """The ``model-index`` entry for a model card (values in percent), as the Hub parses it. The
    dataset is ``dataset_id``, else the one the result names (:attr:`Result.dataset_id`); a result
    the Hub leaderboards cannot take (e.g. a merged split) is refused with the fix. The result's
    ``source`` goes in ``dataset.args``."""
    info = get_benchmark(result.benchmark)
    info.leaderboards.check(result)
    scope_config, scope_split = info.leaderboards.scope(result)
    split = split or scope_split or info.default_split
    dataset: dict[str, Any] = {"name": info.display_name,
                               "type": require_dataset_id(result, dataset_id)}
    if config or scope_config:
        dataset["config"] = config or scope_config
    if split:
        dataset["split"] = split
    if revision:
        dataset["revision"] = revision
    if result.source:       # the release and annotation files the number was scored against
        dataset["args"] = {"source": result.source}
    metrics = [{"type": key, "name": info.card.metric_names.get(key, key),
                "value": round(float(value), 4)}
               for key, value in result.metrics.items() if value is not None]
    return {"model-index": [{"name": model_name, "results": [{
        "task": {"type": info.card.task_type, "name": info.card.task_name},
        "dataset": dataset,
        "metrics": metrics,
    }]}]}


def merge_model_index(card_text: str, result: Result, model_name: str | None = None, *,
                      source: str = "README.md", **kwargs: Any) -> str:
    """A model card (README.md text, possibly empty) with the result's ``model-index`` entries
    merged in through ``huggingface_hub``'s card API: an entry for the same task, dataset, config,
    split and metric is replaced, the others kept; every other metadata field and the prose are left
    as they were. A card the API cannot read, or one holding several models' results (which one
    model name would re-attribute), is a clear error."""
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from ..engine.errors import FormatError

    fix = "fix the card's YAML header (between the --- lines), or merge into a new card with --into"
    try:
        # a card without front matter gets an empty one (its prose kept), so huggingface_hub reads
        # it without warning that no metadata block was found: the merge below adds one
        has_header = card_text.lstrip().startswith("---")
        card = ModelCard(card_text if has_header else "---\n{}\n---\n" + card_text)
        raw_index = _front_matter(card_text).get("model-index") or []
    # yaml errors, ValueError / KeyError / TypeError of an invalid model-index
    except Exception as exc:
        raise FormatError(
            f"the model card cannot be read ({type(exc).__name__}: "
            f"{(str(exc).splitlines() or [''])[0][:200]})",
            file=source,
            fix=fix,
        ) from None
    names = {m.get("name") for m in raw_index if isinstance(m, dict)}
    if len(names) > 1:
        raise FormatError(f"the card's model-index holds results of {len(names)} models "
                          f"({', '.join(map(str, names))}):"
                          " merging would give all of them one name", file=source,
                          fix="merge into a card of one model (--into a new README.md)")
    data: Any = card.data        # ModelCardData: model_name and eval_results are its own fields
    name = model_name or data.model_name or "my-model"
    _, new = model_index_to_eval_results(model_index(result, name, **kwargs)["model-index"])
    kept = [old for old in (data.eval_results or []) if not any(_same_metric(old, n) for n in new)]
    data.eval_results = kept + new
    data.model_name = name
    return str(card)


def _same_metric(old: Any, new: Any) -> bool:
    """Whether a card's entry is the new one's metric: same model, task, dataset, config, split and
    metric. The source (``dataset.args``) is left out, so a number re-scored against another release
    replaces the old one, which then names the release it came from, rather than standing beside it
    under the same heading."""
    import dataclasses

    return old.is_equal_except_value(dataclasses.replace(new, dataset_args=old.dataset_args))


def _front_matter(card_text: str) -> dict[str, Any]:
    """The YAML metadata of a card as written (the card API keeps only the first model of a
    model-index)."""
    import re

    import yaml

    match = re.match(r"\A\s*---\r?\n(.*?)\r?\n---\s*(?:\r?\n|\Z)", card_text, re.S)
    meta = yaml.safe_load(match.group(1)) if match else None
    return meta if isinstance(meta, dict) else {}


def model_index_yaml(result: Result, model_name: str, **kwargs: Any) -> str:
    """:func:`model_index` as YAML, ready to paste into a model card's metadata."""
    import yaml

    return yaml.safe_dump(model_index(result, model_name, **kwargs), sort_keys=False,
                          allow_unicode=True)


def read_text(path: str | os.PathLike, what: str) -> str:
    """A user's text file, with a clear error when it is not UTF-8 or cannot be read."""
    from ..engine.errors import FormatError

    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FormatError(
            f"the {what} is not UTF-8 text", file=str(path), fix="save it as UTF-8"
        ) from None
    except OSError as exc:
        raise FormatError(
            f"cannot read the {what} ({exc.strerror or exc})", file=str(path)
        ) from None


def write_eval_results(result: Result, folder: str | os.PathLike,
                       **entry_fields: Any) -> tuple[Path, list[dict[str, Any]], int]:
    """Write (merge) the result's entries into ``<folder>/.eval_results/<benchmark>.yaml``
    (``folder`` may name the ``.eval_results`` folder itself): entries of other tasks, splits or
    dates are kept. ``entry_fields``: those of :func:`vlbench.library.registration.eval_results`.
    Returns (the file, the entries written, how many others were kept)."""
    import yaml

    from ..engine.io import check_output, write_text_atomic

    check_output(folder, "evaluation results folder", folder=True)
    target_dir = (
        Path(folder) if Path(folder).name == ".eval_results" else Path(folder) / ".eval_results"
    )
    check_output(target_dir, "evaluation results folder", folder=True)
    entries = eval_results(result, **entry_fields)
    target = target_dir / f"{result.benchmark}.yaml"
    merged = merge_eval_results(read_text(target, "evaluation results") if target.is_file() else "",
                                entries, str(target))
    path = write_text_atomic(target, yaml.safe_dump(merged, sort_keys=False, allow_unicode=True),
                             "evaluation results")
    return path, entries, len(merged) - len(entries)


def update_model_card(result: Result, *, into: str | os.PathLike | None = None,
                      push: str | None = None,
                      model_name: str | None = None, dry_run: bool = False,
                      card_options: dict[str, Any] | None = None, **entry_fields: Any) -> list[str]:
    """Merge the result's ``model-index`` into a model card: the file ``into`` (written in place)
    and / or the card of the Hub model ``push``, committed there with its ``.eval_results`` entries
    in one commit (``dry_run``: the diff and the files, nothing sent). ``card_options``: those of
    :func:`model_index`; ``entry_fields``: those of
    :func:`vlbench.library.registration.eval_results`. Returns what was done, one line each."""
    import yaml

    from ..engine.io import check_output, write_text_atomic
    from .publish import push_model_card, remote_card

    card_options = card_options or {}
    if into:
        check_output(into, "model card")
        before = read_text(into, "model card") if Path(into).is_file() else ""
    elif push:
        before = remote_card(push)
    else:
        from ..engine.errors import InputError

        raise InputError("no model card to update",
                         fix="pass into=README.md and / or push=ORG/MODEL")
    after = merge_model_index(before, result, model_name, source=str(into or f"{push}/README.md"),
                              **card_options)
    done = []
    if into:
        write_text_atomic(into, after, "model card")
        done.append(f"merged the model-index into {into}")
    if push:
        from ..engine.errors import ServiceError

        remote = f".eval_results/{result.benchmark}.yaml"
        try:
            existing = remote_card(push, path=remote)
        except ServiceError:
            # a push over a file it could not read might replace others' results
            if not dry_run:
                raise
            existing = ""
            done.append(f"note: {push}'s {remote} could not be read (the Hub cannot be reached): "
                        "shown as new")
        merged = merge_eval_results(existing, eval_results(result, **entry_fields),
                                    f"{push}/{remote}")
        files = {"README.md": after,
                 remote: yaml.safe_dump(merged, sort_keys=False, allow_unicode=True)}
        done.append(push_model_card(push, before, files, dry_run=dry_run))
    return done
