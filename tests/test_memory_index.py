"""The embedded index returns exactly the brute-force neighbours within k."""

import json
import re
from itertools import combinations

import numpy as np
import pytest

from es_simhash import Fingerprint, Fingerprinter
from es_simhash.index.base import Lookup
from es_simhash.records import StoredDoc
from es_simhash.index.memory import IndexFileError, MemoryIndex
from es_simhash.lookup.keys import DEFAULT, SEGMENTS


def _table_masks(widths):
    """Independent reference for the permutation-table keys: the bit positions of every choice of 3 of the blocks
    (k = 3, r = 3), the lowest 32 of them (a key is cut to 32 bits)."""
    starts = np.cumsum((0,) + tuple(widths))
    masks = []
    for table in combinations(range(len(widths)), 3):
        bits = sorted(b for blk in table for b in range(starts[blk], starts[blk + 1]))[:32]
        masks.append(sum(1 << b for b in bits))
    return masks


TABLE_MASKS = _table_masks((11, 11, 11, 11, 10, 10))
SEGMENT_MASKS = [0xFFFF << s for s in (0, 16, 32, 48)]


def _share_a_key(a: int, b: int, masks) -> bool:
    return any((a ^ b) & m == 0 for m in masks)


def _doc(i, simhash, sentences=(), content_hash=None):
    fp = Fingerprint(int(simhash), content_hash if content_hash is not None else i + 1, tuple(sentences), 10, 500, False)
    return StoredDoc(f"d{i}", fp, cluster=f"d{i}")


def _popcount_xor(a: np.ndarray, q: int) -> np.ndarray:
    """Brute-force distances, computed independently of es_simhash.lookup.hamming (bit unpacking)."""
    x = np.bitwise_xor(a, np.uint64(q))
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(42)
    n = 100_000
    sims = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    queries = sims[rng.choice(n, size=300, replace=False)].copy()
    # plant neighbours at distances 0..6 of each query
    extra = []
    for q in queries:
        for d in range(7):
            bits = rng.choice(64, size=d, replace=False)
            v = int(q)
            for b in bits:
                v ^= 1 << int(b)
            extra.append(v)
    sims = np.concatenate([sims, np.array(extra, dtype=np.uint64)])
    index = MemoryIndex()
    index.add([_doc(i, s) for i, s in enumerate(sims.tolist())])
    return index, sims, queries


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_lookup_equals_brute_force(planted, k):
    index, sims, queries = planted
    for qi, q in enumerate(queries.tolist()):
        fp = Fingerprint(q, 10**12 + qi, (), 10, 500, False)  # content hash matches nothing
        got = {d.id for d in index.lookup([Lookup("query", fp)], contract=k)[0].candidates}
        expected = {f"d{i}" for i in np.flatnonzero(_popcount_xor(sims, q) <= k)}
        assert got == expected
        assert len(expected) >= k + 1  # the planted neighbours are really there


def test_lookup_never_returns_the_document_itself(planted):
    index, sims, _ = planted
    doc = index.get("d5")
    res = index.lookup([Lookup("d5", doc.fingerprint)], 3)[0]
    assert res.existing is doc
    assert "d5" not in {c.id for c in res.candidates}


def test_empty_fingerprints_do_not_meet_through_segments():
    index = MemoryIndex()
    empty = lambda i: StoredDoc(f"e{i}", Fingerprint(0, 0, (), 0, 0, True), cluster=f"e{i}")  # noqa: E731
    index.add([empty(i) for i in range(5)])
    assert index.lookup([Lookup("e9", Fingerprint(0, 0, (), 0, 0, True))], 3)[0].candidates == []


def test_boilerplate_sentences_stop_bringing_candidates():
    index = MemoryIndex(max_sentence_df=3)
    rng = np.random.default_rng(1)
    docs = [_doc(i, rng.integers(0, 2**63), sentences=(777, 1000 + i)) for i in range(10)]
    index.add(docs)
    probe = Fingerprint(123, 999_999, (777,), 10, 50, True)
    assert index.lookup([Lookup("p", probe)], 3)[0].candidates == []
    rare = Fingerprint(123, 999_999, (1004,), 10, 50, True)
    assert [c.id for c in index.lookup([Lookup("p", rare)], 3)[0].candidates] == ["d4"]


def test_replacing_a_document_drops_its_old_fingerprint():
    index = MemoryIndex()
    index.add([_doc(0, 0xFFFF)])
    index.add([StoredDoc("d0", Fingerprint(2**63, 5, (), 10, 500, False), cluster="d0")])
    assert len(index) == 1
    old = Fingerprint(0xFFFF, 77, (), 10, 500, False)
    assert index.lookup([Lookup("q", old)], 0)[0].candidates == []


@pytest.mark.parametrize("how", ["remove", "replace", "exclude"])
def test_an_exact_copy_is_found_after_the_first_holder_of_its_content_is_gone(how, tmp_path):
    # texts without features (all stop words, say) are found through their content alone
    featureless = Fingerprint(0, 4242, (), 0, 12, True)
    index = MemoryIndex()
    index.add([StoredDoc(i, featureless, cluster="a") for i in ("a", "b", "c")])
    exclude: tuple[str, ...] = ()
    if how == "remove":
        index.remove([index.fetch(["a"])["a"]])
    elif how == "replace":
        index.add([StoredDoc("a", Fingerprint(0, 9, (), 0, 5, True), cluster="a")])
    else:
        exclude = ("a",)
    found = [c.id for c in index.lookup([Lookup("q", featureless)], 3, exclude=exclude)[0].candidates]
    assert found == ["b"]  # the first holder still there
    if how != "exclude":
        index.save(tmp_path / "i.npz")
        again = MemoryIndex.load(tmp_path / "i.npz")
        assert [c.id for c in again.lookup([Lookup("q", featureless)], 3)[0].candidates] == found


def test_save_and_load_round_trip(tmp_path, planted):
    index, sims, queries = planted
    small = MemoryIndex()
    small.add([_doc(i, s, sentences=(i, i + 1)) for i, s in enumerate(sims[:2000].tolist())])
    small.add([StoredDoc("dup", Fingerprint(int(sims[0]), 1, (), 10, 500, False, word_bag=0xABC), "d0", "d0", 0,
                         "exact")])
    path = tmp_path / "index.npz"
    small.save(path)
    loaded = MemoryIndex.load(path)
    assert len(loaded) == len(small)
    assert [(d.id, d.fingerprint, d.cluster, d.duplicate_of, d.distance, d.reason) for d in loaded.docs()] == [
        (d.id, d.fingerprint, d.cluster, d.duplicate_of, d.distance, d.reason) for d in small.docs()]
    q = Fingerprint(int(sims[10]) ^ 0b101, 999_999, (), 10, 500, False)
    assert {d.id for d in loaded.lookup([Lookup("q", q)], 3)[0].candidates} == {
        d.id for d in small.lookup([Lookup("q", q)], 3)[0].candidates}


@pytest.mark.parametrize("keys,masks", [(DEFAULT, TABLE_MASKS), (SEGMENTS, SEGMENT_MASKS)],
                         ids=["permutation-tables", "segments"])
def test_one_at_a_time_adds_and_replacements_equal_brute_force(keys, masks, monkeypatch):
    """The engine's in-batch index adds one document between lookups (the unsorted tail); replacements leave dead
    rows behind; a small tail size forces sorted runs and merges too. Every answer must still be the brute-force one
    over the live documents: within k and sharing a lookup key (for k <= 3 that is every neighbour within k)."""
    monkeypatch.setattr(MemoryIndex, "tail_rows", 50)
    rng = np.random.default_rng(7)
    bases = rng.integers(0, 2**64 - 1, size=20, dtype=np.uint64, endpoint=True).tolist()
    index = MemoryIndex(max_sentence_df=4, lookup_keys=keys)
    live: dict[str, Fingerprint] = {}
    for i in range(1500):
        v = bases[int(rng.integers(len(bases)))]
        for b in rng.choice(64, size=int(rng.integers(0, 9)), replace=False).tolist():
            v ^= 1 << b
        doc_id = f"d{int(rng.integers(1200))}"  # some ids repeat: replacements
        fp = Fingerprint(v, int(rng.integers(50)), (int(rng.integers(30)),), int(rng.integers(0, 3)), 500, False)
        k = int(rng.integers(0, 8))
        res = index.lookup([Lookup("q", fp)], k)[0]
        sentence_df = sum(fp.sentences[0] in f.sentences for f in live.values())
        expected = {
            d for d, f in live.items()
            if (f.n_features and fp.n_features and (f.simhash ^ v).bit_count() <= k
                and _share_a_key(f.simhash, v, masks))
            or (0 < sentence_df <= 4 and fp.sentences[0] in f.sentences)
        }
        got = {c.id for c in res.candidates}
        # the exact-content channel returns the first live row with the same content hash
        assert expected <= got and all(live[d].content_hash == fp.content_hash for d in got - expected)
        assert res.sentence_df == {fp.sentences[0]: sentence_df}
        index.add([StoredDoc(doc_id, fp, cluster=doc_id, text="payload")])
        live[doc_id] = fp
    assert index.store.any_dead and len(index) == len(live)
    assert all(d.text is None for d in index.docs())


def test_loading_a_file_that_is_not_an_index_says_so(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("not numpy at all")
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.arange(3))
    for path in (text, other):
        with pytest.raises(IndexFileError, match="not an es-simhash memory index"):
            MemoryIndex.load(path)
    with pytest.raises(FileNotFoundError):
        MemoryIndex.load(tmp_path / "missing.npz")


def test_an_index_file_of_format_1_without_lookup_keys_keeps_its_segments(tmp_path):
    index = MemoryIndex()
    index.add([_doc(i, s) for i, s in enumerate([0x1111_2222_3333_4444, 0xAAAA_BBBB_CCCC_DDDD])])
    path = tmp_path / "old.npz"
    index.save(path)
    with np.load(path) as z:  # rewrite it in file format /1: no lookup record
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["format"] = "es-simhash-memory-index/1"
    del meta["lookup"]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    old = MemoryIndex.load(path)
    assert old.lookup_keys == SEGMENTS
    # 5 bits away in five of the six table blocks, but the same low 16-bit segment: found through the segments,
    # as before (the permutation tables share no key with it)
    q = Fingerprint(0x1111_2222_3333_4444 ^ sum(1 << b for b in (16, 23, 34, 45, 55)), 10**9, (), 10, 500, False)
    assert [c.id for c in old.lookup([Lookup("q", q)], 5)[0].candidates] == ["d0"]
    assert index.lookup([Lookup("q", q)], 5)[0].candidates == []
    assert MemoryIndex.load(tmp_path / "old.npz").lookup_keys == SEGMENTS
    index.save(tmp_path / "new.npz")
    assert MemoryIndex.load(tmp_path / "new.npz").lookup_keys == DEFAULT


@pytest.mark.parametrize("tail_rows", [4096, 16])  # all rows in the unsorted tail, or most of them in sorted runs
def test_a_lookup_before_row_n_answers_as_an_index_of_the_first_n_documents(tail_rows, monkeypatch):
    """``before``: the engine decides a batch in one lookup, each document against the documents before it. Each
    answer must be the one an index holding only those documents gives: the same candidates, in the same order,
    and the same sentence counts (a sentence becomes boilerplate at the cap part-way through the batch)."""
    from es_simhash.fingerprint import SKETCH_BIT

    monkeypatch.setattr(MemoryIndex, "tail_rows", tail_rows)
    rng = np.random.default_rng(7)
    base = [int(x) for x in rng.integers(0, 2**63, size=6)]
    docs = []
    for i in range(120):
        sim = base[i % 6] ^ (1 << int(rng.integers(0, 64)))  # six families of near SimHashes
        sentences = [int(rng.integers(1, 2**40)), 5000 + i % 9]  # an own sentence, one shared by every ninth
        if i % 4 == 0:
            sentences.append(777)  # held by every fourth document: over the cap of 5 after the sixth holder
        sentences += [SKETCH_BIT | (100 + (i + j) % 11) for j in range(3)]  # sketch hashes, shared in runs
        docs.append(_doc(i, sim, sentences, content_hash=1 + i % 40))  # every 40th repeats a content hash
    # (the engine looks up each document by its own id; a lookup by another id must not see later rows either)
    queries = [Lookup(d.id if i % 2 else f"q{i}", d.fingerprint) for i, d in enumerate(docs)]
    index = MemoryIndex(max_sentence_df=5)
    index.add(docs)
    got = index.lookup(queries, 7, before=range(len(docs)))
    for n, (query, res) in enumerate(zip(queries, got)):
        alone = MemoryIndex(max_sentence_df=5)
        alone.add(docs[:n])
        want = alone.lookup([query], 7)[0] if n else None
        assert [c.id for c in res.candidates] == ([c.id for c in want.candidates] if want else [])
        assert res.sentence_df == (want.sentence_df if want else {h: 0 for h in query.fingerprint.hashes})
        assert res.existing is None  # (a document is not yet stored when it is decided)
    assert sum(len(r.candidates) for r in got) > 200  # every channel brought candidates
    assert any(r.sentence_df.get(777, 0) > 5 for r in got) and any(0 < r.sentence_df.get(777, 0) <= 5 for r in got)


def test_a_lookup_before_row_n_is_refused_once_a_document_was_replaced():
    """``before`` answers as the index of the first n documents only while no row was replaced (a replaced row is
    dead for every query): the index says so instead of answering wrongly."""
    index = MemoryIndex()
    index.add([_doc(0, 0xFFFF), _doc(1, 0xFFFE)])
    query = [Lookup("q", Fingerprint(0xFFFF, 99, (), 10, 500, False))]
    assert [c.id for c in index.lookup(query, 3, before=[1])[0].candidates] == ["d0"]
    index.add([StoredDoc("d0", Fingerprint(2**63, 5, (), 10, 500, False), cluster="d0")])
    with pytest.raises(ValueError, match="replaced or removed"):
        index.lookup(query, 3, before=[1])


@pytest.mark.parametrize("native", [False, True])
def test_a_document_left_out_of_one_lookup_is_found_by_the_next(native, monkeypatch):
    """``exclude`` hides documents from one lookup only, also when that lookup is the one that sorts a long tail into
    a run: a near duplicate of an excluded document is found by every later lookup."""
    index = MemoryIndex()
    monkeypatch.setattr(index, "tail_rows", 2)
    index.native = native and index.native
    base = 0x0123_4567_89AB_CDEF
    index.add([_doc(i, base ^ (0xFFFF << (16 * (i % 4))) ^ (i << 40)) for i in range(1, 6)])
    index.add([_doc(0, base)])
    query = Lookup("q", _doc(99, base ^ 1).fingerprint)
    assert "d0" not in {c.id for c in index.lookup([query], 3, exclude=["d0"])[0].candidates}
    assert "d0" in {c.id for c in index.lookup([query], 3)[0].candidates}


def test_open_reads_a_saved_index_and_names_what_keeps_one_from_being_used(tmp_path):
    """``MemoryIndex.open``: a new index, or a saved one with its documents; a missing file, a file that is not an
    index, and an index of other fingerprint versions each raise their own SavedIndexError naming the file."""
    import dataclasses

    from es_simhash.errors import IndexFileNotFound, NotAnIndexFile, OldFingerprints, SavedIndexError

    fingerprinter = Fingerprinter()
    fp = fingerprinter.fingerprint("一篇文章的正文，" * 20)
    saved = MemoryIndex(fingerprint_config=fingerprinter.config)
    saved.add([StoredDoc("a", fp, "a")])
    saved.save(tmp_path / "idx.npz")
    assert MemoryIndex.open().lookup([Lookup("q", fp)], 3)[0].candidates == []
    assert [c.id for c in MemoryIndex.open(tmp_path / "idx.npz").lookup([Lookup("q", fp)], 3)[0].candidates] == ["a"]
    with pytest.raises(IndexFileNotFound, match=r"idx\.npz: give that name"):
        MemoryIndex.open(tmp_path / "idx")
    (tmp_path / "notes.npz").write_text("not an index")
    with pytest.raises(NotAnIndexFile) as not_index:
        MemoryIndex.open(tmp_path / "notes.npz")
    assert not_index.value.path == str(tmp_path / "notes.npz")
    old = MemoryIndex()
    old.add([StoredDoc("b", dataclasses.replace(fp, version=fp.version - 1), "b")])
    old.save(tmp_path / "old.npz")
    with pytest.raises(OldFingerprints) as versions:
        MemoryIndex.open(tmp_path / "old.npz")
    assert versions.value.versions == [fp.version - 1] and isinstance(versions.value, SavedIndexError)


# -- a saved index and the fingerprint settings it was built with ---------------------------------------------------
def _one_line_error(res) -> str:
    """The one stderr line of a run refused with exit 1 (no traceback, no "unexpected error")."""
    err = res.stderr.decode()
    lines = [x for x in err.splitlines() if x.strip()]
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("es-simhash: error: "), (res.returncode, err)
    assert "Traceback" not in err and "unexpected error" not in err
    return lines[0]


def _two_days(tmp_path):
    """Twenty long articles (day 1), and day 2: a reprint of article 7 and a new article."""
    from support import chinese_articles

    zh = [a for a in chinese_articles() if 800 <= len(a)][:21]
    day1, day2 = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    day1.write_text("".join(json.dumps({"id": f"d{i}", "content": a}, ensure_ascii=False) + "\n"
                            for i, a in enumerate(zh[:20])), encoding="utf-8")
    day2.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (
        {"id": "again", "content": "本网讯 " + zh[7] + "（完）"}, {"id": "fresh", "content": zh[20]})),
        encoding="utf-8")
    # an IDF table of one's own, in jieba's format ("word idf" lines): not jieba's default table
    (tmp_path / "my-idf.txt").write_text("中国 1.5\n发展 2.5\n经济 3.0\n人民 1.0\n记者 4.0\n", encoding="utf-8")
    return day1, day2


_IDF_DIFFERS = re.compile(r'IDF table checksum "([0-9a-f]{12})" \(this run: "([0-9a-f]{12})"\)')


def test_a_saved_index_refuses_a_run_with_another_idf_table(tmp_path):
    """An index saved with jieba's IDF table and loaded with another (or the reverse) would mix fingerprints that
    are not comparable (a run then finds duplicates neither table finds): refused in one line naming both tables'
    checksums and what to do, before any output is written. With the table it was built with, it loads."""
    from support import run_cli

    day1, day2 = _two_days(tmp_path)
    assert run_cli("dedup", day1, "--save-index", "jieba.npz", "--no-progress", cwd=tmp_path).returncode == 0
    assert run_cli("dedup", day1, "--save-index", "mine.npz", "--idf", "my-idf.txt", "--no-progress",
                   cwd=tmp_path).returncode == 0
    for saved, other in (("jieba.npz", ("--idf", "my-idf.txt")), ("mine.npz", ())):
        line = _one_line_error(run_cli("dedup", day2, "--load-index", saved, *other, "--report", "r.jsonl",
                                       "--no-progress", cwd=tmp_path))
        assert f"--load-index: {saved} holds fingerprints made with other settings" in line
        built, now = _IDF_DIFFERS.search(line).groups()
        assert built != now and "--idf FILE" in line and "dedup --save-index" in line
        assert not (tmp_path / "r.jsonl").exists()
    for saved, same in (("jieba.npz", ()), ("mine.npz", ("--idf", "my-idf.txt"))):
        res = run_cli("dedup", day2, "--load-index", saved, *same, "--report", f"r-{saved}.jsonl", "--no-progress",
                      "--save-index", f"after-{saved}", cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        report = {r["id"]: r for r in map(json.loads, (tmp_path / f"r-{saved}.jsonl").read_text().splitlines())}
        after = MemoryIndex.load(tmp_path / f"after-{saved}").fetch(["d7", "again", "fresh"])
        assert after["again"].cluster == after["d7"].cluster == report["again"]["cluster"]  # (a copy of d7)
        assert report["fresh"]["cluster"] == "fresh" and after["fresh"].cluster == "fresh"


def test_a_saved_index_and_a_later_run_give_the_clusters_of_one_run(tmp_path):
    """Saved with an IDF table of one's own and loaded with it again, day 2 is decided as one run of both days
    decides it (decisions on arrival: --no-recheck)."""
    from support import run_cli

    day1, day2 = _two_days(tmp_path)
    both = tmp_path / "both.jsonl"
    both.write_bytes(day1.read_bytes() + day2.read_bytes())
    idf = ("--idf", "my-idf.txt", "--no-recheck", "--no-progress")
    assert run_cli("dedup", both, "--report", "one.jsonl", *idf, cwd=tmp_path).returncode == 0
    assert run_cli("dedup", day1, "--save-index", "i.npz", *idf, cwd=tmp_path).returncode == 0
    assert run_cli("dedup", day2, "--load-index", "i.npz", "--report", "two.jsonl", *idf, cwd=tmp_path).returncode == 0
    whole = [json.loads(x) for x in (tmp_path / "one.jsonl").read_text().splitlines()]
    one = whole[-2:]
    assert {r["id"]: r["cluster"] for r in whole}["d7"] == one[0]["cluster"]  # (again: a copy of d7)
    two = [json.loads(x) for x in (tmp_path / "two.jsonl").read_text().splitlines()]
    assert [(r["id"], r["cluster"], r["duplicate_of"]) for r in two] == \
        [(r["id"], r["cluster"], r["duplicate_of"]) for r in one]
    assert two[0]["cluster"] in ("again", "d7") and two[1]["cluster"] == "fresh"  # (a copy of d7 and a new text)


def test_an_index_refuses_lookups_and_adds_with_other_fingerprint_settings(tmp_path):
    """In Python too: an index loaded from a file (or filled by one engine) refuses an engine whose fingerprints
    are made with another IDF table or option, for a check and for a batch, naming the setting; ``open`` with the
    settings of the run refuses at once. An engine with the same settings goes on."""
    from es_simhash import DedupEngine, Document
    from es_simhash.errors import OtherFingerprintSettings, SavedIndexError
    from es_simhash.fingerprint.idf import IDFTable

    day1, _ = _two_days(tmp_path)
    texts = [json.loads(x)["content"] for x in day1.read_text(encoding="utf-8").splitlines()]
    built = DedupEngine(MemoryIndex(), Fingerprinter())
    list(built.process(Document(f"d{i}", t) for i, t in enumerate(texts)))
    built.index.save(tmp_path / "i.npz")
    mine = Fingerprinter(IDFTable.load(tmp_path / "my-idf.txt"))
    wider = Fingerprinter()
    wider.n_sentences = 7
    for other, named in ((mine, "IDF table checksum"), (wider, "sentences 5 (this run: 7)")):
        loaded = MemoryIndex.load(tmp_path / "i.npz")
        engine = DedupEngine(loaded, other)
        with pytest.raises(OtherFingerprintSettings, match=re.escape(named)) as refused:
            engine.check(texts[7])
        assert refused.value.path == str(tmp_path / "i.npz") and isinstance(refused.value, SavedIndexError)
        with pytest.raises(OtherFingerprintSettings):
            list(engine.process([Document("new", texts[3])]))
        assert len(loaded) == 20 and "new" not in loaded
        with pytest.raises(OtherFingerprintSettings, match=re.escape(named)):
            MemoryIndex.open(tmp_path / "i.npz", fingerprint_config=other.config)
        with pytest.raises(OtherFingerprintSettings, match="the index holds"):
            list(DedupEngine(built.index, other).process([Document("new", texts[3])]))
    same = DedupEngine(MemoryIndex.open(tmp_path / "i.npz", fingerprint_config=Fingerprinter().config))
    assert [d.of.id for d in same.check(texts[7])] == ["d7"]


def test_a_saved_index_that_records_no_fingerprint_settings_must_be_built_again(tmp_path):
    """A file saved without the fingerprint settings of its documents (by an es-simhash that did not record them)
    may have been built with any IDF table: nothing says its fingerprints are comparable, so it is refused with the
    remedy (build it again); an empty one holds nothing to mix and loads."""
    from support import run_cli

    day1, day2 = _two_days(tmp_path)
    assert run_cli("dedup", day1, "--save-index", "i.npz", "--no-progress", cwd=tmp_path).returncode == 0
    _rewrite(tmp_path / "i.npz", meta=lambda m: m.pop("fingerprint"))
    line = _one_line_error(run_cli("dedup", day2, "--load-index", "i.npz", "--no-progress", cwd=tmp_path))
    assert "i.npz does not record the fingerprint settings" in line and "build it again from its input" in line
    empty = MemoryIndex()
    empty.save(tmp_path / "empty.npz")
    res = run_cli("dedup", day2, "--load-index", "empty.npz", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()


def _rewrite(path, meta=None, **arrays):
    """Rewrite the saved index ``path`` with its header changed by ``meta`` and the arrays given (None: left out)."""
    with np.load(path) as z:
        held = {k: z[k] for k in z.files}
    header = json.loads(held["meta"].tobytes())
    if meta is not None:
        meta(header)
    held["meta"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    for k, v in arrays.items():
        if v is None:
            del held[k]
        else:
            held[k] = v
    with open(path, "wb") as fh:  # (np.savez adds .npz to a name without it)
        np.savez(fh, **held)


def test_a_damaged_saved_index_is_one_line_naming_the_file(tmp_path):
    """A saved index cut short (a full disk, a copy stopped half-way), empty, of random bytes, without an array, or
    with an array of the wrong shape or type: one line naming the file and saying to build it again (random bytes:
    not an index file), exit 1, never a traceback or an "unexpected error"."""
    import os
    import random

    from support import run_cli

    day1, day2 = _two_days(tmp_path)
    assert run_cli("dedup", day1, "--save-index", "good.npz", "--no-progress", cwd=tmp_path).returncode == 0
    whole = (tmp_path / "good.npz").read_bytes()
    n = 20
    damaged = {"cut.npz": whole[: len(whole) // 2], "cut-tail.npz": whole[:-30], "empty.npz": b""}
    for name, data in damaged.items():
        (tmp_path / name).write_bytes(data)
    for name, change in {"no-simhash.npz": {"simhash": None}, "no-sentences.npz": {"sentences": None},
                         "short-column.npz": {"n_chars": np.zeros(n - 1, np.int64)},
                         "two-d.npz": {"simhash": np.zeros((n, 2), np.uint64)},
                         "floats.npz": {"content_hash": np.zeros(n, np.float64)},
                         "counts.npz": {"sentence_counts": np.full(n, 10**6, np.int64)}}.items():
        (tmp_path / name).write_bytes(whole)
        _rewrite(tmp_path / name, **change)
    for name in [*damaged, "no-simhash.npz", "no-sentences.npz", "short-column.npz", "two-d.npz", "floats.npz",
                 "counts.npz"]:
        line = _one_line_error(run_cli("dedup", day2, "--load-index", name, "--no-progress", cwd=tmp_path))
        assert f"cannot read index {name}: " in line and line.endswith("build it again from its input "
                                                                       "(dedup --save-index)"), line
    (tmp_path / "random.npz").write_bytes(random.Random(3).randbytes(5000))
    line = _one_line_error(run_cli("dedup", day2, "--load-index", "random.npz", "--no-progress", cwd=tmp_path))
    assert "random.npz is not an es-simhash index file" in line
    assert os.path.getsize(tmp_path / "good.npz") == len(whole)
