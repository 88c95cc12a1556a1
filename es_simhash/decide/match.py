"""The tests of one candidate (:class:`MatchTests`): exact, SimHash, sentences, sketch, fuzzy sentences and the
event test (asked of a match only: dates and places name an event, figures describe it), each telling what it measured to a recorder that keeps it in a trace when
one is given (:mod:`es_simhash.decide.trace`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from es_simhash.decide.compare import same_content, sketch_support
from es_simhash.decide.rule import has_sketch
from es_simhash.records import Decision, StoredDoc
from es_simhash.decide.trace import Note, Step, recorder
from es_simhash.fingerprint.events import DATE_FIELDS, NAMED_PLACES, datelines, other_datelines, place_keys
from es_simhash.fingerprint.hashes import numbers_alike_in_count, numbers_contained
from es_simhash.fingerprint.model import Fingerprint

__all__ = ["MatchTests"]

_NO_VALUES: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class MatchTests:
    """Whether a fingerprint duplicates one candidate, with the bounds the tests apply (what each means:
    :class:`~es_simhash.decide.default.DefaultRule`, which builds this from its settings). Every test tells the
    :class:`~es_simhash.decide.trace.Step` it made to a recorder (:func:`~es_simhash.decide.trace.recorder`), which
    keeps it in a trace or, for a decision nobody traces, drops it: one code path either way."""

    k: int
    short_k: int
    min_shared_fraction: float
    sentence_k: int
    sentence_near_k: int
    min_shared_sentences: float
    min_contained_sentences: int
    sentence_sketch_support: int
    simhash_sketch_support: int
    far_sentence_k: int
    far_shared_sentences: float
    number_guard: float
    event_guard: bool
    place_guard: float
    fuzzy_k: int
    fuzzy_shared: float
    fuzzy_rewritten: int
    fuzzy_min_shared: int
    fuzzy_chance: float
    fuzzy_verbatim: float
    fuzzy_far: int
    min_shared_hashes: int

    def match(self, fp: Fingerprint, cand: StoredDoc, boilerplate: frozenset[int],
              trace: list[Step] | None = None) -> Decision | None:
        """Whether ``fp`` duplicates ``cand`` alone (the rules over all candidates are the rule's). ``trace``: a list
        that gets one step per test made; the tests are the same, in the same order, with or without it."""
        return self.match_noting(fp, cand, boilerplate, recorder(trace))

    def match_noting(self, fp: Fingerprint, cand: StoredDoc, boilerplate: frozenset[int], note: Note
                     ) -> Decision | None:
        """:meth:`match`, each step it makes told to ``note`` (:func:`~es_simhash.decide.trace.recorder`)."""
        other = cand.fingerprint
        if fp.version != other.version:
            note("versions", False, {"a": fp.version, "b": other.version})
            return None
        if same_content(fp, other):
            note("exact", True, _NO_VALUES)
            return Decision(cand, 0, "exact")
        if fp.empty or other.empty:
            note("features", False, _NO_VALUES)
            return None
        distance = fp.distance(other)
        if self._by_simhash(fp, other, distance, boilerplate, note):
            return self._unless_other_event(fp, other, Decision(cand, distance, "simhash"), note)
        if not (fp.hashes and other.hashes):
            note("signature", False, _NO_VALUES)
            return None
        shared, shared_sketch, shared_fuzzy = self._shared(fp, other, boilerplate, note)
        if not (shared or shared_sketch or shared_fuzzy):  # no shared sentence, fuzzy or sketch hash
            note("shared", False, _NO_VALUES)
            return None
        n_shared, n_sketch = len(shared), len(shared_sketch)
        if (n_shared and self._by_sentences(fp, other, distance, n_shared, n_sketch, boilerplate, note)) or (
                n_sketch and self._by_sketch(fp, other, n_sketch, boilerplate, note)) or (
                shared_fuzzy and self._by_fuzzy(fp, other, distance, shared_fuzzy, n_shared, boilerplate, note)):
            return self._unless_other_event(fp, other, Decision(cand, distance, "sentences"), note)
        return None

    def _unless_other_event(self, fp: Fingerprint, other: Fingerprint, decision: Decision, note: Note
                            ) -> Decision | None:
        """``decision`` (a match, by any test but an exact copy), unless the two texts report other events
        (:meth:`_other_event`: asked of a match only)."""
        return None if self._other_event(fp, other, note) else decision

    def _other_event(self, fp: Fingerprint, other: Fingerprint, note: Note) -> bool:
        """Whether the two texts report other events. Dates and places name an event, figures describe it
        (:meth:`_named_event`); where neither dates nor places are given by both, the figures decide
        (:meth:`_other_numbers`; ``event_guard`` off: figures only)."""
        if self.event_guard:
            named = self._named_event(fp, other, note)
            if named is not None:
                return named
        return self._other_numbers(fp, other, note)

    def renamed(self, fp: Fingerprint, other: Fingerprint) -> bool:
        """Whether ``other`` reports another event than ``fp`` by its dates or places (:meth:`_named_event`) and
        gives ``fp``'s figures (:meth:`_other_numbers` finds none other): the same report with its event's names
        replaced. The template rule's test of who holds a template for ``fp``
        (:class:`~es_simhash.decide.crowding.TemplateCrowding`)."""
        silent = recorder(None)
        return self.event_guard and self._named_event(fp, other, silent) is True \
            and not self._other_numbers(fp, other, silent)

    def _named_event(self, fp: Fingerprint, other: Fingerprint, note: Note) -> bool | None:
        """Whether the texts' dates and places name other events (True), one event (False), or neither (None): where
        both texts give dates of one kind (days of the month, months, weekdays, years:
        :data:`~es_simhash.fingerprint.events.DATE_FIELDS`) and share fewer than half of the fewer's (none of one
        date each, one of four days: a report's days moved on), or open with datelines of other places (where each
        report was filed: :func:`~es_simhash.fingerprint.events.other_datelines`), or name other places
        (:meth:`_other_places`), they are other events (two years' first snow, two days' earthquake bulletins, two
        cities' accidents, written from one template); where they give the same dates and places, they are one
        event, whatever figures were revised (an update). A page's own dates (a header, a byline time) are not
        read: only lines that end a sentence are."""
        named: dict[str, Any] = {}
        a, b = fp.date_bag, other.date_bag
        if a and b:
            for kind, bits in DATE_FIELDS:
                if a & bits and b & bits:
                    shared = (a & b & bits).bit_count()
                    if 2 * shared < min((a & bits).bit_count(), (b & bits).bit_count()):
                        note("event", False, {"other": kind})
                        return True
                    named[kind] = shared
        a, b = fp.place_bag, other.place_bag
        if other_datelines(*datelines(a, b)):
            note("event", False, {"other": "dateline"})
            return True
        if a & NAMED_PLACES and b & NAMED_PLACES:  # (both name places in their sentences)
            mine, theirs = place_keys(a, b)
            if self._other_places(mine, theirs):
                note("event", False, {"other": "places", "only": min(len(mine - theirs), len(theirs - mine)),
                                      "shared": len(mine & theirs), "place_guard": self.place_guard})
                return True
            named["places"] = len(mine & theirs)
        if named:
            note("event", True, {"same": named})
            return False
        return None

    def _other_places(self, mine: frozenset[int], theirs: frozenset[int]) -> bool:
        """Whether two texts name other places, on the places of their bags
        (:func:`~es_simhash.fingerprint.events.place_keys`): each names a place the other never names, and the fewer
        of those are more than ``place_guard`` of the places both name (0, the default: any). A copy cut short names
        a part of its original's places (the other names none the copy lacks); a report of another place replaces
        its event's place."""
        only = min(len(mine - theirs), len(theirs - mine))
        return only > 0 and only > self.place_guard * len(mine & theirs)

    @staticmethod
    def _shared(fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int], note: Note
                ) -> tuple[set[int], set[int], set[int]]:
        """The sentence, sketch and fuzzy hashes the two share, boilerplate left out."""
        shared = set(fp.sentences).intersection(other.sentences) if fp.sentences and other.sentences else set()
        shared_sketch = set(fp.sketch).intersection(other.sketch) if fp.sketch and other.sketch else set()
        shared_fuzzy = set(fp.fuzzy).intersection(other.fuzzy) if fp.fuzzy and other.fuzzy else set()
        if boilerplate:
            held = len(shared) + len(shared_sketch) + len(shared_fuzzy)
            shared -= boilerplate
            shared_sketch -= boilerplate
            shared_fuzzy -= boilerplate
            dropped = held - len(shared) - len(shared_sketch) - len(shared_fuzzy)
            if dropped:
                note("boilerplate", None, {"dropped": dropped})
        return shared, shared_sketch, shared_fuzzy

    def _by_fuzzy(self, fp: Fingerprint, other: Fingerprint, distance: int, shared: set[int], n_signature: int,
                  boilerplate: frozenset[int], note: Note) -> bool:
        """The fuzzy branch (two texts without a sketch), on the ``shared`` fuzzy sentence hashes (none of them
        boilerplate; ``n_signature``: the signature sentences shared). *Rewritten*: within ``fuzzy_k`` bits, at
        least ``fuzzy_min_shared`` (and ``min_shared_hashes``) and ``fuzzy_shared`` of the smaller set,
        ``fuzzy_rewritten`` of them for sentences that differ, and more than chance gives (``fuzzy_chance`` times
        the product of the sizes). *Verbatim*: at least ``fuzzy_verbatim`` of the smaller set (and
        ``min_shared_hashes``) within ``sentence_k`` bits; or at least ``fuzzy_far`` of twice that many or more
        each, within ``fuzzy_k`` bits or with two signature sentences shared too (a copy cut short)."""
        mine = len([h for h in fp.fuzzy if h not in boilerplate])
        theirs = len([h for h in other.fuzzy if h not in boilerplate])
        smaller, n_fuzzy = min(mine, theirs), len(shared)
        rewritten = fp.rewritten(other, shared)
        chance = self.fuzzy_chance * mine * theirs
        by_rewritten = (distance <= self.fuzzy_k and n_fuzzy >= self.fuzzy_shared * smaller
                        and n_fuzzy >= max(self.min_shared_hashes, self.fuzzy_min_shared, chance)
                        and rewritten >= max(1, self.fuzzy_rewritten))
        far = (bool(self.fuzzy_far) and n_fuzzy >= self.fuzzy_far and smaller >= 2 * self.fuzzy_far
               and (distance <= self.fuzzy_k or n_signature >= 2))
        by_verbatim = (bool(self.fuzzy_verbatim)
                       and n_fuzzy >= max(self.min_shared_hashes, self.fuzzy_verbatim * smaller)
                       and (distance <= self.sentence_k or far))
        note("fuzzy", by_rewritten or by_verbatim, {
            "shared": n_fuzzy, "smaller": smaller, "rewritten": rewritten, "distance": distance, "chance": chance,
            "by_rewritten": by_rewritten, "by_verbatim": by_verbatim, "fuzzy_k": self.fuzzy_k,
            "fuzzy_min_shared": self.fuzzy_min_shared, "fuzzy_shared": self.fuzzy_shared,
            "fuzzy_rewritten": self.fuzzy_rewritten, "fuzzy_verbatim": self.fuzzy_verbatim,
            "sentence_k": self.sentence_k, "fuzzy_far": self.fuzzy_far})
        return by_rewritten or by_verbatim

    def _other_numbers(self, fp: Fingerprint, other: Fingerprint, note: Note) -> bool:
        """Whether the two texts give other numbers: both give a few, about as many (a template's report of another
        event replaces its numbers one for one), and fewer than ``number_guard`` of the numbers of the one that
        gives fewer are the other's too (an update changes a few figures; a copy cut short gives a part of them)."""
        if not (self.number_guard and fp.number_bag and other.number_bag
                and numbers_alike_in_count(fp.number_bag, other.number_bag)):
            return False
        contained = numbers_contained(fp.number_bag, other.number_bag)
        note("numbers", contained >= self.number_guard, {"contained": contained, "number_guard": self.number_guard})
        return contained < self.number_guard

    def _by_simhash(self, fp: Fingerprint, other: Fingerprint, distance: int, boilerplate: frozenset[int],
                    note: Note) -> bool:
        """The simhash branch: within ``k`` bits (both long) or ``short_k`` bits (both short), with sketch support
        when both carry a sketch."""
        if fp.short:
            bound = self.short_k if other.short else None
        else:
            bound = None if other.short else self.k
        if bound is None:  # one short, one long
            note("simhash", False, {"case": "mixed", "distance": distance})
            return False
        note("simhash", distance <= bound, {"case": "short" if fp.short else "long", "distance": distance,
                                            "bound": bound})
        if distance > bound:
            return False
        if not (self.simhash_sketch_support and has_sketch(fp) and has_sketch(other)):
            return True
        support = sketch_support(fp, other, boilerplate)
        if support < self.simhash_sketch_support:
            note("simhash-sketch", False, {"support": support, "needed": self.simhash_sketch_support})
            return False
        return True

    def _by_sentences(self, fp: Fingerprint, other: Fingerprint, distance: int, n_shared: int, n_sketch: int,
                      boilerplate: frozenset[int], note: Note) -> bool:
        """The sentence branch: ``n_shared`` long sentences shared (none of them boilerplate), near enough, or
        enough of the smaller signature, or all of it; between sketched texts with sketch support too."""
        smaller = min(len([h for h in fp.sentences if h not in boilerplate]),
                      len([h for h in other.sentences if h not in boilerplate]))
        near = distance <= self.sentence_near_k
        fraction = distance <= self.sentence_k and n_shared >= self.min_shared_sentences * smaller
        far = distance <= self.far_sentence_k and n_shared >= self.far_shared_sentences * smaller
        contained = bool(self.min_contained_sentences) and n_shared == smaller >= self.min_contained_sentences
        note("sentences", near or fraction or far or contained, {
            "shared": n_shared, "smaller": smaller, "near": near, "fraction": fraction, "far": far,
            "contained": contained, "sentence_near_k": self.sentence_near_k, "sentence_k": self.sentence_k,
            "min_shared_sentences": self.min_shared_sentences, "far_sentence_k": self.far_sentence_k,
            "far_shared_sentences": self.far_shared_sentences,
            "min_contained_sentences": self.min_contained_sentences})
        if not (near or fraction or far or contained):
            return False
        if self.sentence_sketch_support and n_sketch < self.sentence_sketch_support \
                and has_sketch(fp) and has_sketch(other):
            note("sentence-sketch", False, {"needed": self.sentence_sketch_support, "shared": n_sketch})
            return False
        return True

    def _by_sketch(self, fp: Fingerprint, other: Fingerprint, n_sketch: int, boilerplate: frozenset[int],
                   note: Note) -> bool:
        """The sketch branch: ``n_sketch`` shared sketch hashes are at least half of the smaller sketch (boilerplate
        left out) and at least ``min_shared_hashes``."""
        mine = len([h for h in fp.sketch if h not in boilerplate])
        theirs = len([h for h in other.sketch if h not in boilerplate])
        if not (mine and theirs):
            return False
        needed = max(self.min_shared_hashes, -(-min(mine, theirs) * self.min_shared_fraction // 1))
        note("sketch", n_sketch >= needed, {"shared": n_sketch, "needed": needed, "smaller": min(mine, theirs),
                                            "least": self.min_shared_hashes})
        return n_sketch >= needed
