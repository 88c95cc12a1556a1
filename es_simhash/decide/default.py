"""The default decision rule (:class:`DefaultRule`): exact, SimHash, sentence and sketch matches, the template rule
(hashes held by several clusters' candidates are a template's) and the meaning guard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from es_simhash.decide.rule import Decision, RuleBase, has_sketch
from es_simhash.fingerprint.hashes import contradicting_pair, text_contradicts
from es_simhash.fingerprint.model import SKETCH_BIT, Fingerprint, is_sketch
from es_simhash.index.base import StoredDoc
from es_simhash.lookup.candidates import MIN_SHARED_SKETCH

__all__ = ["DefaultRule"]


def _within(a: Fingerprint, b: Fingerprint, n: int) -> bool:
    """Whether one of two sketched fingerprints has fewer than ``n`` sketch hashes the other lacks while the other
    has ``n`` or more of its own: a text and the same text inside a template (two texts that differ a little
    both ways are not that)."""
    if not (n and has_sketch(a) and has_sketch(b)):
        return False
    sa = {h for h in a.sentences if h >= SKETCH_BIT}
    sb = {h for h in b.sentences if h >= SKETCH_BIT}
    own_a, own_b = len(sa - sb), len(sb - sa)
    return own_a < n <= own_b or own_b < n <= own_a


def _sketch_support(a: Fingerprint, b: Fingerprint, boilerplate: frozenset[int]) -> int:
    """Sketch hashes two fingerprints share, boilerplate left out."""
    return len({h for h in a.sentences if h >= SKETCH_BIT and h not in boilerplate}.intersection(b.sentences))


def _opposite(a: Fingerprint, b: Fingerprint) -> bool:
    """Whether two texts say opposite things: by their whole texts, or by a pair of their signature sentences
    (:func:`~es_simhash.fingerprint.text_contradicts`, :func:`~es_simhash.fingerprint.contradicts`)."""
    return text_contradicts(a, b) or contradicting_pair(a.sentences, b.sentences)


def _same_content(a: Fingerprint, b: Fingerprint) -> bool:
    """Same letters, digits and ideographs after normalisation (an exact duplicate)."""
    return bool(a.n_chars) and a.content_hash == b.content_hash and a.n_chars == b.n_chars


@dataclass
class DefaultRule(RuleBase):
    """The default decision rule (tuned on the dev split of ``bench/accuracy.py``; see ``docs/accuracy.md``).

    * **exact**: same content (letters, digits and ideographs equal after normalisation), distance 0;
    * **simhash**: SimHash within ``k`` bits when both texts are long, within ``short_k`` bits when both are short;
      when both carry a shingle sketch, also sharing ``simhash_sketch_support`` sketch hashes that are not
      boilerplate (a short post of a template weighs mostly the template's words);
    * **sentences**: the texts share long sentences that are not boilerplate, and either their SimHashes are
      within ``sentence_near_k`` bits and they share one, or within ``sentence_k`` bits and they share at least
      ``min_shared_sentences`` of the smaller signature (or within ``far_sentence_k`` bits and at least
      ``far_shared_sentences`` of it; 0: off, :meth:`rechecked` turns it on), or all of one text's signature
      sentences (at least
      ``min_contained_sentences``; 0: off) are in the other's (a short article inside a big site template: the template moves the SimHash any
      distance). A reprint wrapped in a site header/footer, with ads inserted, sentences deleted or the tail cut
      keeps its longest sentences but moves more than ``k`` bits; shingle-sketch hashes do not count here,
      except that between two texts that both carry a sketch the sentence match also needs
      ``sentence_sketch_support`` shared sketch hashes (not boilerplate): two short posts of one template share
      its sentences (a share line, a header, a disclaimer) but not the characters of their own bodies;
    * **sketch**: both texts carry a shingle sketch (texts under ``Fingerprinter.sketch_chars``) and share at
      least ``min_shared_fraction`` of the smaller sketch, and at least two of its hashes
      (:data:`~es_simhash.index.base.MIN_SHARED_SKETCH`; not boilerplate), whatever their Hamming distance:
      an estimated character-shingle Jaccard similarity of about one half or more, the half counted over the
      sketch hashes that are not boilerplate. (A sketch of one or two hashes is a text of a few characters: only
      an exact copy duplicates it.)

    The Hamming bounds on the sentence match are what keep unrelated pages apart that share a site's boilerplate
    sentences before they are frequent enough to count as boilerplate. So does ``max_sentence_clusters``: a
    sentence that candidates of more than that many clusters hold (a site template's disclaimer, held by the
    different articles of that site) is treated as boilerplate for this decision; an article's own sentence is
    held by its reprints, which sit in one cluster (0 turns this off). With ``crowd_sketch`` shingle-sketch hashes
    crowd the same way (a template's characters: a share line, a site's navigation and footer around a short
    text). ``crowd_k`` keeps one false merge from hiding a template for good: two candidates of one cluster count
    as one holder only when their SimHashes are within ``crowd_k`` bits, their content is the same, or one's sketch
    is inside the other's but for fewer than ``crowd_own`` hashes while the other has that many of its own (a post
    and its bare repost: the template moves the SimHash any distance), so the posts of a template that were
    wrongly put in one cluster, whose bodies differ, still count as several holders (None: count clusters only).
    ``crowd_own`` tells a template's posts apart when its template is most of each post, so their SimHashes are all
    within ``crowd_k`` bits: two members of one cluster count as two holders too when,
    besides the hashes the query shares with them, each has at least ``crowd_own`` sketch hashes of its own, none of
    them shared with the other, and the query has as many that neither has (three texts that share the hash and
    differ, each in a part of its own: a template's posts, each with its own body; a reprint's copies differ from
    each other in their own wrappers, but the reprint being decided then brings no part of its own; 0: off; 8, the
    hashes one line adds to a sketch, ``Fingerprinter.line_sketch``). It only looks at the candidates, so every
    backend decides alike.

    ``meaning_guard``: between two texts that both carry a shingle sketch (short texts, where one sentence is
    much of the meaning), a pair of signature sentences that :func:`~es_simhash.fingerprint.contradicts` (a
    negation inserted, or two Chinese words swapped), or texts that
    :func:`~es_simhash.fingerprint.text_contradicts` (the same, over the whole text, and the same words in another
    order in any language) veto the candidate's whole cluster: "他同意这个方案" is not a reprint of "他不同意这个方案",
    nor is "张三打了李四" of "李四打了张三", nor "Smith hit Jones" of "Jones hit Smith", though every shingle method
    calls them near duplicates. Documents without usable features are never duplicates of anything but an exact copy with
    content. Among several qualifying candidates the nearest wins, then a canonical one, then the smallest id
    (so every backend breaks ties the same way).
    """

    k: int = 3
    min_shared_fraction: float = 0.5
    sentence_k: int = 16
    sentence_near_k: int = 8
    min_shared_sentences: float = 0.4
    min_contained_sentences: int = 2
    short_k: int = 7
    max_sentence_clusters: int = 1
    meaning_guard: bool = True
    crowd_k: int | None = 20
    crowd_own: int = 8
    crowd_sketch: bool = True
    sentence_sketch_support: int = 1
    simhash_sketch_support: int = 1
    far_sentence_k: int = 0
    far_shared_sentences: float = 0.5

    @property
    def candidate_distance(self) -> int:
        return max(self.k, self.short_k)

    @classmethod
    def rechecked(cls, **settings: Any) -> "DefaultRule":
        """The rule for runs whose decisions are taken again once every document is indexed
        (:func:`~es_simhash.cluster.recheck`; ``es-simhash dedup`` does, ``DefaultRule()`` is for decisions
        that stay as made on arrival, as ``es-simhash index`` makes them): the sentence match also reaches
        ``far_sentence_k`` = 24 bits when half of the smaller signature is shared (chosen on the dev split with
        the recheck). A reprint wrapped in a site's header, sponsor and footer lines moves 17-24 bits and keeps
        most of its few long sentences; two articles of one site share the site's lines too, and on arrival
        nothing says yet that those are the site's, but the recheck counts them as boilerplate once other articles
        of the site hold them, and takes the merge back. (Half, not ``min_shared_sentences``' 40%: two follow-up
        stories that reuse two paragraphs share 2 of 5 signature sentences; on BBC News, 40% merged 8 such pairs
        of 2,225 articles, half merges 1.) Without the recheck the looser bound costs more than it finds
        (docs/accuracy.md). ``settings``: any other field, as for ``DefaultRule(...)``."""
        return cls(**{"far_sentence_k": 24, **settings})

    def decide(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> Decision | None:
        found = self.matches(fp, candidates, boilerplate)
        return found[0] if found else None

    def matches(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> list[Decision]:
        """Every candidate ``fp`` duplicates, the one :meth:`decide` picks first: decided together, so the rules
        that look at all candidates (boilerplate by cluster count, the meaning guard's veto of a whole cluster)
        apply to each (``DedupEngine.check`` lists these)."""
        vetoed = self._vetoed(fp, candidates)
        if self.max_sentence_clusters and fp.sentences and len(candidates) > self.max_sentence_clusters:
            # (no hash can have more holders than there are candidates)
            # a text that says the opposite (vetoed) shares nearly everything with fp, but is no template's holder
            boilerplate = boilerplate | self._crowded(fp, [c for c in candidates if c.cluster not in vetoed]
                                                      if vetoed else candidates)
        found: list[tuple[tuple[int, int, str], Decision]] = []
        for cand in candidates:
            decision = self._match(fp, cand, boilerplate)
            if decision is None or (cand.cluster in vetoed and decision.reason != "exact"):
                continue
            found.append(((decision.distance, 0 if cand.is_canonical else 1, cand.id), decision))
        found.sort(key=lambda x: x[0])
        return [d for _, d in found]

    def _vetoed(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[str]:
        """The clusters of ``candidates`` the meaning guard vetoes for ``fp`` (none without ``meaning_guard``)."""
        return self._contradicted(fp, candidates) if self.meaning_guard else frozenset()

    def crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """The sentence and sketch hashes of ``fp`` that ``candidates`` show to be a template's (held by more than
        ``max_sentence_clusters`` holders, see :meth:`matches`): what the rule counts as boilerplate beyond the
        document counts. :func:`~es_simhash.cluster.recheck` passes the candidates of the other clusters, of
        any arrival: what the whole index knows of the template by now."""
        if not (self.max_sentence_clusters and fp.sentences and len(candidates) > self.max_sentence_clusters):
            return frozenset()
        vetoed = self._vetoed(fp, candidates)
        return self._crowded(fp, [c for c in candidates if c.cluster not in vetoed] if vetoed else candidates)

    @staticmethod
    def _contradicted(fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[str]:
        """Clusters with a sketched candidate that contradicts ``fp`` (sketched too): by their whole texts, or by a
        pair of their signature sentences."""
        if not has_sketch(fp):
            return frozenset()
        out: set[str] = set()
        for cand in candidates:
            other = cand.fingerprint
            if cand.cluster in out or not has_sketch(other) or other.content_hash == fp.content_hash:
                continue
            if _opposite(fp, other):
                out.add(cand.cluster)
        return frozenset(out)

    def _crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """Sentence (and, with ``crowd_sketch``, sketch) hashes of ``fp`` held by more than ``max_sentence_clusters``
        holders among the candidates: a holder is a cluster, or with ``crowd_k`` a group of its members within
        ``crowd_k`` bits of each other (candidates taken in (cluster, id) order, so every backend groups alike)."""
        mine = {h for h in fp.sentences if self.crowd_sketch or not is_sketch(h)}
        holders: dict[int, list[StoredDoc]] = {}
        for cand in candidates:
            for h in mine.intersection(cand.fingerprint.sentences):
                holders.setdefault(h, []).append(cand)
        out = set()
        limit = self.max_sentence_clusters
        known: dict[tuple[str, str], bool] = {}  # pairs already compared (the same pairs hold many hashes)

        def one_holder(a: StoredDoc, b: StoredDoc) -> bool:
            same = known.get((a.id, b.id))
            if same is None:
                same = known[(a.id, b.id)] = self._one_holder(a, b, fp)
            return same

        for h, held in holders.items():
            if len(held) <= limit:
                continue
            groups: list[list[StoredDoc]] = []
            for c in sorted(held, key=lambda c: (c.cluster, c.id)):
                home = next((g for g in groups if any(one_holder(m, c) for m in g)), None)
                if home is not None:
                    home.append(c)
                    continue
                groups.append([c])
                if len(groups) > limit:
                    out.add(h)
                    break
        return frozenset(out)

    def _one_holder(self, a: StoredDoc, b: StoredDoc, query: Fingerprint) -> bool:
        """Whether two candidates hold the hashes they share with ``query`` as one text: members of one cluster
        (within ``crowd_k`` bits of each other, with the same content, or one inside the other) that do not each
        differ from the other and from the query in a part of their own (``crowd_own``), or a text and its
        contradicting twin (the same words with a negation inserted or swapped: the meaning guard keeps them in two
        clusters)."""
        fa, fb = a.fingerprint, b.fingerprint
        if fa.content_hash == fb.content_hash and a.cluster == b.cluster:
            return True
        if a.cluster == b.cluster and (self.crowd_k is None or fa.distance(fb) <= self.crowd_k
                                       or _within(fa, fb, self.crowd_own)) \
                and not self._three_own_parts(fa, fb, query):
            return True
        return self.meaning_guard and self.crowd_sketch and bool(fa.sentences) and bool(fb.sentences) \
            and _opposite(fa, fb)

    def _three_own_parts(self, a: Fingerprint, b: Fingerprint, query: Fingerprint) -> bool:
        """Whether ``a``, ``b`` and ``query`` (all sketched) each have ``crowd_own`` sketch hashes that the other two
        lack (``a``'s and ``b``'s counted outside the query's hashes, and disjoint): three texts around one
        template rather than copies of one text (``crowd_own``)."""
        n = self.crowd_own
        if not (n and has_sketch(a) and has_sketch(b) and has_sketch(query)):
            return False
        theirs = set(query.sentences)
        own_a = {h for h in a.sentences if h >= SKETCH_BIT and h not in theirs}
        own_b = {h for h in b.sentences if h >= SKETCH_BIT and h not in theirs}
        if len(own_a) < n or len(own_b) < n or not own_a.isdisjoint(own_b):
            return False
        return len({h for h in query.sentences if h >= SKETCH_BIT}.difference(a.sentences, b.sentences)) >= n

    def _match(self, fp: Fingerprint, cand: StoredDoc, boilerplate: frozenset[int],
               why: list[str] | None = None) -> Decision | None:
        """Whether ``fp`` duplicates ``cand`` alone (the rules over all candidates are :meth:`matches`'). ``why``:
        a list that gets one line per test made, in words (:meth:`explain`)."""
        other = cand.fingerprint
        if fp.version != other.version:
            if why is not None:
                why.append(f"fingerprint versions differ ({fp.version} and {other.version}): never duplicates")
            return None
        if _same_content(fp, other):
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
        if not (fp.sentences and other.sentences):
            if why is not None:
                why.append("no sentence signature on one side")
            return None
        shared = set(fp.sentences).intersection(other.sentences)
        if boilerplate:
            if why is not None and shared & boilerplate:
                why.append(f"{len(shared & boilerplate)} shared sentence or sketch hashes are boilerplate "
                           "(held by too many documents, or by candidates of several clusters): not counted")
            shared -= boilerplate
        if not shared:  # neither a shared sentence nor enough of a shared sketch (it needs at least one hash)
            if why is not None:
                why.append("no sentence or shingle-sketch hash shared (besides boilerplate)")
            return None
        n_sketch = len([h for h in shared if h >= SKETCH_BIT])  # is_sketch, inlined
        n_shared = len(shared) - n_sketch  # shared sentence hashes
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
        support = _sketch_support(fp, other, boilerplate)
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
        smaller = min(len([h for h in fp.sentences if h < SKETCH_BIT and h not in boilerplate]),
                      len([h for h in other.sentences if h < SKETCH_BIT and h not in boilerplate]))
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
        mine = len([h for h in fp.sentences if h >= SKETCH_BIT and h not in boilerplate])
        theirs = len([h for h in other.sentences if h >= SKETCH_BIT and h not in boilerplate])
        if not (mine and theirs):
            return False
        needed = max(MIN_SHARED_SKETCH, -(-min(mine, theirs) * self.min_shared_fraction // 1))
        if why is not None:
            why.append(f"{n_sketch} shingle-sketch hashes shared, {needed:.0f} needed (half of the smaller "
                       f"sketch of {min(mine, theirs)}, at least {MIN_SHARED_SKETCH})")
        return n_sketch >= needed

    def explain(self, fp: Fingerprint, other: Fingerprint, boilerplate: frozenset[int] = frozenset()
                ) -> dict[str, Any]:
        """Why ``fp`` is, or is not, a duplicate of ``other`` (as if ``other`` were its only candidate): what the
        two share, each test the rule made, in words, and whether the meaning guard vetoed it. A dict, ready
        for JSON."""
        cand = StoredDoc("b", other, cluster="b")
        why: list[str] = []
        decision = self._match(fp, cand, boilerplate, why)
        vetoed = None
        if decision is not None and decision.reason != "exact" and self.meaning_guard and self._contradicted(fp, [cand]):
            vetoed = ("the meaning guard: the texts (or a pair of their sentences) differ by a negation word or by "
                      "words in another order")
            why.append(f"vetoed by {vetoed}")
            decision = None

        def side(f: Fingerprint) -> dict[str, Any]:
            return {"short": f.short, "letters": f.n_chars, "features": f.n_features,
                    "long_sentences": len([h for h in f.sentences if h < SKETCH_BIT]),
                    "sketch": len([h for h in f.sentences if h >= SKETCH_BIT])}

        shared = set(fp.sentences) & set(other.sentences)
        return {
            "duplicate": decision is not None,
            "reason": decision.reason if decision is not None else None,
            "distance": fp.distance(other),
            "exact": _same_content(fp, other),
            "shared_segments": sum(a == b for a, b in zip(fp.segments, other.segments)),
            "shared_sentences": len([h for h in shared if h < SKETCH_BIT]),
            "shared_sketch": len([h for h in shared if h >= SKETCH_BIT]),
            "a": side(fp),
            "b": side(other),
            "vetoed_by": vetoed,
            "why": why,
        }
