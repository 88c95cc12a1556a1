"""Writing batch N while batch N+1 is looked up and decided (Elasticsearch) gives exactly the results of one
sequential run: duplicates across consecutive batches, boilerplate counted over both, refused documents."""

from functools import partial

from es_simhash import Fingerprint, Fingerprinter
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.errors import IndexingError
from es_simhash.records import Document
from es_simhash.fingerprint.reference import ReferenceEngine
from es_simhash.index.elastic import ElasticIndex, ensure_index
from es_simhash.index.memory import MemoryIndex
from support import chinese_articles


def _new_index(client, name, fingerprinter, **kw):
    ensure_index(client, name, fingerprinter.config, replicas=0)
    client.indices.put_settings(index=name, settings={"index": {"refresh_interval": "-1"}})
    return ElasticIndex(client, name, **kw)


def _rows(results):
    return [(r.id, r.cluster, r.duplicate_of, r.reason) if not isinstance(r, Exception) else (type(r).__name__,)
            for r in results]


def test_duplicates_in_the_batch_being_written_are_found(client, es_index_name, fingerprinter):
    arts = [a for a in chinese_articles() if 800 <= len(a) <= 3000][:6]
    docs = []
    for i in range(0, 6, 2):  # each batch of two holds reprints of the batch before it
        docs += [Document(f"a{i}", arts[i]), Document(f"a{i + 1}", arts[i + 1])]
        docs += [Document(f"r{i}", "本网讯 " + arts[i] + "（完）"), Document(f"r{i + 1}", arts[i + 1] + "（完）")]
    index = _new_index(client, es_index_name, fingerprinter)
    assert index.overlapping_writes
    got = list(DedupEngine(index, fingerprinter, batch_size=2).process(docs))
    assert {r.id: r.cluster for r in got if r.duplicate} == {f"r{i}": f"a{i}" for i in range(6)}
    assert _rows(got) == _rows(DedupEngine(MemoryIndex(), fingerprinter, batch_size=2).process(docs))


def test_boilerplate_counted_over_the_index_and_the_batch_being_written(client, es_index_name, fingerprinter):
    """A footer sentence held by 3 stored posts and 3 posts of the batch being written is over a bound of 5 only
    when both are counted: the next batch must treat it as boilerplate, as a sequential run does."""
    footer = "本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性。"
    posts = [f"第{i}号公告：今天下午{i % 7}点将在{'东西南北'[i % 4]}区进行例行的系统维护工作。{footer}" for i in range(24)]
    docs = [Document(f"p{i}", t) for i, t in enumerate(posts)]
    es = DedupEngine(_new_index(client, es_index_name, fingerprinter, max_sentence_df=5), fingerprinter,
                     batch_size=3)
    embedded = DedupEngine(MemoryIndex(max_sentence_df=5), fingerprinter, batch_size=3)
    assert _rows(es.process(docs)) == _rows(embedded.process(docs))


class _Given(ReferenceEngine):
    """A Python engine whose fingerprints are given by the test (the texts are their names): lets a test place
    exact distances and sentences (``Fingerprinter(engine="python", python_engine=partial(_Given, table=...))``)."""

    def __init__(self, owner, table):
        super().__init__(owner)
        self.table = table

    def fingerprint_many(self, texts):
        return [self.table[t] for t in texts]


def test_a_sentence_over_the_bound_only_in_both_counts_brings_no_candidate(client, es_index_name):
    """Sentence S is held by x1, x2 (stored) and y (being written): 3 documents, over a bound of 2 only when both
    counts are added up. q is 6 bits from x1 in six different blocks, so they share no lookup key: a sequential
    run does not find x1 (S is boilerplate by then), so q is canonical; finding x1 through S would make q a
    'simhash' duplicate (short texts match at up to 7 bits)."""
    S = 0x1234_5678_9ABC_DEF
    x1 = 0x0F0F_3C3C_A5A5_5A5A
    q = x1 ^ sum(1 << b for b in (0, 11, 22, 33, 44, 54))
    fps = {name: Fingerprint(sim, i + 1, (S, 1000 + i), 20, 120, True)
           for i, (name, sim) in enumerate([("x1", x1), ("x2", 0x7777_0000_1111_EEEE), ("y", 0x2468_ACE0_1357_9BDF),
                                            ("q", q)])}
    fingerprinter = Fingerprinter(engine="python", python_engine=partial(_Given, table=fps))
    batches = [([Document("x1", "x1"), Document("x2", "x2")], 1), ([Document("y", "y")], 2),
               ([Document("q", "q")], 3)]
    index = _new_index(client, es_index_name, fingerprinter, max_sentence_df=2)
    es = [r for _, rs in DedupEngine(index, fingerprinter).process_batches(batches) for r in rs]
    embedded = [r for _, rs in DedupEngine(MemoryIndex(max_sentence_df=2), fingerprinter).process_batches(batches)
                for r in rs]
    assert _rows(es) == _rows(embedded)
    assert not es[-1].duplicate


class _Refusing(ElasticIndex):
    """The real backend, except that it refuses documents whose id starts with 'bad' (as a mapping error would)."""

    def add_conditional(self, docs):  # (how the engine writes into an index other writers share)
        refused = {d.id: "mapper_parsing_exception: refused for the test" for d in docs if d.id.startswith("bad")}
        more, conflicts = super().add_conditional([d for d in docs if d.id not in refused])
        return refused | more, conflicts


def test_a_batch_decided_against_a_refused_document_is_decided_again(client, es_index_name, fingerprinter):
    arts = [a for a in chinese_articles() if 800 <= len(a) <= 3000][:3]
    docs = [Document("bad-0", arts[0]), Document("ok-1", arts[1]),     # batch 1: bad-0 is refused
            Document("copy-0", arts[0]), Document("copy-1", arts[1])]  # batch 2: decided while batch 1 is written
    index = _Refusing(client, es_index_name)
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0)
    results = list(DedupEngine(index, fingerprinter, batch_size=2).process_batches([(docs[:2], 1), (docs[2:], 2)]))
    first, second = results[0][1], results[1][1]
    assert isinstance(first[0], IndexingError) and first[1].cluster == "ok-1"
    by_id = {r.id: r for r in second}
    assert not by_id["copy-0"].duplicate  # bad-0 is not in the index: copy-0 is the canonical of its content
    assert by_id["copy-1"].duplicate_of == "ok-1"
    client.indices.refresh(index=es_index_name)
    stored = {h["_id"]: h["_source"]["dup_cluster"] for h in client.search(index=es_index_name)["hits"]["hits"]}
    assert stored == {"ok-1": "ok-1", "copy-0": "copy-0", "copy-1": "ok-1"}
