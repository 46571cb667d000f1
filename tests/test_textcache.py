"""The references' disk cache (#32): a stored result is read back only for the same kind, code and
texts, a damaged or foreign file is recomputed, old results are evicted, and the tokenizer and
METEOR give the same output from the cache as without it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vlbench.engine.captions import textcache
from vlbench.engine.captions.tokenize import tokenize

TEXTS = [f"A dog, number {k}, runs (fast) on the grass." for k in range(textcache.MIN_TEXTS)]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The cache folder of this test."""
    monkeypatch.setattr(textcache, "folder", lambda: tmp_path / "texts")
    return tmp_path / "texts"


def _counting(value):
    calls = []

    def compute():
        calls.append(1)
        return value, ()
    return compute, calls


def _any(v, arrays):
    return True


def test_a_result_is_computed_once_and_read_back(store):
    compute, calls = _counting(["x"] * 3)
    assert textcache.cached("k", "code", TEXTS, compute, _any) == (["x"] * 3, ())
    assert textcache.cached("k", "code", TEXTS, compute, _any) == (["x"] * 3, ())
    assert len(calls) == 1
    assert len(list(store.glob("k-*.bin"))) == 1


@pytest.mark.parametrize("change", ["kind", "code", "texts", "order"])
def test_another_kind_code_or_text_is_not_read(store, change):
    compute, calls = _counting([1])
    textcache.cached("k", "code", TEXTS, compute, _any)
    kind, code, texts = "k", "code", list(TEXTS)
    if change == "kind":
        kind = "other"
    elif change == "code":
        code = "edited"
    elif change == "texts":
        texts[500] += " "
    else:
        texts[0], texts[1] = texts[1], texts[0]
    textcache.cached(kind, code, texts, compute, _any)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["payload", "truncated", "header", "empty"])
def test_a_damaged_file_is_recomputed_and_replaced(store, damage):
    compute, calls = _counting({"a": [1, 2, 3]})
    textcache.cached("k", "code", TEXTS, compute, _any)
    (path,) = store.glob("k-*.bin")
    data = path.read_bytes()
    head, _, body = data.partition(b"\n")
    data = {
        "payload": head + b"\n" + body.replace(b"1", b"7"),
        "truncated": data[:-3],
        "header": head.replace(b"vlbench-textcache", b"something-else") + b"\n" + body,
        "empty": b"",
    }[damage]
    path.write_bytes(data)
    assert textcache.cached("k", "code", TEXTS, compute, _any)[0] == {"a": [1, 2, 3]}
    assert len(calls) == 2
    # rewritten whole
    assert textcache.cached("k", "code", TEXTS, compute, _any)[0] == {"a": [1, 2, 3]}
    assert len(calls) == 2


def test_a_stored_value_of_the_wrong_shape_is_recomputed(store):
    compute, calls = _counting([1, 2])
    textcache.cached("k", "code", TEXTS, compute, _any)
    assert textcache.cached("k", "code", TEXTS, compute, lambda v, a: len(v) == 3)[0] == [1, 2]
    assert len(calls) == 2


def test_only_the_most_recently_used_results_are_kept(store):
    for k in range(textcache.KEEP + 3):
        textcache.cached("k", "code", [*TEXTS, str(k)], lambda k=k: ([k], ()), _any)
        os.utime(max(store.glob("k-*.bin"), key=os.path.getmtime), ns=(k * 10**9, k * 10**9))
    textcache.cached("other", "code", TEXTS, lambda: ([0], ()), _any)
    assert len(list(store.glob("k-*.bin"))) == textcache.KEEP
    assert len(list(store.glob("other-*.bin"))) == 1          # eviction is per kind
    compute, calls = _counting(["again"])
    textcache.cached("k", "code", [*TEXTS, "0"], compute, _any)  # the oldest went
    assert calls


def test_small_inputs_and_an_unwritable_folder_are_computed(store, tmp_path, monkeypatch):
    compute, calls = _counting([1])
    textcache.cached("k", "code", TEXTS[:10], compute, _any)
    assert not store.exists()
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(textcache, "folder", lambda: blocked / "texts")
    assert textcache.cached("k", "code", TEXTS, compute, _any) == ([1], ())
    assert textcache.cached("k", "code", TEXTS, compute, _any) == ([1], ())
    assert len(calls) == 3


def test_arrays_come_back_bit_for_bit_and_only_plain_numbers_are_stored(store):
    rng = np.random.default_rng(0)
    arrays = (rng.integers(0, 2**63, 1000, dtype=np.uint64) * 2, rng.random((3, 4)),
              np.zeros(0, np.int32),
              np.arange(7, dtype=np.int64)[::2])                                  # a strided view
    textcache.cached("k", "code", TEXTS, lambda: ({"n": 4}, arrays), _any)
    compute, calls = _counting(None)
    value, back = textcache.cached("k", "code", TEXTS, compute, _any)
    assert not calls and value == {"n": 4}
    assert all(a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b) for a,
               b in zip(arrays, back))
    # views of the file, read-only
    assert len(back) == len(arrays) and not back[0].flags.writeable
    with pytest.raises(TypeError, match="cached array"):
        textcache.cached("k", "code", [*TEXTS, "x"],
                         lambda: (None, (np.array(["a"], dtype=object),)), _any)


def test_the_tokenizer_gives_the_same_tokens_from_the_cache(store, monkeypatch):
    texts = [
        f"A man's {k}-th \u201cbike\u201d, (red)... isn't it?" for k in range(textcache.MIN_TEXTS)
    ]
    want, _ = tokenize(texts, "python")
    # the toolkit's tokens: punctuation dropped, but not the lower-cased -lrb- / -rrb- (its filter
    # lists upper case)
    assert want[3] == "a man 's 3-th bike -lrb- red -rrb- is n't it"
    assert tokenize(texts, "python", cache=True) == (want, "python")
    import vlbench.engine.captions.ptb as ptb

    def fail(*a, **k):
        raise AssertionError("tokenized again")
    monkeypatch.setattr(ptb, "tokenize_stream", fail)
    assert tokenize(texts, "python", cache=True) == (want, "python")


def test_code_digest_follows_the_files(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("x = 1\n")
    first = textcache.code_digest([a])
    a.write_text("x = 2\n")
    assert textcache.code_digest([a]) != first
