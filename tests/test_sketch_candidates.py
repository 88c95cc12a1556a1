"""The sketch channel of both backends: a stored document is a candidate through the shingle sketch only when it
shares two of the query's sketch hashes that are not boilerplate (one shared common shingle is not enough for
the decision rule, and would bring thousands of unrelated short texts)."""

import random

import pytest

from es_simhash import Fingerprint
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.decide.default import DefaultRule
from es_simhash.records import Document, StoredDoc
from es_simhash.fingerprint import SKETCH_BIT
from es_simhash.index.base import Lookup
from es_simhash.index.elastic import ElasticIndex, ensure_index
from es_simhash.index.memory import MemoryIndex

CAP = 3  # max_sentence_df: a hash held by more documents than this is boilerplate

S = [SKETCH_BIT | (0x1111 * (i + 1)) for i in range(12)]  # the query's sketch hashes
LONG = 0x0ABC_DEF0_1234_5678  # a long-sentence hash
BOILER = S[11]  # held by CAP + 1 stored documents below: boilerplate


def _fp(simhash, sentences, content):
    return Fingerprint(simhash, content, tuple(sentences), 8, 120, True)


def stored_doc(rng, name, sentences):
    """A stored short text holding ``sentences`` (sketch and long-sentence hashes) and a random SimHash: no lookup
    key in common with the query (checked where it matters), so only the sentence channels count."""
    return StoredDoc(name, _fp(rng.getrandbits(64), sentences, rng.getrandbits(64)), cluster=name)


def _stored():
    """(stored documents, ids that must be candidates of the query)."""
    rng = random.Random(7)
    other = [SKETCH_BIT | rng.getrandbits(62) for _ in range(60)]  # hashes the query does not hold

    def doc(name, sentences):
        return stored_doc(rng, name, sentences)

    docs = [
        doc("one-shared", [S[0]] + other[0:11]),
        doc("two-shared", [S[0], S[1]] + other[11:21]),
        doc("one-shared-plus-long", [S[2], LONG] + other[21:31]),
        doc("long-only", [LONG]),
        doc("boiler-plus-one", [BOILER, S[3]] + other[31:41]),
        doc("three-shared", [S[4], S[5], S[6]]),
    ]
    docs += [doc(f"boiler-{i}", [BOILER] + other[41 + i * 3:44 + i * 3]) for i in range(CAP)]
    return docs, {"two-shared", "one-shared-plus-long", "long-only", "three-shared"}


def _query():
    return Lookup("q", _fp(0x0123_4567_89AB_CDEF, [LONG] + S, 42))


@pytest.fixture(scope="module")
def stored():
    return _stored()


def _ids(result):
    return {c.id for c in result.candidates}


def test_memory_index_needs_two_shared_sketch_hashes(stored):
    docs, expected = stored
    index = MemoryIndex(max_sentence_df=CAP)
    index.add(docs)
    res = index.lookup([_query()], 7)[0]
    assert _ids(res) == expected
    assert res.sentence_df[BOILER] == CAP + 1 and res.sentence_df[S[0]] == 2 and res.sentence_df[LONG] == 2


@pytest.mark.parametrize("max_sketch_clauses", [None, 13])
def test_elasticsearch_finds_the_same_candidates_and_counts(client, es_index_name, fingerprinter, stored,
                                                            max_sketch_clauses):
    docs, expected = stored
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    index = ElasticIndex(client, es_index_name, max_sentence_df=CAP)
    if max_sketch_clauses is not None:  # (None: the engine's bound; 13: one query per search)
        index.max_sketch_clauses = max_sketch_clauses
    index.add(docs)
    # a batch: the query, plus queries that are copies of stored documents (their own clauses in the same search)
    copies = [Lookup(f"copy-of-{d.id}", d.fingerprint) for d in docs[:4]]
    results = index.lookup([_query()] + copies, 7)
    res = results[0]
    assert _ids(res) == expected
    assert res.sentence_df[BOILER] == CAP + 1 and res.sentence_df[S[0]] == 2 and res.sentence_df[LONG] == 2
    memory = MemoryIndex(max_sentence_df=CAP)
    memory.add(docs)
    assert [_ids(r) for r in results] == [_ids(r) for r in memory.lookup([_query()] + copies, 7)]
    assert [r.sentence_df for r in results] == [r.sentence_df for r in memory.lookup([_query()] + copies, 7)]


def test_excluded_documents_are_not_counted(client, es_index_name, fingerprinter, stored):
    """A lookup that leaves documents out (the batch the engine is still writing, held in memory) counts each
    sketch hash's holders without them: as the embedded index that never held them."""
    docs, _ = stored
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    index = ElasticIndex(client, es_index_name, max_sentence_df=CAP)
    index.add(docs)
    left_out = ["two-shared", "boiler-0", "three-shared"]
    memory = MemoryIndex(max_sentence_df=CAP)
    memory.add([d for d in docs if d.id not in left_out])
    es = index.lookup([_query()], 7, exclude=left_out)[0]
    mem = memory.lookup([_query()], 7)[0]
    assert _ids(es) == _ids(mem) and es.sentence_df == mem.sentence_df
    assert es.sentence_df[S[0]] == 1 and es.sentence_df[BOILER] == CAP  # (no longer boilerplate without boiler-0)


def test_a_point_in_time_that_vanished_is_opened_again(client, es_index_name, fingerprinter, stored):
    """Short texts are looked up on a point in time; when it is gone by the time its searches run (its node left,
    or it expired), the lookup opens another and answers as the embedded index does."""
    docs, expected = stored
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    index = ElasticIndex(client, es_index_name, max_sentence_df=CAP, retry_for=30)
    index.add(docs)
    real_client = index.client
    opened: list[str] = []

    class FirstPointInTimeGone:
        """The index's client, except that the first point in time it opens is closed before it is used."""

        def __getattr__(self, name):
            return getattr(real_client, name)

        def open_point_in_time(self, **kw):
            pit = real_client.open_point_in_time(**kw)["id"]
            opened.append(pit)
            if len(opened) == 1:
                real_client.close_point_in_time(id=pit)
            return {"id": pit}

    index.client = FirstPointInTimeGone()
    res = index.lookup([_query()], 7)[0]
    memory = MemoryIndex(max_sentence_df=CAP)
    memory.add(docs)
    mem = memory.lookup([_query()], 7)[0]
    assert len(opened) == 2
    assert _ids(res) == expected == _ids(mem)
    assert res.sentence_df == mem.sentence_df


def test_a_short_repost_is_still_found_among_texts_sharing_common_shingles(client, es_index_name, fingerprinter):
    """Real short texts that share common character shingles with the repost (and with each other) but only the
    original shares most of its sketch: the repost joins the original's cluster on both backends."""
    original = "市政府今天召开新闻发布会，宣布从下个月起全市公交线路调整运营时间，早班车提前半小时发车。"
    others = [
        "市政府今天召开会议，研究部署下一阶段的防汛工作，要求各区做好准备。",
        "全市公交线路将在春节期间调整，部分线路延长运营时间至晚上十一点。",
        "今天召开的新闻发布会上，有关部门介绍了今年以来经济运行的总体情况。",
        "从下个月起，本市将实行新的停车收费标准，中心城区的收费将有所提高。",
    ]
    repost = "转发：" + original.replace("，", ",") + "大家相互转告"
    docs = [Document("orig", original)] + [Document(f"o{i}", t) for i, t in enumerate(others)] + [
        Document("repost", repost)]
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    es = list(DedupEngine(ElasticIndex(client, es_index_name), fingerprinter, batch_size=3).process(docs))
    mem = list(DedupEngine(MemoryIndex(), fingerprinter, batch_size=3).process(docs))
    assert [(r.id, r.cluster, r.reason) for r in es] == [(r.id, r.cluster, r.reason) for r in mem]
    assert es[-1].cluster == "orig" and es[-1].duplicate
    assert not any(r.duplicate for r in es[:-1])


def test_a_sketch_match_needs_two_shared_hashes():
    """The decision rule agrees with the backends: one shared sketch hash is never a sketch match, even when it
    is half of a tiny sketch."""
    rule = DefaultRule()
    tiny = _fp(0, [S[0], S[1]], 1)
    far = 0xFFFF_FFFF_0000_0000  # 32 bits away: no SimHash match
    assert rule.decide(_fp(far, [S[0], S[5]], 2), [StoredDoc("t", tiny, "t")]) is None
    assert rule.decide(_fp(far, [S[0], S[1], S[5]], 2), [StoredDoc("t", tiny, "t")]).reason == "sentences"
