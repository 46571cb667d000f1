"""Ref-L4 readers: the official release (``ref-l4-{val,test}.parquet`` + ``images.tar.gz`` or an
image folder) -> Hub folder, and any reference source (official parquet, JSON rows, Hub folder,
Hub id) -> :class:`~.scorer.RefL4References` for scoring.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...engine.errors import FormatError, InputError
from ...engine.images import ImageSource, image_cell
from ...engine.io import arrow_codes
from ..validation import BuildReport
from . import schema
from .records import RefL4References

__all__ = ["load_references", "references_from_rows", "build", "export", "release_tables"]

SCORING_COLUMNS = ("id", "bbox", "ori_category_id")
#: image key columns, the first present one is used to resample expressions by image
IMAGE_COLUMNS = ("file_name", "image_id")
#: read when present, for showing samples and for the convention check (image sizes)
SHOWN_COLUMNS = IMAGE_COLUMNS + ("caption", "width", "height")


# --------------------------------------------------------------------------------------------
# References for scoring
# --------------------------------------------------------------------------------------------

def _select_split(table: Any, split: str, source: str) -> tuple[Any, Any]:
    """The rows of ``split`` and the ids of the file's other rows (predictions for those are
    expected, not unknown)."""
    import pyarrow.compute as pc

    if split == "all":
        return table, None
    if split not in schema.SPLITS:
        raise InputError(f"unknown split {split!r}", fix="use val, test or all")
    if "split" not in table.column_names:
        raise FormatError(f"the references have no 'split' column, so split {split!r} cannot be "
                          "selected",
                          file=source, fix="pass --split all, or the file of that split")
    mask = pc.equal(table["split"], split)
    return table.filter(mask), _row_ids(table.filter(pc.invert(mask))["id"], source)


def _references_from_table(table: Any, source: str, other_split_ids: Any = None) -> RefL4References:
    missing = [c for c in SCORING_COLUMNS if c not in table.column_names]
    if missing:
        raise FormatError(f"the references lack the column(s) {', '.join(missing)}; Ref-L4 rows "
                          "have "
                          + ", ".join(schema.OFFICIAL_COLUMNS), file=source,
                          fix="pass ref-l4-val.parquet / ref-l4-test.parquet, a Hub folder built "
                              "by vlbench, or JSON rows with the official columns")
    from ...engine.io import arrow_to_numpy

    ids = _row_ids(table["id"], source)
    try:
        import pyarrow.compute as pc

        bbox = arrow_to_numpy(table["bbox"], "float64")
        lengths = arrow_to_numpy(pc.list_value_length(table["bbox"]), "int64")
        lengths_ok = len(bbox) == 4 * len(ids) and bool((lengths == 4).all())
    except Exception:
        lengths_ok = False
    if not lengths_ok:
        boxes = table["bbox"].to_pylist()
        bad = next((i for i, b in enumerate(boxes) if not (isinstance(b, list) and len(b) == 4
                    and all(isinstance(v, (int, float)) for v in b))), 0)
        raise FormatError(
            f"'bbox' of row {bad} (id {ids[bad]}) is {boxes[bad]!r}, not [x, y, w, h]", file=source
        ) from None
    bbox = bbox.reshape(len(ids), 4)
    if not np.isfinite(bbox).all():
        bad = int(np.flatnonzero(~np.isfinite(bbox).all(axis=1))[0])
        raise FormatError(f"'bbox' of row {bad} (id {ids[bad]}) is not finite", file=source)
    repeated = [(i, n) for i, n in Counter(ids.tolist()).items() if n > 1]
    notes = []
    if repeated:   # the official scorer scores each such row against the one prediction of its id
        notes.append(f"{sum(n - 1 for _, n in repeated)} reference row(s) repeat the id of another "
                     f"row (e.g. {[i for i, _ in repeated[:5]]}): each is scored against the "
                     "prediction of its id, as the official scorer does")
    # as read: a null stays None, a class apart from the text "None"
    cats = table["ori_category_id"].to_pylist()
    image, image_names = _image_codes(table)
    expressions = (
        [str(c or "") for c in table["caption"].to_pylist()]
        if "caption" in table.column_names
        else None
    )
    return RefL4References(ids=ids, bbox_xywh=bbox, ori_category_id=cats, source=source,
                           other_split_ids=other_split_ids, image=image, image_names=image_names,
                           expressions=expressions, notes=notes, image_size=_image_sizes(table))


def _row_ids(column: Any, source: str) -> Any:
    """The rows' ids as the official loop reads them: int64 for an integer column, else the values
    themselves (text ids such as ``"000123"``, as the official docstring writes them), which
    predictions must equal."""
    import pyarrow as pa

    from ...engine.io import arrow_to_numpy

    if pa.types.is_integer(column.type) and column.null_count == 0:
        return arrow_to_numpy(column, "int64")
    values = column.to_pylist()
    if all(type(v) is int for v in values):
        return np.asarray(values, dtype=np.int64)
    # the trailing None keeps a 1-d array of the values
    return np.asarray(values + [None], dtype=object)[:-1]


def _image_sizes(table: Any) -> Any:
    """(width, height) per row, or None when a column is absent or a value missing or not
    positive."""
    if "width" not in table.column_names or "height" not in table.column_names:
        return None
    import pyarrow as pa

    from ...engine.io import arrow_to_numpy

    # a null, text or any other failure: no sizes (arrow_to_numpy reads the buffer: no pandas
    # import)
    try:
        size = np.column_stack([arrow_to_numpy(table[c], "float64") for c in ("width", "height")])
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return size if len(size) and np.isfinite(size).all() and (size > 0).all() else None


def _image_codes(table: Any) -> tuple[Any, list[str] | None]:
    """Per row an integer naming its image (file_name, else image_id) and the names it indexes;
    (None, None) if absent."""
    for column in IMAGE_COLUMNS:
        if column in table.column_names and table[column].null_count == 0:
            import pyarrow as pa
            import pyarrow.compute as pc

            keys = pc.cast(table[column], "string") if column == "image_id" else table[column]
            keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
            encoded = pc.dictionary_encode(keys)
            return arrow_codes(encoded.indices), encoded.dictionary.to_pylist()
    return None, None


def _read_parquet(path: Path, columns: tuple[str, ...] | None) -> Any:
    """The ``columns`` (all with None) of a Parquet file that exist; any failure is a FormatError
    naming it."""
    import pyarrow.parquet as pq

    from ...engine.io import require_file

    require_file(path, "Parquet file")
    try:
        # ParquetFile.read, not pq.read_table: the latter imports pyarrow.dataset and pandas.
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        return parquet.read(
            columns=[c for c in columns if c in names] if columns is not None else None
        )
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise FormatError(f"cannot read Parquet ({exc})", file=str(path)) from None


def _hub_folder_files(folder: Path, split: str) -> list[Path]:
    splits = schema.SPLITS if split == "all" else (split,)
    files = [f for s in splits for f in sorted((folder / "data").rglob(f"{s}-*.parquet"))]
    if not files:
        raise FormatError(f"no Parquet shard for split {split!r} under data/", file=str(folder),
                          fix="build the folder with 'vlbench build ref_l4'")
    return files


def _ids_of(tables: list[Any]) -> Any:
    from ...engine.io import arrow_to_numpy

    return np.concatenate([arrow_to_numpy(t["id"], "int64") for t in tables]) if tables else None


def load_references(ref: str | os.PathLike, split: str = "all") -> RefL4References:
    """Read the GT rows of ``split`` (val, test, all) from any supported reference source."""
    import pyarrow as pa

    from ...engine.io import read_json

    columns = SCORING_COLUMNS + ("split",) + SHOWN_COLUMNS
    path = Path(ref)
    chosen = schema.SPLITS if split == "all" else (split,)
    if split not in schema.SPLITS + ("all",):
        raise InputError(f"unknown split {split!r}", fix="use val, test or all")
    if path.is_dir():
        if (path / "data").is_dir():  # a Hub-layout folder written by vlbench build
            tables = [_read_parquet(f, columns) for f in _hub_folder_files(path, split)]
            others = [_read_parquet(f, ("id",)) for s in schema.SPLITS if s not in chosen
                      for f in sorted((path / "data").rglob(f"{s}-*.parquet"))]
            return _references_from_table(pa.concat_tables(tables), str(path), _ids_of(others))
        official = [path / f"ref-l4-{s}.parquet" for s in chosen]
        if all(f.exists() for f in official):
            table = pa.concat_tables([_read_parquet(f, columns) for f in official],
                                     promote_options="default")
            others = [_read_parquet(path / f"ref-l4-{s}.parquet", ("id",)) for s in schema.SPLITS
                      if s not in chosen and (path / f"ref-l4-{s}.parquet").exists()]
            return _references_from_table(table, str(path), _ids_of(others))
        raise FormatError("the folder is neither a Hub folder (data/*.parquet) nor the official "
                          "release (ref-l4-val.parquet, ref-l4-test.parquet)", file=str(path))
    if path.exists():
        if path.suffix == ".parquet":
            table = _read_parquet(path, columns)
        else:
            rows = read_json(path, what="reference file")
            if not isinstance(rows, list) or (rows and not isinstance(rows[0], dict)):
                raise FormatError("JSON references must be a list of Ref-L4 rows (objects with id, "
                                  "bbox, ori_category_id, split)", file=str(path))
            try:
                table = pa.Table.from_pylist(rows)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise FormatError(
                    f"the rows do not have consistent types ({exc})", file=str(path)
                ) from None
        selected, other_ids = _select_split(table, split, str(path))
        return _references_from_table(selected, str(path), other_ids)
    if str(ref).count("/") == 1 and not str(ref).startswith((".", "/")):
        return _load_from_hub(str(ref), split)
    raise FormatError("the references do not exist", file=str(ref), fix="check the path")


def _load_from_hub(repo_id: str, split: str) -> RefL4References:
    """A Hub dataset id (needs network access to the Hub); only the scoring columns are read."""
    import pyarrow as pa
    from datasets import load_dataset

    splits = schema.SPLITS if split == "all" else (split,)
    try:
        parts = [
            load_dataset(repo_id, split=s, columns=list(SCORING_COLUMNS)).data.table for s in splits
        ]
    except Exception as exc:  # network, auth, missing repo: all user-facing
        raise FormatError(f"cannot load the Hub dataset ({type(exc).__name__}: {exc})",
                          file=repo_id,
                          fix="check the id and your network, or pass a local folder") from None
    return _references_from_table(pa.concat_tables(parts), repo_id)


# --------------------------------------------------------------------------------------------
# Official release -> Hub folder
# --------------------------------------------------------------------------------------------

def release_tables(raw: Path) -> dict[str, Any]:
    """The official annotation parquets of a release folder, by split (val first), checked: the
    official columns, four finite numbers per bbox."""
    import pyarrow.compute as pc

    tables = {}
    for split in schema.SPLITS:
        f = raw / f"ref-l4-{split}.parquet"
        if f.exists():
            table = _read_parquet(f, None)
            missing = [c for c in schema.OFFICIAL_COLUMNS if c not in table.column_names]
            if missing:
                raise FormatError(f"missing official column(s) {', '.join(missing)}", file=str(f))
            table = table.select(list(schema.OFFICIAL_COLUMNS))
            lengths = pc.fill_null(pc.list_value_length(table["bbox"]), 0).to_pylist()
            bad = next((i for i, n in enumerate(lengths) if n != 4), None)
            if bad is not None:
                raise FormatError(f"'bbox' of row {bad} (id {table['id'][bad].as_py()}) is "
                                  f"{table['bbox'][bad].as_py()!r}, not [x, y, w, h]", file=str(f),
                                  fix="repair the row, or use the official release file")
            tables[split] = table
    if not tables:
        raise FormatError("no ref-l4-val.parquet or ref-l4-test.parquet in the release folder",
                          file=str(raw),
                          fix="point --raw at the folder of the official Ref-L4 release")
    return tables


def _find_images(raw: Path, images: Path | None) -> Path:
    """The image source: an explicit path, else ``images/`` or ``images.tar.gz`` in the release."""
    if images is not None:
        if not images.exists():
            raise FormatError("the image folder or archive does not exist", file=str(images))
        return images
    for candidate in (raw / "images", raw / "images.tar.gz", raw / "images.tgz",
                      raw / "images.tar"):
        if candidate.exists():
            return candidate
    raise FormatError("no images/ folder and no images.tar.gz in the release", file=str(raw),
                      fix="pass --images PATH (a folder or a .tar.gz)")


def _rows(table: Any, image_paths: dict[str, Path], report: BuildReport,
          skip_bad_images: bool = False) -> Iterator[dict[str, Any]]:
    for batch in table.to_batches(max_chunksize=256):
        for row in batch.to_pylist():
            x, y, w, h = row["bbox"]
            path = image_paths.get(row["file_name"])
            cell, size = (
                image_cell(path, row["file_name"], skip_bad=skip_bad_images, report=report)
                if path
                else (None, None)
            )
            if size is not None:
                width, height = size
                if (width, height) != (row["width"], row["height"]):
                    report.count("size_mismatch",
                                 "row(s) whose height/width differ from the image file")
            else:
                width, height = row["width"], row["height"]
            if x < 0 or y < 0 or x + w > width + 1e-6 or y + h > height + 1e-6:
                report.count("boxes_outside_image",
                             "box(es) extend beyond their image (kept as released)")
            name = schema.category_name(row["ori_category_id"])
            if name == row["ori_category_id"]:
                report.count("unknown_categories", "row(s) whose ori_category_id has no known name",
                             example=name)
            try:
                source = schema.source_of(str(row["ori_category_id"]))
            except ValueError:
                raise FormatError(f"ori_category_id {row['ori_category_id']!r} is neither "
                                  "refcoco_<N> nor o365_<N>, so the row has no source (COCO or "
                                  "Objects365)",
                                  entry=f"row id {row['id']}",
                                  fix="use the release's ids (the dataset card's 'source' column "
                                      "is derived from them)") from None
            yield {
                **row,
                "image": cell,
                "category": name,
                "source": source,
                "size": schema.size_bucket(w, h),
            }


def build(raw: str | os.PathLike, out: str | os.PathLike, *,
          images: str | os.PathLike | None = None,
          allow_missing_images: bool = False, skip_bad_images: bool = False,
          max_shard_bytes: int | None = None, rows_per_group: int = 100) -> BuildReport:
    """Official release -> Hub folder (``README.md`` + ``data/{val,test}-*.parquet``)."""
    from ...engine.hub import MAX_SHARD_BYTES, ShardedParquetWriter, card_yaml, write_card
    from .card import card_body, card_metadata

    if isinstance(raw, (list, tuple)):
        raise InputError("Ref-L4 is built from one release folder", fix="pass one --raw folder")
    raw, out = Path(raw), Path(out)
    tables = release_tables(raw)
    source = _find_images(raw, Path(images) if images else None)
    needed = {name for t in tables.values() for name in t["file_name"].to_pylist()}
    report = BuildReport()
    ids = _ids_of(list(tables.values()))
    repeated = len(ids) - len(np.unique(ids))
    if repeated:
        report.count("duplicate_ids",
                     "row(s) repeat the id of another row (kept as released; each is scored "
                     "against the prediction of its id)", repeated)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".vlbench-images-", dir=out) as tmp:
        images_found = ImageSource(source, needed, Path(tmp))
        image_paths = images_found.paths
        report.images = len(image_paths)
        report.missing_images = images_found.missing
        if report.missing_images and not allow_missing_images:
            raise FormatError(
                f"{len(report.missing_images)} of {len(needed)} images referenced by the rows are "
                "not in the "
                f"image source, e.g. {', '.join(report.missing_images[:5])}", file=str(source),
                fix="use the complete images.tar.gz, or pass --allow-missing-images to write those "
                    "rows without image")
        features = schema.features()
        summaries = []
        for split, table in tables.items():
            # a split without rows gets no config entry (the loader rejects empty globs)
            if table.num_rows == 0:
                report.rows[split] = 0
                continue
            writer = ShardedParquetWriter(out, split, features, rows_per_group=rows_per_group,
                                          max_shard_bytes=max_shard_bytes or MAX_SHARD_BYTES)
            writer.write_all(_rows(table, image_paths, report, skip_bad_images))
            summaries.append(writer.close())
            report.rows[split] = summaries[-1].num_examples
            report.files.extend(summaries[-1].files)
    write_card(out, card_yaml(features=features, splits=summaries, extra=card_metadata()),
               card_body(report))
    report.files[:0] = ["README.md"]
    return report


def references_from_rows(rows: list[dict[str, Any]], source: str = "references") -> RefL4References:
    """Rows of the Hub dataset (or dicts with at least ``id``, ``bbox``, ``ori_category_id``) ->
    references."""
    import pyarrow as pa

    if not rows:
        raise InputError("no reference rows were given", file=source)
    slim = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or any(k not in row for k in SCORING_COLUMNS):
            raise FormatError(f"reference {index} needs the keys {', '.join(SCORING_COLUMNS)}",
                              file=source,
                              fix="pass rows of the Ref-L4 Hub dataset (or dicts with those keys)")
        slim.append({k: row[k] for k in SCORING_COLUMNS}
                    | {k: row[k] for k in SHOWN_COLUMNS if row.get(k) not in (None, "")})
    try:
        table = pa.Table.from_pylist(slim)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise FormatError(
            f"the reference rows do not have consistent types ({exc})", file=source
        ) from None
    return _references_from_table(table, source)


def export(folder: str | os.PathLike, split: str = "all") -> list[dict[str, Any]]:
    """Hub folder -> the official rows of ``split`` (the columns of ``ref-l4-<split>.parquet``, val
    before test)."""
    folder = Path(folder)
    if split not in schema.SPLITS + ("all",):
        raise InputError(f"unknown split {split!r}", fix="use val, test or all")
    rows: list[dict[str, Any]] = []
    for f in _hub_folder_files(folder, split):
        rows.extend(_read_parquet(f, schema.OFFICIAL_COLUMNS).to_pylist())
    return rows
