"""The tests of one candidate (:meth:`MatchTests._match`): exact, SimHash, sentences, sketch; each says in words
why it passed or failed when asked (``why``: :meth:`DefaultRule.explain`)."""

from __future__ import annotations

from es_simhash.decide.compare import same_content, sketch_support
from es_simhash.decide.rule import Decision, has_sketch
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
        distance = fp.distance(other)
        if self._by_simhash(fp, other, distance, boilerplate, why):
            return Decision(cand, distance, "simhash")
        if not (fp.hashes and other.hashes):
            if why is not None:
                why.append("no sentence signature on one side")
            return None
        shared = set(fp.sentences).intersection(other.sentences)
        shared_sketch = set(fp.sketch).intersection(other.sketch)
        if boilerplate:
            dropped = len(shared & boilerplate) + len(shared_sketch & boilerplate)
            if why is not None and dropped:
                why.append(f"{dropped} shared sentence or sketch hashes are boilerplate "
                           "(held by too many documents, or by candidates of several clusters): not counted")
            shared -= boilerplate
            shared_sketch -= boilerplate
        if not (shared or shared_sketch):  # neither a shared sentence nor a shared sketch hash
            if why is not None:
                why.append("no sentence or shingle-sketch hash shared (besides boilerplate)")
            return None
        n_shared, n_sketch = len(shared), len(shared_sketch)
        if (n_shared and self._by_sentences(fp, other, distance, n_shared, n_sketch, boilerplate, why)) or (
                n_sketch and self._by_sketch(fp, other, n_sketch, boilerplate, why)):
            return Decision(cand, distance, "sentences")
        return None

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
