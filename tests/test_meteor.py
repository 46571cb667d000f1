"""METEOR in two steps (the jar's normaliser, then the scorer on a reduced paraphrase table) against
pycocoevalcap's one-step invocation of the same jar, and the paraphrase-table reduction itself."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED
from vlbench.engine.captions.meteor import Meteor, meteor_available, meteor_stats, normalize
from vlbench.engine.captions.paraphrase import ParaphraseIndex
from vlbench.engine.captions.tokenize import tokenize

GOLDEN = SHARED / "golden" / "nocaps"
needs_java = pytest.mark.skipif(not meteor_available("java")[0],
                                reason="the METEOR jar needs Java and pycocoevalcap")

#: Texts the normaliser changes in every way it can: curly quotes, dashes, dotted abbreviations,
#: numbers with commas and dots, contractions, non-ASCII letters, "|||" inside a reference, empty
#: strings, stray whitespace, capitals (the jar lowercases), symbols.
EDGE_PAIRS = [
    ("A man\u2019s U.S.-based dog \u2014 \u201cbig\u201d",
     ["a man 's us based dog -- \" big \"", "The U.S. dog."]),
    ("", ["an empty hypothesis is scored", "against two references"]),
    ("a cat on a mat", ["", "a cat sits on the mat"]),
    ("1,000 people ... e.g. in Z\u00fcrich",
     ["a thousand people in zurich", "1,000 persons ... for example"]),
    ("I'm here, aren't I?", ["i am here ||| a reference holding the separator", "isn't it"]),
    ("\u0441\u043e\u0431\u0430\u043a\u0430 and a caf\u00e9",
     ["a dog and a coffee shop", "Caf\u00e9 with a dog"]),
    ("  spaced\tout  text  ", ["spaced out text", "text"]),
    ("a big dog", ["a large dog", "a huge hound", "the big dog"]),
    ("emoji \U0001f600 and #hashtag @user 50% $5", ["emoji and hashtag", "five dollars"]),
]


def _golden_pairs() -> tuple[list[str], list[list[str]]]:
    hyps, refs = [], []
    for case in ("random_medium", "random_small", "edge_handmade", "copies_and_empties",
                 "single_image_out"):
        data = json.loads((GOLDEN / case / "references.json").read_text())
        preds = {
            p["image_id"]: p["caption"]
            for p in json.loads((GOLDEN / case / "predictions.json").read_text())
        }
        by_image: dict[int, list[str]] = {im["id"]: [] for im in data["images"]}
        for a in data["annotations"]:
            by_image[a["image_id"]].append(a["caption"])
        ids = list(by_image)
        th, _ = tokenize([preds.get(i, "") for i in ids], "python")
        tr, _ = tokenize([c for i in ids for c in by_image[i]], "python")
        start = 0
        for i, h in zip(ids, th):
            k = len(by_image[i])
            hyps.append(h)
            refs.append(tr[start:start + k])
            start += k
    return hyps, refs


@needs_java
def test_two_step_statistics_equal_the_one_step_jar_run():
    hyps, refs = _golden_pairs()
    hyps += [h for h, _ in EDGE_PAIRS]
    refs += [r for _, r in EDGE_PAIRS]
    got, how = meteor_stats(hyps, refs,
                            # the default cache: the index is built once per machine
                            backend="java")
    assert how.startswith("java, reduced paraphrase table")
    with Meteor() as jar:
        want = jar.stats(hyps, refs)
    assert got == want
    assert any(line != want[0] for line in want)  # the corpus is not degenerate


@needs_java
def test_dotted_capital_i_uses_the_full_table():
    hyps, refs = ["\u0130stanbul at night"], [["istanbul by night", "a city at night"]]
    got, how = meteor_stats(hyps, refs,
                            # the default cache: the index is built once per machine
                            backend="java")
    assert how == "java, full paraphrase table: U+0130 in the texts"
    with Meteor() as jar:
        assert got == jar.stats(hyps, refs)


@needs_java
def test_normaliser_is_the_jars_and_refuses_line_breaks():
    assert normalize(["A man's U.S.-based dog", "x ||| y", ""]) == ["A man 's US based dog",
                                                                    "x | | | y", ""]
    assert normalize(["two\nlines"]) is None


def _tiny_table(path: Path, entries: list[tuple[str, str]]) -> Path:
    path.write_bytes(gzip.compress("".join(f"0.5\n{a}\n{b}\n" for a, b in entries).encode("utf-8")))
    return path


TINY = [("big dog", "large dog"), ("dog", "hound"), ("car", "automobile"), ("caf\u00e9", "big"),
        ("red car", "crimson auto"), ("big", "large"), ("large dog", "big dog"),
        ("dog big", "hound"), ("na\u00efve", "car")]


def test_reduction_keeps_entries_whose_two_phrases_occur_as_consecutive_words(tmp_path):
    index = ParaphraseIndex.parse(_tiny_table(tmp_path / "p.gz", TINY))
    kept = index.kept_entries(["A Big dog", "large DOG here", "the hound", "big", "dog"])
    # "big dog", "large dog", "dog", "hound", "big", "large" occur ("dog big" does not: words of one
    # line, in order); "car" and "automobile" do not; a non-ASCII phrase always counts as present
    # (so "café" -> "big" is kept, "naïve" -> "car" is not)
    assert kept.tolist() == [0, 1, 3, 5, 6]
    index.write(kept, tmp_path / "out.gz")
    lines = gzip.decompress((tmp_path / "out.gz").read_bytes()).decode("utf-8").split("\n")
    assert lines[1::3][:5] == ["big dog", "dog", "caf\u00e9", "big", "large dog"]
    assert lines[2::3][:5] == ["large dog", "hound", "big", "large", "big dog"]
    assert index.kept_entries(["\u0130zmir"]) is None


def _pairs(index: ParaphraseIndex, entries) -> list[tuple[str, str]]:
    """Entries of an index as (first phrase, second phrase) texts."""
    return [(" ".join(index.phrase_words(int(a))), " ".join(index.phrase_words(int(b))))
            for a, b in zip(index.entry_first[entries], index.entry_second[entries])]


def test_a_sub_table_keeps_the_entries_a_reference_phrase_touches(tmp_path):
    """METEOR matches an entry only with one phrase in the hypothesis and the other in a reference,
    so the references' sub-table keeps, in file order, the entries with a phrase among their
    n-grams: here "hound" (entries 1 and 7) and "crimson auto" (4); and those the n-grams cannot
    rule out: non-ASCII phrases ("café", "naïve": 3, 8, as the whole index keeps them always) and
    phrases of more than 8 words (9). "big dog", "car", "big" and "large" occur in no reference
    line: entries 0, 2, 5 and 6 go. Whatever the block size."""
    entries = [*TINY, ("a b c d e f g h i", "zzz"), ("dog", "big")]
    table = _tiny_table(tmp_path / "p.gz", entries)
    lines = [["the", "hound"], ["a", "crimson", "auto"]]
    for block in (20, 1 << 22):
        sub, grams = ParaphraseIndex.parse_among(table, lines, block_bytes=block)
        assert _pairs(sub, np.arange(len(sub.entry_first))) == [entries[k] for k in (1, 3, 4, 7, 8,
                                                                                     9)]
        assert sorted(" ".join(sub.phrase_words(int(p))) for p in sub.phrases_in(grams)) == [
            "crimson auto",
            "hound",
        ]
        assert int(sub.max_words) == 9


def test_a_sub_table_reduces_any_corpus_on_its_references_to_what_the_whole_index_can_match(
    tmp_path,
):
    """For hypotheses scored against these references, the sub-table's kept entries (both phrases in
    the corpus) are the whole index's kept entries less those with no phrase in a reference line
    (found here by a plain set of the references' n-grams), in the same order: "hound" -> "crimson"
    and "large" -> "crimson auto" occur in the hypotheses only."""
    entries = [*TINY, ("hound", "dog"), ("a big dog", "large dog"), ("crimson", "red"),
               ("hound", "crimson"), ("large", "crimson auto")]
    table = _tiny_table(tmp_path / "p.gz", entries)
    refs = [["a", "big", "dog", "runs"], ["the", "red", "auto"]]
    hyps = [["the", "large", "dog"], ["a", "crimson", "auto"], ["a", "hound", "and", "a", "dog"]]
    whole = ParaphraseIndex.parse(table)
    sub, _ = ParaphraseIndex.parse_among(table, refs)
    grams = {
        " ".join(line[i : i + n])
        for line in refs
        for n in range(1, 9)
        for i in range(len(line) - n + 1)
    }
    expected = [(a, b) for a, b in _pairs(whole, whole.kept_entries_for_words(refs + hyps))
                if a in grams or b in grams or not (a + b).isascii()]
    got = _pairs(sub, sub.kept_entries_for_words(refs + hyps))
    assert got == expected and len(got) < len(
        _pairs(whole, whole.kept_entries_for_words(refs + hyps))
    )


def test_many_references_get_their_own_cached_sub_table_and_few_the_whole_index(tmp_path,
                                                                                monkeypatch):
    """``for_references``: references of at least SUBTABLE_MIN_LINES lines, on a machine without the
    whole index, get a sub-table cached by their content (parsed once; other references get
    another), with the numbers of its phrases found in them when just built; fewer references, or a
    machine that has the whole index, use that."""
    from vlbench.engine.captions import paraphrase

    table = _tiny_table(tmp_path / "p.gz", TINY)
    cache = tmp_path / "cache"
    parsed: list[int] = []
    real = ParaphraseIndex.parse_among.__func__
    monkeypatch.setattr(ParaphraseIndex, "parse_among",
                        classmethod(lambda cls, *a, **k: parsed.append(1) or real(cls, *a, **k)))
    monkeypatch.setattr(paraphrase, "SUBTABLE_MIN_LINES", 2)
    refs = ["the hound", "a big dog"]
    sub, found = ParaphraseIndex.for_references(table, refs, cache)
    whole_folder = ParaphraseIndex.cache_path(table, cache)
    assert sub.key.startswith(whole_folder.name + "-references-") and not whole_folder.exists()
    assert found is not None and np.array_equal(
        np.sort(found), sub.phrases_in(sub.ngram_hashes([r.split() for r in refs]))
    )
    again, found_again = ParaphraseIndex.for_references(table, refs, cache)
    assert again.key == sub.key and found_again is None and parsed == [1]
    other, _ = ParaphraseIndex.for_references(table, ["a car", "red car"], cache)
    assert other.key != sub.key and parsed == [1, 1]
    few, found_few = ParaphraseIndex.for_references(table, refs[:1], cache)
    assert few.key == whole_folder.name and found_few is None and len(few.entry_first) == len(TINY)
    assert ParaphraseIndex.for_references(table, refs, cache)[
        0
    ].key == whole_folder.name and parsed == [1, 1]


def test_the_index_opened_ahead_is_the_whole_one_only_where_it_is_cached_or_the_references_are_few(
    tmp_path, monkeypatch
):
    """``index_ahead`` (what nocaps opens beside its tokenizer): many references on a machine
    without the whole index get nothing (METEOR then reads their sub-table: no build here); few
    references build the whole index; once it is cached, many references get it too."""
    from vlbench.engine.captions import java, meteor

    jar = tmp_path / "meteor" / "meteor-1.5.jar"
    (jar.parent / "data").mkdir(parents=True)
    _tiny_table(jar.parent / "data" / "paraphrase-en.gz", TINY)
    monkeypatch.setattr(java, "require_meteor_jar", lambda: jar)
    cache = tmp_path / "cache"
    assert meteor.index_ahead(10**6, cache) is None and not list(cache.glob("meteor/paraphrase-*"))
    built = meteor.index_ahead(3, cache)
    assert built is not None and len(built.entry_first) == len(TINY)
    again = meteor.index_ahead(10**6, cache)
    assert again is not None and again.key == built.key


@needs_java
def test_the_python_meteor_on_a_references_sub_table_equals_the_one_step_jar_run(tmp_path,
                                                                                 monkeypatch):
    """The golden pairs scored by the Python METEOR with every reference set given its own sub-table
    (the threshold lowered to one line; a fresh cache, so no whole index): the jar's own statistics
    lines, as pycocoevalcap runs it with the whole table."""
    from vlbench.engine.captions import paraphrase

    monkeypatch.setattr(paraphrase, "SUBTABLE_MIN_LINES", 1)
    hyps, refs = _golden_pairs()
    got, how = meteor_stats(hyps, refs, backend="python", cache_dir=tmp_path / "cache")
    folders = [p.name for p in (tmp_path / "cache" / "meteor").iterdir() if p.is_dir()]
    assert how == "python" and len(folders) == 1 and "-references-" in folders[0]
    with Meteor() as jar:
        assert got == jar.stats(hyps, refs)


def _counting_parses(monkeypatch) -> list[int]:
    """Counts ParaphraseIndex.parse calls (whether a load read the cache or parsed the table
    again)."""
    calls: list[int] = []
    real = ParaphraseIndex.parse.__func__

    def parse(cls, *args, **kwargs):
        calls.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(ParaphraseIndex, "parse", classmethod(parse))
    return calls


def test_index_is_cached_and_a_damaged_cache_is_rebuilt(tmp_path, monkeypatch):
    """A first load parses the table, saves the index and reads it back memory-mapped; a second
    reads the cache (the same arrays); a damaged file makes the next load parse again and rewrite
    the cache."""
    parses = _counting_parses(monkeypatch)
    table = _tiny_table(tmp_path / "p.gz", TINY)
    built = ParaphraseIndex.parse(table)
    first = ParaphraseIndex.load(table, tmp_path / "cache")
    assert len(parses) == 2 and isinstance(first.phrase_hash, np.memmap)
    folders = list((tmp_path / "cache" / "meteor").iterdir())
    assert folders == [ParaphraseIndex.cache_path(table, tmp_path / "cache")]
    loaded = ParaphraseIndex.load(table, tmp_path / "cache")
    assert len(parses) == 2                           # read from the cache, not parsed again
    assert loaded.vocabulary() == built.vocabulary() and loaded.max_words == built.max_words == 2
    for field in ("phrase_text", "phrase_start", "phrase_end", "phrase_hash", "phrase_always",
                  "entry_first", "entry_second", "multipliers"):
        np.testing.assert_array_equal(getattr(loaded, field), getattr(built, field))
    (folders[0] / "phrase_hash.npy").write_bytes(b"not an array")
    again = ParaphraseIndex.load(table, tmp_path / "cache")
    assert len(parses) == 3
    assert again.kept_entries(["a big dog"]).tolist() == [3]
    # rebuilt on disk
    np.testing.assert_array_equal(np.load(folders[0] / "phrase_hash.npy"), built.phrase_hash)


def test_an_edited_index_is_caught_by_its_digests_and_other_indexes_are_kept(tmp_path, monkeypatch):
    """An index whose hashes were zeroed (still a valid array) no longer matches the digests written
    with it, so it is rebuilt rather than read (it would change METEOR without a word); another
    installation's index (another table, another format) stays; two copies of the same table share
    one index (keyed by content, not by file times)."""
    table = _tiny_table(tmp_path / "p.gz", TINY)
    ParaphraseIndex.load(table, tmp_path / "cache")
    other = tmp_path / "cache" / "meteor" / "paraphrase-v4-123-456"
    other.mkdir()
    folder = ParaphraseIndex.cache_path(table, tmp_path / "cache")
    hashes = np.load(folder / "phrase_hash.npy")
    np.save(folder / "phrase_hash.npy", np.zeros_like(hashes))
    parses = _counting_parses(monkeypatch)
    again = ParaphraseIndex.load(table, tmp_path / "cache")
    assert parses == [1] and again.kept_entries(["a big dog"]).tolist() == [3]
    assert other.is_dir()
    copy = tmp_path / "elsewhere" / "p.gz"
    copy.parent.mkdir()
    copy.write_bytes(table.read_bytes())
    assert ParaphraseIndex.cache_path(copy, tmp_path / "cache") == folder


def test_checks_that_passed_are_remembered_until_a_file_changes(tmp_path, monkeypatch):
    """The table's digest and the index's checksums are computed once per state of the files: a
    later load with unchanged files computes neither. A file changed just now gets no stamp, so a
    freshly built index is checked at every load until it has settled; once a checked index is
    edited (its change time moves), the check runs again, catches the edit and the index is
    rebuilt."""
    from vlbench.engine.captions import paraphrase

    calls: list[str] = []
    for name in ("_digest_file", "_checksum"):
        real = getattr(paraphrase, name)
        monkeypatch.setattr(paraphrase, name, lambda path, real=real,
                            name=name: calls.append(name) or real(path))
    table = _tiny_table(tmp_path / "p.gz", TINY)
    cache = tmp_path / "cache"
    # built: the table just written, the index too
    ParaphraseIndex.load(table, cache)
    calls.clear()
    ParaphraseIndex.load(table, cache)
    # nothing had settled
    assert calls.count("_digest_file") == 1 and calls.count("_checksum") == 9
    monkeypatch.setattr(paraphrase, "_SETTLED_NS", 0)
    ParaphraseIndex.load(table, cache)                 # checked again, and now remembered
    calls.clear()
    index = ParaphraseIndex.load(table, cache)
    assert calls == [] and index.kept_entries(["a big dog"]).tolist() == [3]
    folder = ParaphraseIndex.cache_path(table, cache)
    time.sleep(0.05)                                   # past the file system's clock tick
    np.save(folder / "phrase_hash.npy", np.zeros_like(np.load(folder / "phrase_hash.npy")))
    parses = _counting_parses(monkeypatch)
    again = ParaphraseIndex.load(table, cache)
    assert (
        "_checksum" in calls and parses == [1] and again.kept_entries(["a big dog"]).tolist() == [3]
    )
    # a damaged memo: computed again
    (cache / "meteor" / "table-digests.json").write_text("[not a memo")
    calls.clear()
    assert ParaphraseIndex.cache_path(table, cache) == folder and calls == ["_digest_file"]
    (folder / "verified.json").unlink(missing_ok=True)
    # a memo that cannot be written: checked, nothing left behind
    (folder / "verified.json").mkdir()
    calls.clear()
    ParaphraseIndex.load(table, cache)
    assert calls.count("_checksum") == 9 and not list(folder.glob(".*"))


def test_the_checksum_taken_while_saving_is_the_saved_files_checksum(tmp_path):
    """``_saved_checksum`` takes the CRC-32 from the array in memory and the file's header; it must
    equal the CRC-32 of the whole file as :func:`_checksum` reads it (what every later load
    compares), for the index's shapes: 1-d arrays of each dtype, an empty one, a 0-d one
    (``max_words``) and a non-contiguous one."""
    from vlbench.engine.captions import paraphrase

    arrays = [np.arange(300_000, dtype=np.int32), np.asarray(7, dtype=np.int64),
              np.zeros(0, dtype=np.uint8),
              np.array([2**64 - 1, 5], dtype=np.uint64),
              np.arange(12, dtype=np.float64).reshape(3, 4).T, np.array([True, False])]
    for k, array in enumerate(arrays):
        path = tmp_path / f"a{k}.npy"
        assert paraphrase._saved_checksum(path, array) == paraphrase._checksum(path)
        back = np.load(path)
        assert (
            back.shape == array.shape and back.dtype == array.dtype and np.array_equal(back, array)
        )


@pytest.mark.heavy
def test_the_table_is_inflated_by_isal_to_the_bytes_gzip_gives(tmp_path):
    """The index build inflates the table with ISA-L (a dependency: 2.5x zlib's speed) and must read
    the bytes the standard library's gzip reads, in pieces of any size; the CRC-32 of a saved file
    is zlib's."""
    import gzip
    import zlib

    isal_zlib = pytest.importorskip("isal.isal_zlib")
    from vlbench.engine.captions import paraphrase, table_stream

    assert table_stream.ZLIB is isal_zlib
    body = b"".join(b"0.5\nphrase %d\nparaphrase %d words\n" % (k, k * 7) for k in range(20_000))
    table = tmp_path / "p.gz"
    table.write_bytes(gzip.compress(body, compresslevel=6))
    for piece in (1, 1000, 1 << 20):
        assert b"".join(table_stream.inflated(table, piece)) == gzip.decompress(table.read_bytes())
    assert paraphrase._checksum(table) == f"{zlib.crc32(table.read_bytes()):08x}"


def test_a_built_index_is_not_checked_again_at_once_and_settles_when_the_run_is_done(tmp_path,
                                                                                     monkeypatch):
    """The checksums a build writes are taken as it saves the files, so the build reads the index
    back without checking it; ``settle`` at the end of the run checks it and remembers that for the
    next run once the files are old enough to stamp (while they are fresh it records nothing, and
    the next load checks them)."""
    from vlbench.engine.captions import paraphrase

    calls: list[str] = []
    saved: list[str] = []
    real, real_saved = paraphrase._checksum, paraphrase._saved_checksum
    monkeypatch.setattr(paraphrase, "_checksum", lambda path: calls.append(path.name) or real(path))
    monkeypatch.setattr(paraphrase, "_saved_checksum", lambda path,
                        a: saved.append(path.name) or real_saved(path, a))
    table = _tiny_table(tmp_path / "p.gz", TINY)
    built = ParaphraseIndex.load(table, tmp_path / "cache")
    assert len(saved) == 9 and calls == []              # the save's checksums, and no second pass
    # files just written: nothing to remember yet
    built.settle()
    assert calls == []
    ParaphraseIndex.load(table, tmp_path / "cache")
    assert len(calls) == 9                               # so this load checks them
    monkeypatch.setattr(paraphrase, "_SETTLED_NS", 0)
    calls.clear()
    built.settle()
    assert len(calls) == 9
    calls.clear()
    again = ParaphraseIndex.load(table, tmp_path / "cache")
    assert calls == [] and again.kept_entries(["a big dog"]).tolist() == [3]
    # a parsed index has no folder: nothing to do
    ParaphraseIndex.parse(table).settle()
    assert calls == []


def test_the_table_streamed_in_small_blocks_is_the_table_read_whole(tmp_path):
    """Blocks of 20 bytes cut entries everywhere (mid-line, mid-entry); a block holding a tab or
    doubled space reads its phrases as the jar's tokenizer does. Every entry's two phrases, read
    back from the index, are the table's own (words one space apart), whatever the block size;
    damaged tables are refused."""
    entries = [*TINY, ("big\tdog", "large  dog"), (" red car", "crimson auto "),
               ("dog", "big\fdog"),
               ("a b c d e f g h i", "a b c d"), ("a b c d e", "a b c d"),
               ("a b c d", "a b c d e f g h i")]
    table = _tiny_table(tmp_path / "p.gz", entries)

    def read(index: ParaphraseIndex) -> list[tuple[str, str]]:
        def text(p: int) -> str:
            return bytes(index.phrase_text[index.phrase_start[p] : index.phrase_end[p]]).decode(
                "utf-8"
            )
        return [(text(a), text(b)) for a, b in zip(index.entry_first, index.entry_second)]

    expected = [(" ".join(a.split()), " ".join(b.split())) for a, b in entries]
    for block in (20, 1 << 22):
        index = ParaphraseIndex.parse(table, block_bytes=block)
        assert read(index) == expected
        # distinct phrases once
        assert len(index.phrase_hash) == len({p for pair in expected for p in pair})
    (tmp_path / "cr.gz").write_bytes(gzip.compress(b"0.5\nbig\r\nlarge\n"))
    with pytest.raises(ValueError, match="carriage return"):
        ParaphraseIndex.parse(tmp_path / "cr.gz", block_bytes=4)
    (tmp_path / "short.gz").write_bytes(gzip.compress(b"0.5\nbig\nlarge\n0.4\nsmall\n"))
    with pytest.raises(ValueError, match="three-line entries"):
        ParaphraseIndex.parse(tmp_path / "short.gz", block_bytes=4)


def test_two_phrases_with_one_hash_make_the_parse_start_again(tmp_path, monkeypatch):
    """Phrases are numbered by a 64-bit hash of their 8-byte words and told apart by a second one.
    With the first multiplier 1 the hash is the sum of the words (and the length), so "abcdefg
    hijklmn" and "hijklmn abcdefg" (words "abcdefg ", "hijklmn" and "hijklmn ", "abcdefg": one sum)
    share it while the second hash differs: the parse starts again with the next pair, and every
    entry reads back as written. With no other pair left, the table is refused rather than two
    phrases taken for one."""
    from vlbench.engine.captions import paraphrase

    entries = [("abcdefg hijklmn", "big"), ("hijklmn abcdefg", "small"), ("big", "abcdefg hijklmn")]
    table = _tiny_table(tmp_path / "collide.gz", entries)
    monkeypatch.setattr(paraphrase, "_MULTIPLIERS",
                        ((1, 0xC2B2AE3D27D4EB4F), (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)))
    index = ParaphraseIndex.parse(table)
    assert index.multipliers.tolist() == [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F]
    text = bytes(index.phrase_text)
    got = [(text[index.phrase_start[a]:index.phrase_end[a]].decode(),
            text[index.phrase_start[b]:index.phrase_end[b]]
            .decode()) for a, b in zip(index.entry_first.tolist(), index.entry_second.tolist())]
    assert got == entries and len(index.phrase_hash) == 4
    assert index.kept_entries(["the hijklmn abcdefg is small"]).tolist() == [1]
    monkeypatch.setattr(paraphrase, "_MULTIPLIERS", ((1, 0xC2B2AE3D27D4EB4F),))
    with pytest.raises(ValueError, match="collide"):
        ParaphraseIndex.parse(table)


def test_distinct_values_are_numbered_by_value_from_their_first_index():
    """_distinct (a stable sort: each run starts at its first index) and _distinct_ranges (the hash
    range's 2, 4 or 8 parts, two at a time in two threads) against a dict walk in index order: the
    first index of each value, ascending by value, and each entry's number in that order; many
    repeats and every part of the range present. A check that differs from its value's first check
    raises the collision, from a worker thread too."""
    import numpy as np

    from vlbench.engine.captions import paraphrase

    rng = np.random.default_rng(7)
    pool = rng.integers(0, 2**64, 300, dtype=np.uint64, endpoint=False)
    hashes = pool[rng.integers(0, 300, 5000)]
    checks = hashes * np.uint64(3)
    first_seen: dict[int, int] = {}
    for i, h in enumerate(hashes.tolist()):
        first_seen.setdefault(h, i)
    values = sorted(first_seen)
    expected_first = [first_seen[v] for v in values]
    expected_number = [values.index(h) for h in hashes.tolist()]
    assert len(np.unique(pool >> np.uint64(61))) == 8
    for distinct in (paraphrase._distinct, paraphrase._distinct_ranges,
                     lambda h, c: paraphrase._distinct_ranges(h, c, bits=1),
                     lambda h, c: paraphrase._distinct_ranges(h, c, bits=3)):
        first, number = distinct(hashes, checks)
        assert first.tolist() == expected_first and number.tolist() == expected_number
    for bad in (4999, int(np.flatnonzero(hashes >= np.uint64(7 << 61))[-1])):
        with pytest.raises(paraphrase._Collision):
            paraphrase._distinct_ranges(hashes, np.where(np.arange(5000) == bad, np.uint64(1),
                                                         checks))


def test_ascending_is_the_sort_of_distinct_indices():
    import numpy as np

    from vlbench.engine.captions import paraphrase

    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 1000):
        for k in {0, n // 2, n}:
            indices = rng.permutation(n)[:k]
            assert paraphrase._ascending(indices, n).tolist() == sorted(indices.tolist())


def test_strings_are_the_slices_end_to_end():
    import numpy as np

    from vlbench.engine.captions import paraphrase

    text = np.frombuffer(b"big dog\nlarge dog\n\nhound\n", dtype=np.uint8)
    start, length = np.array([0, 8, 18, 19, 4]), np.array([7, 9, 0, 5, 3])
    got = bytes(paraphrase._strings(text, start, length))
    assert got == b"big dog" + b"large dog" + b"" + b"hound" + b"dog"
    # in order, one touching the next, empty ones between: the masked copy; overlapping ones: the
    # gather
    ordered = (np.array([0, 4, 8, 8, 18, 19]), np.array([3, 3, 9, 0, 0, 5]))
    assert (
        bytes(paraphrase._ordered_strings(text, *ordered))
        == b"big" + b"dog" + b"large dog" + b"hound"
    )
    assert bytes(paraphrase._ordered_strings(text, start, length)) == got
    # the text's first and last bytes inside strings, no strings, only empty ones
    assert (
        bytes(paraphrase._ordered_strings(text, np.array([0, 19]), np.array([3, 6])))
        == b"big" + b"hound\n"
    )
    assert (
        bytes(paraphrase._ordered_strings(text, np.array([], np.int64), np.array([], np.int64)))
        == b""
    )
    assert bytes(paraphrase._ordered_strings(text, np.array([3, 9]), np.array([0, 0]))) == b""
    rng = np.random.default_rng(0)     # random ordered strings against slicing
    for _ in range(50):
        bounds = np.sort(rng.choice(len(text) + 1, size=2 * int(rng.integers(1, 8)), replace=True))
        first, end = bounds[0::2], bounds[1::2]
        expected = b"".join(bytes(text[a:b]) for a, b in zip(first, end))
        assert bytes(paraphrase._ordered_strings(text, first, end - first)) == expected


def test_string_hashes_and_shapes_equal_a_byte_by_byte_reading():
    """Strings of 0-40 bytes at every offset mod 8 (every shift of the word reads, lengths on and
    off word boundaries): the hash is h = h * M + w over the string's 8-byte little-endian words
    (the last one zero-padded), then h * M + length, mod 2^64; the shape is the number of spaces and
    whether a byte is >= 128."""
    import random

    import numpy as np

    from vlbench.engine.captions import phrase_hashes

    rng = random.Random(5)
    data = bytes(rng.choice(b"ab  c\xc3\xa9xyz") for _ in range(4000))
    start = np.array([rng.randrange(0, 3950) for _ in range(600)] + [0, 1, 7, 8, 3999],
                     dtype=np.int64)
    length = np.array(
        [rng.choice([0, 1, 7, 8, 9, 15, 16, 17, rng.randrange(0, 41)]) for _ in range(600)]
        + [40, 8, 16, 0, 1],
        dtype=np.int64,
    )
    multipliers = (0x9E3779B97F4A7C15, 1_000_003)

    def by_hand(s: bytes, m: int) -> int:
        h = 0
        for k in range(0, len(s), 8):
            h = (h * m + int.from_bytes(s[k:k + 8].ljust(8, b"\0"), "little")) % 2**64
        return (h * m + len(s)) % 2**64

    chunks = phrase_hashes.Chunks(np.frombuffer(data, dtype=np.uint8))
    hashes = phrase_hashes.string_hashes(chunks, start, length, multipliers)
    spaces, high = phrase_hashes.string_shapes(chunks, start, length)
    texts = [data[a:a + n] for a, n in zip(start.tolist(), length.tolist())]
    for h, m in zip(hashes, multipliers):
        assert h.tolist() == [by_hand(t, m) for t in texts]
    assert spaces.tolist() == [t.count(b" ") for t in texts]
    assert high.tolist() == [any(b >= 128 for b in t) for t in texts]
    # the sub-table's test reads all three from one pass over the words
    one, one_spaces, one_high = phrase_hashes.hashes_and_shapes(chunks, start, length,
                                                                multipliers[1])
    assert one.tolist() == [by_hand(t, multipliers[1]) for t in texts]
    assert one_spaces.tolist() == spaces.tolist() and one_high.tolist() == high.tolist()
