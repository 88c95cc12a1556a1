"""The tests of one candidate (:meth:`MatchTests._match`): exact, SimHash, sentences, sketch; each says in words
why it passed or failed when asked (``why``: :meth:`DefaultRule.explain`)."""

from __future__ import annotations

from es_simhash.decide.compare import same_content, sketch_support
from es_simhash.decide.rule import Decision, has_sketch
from es_simhash.fingerprint.hashes import numbers_alike_in_count, numbers_contained
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import StoredDoc
from es_simhash.lookup.candidates import MIN_SHARED_SKETCH


class MatchTests:
    """Whether a fingerprint duplicates one candidate; the bounds are :class:`DefaultRule`'s fields."""

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
    fuzzy_k: int
    fuzzy_shared: float
    fuzzy_rewritten: int
    fuzzy_min_shared: int
    fuzzy_chance: float
    fuzzy_verbatim: float
    fuzzy_far: int

    def _match(self, fp: Fingerprint, cand: StoredDoc, boilerplate: frozenset[int],
               why: list[str] | None = None) -> Decision | None:
        """Whether ``fp`` duplicates ``cand`` alone (the rules over all candidates are :meth:`matches`'). ``why``:
        a list that gets one line per test made, in words (:meth:`explain`)."""
        other = cand.fingerprint
        if fp.version != other.version:
            if why is not None:
                why.append(f"fingerprint versions differ ({fp.version} and {other.version}): never duplicates")
            return None
        if same_content(fp, other):
            if why is not None:
                why.append("same letters, digits and ideographs after normalisation: exact")
            return Decision(cand, 0, "exact")
        if fp.empty or other.empty:
            if why is not None:
                why.append("one text has no usable features (empty, punctuation or stop words): only an exact copy "
                           "could match")
            return None
        if why is not None and self._other_numbers(fp, other, why):  # (else asked of a match only: below)
            return None
        distance = fp.distance(other)
        if self._by_simhash(fp, other, distance, boilerplate, why):
            return self._unless_other_numbers(fp, other, Decision(cand, distance, "simhash"), why)
        if not (fp.hashes and other.hashes):
            if why is not None:
                why.append("no sentence signature on one side")
            return None
        shared, shared_sketch, shared_fuzzy = self._shared(fp, other, boilerplate, why)
        if not (shared or shared_sketch or shared_fuzzy):  # no shared sentence, fuzzy or sketch hash
            if why is not None:
                why.append("no sentence, fuzzy or shingle-sketch hash shared (besides boilerplate)")
            return None
        n_shared, n_sketch = len(shared), len(shared_sketch)
        if (n_shared and self._by_sentences(fp, other, distance, n_shared, n_sketch, boilerplate, why)) or (
                n_sketch and self._by_sketch(fp, other, n_sketch, boilerplate, why)) or (
                shared_fuzzy and self._by_fuzzy(fp, other, distance, shared_fuzzy, n_shared, boilerplate, why)):
            return self._unless_other_numbers(fp, other, Decision(cand, distance, "sentences"), why)
        return None

    def _unless_other_numbers(self, fp: Fingerprint, other: Fingerprint, decision: Decision,
                              why: list[str] | None) -> Decision | None:
        """``decision``, unless the two texts give other numbers (:meth:`_other_numbers`; with ``why``, already
        asked first)."""
        return decision if why is not None or not self._other_numbers(fp, other, None) else None

    @staticmethod
    def _shared(fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int], why: list[str] | None
                ) -> tuple[set[int], set[int], set[int]]:
        """The sentence, sketch and fuzzy hashes the two share, boilerplate left out."""
        shared = set(fp.sentences).intersection(other.sentences) if fp.sentences and other.sentences else set()
        shared_sketch = set(fp.sketch).intersection(other.sketch) if fp.sketch and other.sketch else set()
        shared_fuzzy = set(fp.fuzzy).intersection(other.fuzzy) if fp.fuzzy and other.fuzzy else set()
        if boilerplate:
            dropped = len(shared & boilerplate) + len(shared_sketch & boilerplate) + len(shared_fuzzy & boilerplate)
            if why is not None and dropped:
                why.append(f"{dropped} shared sentence, fuzzy or sketch hashes are boilerplate "
                           "(held by too many documents, or by candidates of several clusters): not counted")
            shared -= boilerplate
            shared_sketch -= boilerplate
            shared_fuzzy -= boilerplate
        return shared, shared_sketch, shared_fuzzy

    def _by_fuzzy(self, fp: Fingerprint, other: Fingerprint, distance: int, shared: set[int], n_signature: int,
                  boilerplate: frozenset[int], why: list[str] | None) -> bool:
        """The fuzzy branch (two texts without a sketch), on the ``shared`` fuzzy sentence hashes (none of them
        boilerplate; ``n_signature``: the signature sentences shared). Rewritten: within ``fuzzy_k`` bits, at least
        ``fuzzy_min_shared`` and ``fuzzy_shared`` of the smaller set shared, at least ``fuzzy_rewritten`` of them for
        sentences that differ (a word or two replaced: a site repeats its lines word for word), and more than two
        texts on one subject share by chance (``fuzzy_chance`` times the product of the two sets' sizes: a
        sentence's least shingle hash is now and then a common phrase's). Verbatim: at least ``fuzzy_verbatim`` of
        the smaller set (and two) shared, whatever their sentences, within ``sentence_k`` bits; or, when at least ``fuzzy_far`` are shared and each
        text has twice that many, within ``fuzzy_k`` bits or at any distance with two signature sentences shared
        too: a copy cut short, in a site's page or not."""
        mine = len([h for h in fp.fuzzy if h not in boilerplate])
        theirs = len([h for h in other.fuzzy if h not in boilerplate])
        smaller, n_fuzzy = min(mine, theirs), len(shared)
        rewritten = fp.rewritten(other, shared)
        chance = self.fuzzy_chance * mine * theirs
        by_rewritten = (distance <= self.fuzzy_k and n_fuzzy >= self.fuzzy_shared * smaller
                        and n_fuzzy >= max(2, self.fuzzy_min_shared, chance)
                        and rewritten >= max(1, self.fuzzy_rewritten))
        far = (bool(self.fuzzy_far) and n_fuzzy >= self.fuzzy_far and smaller >= 2 * self.fuzzy_far
               and (distance <= self.fuzzy_k or n_signature >= 2))
        by_verbatim = (bool(self.fuzzy_verbatim) and n_fuzzy >= max(2, self.fuzzy_verbatim * smaller)
                       and (distance <= self.sentence_k or far))
        if why is not None:
            why.append(f"{n_fuzzy} of the smaller set's {smaller} fuzzy sentence hashes shared, {rewritten} of them "
                       f"for sentences that differ: rewritten (within fuzzy_k = {self.fuzzy_k} bits ({distance}), at "
                       f"least {self.fuzzy_min_shared} and {self.fuzzy_shared:.0%} shared, {self.fuzzy_rewritten} "
                       f"rewritten and {chance:.1f} by chance): {'yes' if by_rewritten else 'no'}; verbatim (at "
                       f"least {self.fuzzy_verbatim:.0%} shared, within sentence_k = {self.sentence_k} bits, or "
                       f"fuzzy_far = {self.fuzzy_far} shared of {2 * self.fuzzy_far} or more within fuzzy_k bits or "
                       f"with two signature sentences): {'yes' if by_verbatim else 'no'}")
        return by_rewritten or by_verbatim

    def _other_numbers(self, fp: Fingerprint, other: Fingerprint, why: list[str] | None) -> bool:
        """Whether the two texts give other numbers: both give a few, about as many (their number bags are set and
        count alike: a template's report of another event replaces its numbers one for one), and fewer than
        ``number_guard`` of the numbers of the one that gives fewer are the other's too (two reports of one template
        about different events, other dates and figures, share almost none; an update of one event changes a few
        figures; a reprint cut short gives a part of them, one in a site's page some of the page's too)."""
        if not (self.number_guard and fp.number_bag and other.number_bag
                and numbers_alike_in_count(fp.number_bag, other.number_bag)):
            return False
        contained = numbers_contained(fp.number_bag, other.number_bag)
        if why is not None:
            why.append(f"numbers: about {contained:.0%} of the numbers of the text that gives fewer are the other's, "
                       f"number_guard = {self.number_guard:.0%} needed (other dates and figures are another event)")
        return contained < self.number_guard

    def _by_simhash(self, fp: Fingerprint, other: Fingerprint, distance: int, boilerplate: frozenset[int],
                    why: list[str] | None) -> bool:
        """The simhash branch: within ``k`` bits (both long) or ``short_k`` bits (both short), with sketch support
        when both carry a sketch."""
        if not fp.short and not other.short:
            if why is not None:
                why.append(f"both long: SimHash {distance} bits apart, the rule takes up to k = {self.k}")
            if distance > self.k:
                return False
        elif not (fp.short and other.short):
            if why is not None:
                why.append(f"one short, one long: SimHash ({distance} bits) is not enough on its own")
            return False
        else:
            if why is not None:
                why.append(f"both short: SimHash {distance} bits apart, the rule takes up to short_k = {self.short_k}")
            if distance > self.short_k:
                return False
        if not (self.simhash_sketch_support and has_sketch(fp) and has_sketch(other)):
            return True
        support = sketch_support(fp, other, boilerplate)
        if support < self.simhash_sketch_support:
            if why is not None:
                why.append(f"but they share {support} sketch hash(es) besides boilerplate, simhash_sketch_support = "
                           f"{self.simhash_sketch_support} needed (the words of a template, not of the texts)")
            return False
        return True

    def _by_sentences(self, fp: Fingerprint, other: Fingerprint, distance: int, n_shared: int, n_sketch: int,
                      boilerplate: frozenset[int], why: list[str] | None) -> bool:
        """The sentence branch: ``n_shared`` long sentences shared (none of them boilerplate), near enough, or
        enough of the smaller signature, or all of it; between sketched texts with sketch support too."""
        smaller = min(len([h for h in fp.sentences if h not in boilerplate]),
                      len([h for h in other.sentences if h not in boilerplate]))
        near = distance <= self.sentence_near_k
        fraction = distance <= self.sentence_k and n_shared >= self.min_shared_sentences * smaller
        far = distance <= self.far_sentence_k and n_shared >= self.far_shared_sentences * smaller
        contained = bool(self.min_contained_sentences) and n_shared == smaller >= self.min_contained_sentences
        if why is not None:
            why.append(
                f"{n_shared} of the smaller signature's {smaller} long sentences shared: within "
                f"sentence_near_k = {self.sentence_near_k} bits: {'yes' if near else 'no'}; within "
                f"sentence_k = {self.sentence_k} bits with at least {self.min_shared_sentences:.0%} shared: "
                f"{'yes' if fraction else 'no'}; "
                + (f"within far_sentence_k = {self.far_sentence_k} bits with at least "
                   f"{self.far_shared_sentences:.0%} shared: {'yes' if far else 'no'}; "
                   if self.far_sentence_k > self.sentence_k else "")
                + f"all of one signature (at least {self.min_contained_sentences}) in the other: "
                f"{'yes' if contained else 'no'}")
        if not (near or fraction or far or contained):
            return False
        if self.sentence_sketch_support and n_sketch < self.sentence_sketch_support \
                and has_sketch(fp) and has_sketch(other):
            if why is not None:
                why.append(f"both texts carry a sketch: a sentence match also needs "
                           f"{self.sentence_sketch_support} shared sketch hash(es) besides boilerplate, "
                           f"{n_sketch} shared (a template's sentences alone are not a duplicate)")
            return False
        return True

    def _by_sketch(self, fp: Fingerprint, other: Fingerprint, n_sketch: int, boilerplate: frozenset[int],
                   why: list[str] | None) -> bool:
        """The sketch branch: ``n_sketch`` shared sketch hashes are at least half of the smaller sketch (boilerplate
        left out) and at least :data:`MIN_SHARED_SKETCH`."""
        mine = len([h for h in fp.sketch if h not in boilerplate])
        theirs = len([h for h in other.sketch if h not in boilerplate])
        if not (mine and theirs):
            return False
        needed = max(MIN_SHARED_SKETCH, -(-min(mine, theirs) * self.min_shared_fraction // 1))
        if why is not None:
            why.append(f"{n_sketch} shingle-sketch hashes shared, {needed:.0f} needed (half of the smaller "
                       f"sketch of {min(mine, theirs)}, at least {MIN_SHARED_SKETCH})")
        return n_sketch >= needed
