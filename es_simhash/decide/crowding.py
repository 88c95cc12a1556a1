"""The template rule of :class:`~es_simhash.decide.default.DefaultRule` (:class:`TemplateCrowding`): hashes held by
candidates of more than ``max_sentence_clusters`` holders are a template's (boilerplate for this decision), and the
meaning guard's veto."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from es_simhash.decide.compare import opposite, within
from es_simhash.decide.rule import has_sketch
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.records import StoredDoc

__all__ = ["TemplateCrowding"]


@dataclass(frozen=True, slots=True)
class TemplateCrowding:
    """Which hashes a template holds, from the candidates alone (so every backend decides alike), and which
    candidates' clusters the meaning guard vetoes; what each setting means:
    :class:`~es_simhash.decide.default.DefaultRule`, which builds this from its settings."""

    max_sentence_clusters: int
    meaning_guard: bool
    crowd_k: int | None
    crowd_own: int
    crowd_sketch: bool
    renamed: Callable[[Fingerprint, Fingerprint], bool] | None = field(default=None, compare=False)
    """Whether a candidate is the query's report with its event's names replaced (another event by its dates or
    places, the same figures: :meth:`MatchTests.renamed <es_simhash.decide.match.MatchTests.renamed>`): within
    ``crowd_k`` bits, such a candidate holds no template for the query (:meth:`held`). None: every candidate may."""

    def vetoed(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[str]:
        """The clusters of ``candidates`` the meaning guard vetoes for ``fp`` (none without ``meaning_guard``)."""
        return self.contradicted(fp, candidates) if self.meaning_guard else frozenset()

    def applies(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> bool:
        """Whether any hash of ``fp`` can have more than ``max_sentence_clusters`` holders among ``candidates``
        (no hash can have more holders than there are candidates)."""
        return bool(self.max_sentence_clusters and fp.hashes and len(candidates) > self.max_sentence_clusters)

    def crowded(self, fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[int]:
        """The sentence and sketch hashes of ``fp`` that ``candidates`` show to be a template's (held by more than
        ``max_sentence_clusters`` holders; the candidates the meaning guard vetoes hold none): what the rule counts
        as boilerplate beyond the document counts. :func:`~es_simhash.clustering.recheck` passes the candidates of
        the other clusters, of any arrival: what the whole index knows of the template by now."""
        if not self.applies(fp, candidates):
            return frozenset()
        return self.held(fp, candidates, self.vetoed(fp, candidates))

    @staticmethod
    def contradicted(fp: Fingerprint, candidates: Sequence[StoredDoc]) -> frozenset[str]:
        """Clusters with a sketched candidate that contradicts ``fp`` (sketched too): by their whole texts, or by a
        pair of their signature sentences."""
        if not has_sketch(fp):
            return frozenset()
        out: set[str] = set()
        for cand in candidates:
            other = cand.fingerprint
            if cand.cluster in out or not has_sketch(other) or other.content_hash == fp.content_hash:
                continue
            if opposite(fp, other):
                out.add(cand.cluster)
        return frozenset(out)

    def held(self, fp: Fingerprint, candidates: Sequence[StoredDoc], vetoed: frozenset[str]) -> frozenset[int]:
        """Sentence (and, with ``crowd_sketch``, sketch) hashes of ``fp`` held by more than ``max_sentence_clusters``
        holders among the candidates outside the ``vetoed`` clusters (a text that says the opposite shares nearly
        everything with ``fp``, but holds no template): a holder is a cluster, or with ``crowd_k`` a group of its
        members within ``crowd_k`` bits of each other (taken in (cluster, id) order, so every backend groups
        alike). A candidate within ``crowd_k`` bits that is ``fp``'s report with its event's names replaced
        (:attr:`renamed`: another date or place, the same figures) holds none: the template's reports of other
        places or dates share every sentence with ``fp`` and the event test keeps them apart, while a reprint of
        ``fp``'s own report shares those sentences too and little else (two such reports would otherwise leave it no
        hash to match by). A report whose figures are other too (another day's weather, another month's
        statistics) holds the template as any page does."""
        if vetoed:
            candidates = [c for c in candidates if c.cluster not in vetoed]
        mine = set(fp.hashes if self.crowd_sketch else fp.sentences)
        holders: dict[int, list[StoredDoc]] = {}
        for cand in candidates:
            for h in mine.intersection(cand.fingerprint.hashes):
                holders.setdefault(h, []).append(cand)
        out = set()
        limit = self.max_sentence_clusters
        known: dict[tuple[str, str], bool] = {}  # pairs already compared (the same pairs hold many hashes)

        def one_holder(a: StoredDoc, b: StoredDoc) -> bool:
            same = known.get((a.id, b.id))
            if same is None:
                same = known[(a.id, b.id)] = self._one_holder(a, b, fp)
            return same

        renamed = self._renamed_among(fp, holders)
        for h, held in holders.items():
            if len(held) <= limit:
                continue
            if renamed:
                held = [c for c in held if c.id not in renamed]
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

    def _renamed_among(self, fp: Fingerprint, holders: dict[int, list[StoredDoc]]) -> frozenset[str]:
        """The ids of the candidates holding a hash with more than ``max_sentence_clusters`` holders that are
        ``fp``'s report with its event's names replaced (:attr:`renamed`) within ``crowd_k`` bits: they hold none
        (:meth:`held`)."""
        if self.renamed is None or self.crowd_k is None:
            return frozenset()
        crowd = {c.id: c for held in holders.values() if len(held) > self.max_sentence_clusters for c in held}
        near, renamed = self.crowd_k, self.renamed  # (within crowd_k bits: the template is most of both texts)
        return frozenset(i for i, c in crowd.items()
                         if fp.distance(c.fingerprint) <= near and renamed(fp, c.fingerprint))

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
                                       or within(fa, fb, self.crowd_own)) \
                and not self._three_own_parts(fa, fb, query):
            return True
        return self.meaning_guard and self.crowd_sketch and bool(fa.hashes) and bool(fb.hashes) \
            and opposite(fa, fb)

    def _three_own_parts(self, a: Fingerprint, b: Fingerprint, query: Fingerprint) -> bool:
        """Whether ``a``, ``b`` and ``query`` (all sketched) each have ``crowd_own`` sketch hashes that the other two
        lack (``a``'s and ``b``'s counted outside the query's hashes, and disjoint): three texts around one
        template rather than copies of one text (``crowd_own``)."""
        n = self.crowd_own
        if not (n and has_sketch(a) and has_sketch(b) and has_sketch(query)):
            return False
        theirs = set(query.hashes)
        own_a = {h for h in a.sketch if h not in theirs}
        own_b = {h for h in b.sketch if h not in theirs}
        if len(own_a) < n or len(own_b) < n or not own_a.isdisjoint(own_b):
            return False
        return len(set(query.sketch).difference(a.sketch, b.sketch)) >= n
