"""How well the decision rule does on a user's own labelled data, and which settings do best there.

Labels are JSON Lines, one of two kinds per file:

* **pairs**: ``{"a": TEXT, "b": TEXT, "duplicate": true|false}`` (``label`` 1/0 works too): each pair is decided
  on its own (is ``a`` a near duplicate of ``b``?);
* **clusters**: ``{"id": ID, "content": TEXT, "cluster": LABEL}`` (``text``/``body`` for the text): documents with
  the same label are duplicates of each other; all of them go through the engine in file order, and the pairs it
  puts in one cluster are compared with the labelled pairs.

Scores are pairwise precision, recall and F1. :func:`sweep` varies one setting of :class:`DefaultRule` at a time
(``k``, ``short_k``, ``sentence_k``, ``sentence_near_k``, ``min_shared_fraction``, ``crowd_k``, ``crowd_own``), the
others at their current values, and then scores the best value of each together: the setting to try on that data. Texts are fingerprinted
once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Iterable, Sequence

from es_simhash.engine.dedup_engine import DedupEngine, DefaultRule
from es_simhash.records import Document, StoredDoc
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.files.sources import DEFAULT_TEXT_FIELDS
from es_simhash.errors import LabelError

__all__ = ["Labels", "LabelError", "Score", "SweepResult", "load_labels", "score", "sweep", "SWEEP"]

SWEEP: dict[str, Sequence[Any]] = {
    "k": range(0, 9),
    "short_k": range(3, 13),
    "sentence_near_k": range(4, 13, 2),
    "sentence_k": range(8, 25, 4),
    "min_shared_fraction": (0.3, 0.4, 0.5, 0.6, 0.7),
    "crowd_k": (8, 12, 16, 20, 24, 32),
    "crowd_own": (0, 4, 8, 12),
}
"""The values :func:`sweep` tries for each setting of :class:`DefaultRule`."""


@dataclass
class Labels:
    """Labelled pairs (``pairs``: ``(text a, text b, duplicate?)``) or labelled clusters (``docs``: ``(id, text,
    label)`` in file order)."""

    pairs: list[tuple[str, str, bool]] = field(default_factory=list)
    docs: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "pairs" if self.pairs else "clusters"


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float
    true_pairs: int
    predicted_pairs: int

    @classmethod
    def of(cls, truth: set, predicted: set) -> "Score":
        hit = len(truth & predicted)
        p = hit / len(predicted) if predicted else 1.0
        r = hit / len(truth) if truth else 1.0
        return cls(p, r, 2 * p * r / (p + r) if p + r else 0.0, len(truth), len(predicted))

    def to_dict(self) -> dict[str, Any]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4),
                "true_pairs": self.true_pairs, "predicted_pairs": self.predicted_pairs}


def _text(obj: dict[str, Any]) -> str | None:
    for name in DEFAULT_TEXT_FIELDS:
        if isinstance(obj.get(name), str):
            return obj[name]
    return None


def load_labels(lines: Iterable[str], source: str = "labels") -> Labels:
    """Read labels (see the module's documentation); :class:`LabelError` names the first bad line."""
    labels = Labels()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{source}:{n}: malformed JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise LabelError(f"{source}:{n}: expected a JSON object")
        if "a" in obj or "b" in obj:
            dup = obj.get("duplicate", obj.get("label"))
            if not (isinstance(obj.get("a"), str) and isinstance(obj.get("b"), str)) or dup not in (
                    True, False, 0, 1):
                raise LabelError(f'{source}:{n}: a pair needs "a" and "b" texts and "duplicate": true or false')
            labels.pairs.append((obj["a"], obj["b"], bool(dup)))
        else:
            text, label = _text(obj), obj.get("cluster")
            if text is None or label is None or obj.get("id") is None:
                raise LabelError(f'{source}:{n}: a document needs "id", a text ("content") and "cluster", or use '
                                 'pairs ("a", "b", "duplicate")')
            labels.docs.append((str(obj["id"]), text, str(label)))
        if labels.pairs and labels.docs:
            raise LabelError(f"{source}:{n}: pairs and clustered documents mixed in one file: use one kind")
    if not labels.pairs and not labels.docs:
        raise LabelError(f"{source}: no labels")
    return labels


class _Prepared:
    """Labels with their texts fingerprinted once."""

    def __init__(self, labels: Labels, fingerprinter: Fingerprinter) -> None:
        self.labels = labels
        self.truth: set[Any]  # pair indices (labelled pairs) or sorted id pairs (clustered documents)
        if labels.pairs:
            fps = fingerprinter.fingerprint_many([t for a, b, _ in labels.pairs for t in (a, b)])
            self.pair_fps = list(zip(fps[::2], fps[1::2]))
            self.truth = {i for i, (_, _, dup) in enumerate(labels.pairs) if dup}
        else:
            self.doc_fps = fingerprinter.fingerprint_many([t for _, t, _ in labels.docs])
            members: dict[str, list[str]] = {}
            for doc_id, _, label in labels.docs:
                members.setdefault(label, []).append(doc_id)
            self.truth = {tuple(sorted(p)) for ids in members.values() for p in combinations(ids, 2)}
        self.fingerprinter = fingerprinter

    def score(self, rule: DefaultRule) -> Score:
        if self.labels.pairs:
            predicted: set[Any] = {i for i, (fa, fb) in enumerate(self.pair_fps)
                         if rule.decide(fa, [StoredDoc("b", fb, cluster="b")]) is not None}
            return Score.of(self.truth, predicted)
        engine = DedupEngine(fingerprinter=self.fingerprinter, rule=rule)
        docs = [Document(doc_id, text) for doc_id, text, _ in self.labels.docs]
        results = [r for start in range(0, len(docs), 1000)
                   for r in engine.process_batch(docs[start:start + 1000], self.doc_fps[start:start + 1000])]
        members: dict[str, list[str]] = {}
        for r in results:
            if isinstance(r, Exception):
                raise LabelError(str(r))
            members.setdefault(r.cluster, []).append(r.id)
        predicted = {tuple(sorted(p)) for ids in members.values() for p in combinations(ids, 2)}
        return Score.of(self.truth, predicted)


def score(labels: Labels, fingerprinter: Fingerprinter | None = None, rule: DefaultRule | None = None) -> Score:
    """Precision, recall and F1 of ``rule`` (default settings unless given) on ``labels``."""
    return _Prepared(labels, fingerprinter or Fingerprinter()).score(rule or DefaultRule())


@dataclass
class SweepResult:
    current: Score
    rows: list[tuple[str, Any, Score]]
    """``(setting, value, score)`` for every value tried."""
    best: dict[str, Any]
    """The best value of each setting (the current one when nothing beats it)."""
    best_score: Score
    """The score of all best values together."""

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current.to_dict(),
                "sweep": [{"setting": s, "value": v, **sc.to_dict()} for s, v, sc in self.rows],
                "best": self.best, "best_score": self.best_score.to_dict()}


def sweep(labels: Labels, fingerprinter: Fingerprinter | None = None, rule: DefaultRule | None = None,
          values: dict[str, Sequence[Any]] | None = None) -> SweepResult:
    """Score ``rule`` (default settings unless given), then each setting of :data:`SWEEP` (or ``values``) one at
    a time, then the best of each together (ties go to the current value, then to the smaller value)."""
    prepared = _Prepared(labels, fingerprinter or Fingerprinter())
    base = rule or DefaultRule()
    current = prepared.score(base)
    rows: list[tuple[str, Any, Score]] = []
    best: dict[str, Any] = {}
    for setting, tried in (values or SWEEP).items():
        now = getattr(base, setting)
        top = (current.f1, now)
        for value in tried:
            sc = current if value == now else prepared.score(replace(base, **{setting: value}))
            rows.append((setting, value, sc))
            if sc.f1 > top[0] + 1e-12:
                top = (sc.f1, value)
        best[setting] = top[1]
    return SweepResult(current, rows, best, prepared.score(replace(base, **best)))
