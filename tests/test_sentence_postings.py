"""The native sentence postings of the embedded index (``es_simhash_native.SentencePostings``) answer exactly as the
Python dict of lists (``MemoryLookups.sentence_rows``, the reference: ``index.native = False``).

Each test compares, query by query, the candidates (ids, in order), the existing document and the whole
``sentence_df`` (every query hash with its document frequency, in order) of an index that looks up natively with
an index built by the same writes on the Python path (so both stores are built incrementally by ``add``), and with
the same index switched to the other path (the other store is then built from the stored rows). The streams are
real text: People's Daily articles, their reprints (source line and editor line around the body), template posts
(the same long header and footer sentences around short bodies: boilerplate past ``max_sentence_df``), short texts
with their shingle sketches and edited copies of them; with ``before=``, ``exclude=``, replaced and removed
documents, and a save/load round trip. A randomised stream of synthetic hashes covers the edges (a hash held twice
by one document or asked twice by one query, a document frequency exactly at the cap, sketch hashes shared once).
Under ``CI=true`` the native module must be installed: these tests then fail instead of skipping.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from es_simhash import Fingerprint
from es_simhash.fingerprint import SKETCH_BIT
from es_simhash.index.memory import native as M
from es_simhash.index.base import Lookup
from es_simhash.records import StoredDoc
from es_simhash.lookup.candidates import DEFAULT_CONTRACT
from es_simhash.index.memory import MemoryIndex

from support import chinese_articles


@pytest.fixture(autouse=True)
def calls(monkeypatch):
    """Counts the native postings' calls (and fails or skips without the native module)."""
    real = M.NATIVE_POSTINGS
    if real is None:
        reason = "es_simhash_native.SentencePostings is not available (pip install ./native)"
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"{reason} (CI=true, so this fails)", pytrace=False)
        pytest.skip(reason)
    counts = {"add": 0, "lookup": 0, "made": 0}

    class Counted:
        def __init__(self, *args):
            counts["made"] += 1
            self._p = real(*args)

        def add(self, *args):
            counts["add"] += 1
            return self._p.add(*args)

        def lookup(self, *args):
            counts["lookup"] += 1
            return self._p.lookup(*args)

        def rows(self, h):
            return self._p.rows(h)

    monkeypatch.setattr(M, "NATIVE_POSTINGS", Counted)
    return counts


def _answers(index: MemoryIndex, queries, native: bool, k: int = 3, exclude=(), before=None):
    own = vars(index).get("native")  # (an instance's own setting, or None for the class default)
    index.native = native
    try:
        res = index.lookup(queries, contract=k, exclude=exclude, before=before)
    finally:
        if own is None:
            del index.native
        else:
            index.native = own
    return [([c.id for c in r.candidates], r.existing.id if r.existing else None, list(r.sentence_df.items()))
            for r in res]


class Twins:
    """The same writes into an index on the native path and one on the Python path."""

    def __init__(self, max_sentence_df: int = 50) -> None:
        self.nat = MemoryIndex(max_sentence_df=max_sentence_df)
        self.ref = MemoryIndex(max_sentence_df=max_sentence_df)
        self.ref.native = False

    def add(self, docs) -> None:
        self.nat.add(docs)
        self.ref.add(docs)

    def remove(self, ids) -> None:
        for index in (self.nat, self.ref):
            index.remove([index.get(i) for i in ids if index.get(i) is not None])

    def same(self, queries, calls, k: int = 3, exclude=(), before=None):
        """Native == Python, between the twins and within each (switched); returns the native answers."""
        n = calls["lookup"]
        got = _answers(self.nat, queries, True, k, exclude, before)
        assert calls["lookup"] == n + (1 if queries else 0)  # one native call for the whole batch
        want = _answers(self.ref, queries, False, k, exclude, before)
        assert calls["lookup"] == n + (1 if queries else 0)  # the reference does not call it
        assert self.ref.store.postings is None and self.nat.store.sentences is None  # each built its own store only
        assert got == want
        assert _answers(self.nat, queries, False, k, exclude, before) == want  # dict built from the rows
        assert _answers(self.ref, queries, True, k, exclude, before) == want  # postings built from the rows
        # back to one store each (so the next writes build them incrementally again)
        self.nat.store.sentences = None
        self.ref.store.postings = None
        return got


def _stats(answers, cap: int):
    """(candidates, hashes past the cap, hashes with df 0) over all answers: the streams must exercise them."""
    n_cand = sum(len(c) for c, _, _ in answers)
    past = sum(1 for _, _, df in answers for _, d in df if d > cap)
    zero = sum(1 for _, _, df in answers for _, d in df if d == 0)
    return n_cand, past, zero


HEADER = "本网站所有内容均由人民网提供，未经书面授权不得转载、摘编或以其他方式使用。"
FOOTER = "欢迎关注我们的微信公众号，获取每日最新的新闻资讯和深度报道内容。"


def _stream():
    """Documents: articles, reprints, template posts, short texts and their edited copies."""
    arts = [a for a in chinese_articles() if len(a) >= 150][:260]
    out = []
    for i, text in enumerate(arts[:160]):
        out.append((f"a{i}", text))
        if i % 3 == 0:
            out.append((f"a{i}-reprint", "来源：人民网\n" + text.replace("，", ", ") + "\n（责任编辑：王敏）"))
    for i, text in enumerate(arts[160:220]):  # template posts: boilerplate sentences around a short body
        body = text[:120].replace("\n", "")
        out.append((f"t{i}", f"{HEADER}\n{body}\n{FOOTER}"))
    for i, text in enumerate(arts[220:260]):  # short texts (sketched) and edited copies
        short = text[:180]
        out.append((f"s{i}", short))
        if i % 2 == 0:
            out.append((f"s{i}-edit", "转发：" + short[:90] + "……" + short[100:]))
    return out


@pytest.fixture(scope="module")
def stream(fingerprinter):
    items = _stream()
    fps = fingerprinter.fingerprint_many([t for _, t in items])
    return [(i, fp) for (i, _), fp in zip(items, fps)]


def _docs(items, suffix=""):
    return [StoredDoc(i, fp, cluster=i + suffix) for i, fp in items]


def test_stream_sketches_and_boilerplate_are_there(stream):
    fps = [fp for _, fp in stream]
    assert sum(bool(fp.sketch) for fp in fps) > 50  # sketched short texts
    assert sum(bool(fp.sentences) for fp in fps) > 150


@pytest.mark.parametrize("cap", [50, 4])
def test_stream_in_batches(stream, calls, cap):
    """Batches of the stream, each looked up before it is added (as the engine does), at k 0 and 3."""
    twins = Twins(cap)
    answers = []
    for start in range(0, len(stream), 70):
        batch = stream[start:start + 70]
        queries = [Lookup(i, fp) for i, fp in batch]
        for k in (0, 3):
            answers += twins.same(queries, calls, k)
        twins.add(_docs(batch))
    queries = [Lookup(i, fp) for i, fp in stream]  # all of it again: each finds itself as existing
    answers += twins.same(queries, calls)
    n_cand, past, zero = _stats(answers, cap)
    assert n_cand > 200 and past > 20 and zero > 100


def test_before_like_the_engine(stream, calls):
    """A batch index (no dead rows) looked up with ``before``: each query sees the batch's earlier documents."""
    for cap in (50, 3):
        twins = Twins(cap)
        twins.add(_docs(stream))
        queries = [Lookup(i, fp) for i, fp in stream]
        answers = twins.same(queries, calls, before=range(len(stream)))
        assert _stats(answers, cap)[0] > 100
        assert answers[0][2] and all(d == 0 for _, d in answers[0][2])  # the first query sees nothing
        shuffled = np.random.default_rng(cap).integers(0, len(stream) + 1, size=len(stream)).tolist()
        twins.same(queries, calls, before=shuffled)
        twins.same(queries[:10], calls, before=[len(stream)] * 10)
        twins.same(queries[:10], calls, before=[0] * 10)


def test_replaced_removed_and_excluded(stream, calls):
    """Replaced rows (add of a stored id) and removed ones stay in the postings, dead: document frequencies count
    live rows only; ``exclude`` hides rows for one lookup."""
    twins = Twins(6)
    twins.add(_docs(stream))
    queries = [Lookup(i, fp) for i, fp in stream]
    by_id = dict(stream)
    # re-index: template posts now carry an article's fingerprint, articles a template post's, some unchanged
    ids = [i for i, _ in stream]
    t_ids = [i for i in ids if i.startswith("t")]
    a_ids = [i for i in ids if i.startswith("a")][:len(t_ids)]
    twins.add([StoredDoc(t, by_id[a], cluster=t) for t, a in zip(t_ids[::2], a_ids)])
    twins.add([StoredDoc(a, by_id[t], cluster=a) for t, a in zip(t_ids[1::2], a_ids[20:])])
    twins.add(_docs(stream[:15], "-again"))  # replaced by themselves
    answers = twins.same(queries, calls)
    assert twins.nat.store.any_dead
    twins.remove([i for i in ids if i.startswith("s")][::3] + t_ids[::5] + ["nope"])
    answers += twins.same(queries, calls)
    answers += twins.same(queries, calls, k=0, exclude=ids[::4] + ["t1", "nope"])
    assert _stats(answers, 6)[1] > 20
    with pytest.raises(ValueError):
        twins.nat.lookup(queries[:2], 3, before=[1, 2])


def test_exclude_without_dead_rows(stream, calls):
    twins = Twins(5)
    twins.add(_docs(stream))
    queries = [Lookup(i, fp) for i, fp in stream]
    ids = [i for i, _ in stream]
    twins.same(queries, calls, exclude=[i for i in ids if i.startswith(("t", "s"))][::2])
    assert not twins.nat.store.any_dead  # (excluded rows are alive again afterwards)
    twins.same(queries, calls)


def test_save_load_round_trip(stream, calls, tmp_path):
    """A loaded index rebuilds its postings (from the rows) and answers as the saved one did, on both paths."""
    twins = Twins(4)
    twins.add(_docs(stream[:200]))
    twins.add(_docs(stream[:30], "-v2"))  # replaced: dead rows are not saved
    twins.remove([i for i, _ in stream[40:60]])
    queries = [Lookup(i, fp) for i, fp in stream]
    want = twins.same(queries, calls)
    twins.nat.save(tmp_path / "i.npz")
    made = calls["made"]
    loaded = MemoryIndex.load(tmp_path / "i.npz")
    assert loaded.store.sentences is None  # native: no dict built on load
    got = _answers(loaded, queries, True)
    assert calls["made"] == made + 1
    # rows renumbered (the dead ones are gone), answers the same
    assert got == want
    assert _answers(loaded, queries, False) == want
    # then more writes on the loaded index: incremental, both stores (now both built) kept up to date
    loaded.add(_docs(stream[200:]))
    twins.add(_docs(stream[200:]))
    assert _answers(loaded, queries, True) == _answers(loaded, queries, False) == twins.same(queries, calls)


def test_load_on_the_python_path(stream, calls, tmp_path, monkeypatch):
    twins = Twins()
    twins.add(_docs(stream))
    twins.nat.save(tmp_path / "i.npz")
    monkeypatch.setattr(MemoryIndex, "native", False)
    loaded = MemoryIndex.load(tmp_path / "i.npz")
    assert loaded.store.postings is None and loaded.store.sentences
    monkeypatch.undo()
    queries = [Lookup(i, fp) for i, fp in stream[::3]]
    assert _answers(loaded, queries, True) == _answers(loaded, queries, False) == twins.same(queries, calls)


def test_random_hashes_edges(calls):
    """Synthetic hashes from small pools: many collisions, a hash held twice by one document or asked twice by
    one query, document frequencies exactly at the cap, sketch hashes shared once or twice; replaced rows."""
    rng = np.random.default_rng(3)
    longs = [int(h) for h in rng.integers(1, 2**62, size=40)]
    sketch = [SKETCH_BIT | int(h) for h in rng.integers(1, 2**62, size=30)] + [2**64 - 1, SKETCH_BIT]

    def fp(i):
        hs = [longs[j] for j in rng.integers(0, len(longs), size=int(rng.integers(0, 4))).tolist()]
        hs += [sketch[j] for j in rng.integers(0, len(sketch), size=int(rng.integers(0, 6))).tolist()]
        if rng.random() < 0.5:
            hs.sort()
        return Fingerprint(int(rng.integers(0, 2**63)), i % 37, tuple(hs), 10, 300 if i % 5 else 0, bool(i % 2))

    for cap in (0, 1, 3, 8, 1000):
        twins = Twins(cap)
        queries = []
        n = 0
        for step in range(12):
            batch = []
            for _ in range(int(rng.integers(0, 40))):
                doc_id = f"d{int(rng.integers(n + 1))}" if step and rng.random() < 0.15 else f"d{n}"
                batch.append(StoredDoc(doc_id, fp(n), cluster=doc_id))
                n += 1
            queries = [Lookup(f"q{j}" if j % 3 else f"d{j}", fp(j)) for j in range(30)]
            if step == 0:  # no dead row yet: before
                twins.add(batch)
                twins.same(queries, calls, before=rng.integers(0, len(batch) + 2, size=len(queries)).tolist())
                continue
            twins.add(batch)
            twins.same(queries, calls)
            twins.same(queries, calls, exclude=[f"d{j}" for j in range(0, n, 4)])
            if step % 4 == 3:
                twins.remove([f"d{int(j)}" for j in rng.integers(0, n, size=5)])
        twins.same(queries, calls, k=0)
    assert DEFAULT_CONTRACT.shared_sketch == 2


def test_empty_and_no_sentences(calls):
    twins = Twins()
    q = [Lookup("a", Fingerprint(1, 2, (), 0, 0, False)), Lookup("b", Fingerprint(1, 3, (5, SKETCH_BIT | 5), 4, 9, False))]
    assert twins.same(q, calls) == [([], None, []), ([], None, [(5, 0), (SKETCH_BIT | 5, 0)])]
    twins.add([StoredDoc("x", Fingerprint(9, 4, (5,), 4, 9, False), cluster="x")])
    assert twins.same(q, calls)[1] == (["x"], None, [(5, 1), (SKETCH_BIT | 5, 0)])
    assert twins.same([], calls) == []
    twins.add([])
    assert twins.nat.store.postings.rows(5) == [0]


def test_pickle_and_copy(stream, calls):
    """A pickled or copied index leaves its native postings behind and builds them again from its rows."""
    import copy
    import pickle

    twins = Twins(5)
    twins.add(_docs(stream))
    twins.remove([i for i, _ in stream[::7]])
    queries = [Lookup(i, fp) for i, fp in stream[::2]]
    want = twins.same(queries, calls)
    for clone in (pickle.loads(pickle.dumps(twins.nat)), copy.deepcopy(twins.nat)):
        assert clone.store.postings is None
        assert _answers(clone, queries, True) == want
        assert clone.store.postings is not None and clone.store.postings is not twins.nat.store.postings
        clone.add(_docs(stream[:20], "-more"))  # the clone's own postings move on, the original's do not
        assert _answers(clone, queries, True) == _answers(clone, queries, False)
    assert _answers(twins.nat, queries, True) == want


def test_bad_arguments_are_refused():
    p = M.NATIVE_POSTINGS(SKETCH_BIT, DEFAULT_CONTRACT.shared_sketch)
    p.add(0, [(1, 2), (2,)])
    with pytest.raises(ValueError):
        p.add(1, [(3,)])  # rows go up
    with pytest.raises(ValueError):
        p.add(2**31, [(3,)])
    with pytest.raises((ValueError, OverflowError, TypeError)):
        p.add(2, [(-1,)])
    alive = np.ones(8, dtype=bool)
    assert p.lookup([(2,)], 2, None, alive, 50)[0] == ([0, 1], {2: 2})
    with pytest.raises(ValueError):
        p.lookup([(2,)], 2, None, alive[::2], 50)  # strided
    with pytest.raises(ValueError):
        p.lookup([(2,)], 2, None, alive.astype(np.int8), 50)
    with pytest.raises(ValueError):
        p.lookup([(2,)], 2, None, alive[:1], 50)  # shorter than the rows


def test_turned_off_like_the_native_lookup(monkeypatch):
    """``ES_SIMHASH_MEMORY_NATIVE=0`` or no native module: the dict of lists (and the numpy SimHash channel)."""
    import sys

    monkeypatch.setenv("ES_SIMHASH_MEMORY_NATIVE", "0")
    assert M.native_postings() is None and M.native_lookup() is None
    monkeypatch.delenv("ES_SIMHASH_MEMORY_NATIVE")
    assert M.native_postings() is not None
    monkeypatch.setitem(sys.modules, "es_simhash_native", None)  # import fails
    assert M.native_postings() is None
    monkeypatch.setattr(M, "NATIVE_POSTINGS", None)
    index = MemoryIndex()
    index.add([StoredDoc("x", Fingerprint(9, 4, (5,), 4, 9, False), cluster="x")])
    res = index.lookup([Lookup("q", Fingerprint(2**63, 3, (5,), 4, 9, False))], 3)
    assert [c.id for c in res[0].candidates] == ["x"] and res[0].sentence_df == {5: 1}
    assert index.store.postings is None and index.store.sentences == {5: [0]}
