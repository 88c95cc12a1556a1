"""The dedup engine: fingerprints, candidate lookups, duplicate decisions and cluster assignment.

It talks to any :class:`~es_simhash.index.base.SegmentIndex` (the embedded :class:`MemoryIndex` or
Elasticsearch) and never knows which. Documents flow through in batches: one bulk lookup per batch against the
backend, then each document is decided in input order against the backend's candidates *and* the documents
already decided in the same batch (so duplicates inside one batch are caught), then the batch is written.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Collection, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar

from es_simhash.fingerprint.fingerprinter import SKETCH_BIT, Fingerprint, Fingerprinter, contradicting_pair, is_sketch, text_contradicts
from es_simhash.index.base import (CANONICAL, MIN_SHARED_SKETCH, Lookup, SegmentIndex, StoredDoc, boilerplate_of,
                         found_by_lookup, without_payload, written_state)
from es_simhash.index.memory import MemoryIndex
from es_simhash.errors import DuplicateIdError, IndexingError

__all__ = ["Document", "Decision", "Result", "DecisionRule", "DefaultRule", "DedupEngine", "NO_FEATURES", "has_sketch", "DuplicateIdError",
           "IndexingError"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_MAX_WRITE_ATTEMPTS = 20  # conditional writes of one batch that keep meeting other versions before giving up

NO_FEATURES = "no-features"


@dataclass(slots=True)
class Document:
    """One input document. ``fields`` are stored alongside by backends that keep records (Elasticsearch)."""

    id: str
    text: str
    fields: dict[str, Any] | None = None


@dataclass(slots=True)
class Decision:
    """Why a document is a duplicate: of which stored document, how far, and by which rule."""

    of: StoredDoc
    distance: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``check`` prints: the stored document's id and cluster, the distance and the reason."""
        return {"id": self.of.id, "cluster": self.of.cluster, "distance": self.distance, "reason": self.reason}


@dataclass(slots=True)
class Result:
    """What happened to one document (one line of the ``--report`` file)."""

    id: str
    cluster: str
    duplicate: bool
    duplicate_of: str | None
    distance: int | None
    reason: str
    already_indexed: bool = False
    fingerprint: Fingerprint | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cluster": self.cluster,
            "duplicate": self.duplicate,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "reason": self.reason,
        }

    @classmethod
    def from_stored(cls, doc: StoredDoc, already_indexed: bool = False) -> "Result":
        return cls(
            id=doc.id,
            cluster=doc.cluster,
            duplicate=not doc.is_canonical,
            duplicate_of=doc.duplicate_of,
            distance=doc.distance,
            reason=doc.reason,
            already_indexed=already_indexed,
            fingerprint=doc.fingerprint,
        )


class DecisionRule(Protocol):
    """Decides whether ``fp`` duplicates one of ``candidates`` (the replaceable piece of the engine)."""

    @property
    def candidate_distance(self) -> int:
        """The loosest Hamming distance the rule can accept; backends drop segment candidates further away."""
        ...

    def decide(
        self, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int] = frozenset()
    ) -> Decision | None:
        """``boilerplate``: sentence hashes of ``fp`` held by too many documents to identify anything."""
        ...


def has_sketch(fp: Fingerprint) -> bool:
    """Whether the fingerprint carries a shingle sketch (backends may reorder the hashes: look at the largest)."""
    return bool(fp.sentences) and max(fp.sentences) >= SKETCH_BIT


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
class DefaultRule:
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
        (:func:`~es_simhash.maintenance.recheck`; ``es-simhash dedup`` does, ``DefaultRule()`` is for decisions
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
        document counts. :func:`~es_simhash.maintenance.recheck` passes the candidates of the other clusters, of
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


_WORKER_FINGERPRINTER: Fingerprinter | None = None


def _start_fingerprint_worker(fingerprinter: Fingerprinter) -> None:
    global _WORKER_FINGERPRINTER
    _WORKER_FINGERPRINTER = fingerprinter


def _fingerprint_in_worker(texts: Sequence[str]) -> list[Fingerprint]:
    assert _WORKER_FINGERPRINTER is not None
    return _WORKER_FINGERPRINTER.fingerprint_many(texts)


def _boilerplate(fp: Fingerprint, counts: Sequence[Mapping[int, int]], cap: int) -> tuple[frozenset[int], bool]:
    """The hashes of ``fp`` held by more than ``cap`` documents in all ``counts`` together (each a part's
    document frequencies: the index's lookup, the batch being written, this batch's earlier documents), and
    whether a part under ``cap`` on its own held one of them: that part's lookup then brought candidates through a
    hash one lookup over all the documents would have left out (:meth:`DedupEngine._found_by_lookup`)."""
    out: list[int] = []
    split = False
    if len(counts) == 2:  # (the index and this batch: the common case, written out)
        index, batch = counts
        for h in fp.sentences:
            x, y = index.get(h, 0), batch.get(h, 0)
            if x + y > cap:
                out.append(h)
                split = split or 0 < x <= cap or 0 < y <= cap
        return frozenset(out), split
    for h in fp.sentences:
        n = [c.get(h, 0) for c in counts]
        if sum(n) > cap:
            out.append(h)
            split = split or any(0 < x <= cap for x in n)
    return frozenset(out), split


def _mine(decided: "_Decided", being: Sequence[StoredDoc], mark: dict[str, Any] | None
          ) -> dict[str, tuple[int, str, str | None]]:
    """What this writer writes in a decided batch, or was writing when its mark was taken (``being``), as written;
    for the batch of a resumed run (``decided.resumed``), also what the interrupted run was writing then (``mark``)
    and what it wrote of this batch (found indexed)."""
    mine = {d.id: written_state(d) for d in [*being, *decided.to_store]}
    if not decided.resumed or mark is None:
        return mine
    return {**{i: (a, c, o) for i, (a, c, o) in mark["mine"].items()},
            **{d.id: written_state(d) for d in decided.found}, **mine}


def _same(a: Fingerprint, b: Fingerprint) -> bool:
    """Same fingerprint (the order of sentence hashes does not matter: backends may store them as a set)."""
    return a == b or (
        (a.simhash, a.content_hash, a.n_features, a.n_chars, a.short, a.version, a.word_bag)
        == (b.simhash, b.content_hash, b.n_features, b.n_chars, b.short, b.version, b.word_bag)
        and sorted(a.sentences) == sorted(b.sentences)
    )


@dataclass
class _Decided:
    """One batch looked up and decided, not yet written."""

    results: list[Result | DuplicateIdError | IndexingError] = field(default_factory=list)
    to_store: list[StoredDoc] = field(default_factory=list)
    new_ids: list[str] = field(default_factory=list)
    """Ids this batch marked as seen."""
    departed: list[StoredDoc] = field(default_factory=list)
    """Stored versions of documents this batch re-indexes with other content (their clusters are decided again)."""
    found: list[StoredDoc] = field(default_factory=list)
    """Documents of this batch found already indexed with the same content (settled again after a kill)."""
    resumed: bool = False
    """The batch an interrupted run was writing, decided with the mark that run took (``mark``): its documents
    found indexed were written by that run after the mark, and are settled as this batch's own writes."""
    mark: Any = None
    """The index's visible mark taken before this batch's lookup (backends with ``shared_writers``)."""
    apart: list[str] = field(default_factory=list)
    """Canonicals that one of their candidates alone would have made duplicates: kept apart by what the rule
    looks at over all candidates (a template's holders) or by boilerplate; settling decides one again if a
    candidate is gone by then (deleted: nothing else would tell)."""
    mine: dict[str, tuple[int, str, str | None]] = field(default_factory=dict)
    """What this engine writes in this batch, or was writing when the mark was taken: id -> (arrival, cluster,
    duplicate_of) as written. A document written since the mark in any other state is another writer's (or a
    rewrite), whatever its id."""
    candidates: dict[str, dict[str, int]] = field(default_factory=dict)
    """Each document's candidates when it was decided (id -> arrival; backends with ``shared_writers``): settling
    decides a document again when one of them was rewritten meanwhile, or when its match is gone or is another
    version by the time it is written."""

    def stored(self, refused: dict[str, str]) -> list[Result | DuplicateIdError | IndexingError]:
        """The results once written: documents the backend refused become :class:`IndexingError`."""
        if not refused:
            return self.results
        return [IndexingError(f"refused by the index: {refused[r.id]}")
                if isinstance(r, Result) and r.id in refused and not r.already_indexed else r
                for r in self.results]

    def refers_to(self, ids: dict[str, str]) -> bool:
        return any(d.cluster in ids or d.duplicate_of in ids for d in self.to_store)

    def forget(self, seen: dict[str, None]) -> None:
        for doc_id in self.new_ids:
            seen.pop(doc_id, None)


class _Write:
    """A batch being written in another thread, with its documents in memory for the next batch's decisions."""

    def __init__(self, context, decided: _Decided, future: Future | None, max_sentence_df: int, lookup_keys) -> None:
        self.context, self.decided, self.future = context, decided, future
        self.memory = MemoryIndex(max_sentence_df, lookup_keys)
        self.memory.add(decided.to_store)
        self.refused: dict[str, str] = {}

    def finish(self) -> list[Result | DuplicateIdError | IndexingError]:
        self.refused = self.future.result() if self.future is not None else {}
        return self.decided.stored(self.refused)


class DedupEngine:
    """Finds near duplicates on ingest and assigns each document to a duplicate cluster.

    >>> engine = DedupEngine()                      # embedded: in-memory index
    >>> [r.reason for r in engine.process([Document("a", "x" * 200), Document("b", "x" * 200)])]
    ['canonical', 'exact']
    """

    def __init__(
        self,
        index: SegmentIndex | None = None,
        fingerprinter: Fingerprinter | None = None,
        rule: DecisionRule | None = None,
        batch_size: int = 500,
        workers: int = 0,
        worker_threads: bool | None = None,
    ) -> None:
        if workers < 0:
            raise ValueError("workers >= 0")
        self.worker_threads = worker_threads
        self.index: SegmentIndex = MemoryIndex() if index is None else index
        self.fingerprinter = fingerprinter or Fingerprinter()
        self.rule: DecisionRule = rule or DefaultRule()
        self.batch_size = batch_size
        self.workers = workers
        self._seen: dict[str, None] = {}
        self._last_arrival = 0
        self.next_mark: dict[str, Any] | None = None
        """When :meth:`process_batches` yields a batch's results: what the next batch was decided with, if it is
        decided already (None otherwise; JSON): the index's visible mark, and the written state of each document
        this writer was writing or about to write then (``{"mark": ..., "mine": {id: [arrival, cluster,
        duplicate_of]}}``). A checkpoint saved then keeps it for a resumed run (``process_batches(resumed=True,
        mark=...)``), whose first batch is that next batch."""

    # -- public API ----------------------------------------------------------------------------------------
    def process(self, docs: Iterable[Document]) -> Iterator[Result]:
        """Decide and index ``docs``; yields one :class:`Result` per document, in input order.

        A document whose id was already seen in this engine's run raises :class:`DuplicateIdError` *in place of*
        its result (callers that want to go on use :meth:`process_batches` or :meth:`process_batch`).
        """

        def batches() -> Iterator[tuple[list[Document], None]]:
            batch: list[Document] = []
            for doc in docs:
                batch.append(doc)
                if len(batch) >= self.batch_size:
                    yield batch, None
                    batch = []
            if batch:
                yield batch, None

        for _, results in self.process_batches(batches()):
            yield from self._raise_errors(results)

    def process_batches(
        self, batches: Iterable[tuple[Sequence[Document], T]], resumed: bool = False, mark: Any = None
    ) -> Iterator[tuple[T, list[Result | DuplicateIdError | IndexingError]]]:
        """:meth:`process_batch` over ``(documents, context)`` pairs, yielding ``(context, results)`` in order.

        ``resumed``: the first batch is the one an interrupted run of the same input was writing when it stopped
        (:func:`~es_simhash.pipeline.run_dedup` resuming from a checkpoint cuts it so): the documents of it found
        already indexed were written by that run, so each other document of it is decided as that run would have
        decided it, against the ones before it in the batch and not the ones after it (the clusters are those of
        a run that was never interrupted). ``mark``: the visible mark that run decided the batch with
        (:attr:`next_mark` when its checkpoint was saved): the batch is settled as that run would have settled it,
        with the documents it wrote as the batch's own.

        Batches N+1 and N+2 are fingerprinted in a worker thread while batch N is looked up, decided and written:
        the CPU work of fingerprinting overlaps deciding and the wait on the index, and the worker goes on while a
        batch takes longer to decide (the first one imports numpy; two batches ahead measured ~10% faster than
        one on bench/cli.py's whole dedup, 15 alternated runs). One worker, so the pure-Python fingerprinter (whose
        vocabulary is not thread-safe) is only ever used by one thread at a time. With ``workers`` > 0, that many
        workers fingerprint up to ``workers + 2`` batches ahead on other cores: threads when the fingerprinter uses the
        native core (it releases the GIL and is thread-safe; ``worker_threads`` forces one kind), else
        *processes*, each with a copy of the fingerprinter (the Python engine holds the GIL); fingerprints are
        deterministic, so the results are the same.

        With a backend that allows it (``overlapping_writes``: Elasticsearch), batch N is written in another
        thread while batch N+1 is looked up and decided. That lookup leaves batch N's stored versions out
        (``exclude``) and batch N+1 is compared with batch N's decided documents in memory instead, so the
        answer is the one a sequential run gives whether or not the write is visible yet. A batch's results are
        yielded once its write has finished, so a checkpoint saved after a yield only ever covers written
        documents.
        """
        pool: Executor
        threads = self.worker_threads
        if threads is None:  # the native core releases the GIL while it works: threads, no process start-up
            threads = getattr(self.fingerprinter, "engine", "python") == "native"
        if self.workers and threads:
            pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="fingerprint")
            fingerprint, depth = self.fingerprinter.fingerprint_many, self.workers + 2
        elif self.workers:
            import multiprocessing  # (only here: worker processes are for the pure-Python engine)
            from concurrent.futures import ProcessPoolExecutor

            pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_fingerprint_worker, initargs=(self.fingerprinter,))
            fingerprint, depth = _fingerprint_in_worker, self.workers + 2
        else:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fingerprint")
            fingerprint, depth = self.fingerprinter.fingerprint_many, 2
        writer = (ThreadPoolExecutor(max_workers=1, thread_name_prefix="write")
                  if getattr(self.index, "overlapping_writes", False) else None)
        try:
            ahead: deque[tuple[Sequence[Document], T, Future | None]] = deque()
            it = iter(batches)

            def submit() -> None:  # read the next batch (if any) and start fingerprinting it
                for docs, context in it:
                    texts = [d.text for d in docs]
                    ahead.append((docs, context, pool.submit(fingerprint, texts) if texts else None))
                    return

            def fingerprinted() -> Iterator[tuple[Sequence[Document], T, Sequence[Fingerprint]]]:
                for _ in range(depth):
                    submit()
                while ahead:
                    docs, context, future = ahead.popleft()
                    submit()
                    yield docs, context, (future.result() if future is not None else [])

            self.next_mark = None
            if writer is None:
                in_order = resumed
                for docs, context, fps in fingerprinted():
                    yield context, (self._process(docs, fps, in_order, mark) if docs else [])
                    in_order = in_order and not docs
            else:
                yield from self._overlapped(fingerprinted(), writer, resumed, mark)
        finally:  # also on an interrupt or an error downstream: do not wait for batches nobody will read
            pool.shutdown(wait=True, cancel_futures=True)
            if writer is not None:
                writer.shutdown(wait=True)

    def _overlapped(self, batches, writer: Executor, resumed: bool = False, mark: Any = None):
        """Decide batch N+1 while batch N is written (see :meth:`process_batches`)."""
        writing: _Write | None = None
        in_order = resumed
        for docs, context, fps in batches:
            if not docs:  # (dead letters only: nothing to look up, decide or write)
                self.next_mark = None
                if writing is not None:
                    results = writing.finish()
                    yield writing.context, results
                    writing = None
                yield context, []
                continue
            decided = self._decide_batch(docs, fps, writing.memory if writing is not None else None, in_order,
                                         mark)
            in_order = False
            self.next_mark = None if decided.mark is None else {
                "mark": decided.mark, "mine": {i: list(state) for i, state in decided.mine.items()}}
            if writing is not None:
                results = writing.finish()
                yield writing.context, results
                if writing.refused and decided.refers_to(writing.refused):  # decided against a refused document
                    decided.forget(self._seen)
                    decided = self._decide_batch(docs, fps)
            writing = _Write(context, decided, writer.submit(self._store, decided) if decided.results
                             else None, self.index.max_sentence_df, self.index.lookup_keys)
        if writing is not None:
            yield writing.context, writing.finish()

    @staticmethod
    def _raise_errors(results: list[Result | DuplicateIdError | IndexingError]) -> Iterator[Result]:
        for r in results:
            if isinstance(r, Exception):
                raise r
            yield r

    def process_batch(
        self, docs: Sequence[Document], fingerprints: Sequence[Fingerprint] | None = None
    ) -> list[Result | DuplicateIdError | IndexingError]:
        """Decide and index one batch. Returns a :class:`Result` per document, or a :class:`DuplicateIdError`
        for a document whose id was already seen in this run (that document is not indexed).

        ``fingerprints`` may be computed ahead (e.g. in another thread while the previous batch is written)."""
        fps = fingerprints if fingerprints is not None else self.fingerprinter.fingerprint_many([d.text for d in docs])
        return self._process(docs, fps)

    def _process(self, docs: Sequence[Document], fps: Sequence[Fingerprint], in_order: bool = False,
                 mark: Any = None) -> list[Result | DuplicateIdError | IndexingError]:
        decided = self._decide_batch(docs, fps, in_order=in_order, mark=mark)
        return decided.stored(self._store(decided))

    def _store(self, decided: "_Decided") -> dict[str, str]:
        """Write a decided batch (:meth:`_write`), then settle it (:meth:`_settle`). Returns the refused ids with
        their reasons; the results of documents that settling moved to another cluster are updated."""
        refused = self._write(decided)
        self._settle(decided, refused)
        return refused

    def _write(self, decided: "_Decided") -> dict[str, str]:
        """Write a decided batch; returns the ids the backend refused, with their reasons.

        With other writers (``shared_writers``) each document is written only over the version it replaces:
        created if no document has its id, else over the stored version found, which becomes one of
        ``decided.departed`` (its cluster is decided again without it when the batch is settled). A version that
        another writer wrote or rewrote meanwhile (a page two crawlers index at once, each with its own content;
        or a re-indexed document merged by another writer's settling) is found by the conflict, fetched, and
        written over in turn: nothing is overwritten unseen, and the content written last stays. A version another
        writer wrote with the same content (two crawlers indexing one input) is left as it is: the document counts
        as found already indexed (its result, and settling, take that version)."""
        if not decided.to_store:
            return {}
        if not getattr(self.index, "shared_writers", False):
            return self.index.add(decided.to_store)
        index: Any = self.index
        ours = {d.id: d for d in decided.to_store}
        # a re-indexed document's stored version, read now: its write then usually goes through at the first try
        departed = index.fetch([d.id for d in decided.departed], whole=False) if decided.departed else {}
        refused: dict[str, str] = {}
        theirs: dict[str, StoredDoc] = {}  # the same content, written by another writer meanwhile
        todo = [replace(d, version=departed[d.id].version if d.id in departed else None) for d in decided.to_store]
        for _ in range(_MAX_WRITE_ATTEMPTS):
            if not todo:
                break
            more_refused, conflicts = index.add_conditional(todo)
            refused.update(more_refused)
            for doc_id in more_refused:  # (not written: the version found stays where it is)
                departed.pop(doc_id, None)
            if not conflicts:
                break
            current = index.fetch(conflicts, whole=False)
            todo = []
            for doc_id in conflicts:
                stored, mine = current.get(doc_id), ours[doc_id]
                if stored is None:  # (deleted meanwhile: whoever deleted it decided its cluster again)
                    departed.pop(doc_id, None)
                    todo.append(replace(mine, version=None))
                elif (stored.arrival, stored.fingerprint.content_hash) == (mine.arrival, mine.fingerprint.content_hash):
                    pass  # (this very write, landed by a retried request)
                elif _same(stored.fingerprint, mine.fingerprint):
                    departed.pop(doc_id, None)
                    theirs[doc_id] = stored
                else:
                    departed[doc_id] = stored
                    todo.append(replace(mine, version=stored.version))
        else:
            from es_simhash.cluster.maintenance import MaintenanceError

            decided.departed = list(departed.values())
            raise MaintenanceError(f"{len(todo)} documents kept changing while being written; run again")
        decided.departed = list(departed.values())
        if theirs:
            decided.to_store = [d for d in decided.to_store if d.id not in theirs]
            decided.found.extend(theirs.values())
            decided.results = [Result.from_stored(theirs[r.id], already_indexed=True)
                               if isinstance(r, Result) and r.id in theirs else r for r in decided.results]
        return refused

    def _settle(self, decided: "_Decided", refused: dict[str, str]) -> None:
        """Settle a written batch (:func:`es_simhash.maintenance.settle`) when other processes may write into the
        index too, or when it re-indexes documents with other content."""
        shared = getattr(self.index, "shared_writers", False)
        if shared or decided.departed:
            from es_simhash.cluster import maintenance

            if shared:
                docs = [d for d in decided.to_store if d.id not in refused]
                if decided.resumed:
                    docs += decided.found
            else:  # (a re-indexed document may now duplicate an older one)
                gone = {d.id for d in decided.departed}
                docs = [d for d in decided.to_store if d.id in gone]
            latest = maintenance.settle(self.index, self.rule, docs, decided.departed,  # type: ignore[arg-type]
                                        since=decided.mark, mine=decided.mine,
                                        found=decided.found if shared and not decided.resumed else (),
                                        candidates=decided.candidates if shared else {},
                                        apart=decided.apart if shared else ()).latest()
            if latest:
                decided.results = [Result.from_stored(latest[r.id], r.already_indexed)
                                   if isinstance(r, Result) and r.id in latest else r for r in decided.results]

    def _decide_batch(self, docs: Sequence[Document], fps: Sequence[Fingerprint],
                      writing: MemoryIndex | None = None, in_order: bool = False, mark: Any = None) -> "_Decided":
        """Look up and decide one batch (nothing is written). ``writing``: the documents of the batch still being
        written, in memory; the backend's stored versions of them are left out of the lookup. ``in_order``: the
        documents of the batch found already indexed are decided around as members of the batch at their places,
        and with ``mark`` settled as the batch's own (see :meth:`process_batches`' ``resumed``)."""
        queries = [Lookup(d.id, fp) for d, fp in zip(docs, fps)]
        d_max = self.rule.candidate_distance
        decided = _Decided()
        being = writing.docs() if writing is not None else []  # (the batch before, being written)
        being_written = [doc.id for doc in being]
        if getattr(self.index, "shared_writers", False):  # what is visible now: settling looks at what came after
            decided.resumed = in_order and mark is not None
            decided.mark = mark["mark"] if decided.resumed else self.index.visible_mark()  # type: ignore[attr-defined]
        if writing is not None:
            found = self.index.lookup(queries, d_max, exclude=being_written)  # type: ignore[call-arg]
            in_writing = writing.lookup(queries, d_max)
        else:
            found = self.index.lookup(queries, d_max)
            in_writing = None
        results: list[Result | DuplicateIdError | IndexingError | None] = [None] * len(docs)
        todo: list[int] = []  # the documents this batch decides, in input order
        for i, (doc, fp, res) in enumerate(zip(docs, fps, found)):
            if doc.id in self._seen:
                results[i] = DuplicateIdError(f"duplicate id {doc.id!r}: already seen earlier in this input")
                continue
            self._seen[doc.id] = None
            decided.new_ids.append(doc.id)
            if res.existing is not None and _same(res.existing.fingerprint, fp):
                results[i] = Result.from_stored(res.existing, already_indexed=True)
                decided.found.append(res.existing)
                continue
            if res.existing is not None:  # re-indexed with other content: its former cluster is decided again
                decided.departed.append(res.existing)
            todo.append(i)
        try:
            # Each document is decided against the index and the documents this batch decided before it: one
            # lookup in an index of the batch, where each sees only the documents before it (their candidates and
            # sentence counts)
            batch_decided: dict[str, StoredDoc] = {}  # the documents this batch decided so far
            members = todo
            if in_order and todo and decided.found:  # (looked up again without them: they are batch members)
                placed = {d.id: without_payload(d) for d in decided.found}
                found = self.index.lookup(queries, d_max, exclude=[*being_written, *placed])  # type: ignore[call-arg]
                batch_decided.update(placed)
                members = sorted(todo + [i for i, r in enumerate(results) if isinstance(r, Result)])
            batch = MemoryIndex(self.index.max_sentence_df, self.index.lookup_keys)
            batch.add([batch_decided.get(docs[i].id) or StoredDoc(docs[i].id, fps[i], docs[i].id) for i in members])
            place = {i: n for n, i in enumerate(members)}
            earlier = batch.lookup([queries[i] for i in todo], d_max, before=[place[i] for i in todo])
            cap = self.index.max_sentence_df
            for i, before in zip(todo, earlier):
                doc, fp, res = docs[i], fps[i], found[i]
                # never a duplicate of a document decided relative to this one (possible after an interrupted write)
                candidates = [c for c in res.candidates
                              if c.id not in batch_decided and c.cluster != doc.id and c.duplicate_of != doc.id]
                counts = [res.sentence_df, before.sentence_df]
                if in_writing is not None:
                    other = in_writing[i]
                    candidates += [c for c in other.candidates if c.id not in batch_decided
                                   and c.cluster != doc.id and c.duplicate_of != doc.id]
                    counts.append(other.sentence_df)
                candidates += [batch_decided[c.id] for c in before.candidates]
                boilerplate, split = _boilerplate(fp, counts, cap)
                if split:  # a part under the bound brought candidates through a hash that is over it in all parts
                    candidates = self._found_by_lookup(fp, candidates, boilerplate)
                stored = self._decide(doc, fp, candidates, boilerplate)
                if decided.mark is not None and candidates:
                    decided.candidates[doc.id] = {c.id: c.arrival for c in candidates}
                    if stored.duplicate_of is None and any(self.rule.decide(fp, [c]) is not None for c in candidates):
                        decided.apart.append(doc.id)
                batch_decided[doc.id] = without_payload(stored)  # (as an index keeps it: no text, no record)
                decided.to_store.append(stored)
                results[i] = Result.from_stored(stored)
        except BaseException:  # (a rule that raised, Ctrl-C: nothing of this batch was decided, so nothing seen)
            decided.forget(self._seen)
            raise
        decided.results = results  # type: ignore[assignment]  # (every slot is filled)
        if decided.mark is not None:
            decided.mine = _mine(decided, being, mark)
        return decided

    def _found_by_lookup(self, fp: Fingerprint, candidates: list[StoredDoc], boilerplate: Collection[int]
                         ) -> list[StoredDoc]:
        """The candidates one lookup against all of them would have returned (:func:`found_by_lookup`): a hash can
        be under the boilerplate bound in each part a lookup was split into, and over it in all of them together."""
        return found_by_lookup(fp, candidates, boilerplate, self.index.lookup_keys, self.rule.candidate_distance)

    def check(self, text: str, limit: int = 10) -> list[Decision]:
        """Near duplicates of ``text`` among indexed documents (nothing is written), the one ingest would pick
        first: decided as ingesting ``text`` would decide it (:meth:`DefaultRule.matches`), so ``check`` reports
        nothing exactly when ``process`` would make the text canonical."""
        fp = self.fingerprinter.fingerprint(text)
        res = self.index.lookup([Lookup("\x00check", fp)], self.rule.candidate_distance)[0]
        cap = self.index.max_sentence_df
        boilerplate = boilerplate_of(fp, res.sentence_df, cap)
        matches = getattr(self.rule, "matches", None)
        if matches is not None:  # the decision ingest makes, with every match listed
            return matches(fp, res.candidates, boilerplate)[:limit]
        decision = self.rule.decide(fp, res.candidates, boilerplate)  # (a rule of one's own, without matches())
        return [decision] if decision is not None else []

    def explain(self, a: str | Fingerprint, b: str | Fingerprint) -> dict[str, Any]:
        """Why ``a`` is, or is not, a near duplicate of ``b`` (texts or fingerprints): the distance, what they
        share, each test of the rule in words, and the meaning guard's veto (see :meth:`DefaultRule.explain`).
        Boilerplate is not known for two texts alone: nothing counts as boilerplate."""
        fa = a if isinstance(a, Fingerprint) else self.fingerprinter.fingerprint(a)
        fb = b if isinstance(b, Fingerprint) else self.fingerprinter.fingerprint(b)
        explain = getattr(self.rule, "explain", None)
        if explain is None:  # (a rule of one's own, without explain())
            decision = self.rule.decide(fa, [StoredDoc("b", fb, cluster="b")])
            return {"duplicate": decision is not None, "reason": decision.reason if decision else None,
                    "distance": fa.distance(fb), "why": []}
        return explain(fa, fb)

    # -- internals -----------------------------------------------------------------------------------------
    def _arrival(self, candidates: Sequence[StoredDoc]) -> int:
        """Now (microseconds), but later than every candidate and every document this engine decided before: a
        document always arrives after what it was decided against, even across machines whose clocks differ."""
        now = max(time.time_ns() // 1000, self._last_arrival + 1)
        for c in candidates:
            if c.arrival >= now:
                now = c.arrival + 1
        self._last_arrival = now
        return now

    def _decide(
        self, doc: Document, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int]
    ) -> StoredDoc:
        decision = self.rule.decide(fp, candidates, boilerplate)
        arrival = self._arrival(candidates)
        if decision is None:
            reason = NO_FEATURES if fp.empty else CANONICAL
            return StoredDoc(doc.id, fp, cluster=doc.id, reason=reason, fields=doc.fields, text=doc.text,
                             arrival=arrival)
        return StoredDoc(
            doc.id,
            fp,
            cluster=decision.of.cluster,
            duplicate_of=decision.of.id,
            distance=decision.distance,
            reason=decision.reason,
            fields=doc.fields,
            text=doc.text,
            arrival=arrival,
        )
