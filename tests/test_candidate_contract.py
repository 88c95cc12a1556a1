"""The candidate contract is the rule's: a lookup brings the stored documents that share what the rule's
:class:`CandidateContract` asks for (shared sketch hashes, long sentences, a SimHash within reach), no fewer and no
more, from the embedded index and from a real node alike; the engine passes the rule's contract to every lookup;
and a contract no backend serves fails loudly."""

import random
from dataclasses import dataclass

import pytest

from es_simhash.decide.default import DefaultRule
from es_simhash.decide.rule import RuleBase
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.errors import UnservableContract
from es_simhash.fingerprint import SKETCH_BIT
from es_simhash.index.base import Lookup
from es_simhash.index.elastic import ElasticIndex, ensure_index
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.candidates import DEFAULT_CONTRACT, CandidateContract
from es_simhash.lookup.keys import DEFAULT, SEGMENTS
from es_simhash.records import Document

from test_sketch_candidates import BOILER, CAP, LONG, S, _fp, stored_doc  # (the same query's hashes)

LONG2 = 0x0123_0456_0789_0ABC  # the query's second long-sentence hash


def _stored():
    rng = random.Random(11)
    other = [SKETCH_BIT | rng.getrandbits(62) for _ in range(60)]  # hashes the query does not hold

    def doc(name, sentences):
        return stored_doc(rng, name, sentences)

    docs = [
        doc("sketch-1", [S[0]] + other[0:8]),
        doc("sketch-2", [S[1], S[2]] + other[8:16]),
        doc("sketch-3", [S[3], S[4], S[5]]),
        doc("sketch-2-and-boilerplate", [BOILER, S[6], S[7]] + other[16:20]),
        doc("long-1", [LONG]),
        doc("long-2", [LONG, LONG2]),
    ]
    docs += [doc(f"boiler-{i}", [BOILER] + other[20 + i * 3:23 + i * 3]) for i in range(CAP)]
    return docs


def _query():
    return Lookup("q", _fp(0x0123_4567_89AB_CDEF, [LONG, LONG2] + S, 42))


# what each contract brings: boilerplate counts for nothing, whatever the contract asks
WANTED = {
    "default": {"sketch-2", "sketch-3", "sketch-2-and-boilerplate", "long-1", "long-2"},
    "sketch-3": {"sketch-3", "long-1", "long-2"},
    "sketch-1": {"sketch-1", "sketch-2", "sketch-3", "sketch-2-and-boilerplate", "long-1", "long-2"},
    "sentences-2": {"sketch-2", "sketch-3", "sketch-2-and-boilerplate", "long-2"},
}
CONTRACTS = {
    "default": DefaultRule().candidate_contract,
    "sketch-3": DefaultRule(min_shared_hashes=3).candidate_contract,
    "sketch-1": DefaultRule(min_shared_hashes=1).candidate_contract,
    "sentences-2": CandidateContract(max_distance=7, shared_sentences=2),
}


def _ids(result):
    return {c.id for c in result.candidates}


def test_the_rule_declares_its_contract():
    assert DefaultRule().candidate_contract == CandidateContract(max_distance=7, shared_sentences=1,
                                                                 shared_sketch=2)
    assert DefaultRule(k=9, min_shared_hashes=3).candidate_contract == CandidateContract(9, 1, 3)
    assert DEFAULT_CONTRACT == CandidateContract(max_distance=DefaultRule().k)

    class Own(RuleBase):
        candidate_distance = 4

    assert Own().candidate_contract == CandidateContract(max_distance=4)


@pytest.mark.parametrize("native", [True, False], ids=["native", "reference"])
def test_the_embedded_index_serves_the_contract(native):
    index = MemoryIndex(max_sentence_df=CAP)
    index.native = native
    index.add(_stored())
    for name, contract in CONTRACTS.items():
        assert _ids(index.lookup([_query()], contract)[0]) == WANTED[name], name
    # an int is the default contract at that distance; the default again after other contracts
    assert _ids(index.lookup([_query()], 7)[0]) == WANTED["default"]
    # the engine's way: each query sees the documents added before it
    before = index.lookup([_query()], CONTRACTS["sketch-1"], before=[len(_stored())])[0]
    assert _ids(before) == WANTED["sketch-1"]


@dataclass(frozen=True)
class MoreContract(CandidateContract):
    """A contract asking for something no backend knows."""

    shared_places: int = 1


UNSERVABLE = [CandidateContract(max_distance=7, shared_sketch=0), CandidateContract(max_distance=7, shared_sentences=0),
              CandidateContract(max_distance=65), MoreContract()]
"""Contracts no backend serves: a channel asking for nothing shared (every document a candidate), a distance
beyond 64 bits, a kind of contract the backends do not know."""


def test_the_embedded_index_refuses_what_it_cannot_serve():
    index = MemoryIndex(max_sentence_df=CAP)
    index.add(_stored())
    for contract in UNSERVABLE:
        with pytest.raises(UnservableContract):
            index.lookup([_query()], contract)
    with pytest.raises(UnservableContract, match="shared_sketch = 0"):
        index.lookup([_query()], DefaultRule(min_shared_hashes=0).candidate_contract)


def test_the_engine_passes_the_rules_contract_to_every_lookup(monkeypatch, fingerprinter):
    asked = []
    lookup = MemoryIndex.lookup

    def recording(self, queries, contract, *args, **kwargs):
        asked.append(contract)
        return lookup(self, queries, contract, *args, **kwargs)

    monkeypatch.setattr(MemoryIndex, "lookup", recording)
    rule = DefaultRule(min_shared_hashes=3)
    engine = DedupEngine(fingerprinter=fingerprinter, rule=rule, batch_size=2)
    texts = ["今天北京下了第一场雪，气温降到零下五度。", "今天北京下了第一场雪，气温降到零下五度！",
             "A short post about nothing much.", "Another short post about nothing much at all."]
    list(engine.process(Document(f"d{i}", t) for i, t in enumerate(texts)))
    engine.check(texts[0])
    assert asked and set(asked) == {rule.candidate_contract}


@pytest.mark.parametrize("keys", [DEFAULT, SEGMENTS], ids=["batched", "per-document"])
def test_elasticsearch_serves_the_contract(client, es_index_name, fingerprinter, keys):
    """The batched search (permutation-table keys: the sketch clause asks with the contract's
    ``minimum_should_match``) and one search per document (segments) bring what the embedded index brings."""
    docs = _stored()
    ensure_index(client, es_index_name, fingerprinter.config, replicas=0, lookup_keys=keys)
    index = ElasticIndex(client, es_index_name, max_sentence_df=CAP)
    index.add(docs)
    memory = MemoryIndex(max_sentence_df=CAP, lookup_keys=keys)
    memory.add(docs)
    copies = [Lookup(f"copy-of-{d.id}", d.fingerprint) for d in docs[:4]]  # (their own clauses in the search)
    for name, contract in CONTRACTS.items():
        results = index.lookup([_query()] + copies, contract)
        assert _ids(results[0]) == WANTED[name], name
        assert [_ids(r) for r in results] == [_ids(r) for r in memory.lookup([_query()] + copies, contract)], name
    for contract in UNSERVABLE:
        with pytest.raises(UnservableContract):
            index.lookup([_query()], contract)
