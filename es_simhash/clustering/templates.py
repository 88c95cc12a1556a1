"""Sentences a template shares: which of a document's long sentences are boilerplate among its candidates
(held by two others, or crowded), so that maintenance decides as the engine did on arrival
(:func:`stays`, :func:`first_kept`, :func:`all_matches`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

from es_simhash.decide.rule import DecisionRule
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import arrival_key
from es_simhash.records import StoredDoc


def crowded_by_others(rule: DecisionRule, doc: StoredDoc, candidates: Sequence[StoredDoc]) -> frozenset[int]:
    """The hashes of ``doc`` that the clusters other than its own, among all its candidates whatever their
    arrival, show to be a template's (the rule's ``crowded``, when it has one): what the whole index knows now. A
    document decided before later posts of its template arrived was decided with less: the template's hashes
    still looked like its match's own. (Its own cluster does not count: a reprint's copies all hold its
    sentences.)"""
    return rule.crowded(doc.fingerprint, in_other_clusters(doc, candidates))


def in_other_clusters(doc: StoredDoc, candidates: Sequence[StoredDoc]) -> list[StoredDoc]:
    """The candidates that are not of `doc`'s cluster."""
    return [c for c in candidates if c.cluster != doc.cluster and c.id != doc.cluster]


def held_twice(doc: StoredDoc, others: Sequence[StoredDoc]) -> frozenset[int]:
    """The hashes of ``doc`` that at least two of ``others`` hold: all that they can crowd (a holder is one text
    or more), found by counting alone."""
    mine = set(doc.fingerprint.hashes)
    counts = Counter(h for c in others for h in mine.intersection(c.fingerprint.hashes))
    return frozenset(h for h, n in counts.items() if n > 1)


def stays(rule: DecisionRule, doc: StoredDoc, candidates: Sequence[StoredDoc]) -> bool:
    """Whether ``doc``, as a member of the cluster ``doc.cluster``, matches one of that cluster's members that
    arrived before it alone (as on arrival), with what the other clusters among ``candidates`` show of templates
    set aside (:func:`matches_one_of`). The test a recheck keeps a decision by."""
    key = arrival_key(doc)
    own = [c for c in candidates if c.cluster == doc.cluster and arrival_key(c) < key]
    return matches_one_of(rule, doc, own, candidates)


def matches_one_of(rule: DecisionRule, doc: StoredDoc, own: Sequence[StoredDoc], candidates: Sequence[StoredDoc]
                   ) -> bool:
    """Whether ``doc`` (a member of ``doc.cluster``) matches one of ``own`` alone, with what the clusters other
    than its own among ``candidates`` show of templates set aside: first every hash two other texts hold (a
    superset of what they crowd, found by counting), then, if that was too much, what they crowd."""
    if not own:
        return False
    fp = doc.fingerprint
    others = in_other_clusters(doc, candidates)
    held = held_twice(doc, others)
    if any(rule.decide(fp, [m], held) is not None for m in own):
        return True
    if not held:
        return False
    crowded = crowded_by_others(rule, doc, candidates)
    return any(rule.decide(fp, [m], crowded) is not None for m in own)


def all_matches(rule: DecisionRule, fp: Fingerprint, candidates: Sequence[StoredDoc], boilerplate: frozenset[int]
                 ) -> list[Any]:
    """Every candidate ``fp`` duplicates, the rule's choice first."""
    return list(rule.matches(fp, candidates, boilerplate)) if candidates else []


def first_kept(rule: DecisionRule, doc: StoredDoc, decisions: Sequence[Any], candidates: Sequence[StoredDoc]
                ) -> Any:
    """The first of ``decisions`` whose cluster ``doc`` would stay in under a recheck (:func:`stays`) once it
    and the documents that follow it (its cluster's members if it is a canonical, its own duplicates) are there,
    or None."""
    tried: set[str] = set()
    for decision in decisions:
        cluster = decision.of.cluster
        if cluster in tried:
            continue
        tried.add(cluster)
        view = [replace(c, cluster=cluster) if c.cluster == doc.id or c.duplicate_of == doc.id else c
                for c in candidates]
        if stays(rule, replace(doc, cluster=cluster), view):
            return decision
    return None
