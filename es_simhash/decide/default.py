"""The default decision rule (:class:`DefaultRule`): its settings, the decision over all candidates, and
``explain``; the tests of one candidate are :mod:`~es_simhash.decide.match`'s, the template rule and the meaning
guard :mod:`~es_simhash.decide.crowding`'s."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Sequence

from es_simhash.decide.compare import same_content
from es_simhash.decide.crowding import TemplateCrowding
from es_simhash.decide.match import MatchTests
from es_simhash.records import Decision, StoredDoc
from es_simhash.decide.trace import MEANING_VETO, Note, Step, recorder
from es_simhash.defaults import MAX_DISTANCE
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.lookup.candidates import CandidateContract

__all__ = ["DefaultRule"]

_VETOED = MappingProxyType({"by": MEANING_VETO})


@dataclass(frozen=True)
class DefaultRule:
    """The default :class:`~es_simhash.decide.rule.DecisionRule` (tuned on the dev split of ``bench/accuracy.py``;
    see ``docs/accuracy.md``). Its settings are its fields, each saying what it bounds.

    A candidate is a duplicate when one test of :attr:`match_tests` passes: **exact** (same content), **simhash**
    (SimHashes within ``k`` or ``short_k`` bits), or **sentences** (long sentences, shingle-sketch or fuzzy
    sentence hashes shared, not boilerplate) and the two texts report one event (``event_guard``: dates and
    places name an event, figures describe it; ``number_guard``).
    Over all candidates, :attr:`crowding` treats the hashes that candidates of several clusters hold as a
    template's (boilerplate for this decision) and the meaning guard vetoes the cluster of a candidate that says
    the opposite. Documents without usable features duplicate nothing but an exact copy. Among several
    qualifying candidates the nearest wins, then a canonical one, then the smallest id (so every backend breaks
    ties the same way). The candidates it is given are those of :attr:`candidate_contract`, which its settings
    make: every document one of its tests could accept.

    Frozen: its collaborators are built from the settings; :func:`dataclasses.replace` makes a rule with others.
    """

    k: int = MAX_DISTANCE
    """**simhash**: two long texts are duplicates within ``k`` bits."""
    min_shared_fraction: float = 0.5
    """**sketch** (a **sentences** match): two texts that both carry a shingle sketch (texts under
    ``Fingerprinter.sketch_chars``), at any distance, sharing this much of the smaller sketch and at least
    ``min_shared_hashes`` of its hashes, boilerplate left out: an estimated
    character-shingle Jaccard similarity of about one half or more. (A sketch of one or two hashes is a text of a
    few characters: only an exact copy duplicates it.)"""
    sentence_k: int = 16
    """**sentences**: within ``sentence_k`` bits, sharing ``min_shared_sentences`` of the smaller signature (long
    sentences, boilerplate left out). A reprint wrapped in a site header/footer, with ads inserted, sentences
    deleted or the tail cut keeps its longest sentences but moves more than ``k`` bits; the Hamming bounds keep
    apart pages that share a site's sentences before those are frequent enough to count as boilerplate."""
    sentence_near_k: int = 8
    """**sentences**: within ``sentence_near_k`` bits, one shared long sentence is enough."""
    min_shared_sentences: float = 0.4
    """The share of the smaller signature that ``sentence_k`` asks for."""
    min_contained_sentences: int = 2
    """**sentences**: at any distance, all of one text's signature sentences (at least this many) in the other's:
    a short article inside a big site template, which moves the SimHash any distance (0: off)."""
    short_k: int = 7
    """**simhash**: two short texts are duplicates within ``short_k`` bits (a short and a long one never by SimHash
    alone)."""
    max_sentence_clusters: int = 1
    """The template rule: a hash that candidates of more than this many holders hold (a site template's
    disclaimer, held by that site's different articles) is boilerplate for this decision; an article's own
    sentence is held by its reprints, which sit in one cluster (0: off)."""
    meaning_guard: bool = True
    """Between two texts that both carry a shingle sketch (short texts, where one sentence is much of the
    meaning), a pair of signature sentences that :func:`~es_simhash.fingerprint.contradicts`, or texts that
    :func:`~es_simhash.fingerprint.text_contradicts` (a negation inserted, words in another order), veto the
    candidate's whole cluster: "他同意这个方案" is not a reprint of "他不同意这个方案", nor is "Smith hit Jones" of
    "Jones hit Smith", though every shingle method calls them near duplicates."""
    crowd_k: int | None = 20
    """Two candidates of one cluster count as one holder of a hash only when their SimHashes are within ``crowd_k``
    bits, their content is the same, or one's sketch is inside the other's but for fewer than ``crowd_own`` hashes
    while the other has that many of its own (a post and its bare repost), so the posts of a template wrongly put
    in one cluster still count as several holders (None: count clusters only). Within ``crowd_k`` bits too, a
    candidate that is the query's report with its event's names replaced holds no hash for it
    (:meth:`TemplateCrowding.held <es_simhash.decide.crowding.TemplateCrowding.held>`; None: every candidate holds)."""
    crowd_own: int = 8
    """Two members of one cluster count as two holders too when, besides the hashes the query shares with them,
    each has at least ``crowd_own`` sketch hashes of its own, none shared with the other, and the query has as
    many that neither has: a template's posts, each with its own body, when the template is most of each (0: off;
    8, the hashes one line adds to a sketch, ``Fingerprinter.line_sketch``)."""
    crowd_sketch: bool = True
    """Shingle-sketch hashes crowd as sentences do (a template's characters: a share line, a site's navigation and
    footer around a short text)."""
    sentence_sketch_support: int = 1
    """Between two sketched texts, a sentence match also needs this many shared sketch hashes (not boilerplate):
    two short posts of one template share its sentences but not the characters of their own bodies."""
    simhash_sketch_support: int = 1
    """Between two sketched texts, a SimHash match also needs this many shared sketch hashes (not boilerplate): a
    short post of a template weighs mostly the template's words."""
    far_sentence_k: int = 0
    """**sentences**: within ``far_sentence_k`` bits, sharing ``far_shared_sentences`` of the smaller signature
    (0: off; :meth:`rechecked` turns it on)."""
    far_shared_sentences: float = 0.5
    """The share of the smaller signature that ``far_sentence_k`` asks for."""
    event_guard: bool = True
    """A match between two texts that report other events is none (:meth:`MatchTests._other_event
    <es_simhash.decide.match.MatchTests._other_event>`): both give dates of one kind and share fewer than half of the
    fewer's (another day, month, weekday or year), or their datelines name other places (where each report was
    filed), or each names a place the other never names (``place_guard``; :mod:`~es_simhash.fingerprint.events`).
    Texts whose dates and places agree are one event: the number guard is not asked (an update revises figures).
    The template rule reads the same test: a candidate that is the query's report with its event's names replaced
    holds no template for it (``crowd_k``). (False: the number guard alone, and every candidate holds.)"""
    place_guard: float = 0.0
    """Two texts name other places (another event) when each names a place the other never names and the fewer of
    those places are more than this share of the places both name (0: any such place): a report of another place
    replaces the event's place, while a copy cut short names a part of its original's places. A share above 0 keeps
    together two texts that differ in one place among many they share (an edit that drops a place and brings in
    another)."""
    number_guard: float = 0.6
    """Two texts that do not both name their event by dates or places (:attr:`event_guard`) and both give at
    least three numbers (dates, figures:
    :attr:`~es_simhash.fingerprint.Fingerprint.number_bag`), about as many each, of which fewer than this share of
    the smaller set's are the other's, duplicate by no test but an exact copy: a template's report of another event
    (a match result, a price notice), where a copy cut short gives fewer numbers and an edit changes one or two
    (0: off)."""
    fuzzy_k: int = 24
    """**fuzzy** (a **sentences** match between longer texts, on their shared fuzzy sentence hashes:
    :attr:`~es_simhash.fingerprint.Fingerprint.fuzzy`, not boilerplate). *Rewritten*: within ``fuzzy_k`` bits, at
    least ``fuzzy_min_shared`` and ``fuzzy_shared`` of the smaller set, ``fuzzy_rewritten`` of them for sentences
    that differ word for word (a copy with words replaced), and more than chance gives (``fuzzy_chance`` times the
    product of the sizes). *Verbatim*: at least ``fuzzy_verbatim`` of the smaller set within ``sentence_k`` bits;
    or ``fuzzy_far`` shared of twice that many or more each, within ``fuzzy_k`` bits or with two signature
    sentences shared too (a copy cut short)."""
    fuzzy_shared: float = 0.25
    """*Rewritten*: the share of the smaller fuzzy set to share."""
    fuzzy_rewritten: int = 2
    """*Rewritten*: the shared hashes that must be of sentences that differ (a site repeats its lines exactly)."""
    fuzzy_min_shared: int = 3
    """*Rewritten*: the fewest shared fuzzy hashes."""
    fuzzy_chance: float = 0.015
    """*Rewritten*: shared by chance, per product of the two sets' sizes (a least shingle hash is now and then a
    common phrase's)."""
    fuzzy_verbatim: float = 0.5
    """*Verbatim*: the share of the smaller fuzzy set to share (0: off)."""
    fuzzy_far: int = 6
    """*Verbatim*: the shared fuzzy hashes that reach beyond ``sentence_k`` bits (0: off)."""
    min_shared_hashes: int = 2
    """**sketch** and **fuzzy**: the fewest shared sketch hashes, or fuzzy sentence hashes (boilerplate left out),
    either match accepts, whatever share of the smaller set they are; and so what a candidate must share through
    them (:attr:`candidate_contract`). A text shares one common character shingle's hash with thousands of
    unrelated texts (a fuzzy hash is a sentence's least shingle hash, now and then a common phrase's)."""
    recheck: bool = False
    """Decisions of an index whose runs end with a recheck (:meth:`rechecked`): settling a canonical again (other
    writers, a re-run, a delete) joins it to a cluster only where the recheck keeps it, so settling never undoes
    what a recheck took back."""

    match_tests: MatchTests = field(init=False, repr=False, compare=False)
    """The tests of one candidate, with the bounds above."""
    crowding: TemplateCrowding = field(init=False, repr=False, compare=False)
    """The template rule and the meaning guard, with the settings above."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "match_tests", MatchTests(
            k=self.k, short_k=self.short_k, min_shared_fraction=self.min_shared_fraction,
            sentence_k=self.sentence_k, sentence_near_k=self.sentence_near_k,
            min_shared_sentences=self.min_shared_sentences, min_contained_sentences=self.min_contained_sentences,
            sentence_sketch_support=self.sentence_sketch_support, simhash_sketch_support=self.simhash_sketch_support,
            far_sentence_k=self.far_sentence_k, far_shared_sentences=self.far_shared_sentences,
            number_guard=self.number_guard, event_guard=self.event_guard, place_guard=self.place_guard,
            fuzzy_k=self.fuzzy_k, fuzzy_shared=self.fuzzy_shared,
            fuzzy_rewritten=self.fuzzy_rewritten, fuzzy_min_shared=self.fuzzy_min_shared,
            fuzzy_chance=self.fuzzy_chance, fuzzy_verbatim=self.fuzzy_verbatim, fuzzy_far=self.fuzzy_far,
            min_shared_hashes=self.min_shared_hashes))
        object.__setattr__(self, "crowding", TemplateCrowding(
            max_sentence_clusters=self.max_sentence_clusters, meaning_guard=self.meaning_guard,
            crowd_k=self.crowd_k, crowd_own=self.crowd_own, crowd_sketch=self.crowd_sketch,
            renamed=self.match_tests.renamed if self.event_guard else None))

    @property
    def candidate_distance(self) -> int:
        """The loosest Hamming distance a SimHash match accepts (backends drop segment candidates further away)."""
        return max(self.k, self.short_k)

    @property
    def candidate_contract(self) -> CandidateContract:
        """What a stored document must share to be worth deciding, from the settings: a SimHash within
        :attr:`candidate_distance` bits (sharing a lookup key), one long sentence (the **sentences** test asks for
        one, near enough), or ``min_shared_hashes`` sketch or fuzzy hashes (the fewest the **sketch** and **fuzzy**
        tests accept); boilerplate counts for none. The engine passes it to every lookup."""
        return CandidateContract(max_distance=self.candidate_distance, shared_sentences=1,
                                 shared_sketch=self.min_shared_hashes)

    @classmethod
    def rechecked(cls, **settings: Any) -> "DefaultRule":
        """The rule for runs whose decisions are taken again once every document is indexed
        (:func:`~es_simhash.clustering.recheck`; ``es-simhash dedup`` and ``index`` do; ``DefaultRule()`` is for
        decisions that stay as made on arrival, ``--no-recheck``): the sentence match also reaches
        ``far_sentence_k`` = 24 bits when half of the smaller signature is shared (chosen on the dev split with
        the recheck). A reprint wrapped in a site's header, sponsor and footer lines moves 17-24 bits and keeps
        most of its few long sentences; two articles of one site share the site's lines too, and while a run
        reads them nothing says yet that those are the site's, but the recheck counts them as boilerplate once
        other articles of the site hold them. So a run decides on arrival without the far bound
        (:meth:`on_arrival`) and its recheck applies it, with what the whole run showed of templates. (Half, not ``min_shared_sentences``' 40%: two follow-up
        stories that reuse two paragraphs share 2 of 5 signature sentences; on BBC News, 40% merged 8 such pairs
        of 2,225 articles, half merges 1.) Without the recheck the looser bound costs more than it finds
        (docs/accuracy.md). ``settings``: any other field, as for ``DefaultRule(...)``."""
        return cls(**{"far_sentence_k": 24, "recheck": True, **settings})

    @classmethod
    def for_run(cls, k: int = MAX_DISTANCE, recheck: bool = True, **settings: Any) -> "DefaultRule":
        """The rule every command decides with, for SimHashes within ``k`` bits: :meth:`rechecked` (what a run's
        recheck decides with, and what ``repair``, ``delete``, ``check``, ``explain`` and ``evaluate`` decide
        with), or, for a run without the recheck (``recheck=False``, ``--no-recheck``), ``DefaultRule(k=k)``: the
        decisions as made on arrival. Give it to :meth:`DedupEngine.for_run
        <es_simhash.engine.dedup_engine.DedupEngine.for_run>` with the same ``recheck``. ``settings``: any other
        field, as for ``DefaultRule(...)``."""
        return cls.rechecked(k=k, **settings) if recheck else cls(k=k, **settings)

    def on_arrival(self) -> "DefaultRule":
        """The rule a run whose decisions are rechecked with this one decides with on arrival: this one without
        the far sentence bound (``far_sentence_k`` off), which the recheck applies to every document, canonical or
        not, once the run's templates are known (:func:`~es_simhash.clustering.recheck`). So a run with the recheck
        decides on arrival as the same run with ``--no-recheck`` (``DefaultRule(k=...)``) decides, and its recheck
        line counts what the two runs report differently; on the dev split of ``bench/accuracy.py`` the clusters
        are the same as with the far bound on arrival too."""
        return replace(self, far_sentence_k=0)

    def far_reachable(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> bool:
        """Whether the far sentence bound could make ``fp`` a duplicate of one of ``candidates``: one of them is
        within ``far_sentence_k`` bits and shares a long sentence with it (what that bound needs). Where none is,
        this rule decides as :meth:`on_arrival` does, so a run need not ask it again (a cheap test, no decision)."""
        if not (self.far_sentence_k and fp.sentences):
            return False
        mine = set(fp.sentences)
        return any(fp.distance(c.fingerprint) <= self.far_sentence_k and not mine.isdisjoint(c.fingerprint.sentences)
                   for c in candidates)

    def decide(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> Decision | None:
        """The candidate ``fp`` duplicates, the first of :meth:`matches`; None when it duplicates none."""
        found = self.matches(fp, candidates, boilerplate)
        return found[0] if found else None

    def matches(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> list[Decision]:
        """Every candidate ``fp`` duplicates, the one :meth:`decide` picks first: decided together, so the rules
        that look at all candidates (boilerplate by cluster count, the meaning guard's veto of a whole cluster)
        apply to each (``DedupEngine.check`` lists these)."""
        return self._matches(fp, candidates, boilerplate, recorder(None))

    def _matches(self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int], note: Note
                 ) -> list[Decision]:
        """:meth:`matches`, each step told to ``note`` (:meth:`trace` keeps them)."""
        crowding, match = self.crowding, self.match_tests.match_noting
        vetoed = crowding.vetoed(fp, candidates)
        if crowding.applies(fp, candidates):
            boilerplate = boilerplate | crowding.held(fp, candidates, vetoed)
        found: list[tuple[tuple[int, int, str], Decision]] = []
        for cand in candidates:
            decision = match(fp, cand, boilerplate, note)
            if decision is None:
                continue
            if cand.cluster in vetoed and decision.reason != "exact":
                note("meaning", False, _VETOED)
                continue
            found.append(((decision.distance, 0 if cand.is_canonical else 1, cand.id), decision))
        found.sort(key=lambda x: x[0])
        return [d for _, d in found]

    def crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """The hashes of ``fp`` that ``candidates`` show to be a template's (:meth:`TemplateCrowding.crowded`)."""
        return self.crowding.crowded(fp, candidates)

    def trace(self, fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int] = frozenset()
              ) -> tuple[Decision | None, list[Step]]:
        """The decision of ``fp`` against ``other`` alone (as if it were the only candidate: :meth:`decide`'s own
        code), and the steps that took it: each test made, in order, then the meaning guard's veto, if it took the
        match back."""
        steps: list[Step] = []
        found = self._matches(fp, [StoredDoc("b", other, cluster="b")], boilerplate, recorder(steps))
        return (found[0] if found else None), steps

    def explain(self, fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int] = frozenset()
                ) -> dict[str, Any]:
        """Why ``fp`` is, or is not, a duplicate of ``other`` (as if ``other`` were its only candidate), ready for
        JSON: what the two share, each step of :meth:`trace` in words, and the meaning guard's veto, if any."""
        decision, steps = self.trace(fp, other, boilerplate)

        def side(f: Fingerprint) -> dict[str, Any]:
            return {"short": f.short, "letters": f.n_chars, "features": f.n_features,
                    "long_sentences": len(f.sentences), "sketch": len(f.sketch)}

        return {
            "duplicate": decision is not None,
            "reason": decision.reason if decision is not None else None,
            "distance": fp.distance(other),
            "exact": same_content(fp, other),
            "shared_segments": sum(a == b for a, b in zip(fp.segments, other.segments)),
            "shared_sentences": len(set(fp.sentences) & set(other.sentences)),
            "shared_sketch": len(set(fp.sketch) & set(other.sketch)),
            "a": side(fp),
            "b": side(other),
            "vetoed_by": next((s.values["by"] for s in steps if s.test == "meaning"), None),
            "why": [s.words() for s in steps],
        }
