"""The native SimHash lookup of the embedded index (``es_simhash_native.memory_lookup``) answers exactly as numpy.

``MemoryLookups.key_pairs`` (numpy) is the reference: with ``index.native = False`` every lookup goes through it.
Each test builds one index and compares, query by query, the candidates (ids, in order) and the whole
``LookupResult`` of both paths: random fingerprints with planted neighbours at every distance 0..max for every k
the keys support (and beyond k, where a pair must also share a key), repeated SimHashes (ties), an empty index,
queries without features, rows replaced and removed (dead rows in runs and in the tail), the unsorted tail with and
without runs, several runs, ``exclude``, and the legacy segments. Under ``CI=true`` the native module must be
installed: these tests then fail instead of skipping.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from es_simhash import Fingerprint
from es_simhash.index.memory import native as M
from es_simhash.index.base import Lookup
from es_simhash.records import StoredDoc
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.keys import DEFAULT, SEGMENTS, LookupKeys

KEYS = [DEFAULT, SEGMENTS, LookupKeys(0, 1), LookupKeys(1, 2), LookupKeys(2, 3), LookupKeys(4, 2), LookupKeys(5, 3)]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(autouse=True)
def native(request):
    if request.node.name.startswith("test_fallback"):  # the fallback is tested whatever is installed
        return None
    if M.NATIVE_LOOKUP is None:
        reason = "es_simhash_native.memory_lookup is not available (pip install ./native)"
        if _in_ci():
            pytest.fail(f"{reason} (CI=true, so this fails)", pytrace=False)
        pytest.skip(reason)
    return M.NATIVE_LOOKUP


def _fp(simhash: int, content: int, n_features: int = 10) -> Fingerprint:
    return Fingerprint(int(simhash), content, (), n_features, 500, False)


def _flip(rng, x: int, d: int) -> int:
    for b in rng.choice(64, size=d, replace=False).tolist():
        x ^= 1 << b
    return x


def _answers(index: MemoryIndex, queries, k: int, native: bool, exclude=()):
    calls = []
    real = M.NATIVE_LOOKUP

    def counted(*args):
        calls.append(1)
        return real(*args)

    index.native = native
    M.NATIVE_LOOKUP = counted
    try:
        res = index.lookup(queries, contract=k, exclude=exclude)
    finally:
        del index.native  # back to the class default
        M.NATIVE_LOOKUP = real
    # the native path is taken for every lookup that needs the SimHash channel beyond the one-query tail fast path
    fast_path = len(queries) == 1 and not index.store.runs
    assert len(calls) == (1 if native and len(index.store.docs) and not fast_path else 0)
    return [([c.id for c in r.candidates], r.existing.id if r.existing else None, r.sentence_df) for r in res]


def _same(index: MemoryIndex, queries, ks, exclude=()) -> int:
    """Native == numpy for every k in ``ks``, batched and one at a time; returns the number of candidates seen."""
    seen = 0
    for k in ks:
        want = _answers(index, queries, k, False, exclude)
        got = _answers(index, queries, k, True, exclude)
        assert got == want, f"k={k}"
        for q in queries[:5]:
            assert _answers(index, [q], k, True, exclude) == _answers(index, [q], k, False, exclude)
        seen += sum(len(c) for c, _, _ in want)
    return seen


def _planted(rng, keys: LookupKeys, n_random: int, n_queries: int, copies: int = 1):
    """Random stored SimHashes plus, for each query, ``copies`` stored neighbours at each distance 0..k + 3."""
    sims = rng.integers(0, 2**64, size=n_random, dtype=np.uint64).tolist()
    queries = rng.integers(0, 2**64, size=n_queries, dtype=np.uint64).tolist()
    for q in queries:
        for d in range(keys.k + 4):
            for _ in range(copies):
                sims.append(_flip(rng, q, d))
    order = rng.permutation(len(sims)).tolist()
    return [sims[i] for i in order], queries


@pytest.mark.parametrize("keys", KEYS, ids=lambda k: f"k{k.k}r{k.r}")
def test_planted_neighbours_every_k(keys):
    rng = np.random.default_rng(10 + keys.k * 7 + keys.r)
    sims, queries = _planted(rng, keys, 20_000, 150, copies=2)
    # ties: some stored SimHashes repeat exactly, and a few are the queries themselves
    sims += sims[:300] + queries[:20]
    index = MemoryIndex(lookup_keys=keys)
    index.add([StoredDoc(f"d{i}", _fp(s, i + 1), cluster=f"d{i}") for i, s in enumerate(sims)])
    lookups = [Lookup(f"q{i}", _fp(q, 10**9 + i)) for i, q in enumerate(queries)]
    lookups.append(Lookup("empty", _fp(0, 10**9 - 1, n_features=0)))  # no features: no keys, no SimHash candidates
    lookups.append(Lookup("d5", _fp(sims[5], 6)))  # a stored id: left out of its own answer
    index.lookup([], contract=0)
    assert index.store.runs and len(index.store.docs) == index.store.run_rows  # all in runs, no tail
    ks = range(min(keys.k + 3, 9) + 1)  # every k the keys guarantee, and beyond (where a key must be shared)
    assert _same(index, lookups, ks) > 0
    # now a tail on top of the runs (with ties and planted neighbours), then replacements and removals
    extra, more_queries = _planted(rng, keys, 500, 30)
    index.add([StoredDoc(f"t{i}", _fp(s, 2 * 10**9 + i), cluster=f"t{i}") for i, s in enumerate(extra)])
    assert len(index.store.docs) > index.store.run_rows
    lookups += [Lookup(f"m{i}", _fp(q, 3 * 10**9 + i)) for i, q in enumerate(more_queries)]
    assert _same(index, lookups, ks) > 0
    victims = rng.choice(len(sims), size=400, replace=False).tolist()
    index.add([StoredDoc(f"d{i}", _fp(_flip(rng, sims[i], 2), 4 * 10**9 + i), cluster=f"d{i}") for i in victims[:200]])
    index.remove([index.get(f"d{i}") for i in victims[200:]])
    index.remove([index.get(f"t{i}") for i in range(0, len(extra), 3)])
    assert index.store.any_dead
    assert _same(index, lookups, ks) > 0
    assert _same(index, lookups, [keys.k], exclude=[f"d{i}" for i in range(50)] + ["t1", "nope"]) > 0


def test_empty_index_and_empty_batches():
    index = MemoryIndex()
    q = [Lookup("a", _fp(123, 1)), Lookup("b", _fp(0, 2, n_features=0))]
    assert _same(index, q, range(8)) == 0
    assert _same(index, [], [3]) == 0
    index.add([StoredDoc("x", _fp(0, 3, n_features=0), cluster="x")])  # only a row without keys
    assert _same(index, q, range(8)) == 0
    index.add([StoredDoc("y", _fp(123, 4), cluster="y")])
    assert _same(index, q, range(8)) == 1 * 8


def test_tail_only_several_runs_and_crowded_buckets(monkeypatch):
    """Small ``tail_rows``: many runs of different sizes (merges), rows replaced between runs, a crowded bucket
    (hundreds of identical SimHashes), and lookups of one query (the tail fast path) and of many."""
    monkeypatch.setattr(MemoryIndex, "tail_rows", 64)
    rng = np.random.default_rng(7)
    index = MemoryIndex()
    base = rng.integers(0, 2**64, size=40, dtype=np.uint64).tolist()
    lookups = [Lookup(f"q{i}", _fp(_flip(rng, b, 1), 10**9 + i)) for i, b in enumerate(base)]
    n = 0
    for step in range(25):
        batch = []
        for _ in range(int(rng.integers(1, 90))):
            b = base[int(rng.integers(len(base)))]
            s = b if rng.random() < 0.3 else _flip(rng, b, int(rng.integers(0, 8)))
            doc_id = f"d{int(rng.integers(n + 1))}" if rng.random() < 0.2 else f"d{n}"  # some replace
            batch.append(StoredDoc(doc_id, _fp(s, n + 1, n_features=0 if rng.random() < 0.05 else 10), cluster=doc_id))
            n += 1
        index.add(batch)
        if step % 5 == 4:
            index.remove([d for d in (index.get(f"d{i}") for i in rng.integers(0, n, size=10).tolist()) if d])
        assert _same(index, lookups, range(8)) > 0
    assert len(index.store.runs) > 1


def test_segments_index_loaded_from_file(tmp_path):
    rng = np.random.default_rng(3)
    sims, queries = _planted(rng, SEGMENTS, 5000, 40)
    index = MemoryIndex(lookup_keys=SEGMENTS)
    index.add([StoredDoc(f"d{i}", _fp(s, i + 1), cluster=f"d{i}") for i, s in enumerate(sims)])
    index.save(tmp_path / "i.npz")
    loaded = MemoryIndex.load(tmp_path / "i.npz")
    lookups = [Lookup(f"q{i}", _fp(q, 10**9 + i)) for i, q in enumerate(queries)]
    assert _same(loaded, lookups, range(8)) > 0


def test_native_can_be_turned_off(native, monkeypatch):
    """``index.native = False``: lookups that would go to the native core (several queries, rows sorted into runs,
    sentences) never call it, and answer as it does."""
    assert MemoryIndex.native is True
    rng = np.random.default_rng(3)
    sims = rng.integers(0, 2**63, 6000, dtype=np.uint64).tolist()
    docs = [StoredDoc(f"d{i}", Fingerprint(s, i + 1, (1000 + i % 50,), 40, 800, False), cluster=f"d{i}")
            for i, s in enumerate(sims)]
    queries = [Lookup(f"q{i}", Fingerprint(s ^ 0b101, 10**9 + i, (1000 + i % 50,), 40, 800, False))
               for i, s in enumerate(sims[:40])]
    on = MemoryIndex()
    on.add(docs)
    want = [sorted(c.id for c in r.candidates) for r in on.lookup(queries, contract=3)]
    assert on.store.runs and all(len(w) >= 1 for w in want)

    def refuse(*args, **kwargs):
        raise AssertionError("the native core was called")

    off = MemoryIndex()
    off.native = False
    monkeypatch.setattr(M, "NATIVE_LOOKUP", refuse)
    monkeypatch.setattr(M, "NATIVE_POSTINGS", refuse)
    off.add(docs)
    assert [sorted(c.id for c in r.candidates) for r in off.lookup(queries, contract=3)] == want


def test_bad_arrays_are_refused(native):
    """The native function reads numpy buffers: a wrong dtype or a strided view raises, it is never read."""
    index = MemoryIndex()
    index.add([StoredDoc(f"d{i}", _fp(i * 7919, i + 1), cluster=f"d{i}") for i in range(5000)])
    index.lookup([], contract=0)
    run = index.store.runs[0]
    lk = index.lookup_keys
    q = np.array([1, 2], dtype=np.uint64)
    rows = np.array([0, 1], dtype=np.int64)

    def call(keys=run.keys, simhash=index.store.simhash, q_sims=q):
        return native([(keys, run.rows, run.offsets, run.bits)], simhash, None, index.store.has_keys, 5000, 5000,
                      lk.masks, lk.k, lk.blocks, lk.tables, q_sims, rows, 2, 3)

    assert len(call()) == 2
    with pytest.raises(ValueError):
        call(keys=run.keys.astype(np.int64))
    with pytest.raises(ValueError):
        call(simhash=index.store.simhash[::2])
    with pytest.raises(ValueError):
        call(q_sims=[1, 2])


def test_sentence_and_sketch_channels_merge_with_native_rows():
    """Candidates from sentence hashes, sketch hashes and the content hash are merged with the native SimHash rows
    (then sorted), and dead rows are left out, as with numpy."""
    from es_simhash.fingerprint import SKETCH_BIT

    rng = np.random.default_rng(11)
    pool = [int(h) for h in rng.integers(1, 2**60, size=60)] + [SKETCH_BIT | int(h) for h in rng.integers(1, 2**60, size=40)]

    def fp(s, content, i):
        sent = tuple(sorted({pool[j] for j in rng.integers(0, len(pool), size=int(rng.integers(0, 6))).tolist()}))
        return Fingerprint(int(s), content, sent, 10, 500 if i % 7 else 0, False)

    sims, queries = _planted(rng, DEFAULT, 6000, 60)
    index = MemoryIndex(max_sentence_df=40)
    index.add([StoredDoc(f"d{i}", fp(s, i % 500 + 1, i), cluster=f"d{i}") for i, s in enumerate(sims)])
    lookups = [Lookup(f"q{i}", fp(q, i % 700 + 1, i)) for i, q in enumerate(queries)]
    assert _same(index, lookups, range(7)) > 0
    index.add([StoredDoc(f"d{i}", fp(s, 10**6 + i, i), cluster=f"d{i}") for i, s in enumerate(sims[:300])])
    assert _same(index, lookups, range(7)) > 0


def test_crowded_bucket_in_runs_and_tail():
    """Hundreds of identical SimHashes and near copies (boilerplate): every one comes back, once, ascending."""
    rng = np.random.default_rng(5)
    s = int(rng.integers(0, 2**63))
    sims = [s] * 300 + [_flip(rng, s, int(rng.integers(1, 6))) for _ in range(300)]
    sims += rng.integers(0, 2**64, size=5000, dtype=np.uint64).tolist()
    index = MemoryIndex()
    index.add([StoredDoc(f"d{i}", _fp(x, i + 1), cluster=f"d{i}") for i, x in enumerate(sims)])
    index.lookup([], contract=0)
    index.add([StoredDoc(f"t{i}", _fp(s if i % 2 else _flip(rng, s, 2), 10**6 + i), cluster=f"t{i}") for i in range(100)])
    queries = [Lookup("q0", _fp(s, 10**9)), Lookup("q1", _fp(_flip(rng, s, 1), 10**9 + 1))]
    assert _same(index, queries, range(8)) > 2 * 400


def test_fallback_without_the_native_module(monkeypatch):
    """Without the module (or with ES_SIMHASH_MEMORY_NATIVE=0) lookups take the numpy path, with the same answers."""
    monkeypatch.setitem(sys.modules, "es_simhash_native", None)  # import fails
    assert M.native_lookup() is None
    monkeypatch.undo()
    monkeypatch.setenv("ES_SIMHASH_MEMORY_NATIVE", "0")
    assert M.native_lookup() is None
    rng = np.random.default_rng(2)
    sims, queries = _planted(rng, DEFAULT, 3000, 20)
    index = MemoryIndex()
    index.add([StoredDoc(f"d{i}", _fp(s, i + 1), cluster=f"d{i}") for i, s in enumerate(sims)])
    lookups = [Lookup(f"q{i}", _fp(q, 10**9 + i)) for i, q in enumerate(queries)]
    want = [[c.id for c in r.candidates] for r in index.lookup(lookups, contract=3)]
    monkeypatch.setattr(M, "NATIVE_LOOKUP", None)
    assert [[c.id for c in r.candidates] for r in index.lookup(lookups, contract=3)] == want
    assert sum(map(len, want)) == 4 * len(queries)
