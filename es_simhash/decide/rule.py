"""What a decision rule is: the protocol every rule keeps (:class:`DecisionRule`, with its optional abilities
declared), the :class:`Decision` it returns, and the vocabulary the engine, the cluster operations and the backends
share (:data:`NO_FEATURES`, :func:`has_sketch`)."""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from es_simhash.records import Decision, StoredDoc
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.lookup.candidates import CandidateContract

__all__ = ["DecisionRule", "RuleBase", "NO_FEATURES", "has_sketch"]


NO_FEATURES = "no-features"


@runtime_checkable
class DecisionRule(Protocol):
    """Decides whether ``fp`` duplicates one of ``candidates``: the replaceable piece of the engine. Everything the
    engine and the cluster operations call is declared here; a rule of one's own inherits :class:`RuleBase`, writes
    :meth:`decide` and :attr:`candidate_distance` (and :attr:`candidate_contract`, to ask for other candidates),
    and gets the rest."""

    @property
    def candidate_distance(self) -> int:
        """The loosest Hamming distance the rule can accept; backends drop segment candidates further away."""
        ...

    @property
    def candidate_contract(self) -> CandidateContract:
        """What a stored document must share with a fingerprint to be worth deciding: the engine and the cluster
        operations pass it to every lookup, and the backend brings those documents, and only those, as
        candidates (or raises :class:`~es_simhash.errors.UnservableContract`). Its ``max_distance`` is
        :attr:`candidate_distance`."""
        ...

    @property
    def recheck(self) -> bool:
        """Whether the index's decisions are taken again by a recheck at the end of each run (then settling a
        canonical keeps to what the recheck keeps: :func:`~es_simhash.clustering.settle.settle_canonicals`)."""
        ...

    def decide(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> Decision | None:
        """``boilerplate``: sentence hashes of ``fp`` held by too many documents to identify anything."""
        ...

    def matches(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> list[Decision]:
        """Every candidate ``fp`` duplicates, the one :meth:`decide` picks first (``check`` lists them)."""
        ...

    def crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """The hashes of ``fp`` that ``candidates`` show to be a template's, beyond the document counts (the
        recheck passes the candidates of the other clusters); none for a rule without a template rule."""
        ...

    def explain(self, fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int] = frozenset()
                ) -> dict[str, Any]:
        """Why ``fp`` is, or is not, a duplicate of ``other`` (as if it were its only candidate), ready for JSON:
        at least ``duplicate``, ``reason``, ``distance`` and ``why`` (a list of lines in words)."""
        ...


class RuleBase:
    """What a rule of one's own inherits: :meth:`matches`, :meth:`crowded` and :meth:`explain` from its
    :meth:`decide` (which it writes, with :attr:`candidate_distance`), and :attr:`candidate_contract`."""

    recheck = False

    @property
    def candidate_distance(self) -> int:
        raise NotImplementedError

    @property
    def candidate_contract(self) -> CandidateContract:
        """The default contract within :attr:`candidate_distance` bits: one shared long sentence, or two shared
        sketch or fuzzy hashes (a rule that accepts other candidates says so here)."""
        return CandidateContract(max_distance=self.candidate_distance)

    def decide(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> Decision | None:
        raise NotImplementedError

    def matches(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> list[Decision]:
        """The one candidate :meth:`decide` picks, if any."""
        decision = self.decide(fp, candidates, boilerplate)
        return [] if decision is None else [decision]

    def crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """No template rule: nothing is crowded."""
        return frozenset()

    def explain(self, fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int] = frozenset()
                ) -> dict[str, Any]:
        """The decision against ``other`` alone, without the tests in words."""
        decision = self.decide(fp, [StoredDoc("b", other, cluster="b")], boilerplate)
        return {"duplicate": decision is not None, "reason": decision.reason if decision else None,
                "distance": fp.distance(other), "why": []}


def has_sketch(fp: Fingerprint) -> bool:
    """Whether the fingerprint carries a shingle sketch (backends may reorder the hashes: look at the largest)."""
    return bool(fp.sketch)
