"""The default decision rule (:class:`DefaultRule`): exact, SimHash, sentence and sketch matches, the template rule
(hashes held by several clusters' candidates are a template's) and the meaning guard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from es_simhash.decide.compare import same_content
from es_simhash.decide.crowding import TemplateCrowding
from es_simhash.decide.rule import Decision, RuleBase
from es_simhash.decide.match import MatchTests
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import StoredDoc

__all__ = ["DefaultRule"]


@dataclass
class DefaultRule(MatchTests, TemplateCrowding, RuleBase):
    """The default decision rule (tuned on the dev split of ``bench/accuracy.py``; see ``docs/accuracy.md``).

    Its parts: :class:`~es_simhash.decide.match.MatchTests` (the tests of one candidate),
    :class:`~es_simhash.decide.crowding.TemplateCrowding` (the template rule and the meaning guard); this class holds
    the settings, the decision over all candidates (:meth:`matches`) and :meth:`explain`.

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
    * **fuzzy** (longer texts, fingerprint version 7): the texts share fuzzy sentence hashes (one per long
      sentence, the least hash of its shingles: :attr:`~es_simhash.fingerprint.Fingerprint.fuzzy`), not
      boilerplate. *Rewritten*: within ``fuzzy_k`` bits, at least ``fuzzy_min_shared`` and ``fuzzy_shared`` of the
      smaller set, at least ``fuzzy_rewritten`` of them for sentences that differ word for word (a "伪原创" copy
      with words replaced; a site repeats its own lines exactly), and more than two texts on one subject share by
      chance (``fuzzy_chance`` times the product of the two sets' sizes). *Verbatim*: at least ``fuzzy_verbatim``
      of the smaller set, within ``sentence_k`` bits; or at least ``fuzzy_far`` shared of twice that many or more
      each, within ``fuzzy_k`` bits or at any distance with two signature sentences shared too (a copy cut short,
      whose longest sentences went with the cut, in a site's page or not).

    ``number_guard`` (0: off): two texts that both give at least three numbers (dates, figures: their
    :attr:`~es_simhash.fingerprint.Fingerprint.number_bag`), about as many each, but of which fewer than
    ``number_guard`` of the smaller set's are the other's, are not duplicates by any test but an exact copy: a
    template's report of another event (a match result, a price notice, a weather report), where a copy cut short
    gives fewer numbers and an edited one changes one or two.

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
    number_guard: float = 0.6
    fuzzy_k: int = 24
    fuzzy_shared: float = 0.25
    fuzzy_rewritten: int = 2
    fuzzy_min_shared: int = 3
    fuzzy_chance: float = 0.015
    fuzzy_verbatim: float = 0.5
    fuzzy_far: int = 6
    recheck: bool = False
    """Decisions of an index whose runs end with a recheck (:meth:`rechecked`): settling a canonical again (other
    writers, a re-run, a delete) joins it to a cluster only where the recheck keeps it, so settling never undoes
    what a recheck took back."""

    @property
    def candidate_distance(self) -> int:
        return max(self.k, self.short_k)

    @classmethod
    def rechecked(cls, **settings: Any) -> "DefaultRule":
        """The rule for runs whose decisions are taken again once every document is indexed
        (:func:`~es_simhash.clustering.recheck`; ``es-simhash dedup`` does, ``DefaultRule()`` is for decisions
        that stay as made on arrival, as ``es-simhash index`` makes them): the sentence match also reaches
        ``far_sentence_k`` = 24 bits when half of the smaller signature is shared (chosen on the dev split with
        the recheck). A reprint wrapped in a site's header, sponsor and footer lines moves 17-24 bits and keeps
        most of its few long sentences; two articles of one site share the site's lines too, and on arrival
        nothing says yet that those are the site's, but the recheck counts them as boilerplate once other articles
        of the site hold them, and takes the merge back. (Half, not ``min_shared_sentences``' 40%: two follow-up
        stories that reuse two paragraphs share 2 of 5 signature sentences; on BBC News, 40% merged 8 such pairs
        of 2,225 articles, half merges 1.) Without the recheck the looser bound costs more than it finds
        (docs/accuracy.md). ``settings``: any other field, as for ``DefaultRule(...)``."""
        return cls(**{"far_sentence_k": 24, "recheck": True, **settings})

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
        if self.max_sentence_clusters and fp.hashes and len(candidates) > self.max_sentence_clusters:
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
            "vetoed_by": vetoed,
            "why": why,
        }
