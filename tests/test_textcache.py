"""The references' disk cache (#32): a stored result is read back only for the same kind, code and texts, a damaged
or foreign file is recomputed, old results are evicted, and the tokenizer and METEOR give the same output from the
cache as without it."""

from __future__ import annotations

import os

import pytest

from vlbench.captions import textcache
from vlbench.captions.tokenize import tokenize

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
        return value
    return compute, calls


def _any(v):
    return True


def test_a_result_is_computed_once_and_read_back(store):
    compute, calls = _counting(["x"] * 3)
    assert textcache.cached("k", "code", TEXTS, compute, _any) == ["x"] * 3
    assert textcache.cached("k", "code", TEXTS, compute, _any) == ["x"] * 3
    assert len(calls) == 1
    assert len(list(store.glob("k-*.json"))) == 1


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
    (path,) = store.glob("k-*.json")
    data = path.read_bytes()
    head, _, body = data.partition(b"\n")
    data = {"payload": head + b"\n" + body.replace(b"1", b"7"), "truncated": data[:-3],
            "header": head.replace(b"vlbench-textcache", b"something-else") + b"\n" + body, "empty": b""}[damage]
    path.write_bytes(data)
    assert textcache.cached("k", "code", TEXTS, compute, _any) == {"a": [1, 2, 3]}
    assert len(calls) == 2
    assert textcache.cached("k", "code", TEXTS, compute, _any) == {"a": [1, 2, 3]}    # rewritten whole
    assert len(calls) == 2


def test_a_stored_value_of_the_wrong_shape_is_recomputed(store):
    compute, calls = _counting([1, 2])
    textcache.cached("k", "code", TEXTS, compute, _any)
    assert textcache.cached("k", "code", TEXTS, compute, lambda v: len(v) == 3) == [1, 2]
    assert len(calls) == 2


def test_only_the_most_recently_used_results_are_kept(store):
    for k in range(textcache.KEEP + 3):
        textcache.cached("k", "code", [*TEXTS, str(k)], lambda k=k: [k], _any)
        os.utime(max(store.glob("k-*.json"), key=os.path.getmtime), ns=(k * 10**9, k * 10**9))
    textcache.cached("other", "code", TEXTS, lambda: [0], _any)
    assert len(list(store.glob("k-*.json"))) == textcache.KEEP
    assert len(list(store.glob("other-*.json"))) == 1          # eviction is per kind
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
    assert textcache.cached("k", "code", TEXTS, compute, _any) == [1]
    assert textcache.cached("k", "code", TEXTS, compute, _any) == [1]
    assert len(calls) == 3


def test_the_tokenizer_gives_the_same_tokens_from_the_cache(store, monkeypatch):
    texts = [f"A man's {k}-th \u201cbike\u201d, (red)... isn't it?" for k in range(textcache.MIN_TEXTS)]
    want, _ = tokenize(texts, "python")
    # the toolkit's tokens: punctuation dropped, but not the lower-cased -lrb- / -rrb- (its filter lists upper case)
    assert want[3] == "a man 's 3-th bike -lrb- red -rrb- is n't it"
    assert tokenize(texts, "python", cache=True) == (want, "python")
    import vlbench.captions.ptb as ptb

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
