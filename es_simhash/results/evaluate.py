"""How well ``es-simhash dedup`` does on a user's own labelled data, and which settings do best there.

Labels are JSON Lines, one of two kinds per file:

* **clusters**: ``{"id": ID, "content": TEXT, "cluster": LABEL}`` (``text``/``body`` for the text): documents with
  the same label are duplicates of each other. The documents go through one ``dedup`` run in file order (the
  engine on a new in-memory index, then the recheck at the end of the run, :func:`~es_simhash.pipeline.
  dedup_documents`), and **a predicted pair is two documents in one of its final clusters** (the clusters
  ``dedup --report`` gives): the same pairs whether ``dedup`` put them together on arrival or by the recheck;
* **pairs**: ``{"a": TEXT, "b": TEXT, "duplicate": true|false}`` (``label`` 1/0 works too): each pair is a
  ``dedup`` run of its own, ``b`` then ``a``, and it is predicted a duplicate when that run ends with the two in
  one cluster.

Texts are read as ``dedup`` reads them (``html``: its ``--html``, ``auto`` by default). Scores are pairwise
precision, recall and F1 of the predicted pairs against the labelled ones. :func:`sweep` varies one setting of
:class:`DefaultRule` at a time (``k``, ``short_k``, ``sentence_k``, ``sentence_near_k``, ``min_shared_fraction``,
``crowd_k``, ``crowd_own``), the others at their current values, each a whole ``dedup`` run, and then scores the
best value of each together: the setting to try on that data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Iterable, Sequence

from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.decide.default import DefaultRule
from es_simhash.errors import LabelError
from es_simhash.files.markup import HTML_MODES, text_of
from es_simhash.records import DEFAULT_TEXT_FIELDS
from es_simhash.fingerprint.fingerprinter import Fingerprinter
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.keys import DEFAULT as DEFAULT_KEYS, LookupKeys
from es_simhash.pipeline import dedup_documents
from es_simhash.records import Document

__all__ = ["Labels", "Score", "SweepResult", "load_labels", "score", "sweep", "SWEEP"]

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


def load_labels(lines: Iterable[str], source: str = "labels", html: str = "auto") -> Labels:
    """Read labels (see the module's documentation); :class:`LabelError` names the first bad line. ``html``: the
    texts as ``dedup --html`` reads them (``keep``, ``auto``, ``strip``)."""
    if html not in HTML_MODES:
        raise ValueError(f"unknown html mode {html!r}: use {', '.join(HTML_MODES)}")
    labels = Labels()
    seen: set[str] = set()
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
            labels.pairs.append((text_of(obj["a"], html)[0], text_of(obj["b"], html)[0], bool(dup)))
        else:
            text, label, doc_id = _text(obj), obj.get("cluster"), obj.get("id")
            if text is None or label is None or not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) \
                    or not str(doc_id).strip():
                raise LabelError(f'{source}:{n}: a document needs "id", a text ("content") and "cluster", or use '
                                 'pairs ("a", "b", "duplicate")')
            if str(doc_id) in seen:
                raise LabelError(f"{source}:{n}: id {doc_id!r} again: give each document its own id")
            seen.add(str(doc_id))
            labels.docs.append((str(doc_id), text_of(text, html)[0], str(label)))
        if labels.pairs and labels.docs:
            raise LabelError(f"{source}:{n}: pairs and clustered documents mixed in one file: use one kind")
    if not labels.pairs and not labels.docs:
        raise LabelError(f"{source}: no labels")
    return labels


class _Prepared:
    """Labels as ``dedup`` reads them, with the run that scores a rule."""

    def __init__(self, labels: Labels, fingerprinter: Fingerprinter, recheck: bool,
                 lookup_keys: LookupKeys | None) -> None:
        self.labels, self.fingerprinter, self.recheck, self.lookup_keys = labels, fingerprinter, recheck, lookup_keys
        self.truth: set[Any]  # pair indices (labelled pairs) or sorted id pairs (clustered documents)
        if labels.pairs:
            self.truth = {i for i, (_, _, dup) in enumerate(labels.pairs) if dup}
        else:
            members: dict[str, list[str]] = {}
            for doc_id, _, label in labels.docs:
                members.setdefault(label, []).append(doc_id)
            if len({d for d, _, _ in labels.docs}) != len(labels.docs):
                raise LabelError("labels: two documents with one id")
            self.truth = {tuple(sorted(p)) for ids in members.values() for p in combinations(ids, 2)}

    def clusters(self, docs: list[Document], rule: DefaultRule, keys: LookupKeys | None) -> dict[str, str]:
        """The final cluster of each of ``docs``: ``dedup``'s run of them, in this order, on a new index."""
        keys = keys or self.lookup_keys
        engine = DedupEngine.for_run(MemoryIndex() if keys is None else MemoryIndex(lookup_keys=keys),
                                     self.fingerprinter, rule, recheck=self.recheck)
        return dedup_documents(docs, engine, recheck=self.recheck)

    def score(self, rule: DefaultRule, keys: LookupKeys | None = None) -> Score:
        """The score of ``dedup`` with ``rule`` (and ``keys``, when not the given lookup keys)."""
        if self.labels.pairs:
            predicted: set[Any] = set()
            for i, (a, b, _) in enumerate(self.labels.pairs):
                found = self.clusters([Document("b", b), Document("a", a)], rule, keys)
                if found["a"] == found["b"]:
                    predicted.add(i)
            return Score.of(self.truth, predicted)
        found = self.clusters([Document(doc_id, text) for doc_id, text, _ in self.labels.docs], rule, keys)
        members: dict[str, list[str]] = {}
        for doc_id, cluster in found.items():
            members.setdefault(cluster, []).append(doc_id)
        predicted = {tuple(sorted(p)) for ids in members.values() for p in combinations(ids, 2)}
        return Score.of(self.truth, predicted)


def _rule(rule: DefaultRule | None, recheck: bool) -> DefaultRule:
    return rule if rule is not None else DefaultRule.rechecked() if recheck else DefaultRule()


def score(labels: Labels, fingerprinter: Fingerprinter | None = None, rule: DefaultRule | None = None, *,
          recheck: bool = True, lookup_keys: LookupKeys | None = None) -> Score:
    """Precision, recall and F1 on ``labels`` of what ``es-simhash dedup`` finds with ``rule`` (unless given,
    :meth:`DefaultRule.rechecked`, or ``DefaultRule()`` without ``recheck``), ``recheck`` (the recheck at the end of
    the run, as ``dedup --recheck``, the default) and ``lookup_keys`` (the index's, as ``dedup --lookup``; the
    default ``tables``). A predicted pair is two documents that ``dedup``'s final clusters put together (see the
    module's documentation)."""
    return _Prepared(labels, fingerprinter or Fingerprinter(), recheck, lookup_keys).score(_rule(rule, recheck))


@dataclass
class SweepResult:
    current: Score
    rows: list[tuple[str, Any, Score]]
    """``(setting, value, score)`` for every value tried."""
    best: dict[str, Any]
    """The best value of each setting (the current one when nothing beats it)."""
    best_score: Score
    """The score of all best values together."""
    lookups: dict[int, str] = field(default_factory=dict)
    """The lookup keys (``--lookup``) of the ``k`` values beyond what the given keys guarantee: those runs use
    keys that guarantee them, as ``dedup`` asks for with such a ``-k``; ``best_score`` too, when the best ``k`` is
    one of them."""

    @property
    def best_lookup(self) -> str | None:
        """The ``--lookup`` the best settings were run with, when it is not the given one."""
        return self.lookups.get(self.best.get("k"))  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current.to_dict(),
                "sweep": [{"setting": s, "value": v, **sc.to_dict(),
                           **({"lookup": self.lookups[v]} if s == "k" and v in self.lookups else {})}
                          for s, v, sc in self.rows],
                "best": self.best, "best_score": self.best_score.to_dict(),
                **({"best_lookup": self.best_lookup} if self.best_lookup else {})}


def sweep(labels: Labels, fingerprinter: Fingerprinter | None = None, rule: DefaultRule | None = None,
          values: dict[str, Sequence[Any]] | None = None, *, recheck: bool = True,
          lookup_keys: LookupKeys | None = None) -> SweepResult:
    """:func:`score` of ``rule`` (as there), then of each setting of :data:`SWEEP` (or ``values``) one at a time,
    then of the best of each together (ties go to the current value, then to the smaller value): every row is a
    whole ``dedup`` run of the labelled texts with that rule, ``recheck`` and ``lookup_keys``; a ``k`` beyond what
    the lookup keys guarantee is run with keys that guarantee it (``tables:K:3``, :attr:`SweepResult.lookups`), as
    ``dedup`` advises for such a ``-k``."""
    keys = lookup_keys or DEFAULT_KEYS
    prepared = _Prepared(labels, fingerprinter or Fingerprinter(), recheck, keys)
    base = _rule(rule, recheck)
    lookups: dict[int, str] = {}

    def run(r: DefaultRule) -> Score:
        if r.k != base.k and r.k > keys.k:
            lookups[r.k] = f"tables:{r.k}:3"
            return prepared.score(r, LookupKeys(r.k, 3))
        return prepared.score(r)

    current = prepared.score(base)
    rows: list[tuple[str, Any, Score]] = []
    best: dict[str, Any] = {}
    for setting, tried in (values or SWEEP).items():
        now = getattr(base, setting)
        top = (current.f1, now)
        for value in tried:
            sc = current if value == now else run(replace(base, **{setting: value}))
            rows.append((setting, value, sc))
            if sc.f1 > top[0] + 1e-12:
                top = (sc.f1, value)
        best[setting] = top[1]
    return SweepResult(current, rows, best, run(replace(base, **best)), lookups)
