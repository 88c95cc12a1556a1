"""Which stored documents a lookup returns: the :class:`CandidateContract` a decision rule declares (what a stored
document must share with a query to be worth deciding) and every backend serves, the candidate test that contract
makes (:func:`found_by_lookup`), which the engine repeats where what it knows was gathered in parts, and its pieces:
long-sentence and sketch hashes less boilerplate, the documents holding enough of them (:func:`sharing_at_least`,
:func:`sentence_candidate`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import AbstractSet, Collection, Hashable, Iterable, Mapping, Protocol, Sequence, TypeVar

from es_simhash.defaults import MAX_DISTANCE
from es_simhash.errors import UnservableContract
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.lookup.keys import LookupKeys

__all__ = ["CandidateContract", "DEFAULT_CONTRACT", "served", "boilerplate_of", "sharing_at_least",
           "sentence_candidate", "found_by_lookup"]


@dataclass(frozen=True, slots=True)
class CandidateContract:
    """What a stored document must share with a query to be its candidate: the decision rule declares it
    (:attr:`DecisionRule.candidate_contract <es_simhash.decide.rule.DecisionRule.candidate_contract>`), the engine
    passes it to every lookup, and each backend serves it (:func:`served`) without knowing the rule. A stored
    document is a candidate when it has the query's id or content hash, or through one of the channels below; the
    rule never sees the others, so it should ask for every document one of its tests could accept.

    Boilerplate (hashes held by more than the index's ``max_sentence_df`` documents) counts in no channel."""

    max_distance: int = MAX_DISTANCE
    """**SimHash**: a stored document sharing one of the query's lookup keys (permutation tables or segments,
    :mod:`es_simhash.lookup.keys`) and within this many bits (exact Hamming re-rank)."""
    shared_sentences: int = 1
    """**Long sentences**: a stored document holding at least this many of the query's long-sentence hashes."""
    shared_sketch: int = 2
    """**Sketch and fuzzy hashes**: a stored document holding at least this many of the query's shingle-sketch and
    fuzzy sentence hashes, counted together (a text has one kind or the other). One common character shingle's
    hash is held by thousands of unrelated texts, each of which a lookup asking for one would bring."""


DEFAULT_CONTRACT = CandidateContract()
"""The contract of :class:`~es_simhash.decide.default.DefaultRule` with its default settings."""


def served(contract: CandidateContract | int, backend: str) -> CandidateContract:
    """``contract`` as a backend serves it (an int: the default contract with that
    :attr:`~CandidateContract.max_distance`), or :class:`~es_simhash.errors.UnservableContract` naming ``backend``
    when no backend serves it: a channel asking for nothing shared (every stored document would be a candidate), a
    distance outside 0..64, or a contract of another kind, whose requirements the backend does not know."""
    if isinstance(contract, int) and not isinstance(contract, bool):
        contract = CandidateContract(max_distance=contract)
    if type(contract) is not CandidateContract:
        raise UnservableContract(f"{backend} serves a CandidateContract, not {type(contract).__name__}: write the "
                                 "rule's candidate_contract as one")
    if not 0 <= contract.max_distance <= 64:
        raise UnservableContract(f"{backend} cannot serve max_distance = {contract.max_distance}: a SimHash "
                                 "distance is 0..64 bits")
    for name in ("shared_sentences", "shared_sketch"):
        if getattr(contract, name) < 1:
            raise UnservableContract(f"{backend} cannot serve {name} = {getattr(contract, name)}: every stored "
                                     "document would be a candidate (ask for at least 1)")
    return contract


class HasFingerprint(Protocol):
    """A stored document as the candidate test sees it."""

    @property
    def fingerprint(self) -> Fingerprint: ...


D = TypeVar("D", bound=HasFingerprint)
H = TypeVar("H", bound=Hashable)  # a sentence hash: an int, or its hex string (Elasticsearch)

def boilerplate_of(fp: Fingerprint, sentence_df: Mapping[int, int], cap: int,
                   extra: Mapping[int, int] | None = None) -> frozenset[int]:
    """The sentence hashes of ``fp`` held by more than ``cap`` documents: ``sentence_df`` (a lookup's counts)
    plus ``extra``, the counts of every hash of ``fp`` among documents not in the index yet (the batch being
    decided)."""
    if extra:
        return frozenset(h for h in fp.hashes if sentence_df.get(h, 0) + extra[h] > cap)
    return frozenset(h for h in fp.hashes if sentence_df.get(h, 0) > cap)


def sharing_at_least(holders: Sequence[int], least: int) -> list[int]:
    """The documents listed at least ``least`` times in ``holders``, the concatenated lists of the documents holding
    each of a query's (non-boilerplate) sketch hashes, or long-sentence hashes: its candidates through them
    (``least``: the contract's :attr:`~CandidateContract.shared_sketch` or
    :attr:`~CandidateContract.shared_sentences`)."""
    if len(holders) < least:
        return []
    if least == 1:
        return list(dict.fromkeys(holders))
    return [d for d, n in Counter(holders).items() if n >= least]


def sentence_candidate(sentences: AbstractSet[H], sketch: AbstractSet[H], theirs: Iterable[H],
                       contract: CandidateContract) -> bool:
    """Whether a stored document whose fingerprint holds the hashes ``theirs`` is a candidate of a query through
    the sentence channel: it holds :attr:`~CandidateContract.shared_sentences` of the query's (non-boilerplate)
    long-sentence hashes ``sentences``, or :attr:`~CandidateContract.shared_sketch` of its (non-boilerplate) sketch
    and fuzzy hashes ``sketch`` (a text has one kind or the other)."""
    need_sentences, need_sketch = contract.shared_sentences, contract.shared_sketch
    n_sentences = n_sketch = 0
    for h in theirs:
        if h in sentences:
            n_sentences += 1
            if n_sentences >= need_sentences:
                return True
        elif h in sketch:
            n_sketch += 1
            if n_sketch >= need_sketch:
                return True
    return False


def found_by_lookup(fp: Fingerprint, candidates: Iterable[D], boilerplate: Collection[int],
                    lookup_keys: LookupKeys, contract: CandidateContract) -> list[D]:
    """The ``candidates`` that one lookup of ``fp`` under ``contract`` would return with ``boilerplate`` as its
    boilerplate hashes (the candidate test every backend applies, :class:`CandidateContract`): the same content, a
    shared lookup key within ``max_distance`` bits, or sentence hashes shared through :func:`sentence_candidate`.
    The engine and settling use it where what they know was gathered in parts (the index and the batch; or the
    index now and the documents that arrived before a document) whose boilerplate differs from the whole's."""
    max_distance = contract.max_distance
    masks = lookup_keys.masks.tolist() if fp.n_features else ()
    sentences = set(fp.sentences).difference(boilerplate)
    sketch = set(fp.sketch).union(fp.fuzzy).difference(boilerplate)
    out = []
    for c in candidates:
        o = c.fingerprint
        x = fp.simhash ^ o.simhash
        if ((fp.n_chars and o.content_hash == fp.content_hash)
                or (masks and o.n_features and x.bit_count() <= max_distance and any(x & m == 0 for m in masks))
                or sentence_candidate(sentences, sketch, o.hashes, contract)):
            out.append(c)
    return out
