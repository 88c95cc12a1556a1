"""The end of a run that rechecks (``dedup``, ``index`` and ``migrate`` by default): the index's decisions taken
again once every record is decided (:func:`~es_simhash.clustering.recheck`), then the summary, the report and the
output corrected to the final clusters, in both directions (duplicates no more, and documents that became
duplicates). With a checkpoint the recheck is resumable: what it changed so far is saved after every page, and a
resumed run takes the recheck again from the top (it finds what is done as it left it) and corrects with all of it."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Callable, Iterator, Mapping, Sequence

from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document, Result, StoredDoc
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary, report_line

Where = Mapping[str, tuple[str, int, "bytes | None"]]
"""Where a run read each of its records, for corrections that cannot rewrite a file (a pipe): id -> (source, line,
its raw bytes when the output is written from them)."""


@dataclass
class RecheckOutcome:
    """What the final recheck changed in the run's documents: each one's ``(cluster, duplicate_of, reason)`` before
    it, and the document as it is after it (only documents whose cluster or match changed)."""

    before: dict[str, tuple[str, str | None, str]] = field(default_factory=dict)
    after: dict[str, StoredDoc] = field(default_factory=dict)

    def then(self, later: "RecheckOutcome") -> "RecheckOutcome":
        """This outcome followed by ``later`` (taken from the state this one left): each document's state before
        the first, and after the last, that changed it."""
        out = RecheckOutcome(dict(self.before), dict(self.after))
        for i, doc in later.after.items():
            out.before.setdefault(i, later.before[i])
            out.after[i] = doc
        return out

    def became(self) -> set[str]:
        """Documents that were not duplicates and are now."""
        return {i for i, d in self.after.items() if self.before[i][1] is None and not d.is_canonical}

    def taken_back(self) -> set[str]:
        """Documents that were duplicates and are not any more."""
        return {i for i, d in self.after.items() if self.before[i][1] is not None and d.is_canonical}

    def moved(self) -> set[str]:
        """Documents that were duplicates and still are, in another cluster or of another document."""
        return {i for i, d in self.after.items() if self.before[i][1] is not None and not d.is_canonical
                and (d.cluster, d.duplicate_of) != self.before[i][:2]}


def recheck_run(engine: DedupEngine, summary: Summary, since: int, *, scope: int | None,
                checkpoint: Checkpoint | None = None, on_page: Callable[[int, int], None] | None = None
                ) -> RecheckOutcome:
    """Take the decisions of ``engine``'s index again (:func:`~es_simhash.clustering.recheck`): those of the
    documents that arrived at ``scope`` or later (``None``: every document of the index) and what their changes
    lead to. ``since``: when the run began (its documents are those that arrived then or later; the others that
    changed are counted in :attr:`Summary.rechecked_earlier`, not in the run's counts). Corrects ``summary``;
    returns what changed in the run's documents (for the report and the output). ``on_page(checked, total)``:
    progress. With a ``checkpoint``, what changed is saved after every page (:attr:`Checkpoint.rechecked`). The
    canonicals settled are those ``engine``'s decisions on arrival call into question (:attr:`DedupEngine.far_marks`),
    and those near a change."""
    from es_simhash.clustering.recheck import recheck

    index = engine.maintained()
    before: dict[str, tuple[str, str | None, str]] = {}
    if checkpoint is not None and checkpoint.rechecked:
        before.update((i, (c, d, r)) for i, (c, d, r) in checkpoint.rechecked.items())
    total = len(index) if scope is None else summary.kept + summary.duplicates
    seen = 0

    def note(report) -> None:
        nonlocal seen
        for c in report.changes[seen:]:
            before.setdefault(c.id, (c.before[0] or c.id, c.before[1], c.was_reason or ""))
        seen = len(report.changes)

    def page(report) -> None:
        note(report)
        if checkpoint is not None:
            checkpoint.rechecked = {i: list(v) for i, v in before.items()}
            checkpoint.save(summary)
        if on_page is not None:
            on_page(min(report.checked, total), total)

    if checkpoint is not None and checkpoint.rechecked is None:
        checkpoint.rechecked = {}
        checkpoint.save(summary)
    note(recheck(index, engine.recheck_rule, since=scope, on_page=page, settles=engine.far_marks.settles))
    if on_page is not None:
        on_page(total, total)
    outcome = RecheckOutcome()
    earlier = 0
    for i, doc in (index.fetch(sorted(before), whole=False) if before else {}).items():
        if (doc.cluster, doc.duplicate_of, doc.reason) == before[i]:
            continue  # (changed, and changed back)
        if doc.arrival < since:
            earlier += 1
            continue
        outcome.before[i], outcome.after[i] = before[i], doc
    correct_summary(summary, outcome, earlier)
    return outcome


def correct_summary(summary: Summary, outcome: RecheckOutcome, earlier: int) -> None:
    taken_back, became = outcome.taken_back(), outcome.became()
    for i, doc in outcome.after.items():
        was_reason = outcome.before[i][2]
        summary.reasons[was_reason] = summary.reasons.get(was_reason, 0) - 1
        summary.reasons[doc.reason] = summary.reasons.get(doc.reason, 0) + 1
    summary.reasons = {r: n for r, n in summary.reasons.items() if n}
    summary.rechecked = len(outcome.after)
    summary.taken_back = len(taken_back)
    summary.became = len(became)
    summary.moved = len(outcome.moved())
    summary.duplicates += len(became) - len(taken_back)
    summary.kept += len(taken_back) - len(became)
    summary.rechecked_earlier = earlier


def correct_outputs(outcome: RecheckOutcome, inputs: Sequence[str], reader: RecordSource, report: IO[str] | None,
                    output: IO[bytes] | None, where: Where, held_back: set[str] | None) -> None:
    """The report and the output corrected for ``outcome``. ``held_back``: the output is a stream the run wrote
    nothing to (it cannot be corrected afterwards), and these are the records decided as duplicates on arrival:
    every record that is not a duplicate in the end is written to it now."""
    if report is not None:
        correct_report(report, outcome, where)
    if output is None:
        return
    if held_back is None:
        correct_output(output, inputs, reader, outcome, where)
        return
    became, back = outcome.became(), outcome.taken_back()
    write_final_output(output, inputs, reader, lambda i: i in back or (i not in held_back and i not in became), where)


def correct_report(report: IO[str], outcome: RecheckOutcome, where: Where) -> None:
    """The report's lines of the documents the recheck changed, with their final cluster: in place when the report
    is a regular file (one line per record, in input order, as before), else appended (a later line of an id
    replaces its earlier one)."""
    if not outcome.after:
        return
    report.flush()
    path = _rewritable(report)
    if path is None:
        for doc_id, doc in outcome.after.items():
            source, line, _ = where.get(doc_id, (None, None, None))
            report.write(report_line(Result.from_stored(doc), source, line))
        return
    with open(path, encoding="utf-8") as src, _replacing(path, "w") as dst:
        for text in src:
            row = json.loads(text)
            now = outcome.after.get(row["id"])
            dst.write(text if now is None else report_line(Result.from_stored(now), row["source"], row["line"]))


def correct_output(output: IO[bytes], inputs: Sequence[str], reader: RecordSource, outcome: RecheckOutcome,
                   where: Where) -> None:
    """Make ``output`` hold every record that is not a duplicate in the end, in input order: the records the
    recheck took back are added and those that became duplicates removed (a regular file is written again beside
    itself from the inputs; inputs that cannot be read again gave their raw bytes, kept in ``where``)."""
    unique, became = outcome.taken_back(), outcome.became()
    if not unique and not became:
        return
    output.flush()
    path = _rewritable(output)
    if path is None:
        raise ValueError("correct_output: a stream cannot be corrected (write it at the end: write_final_output)")
    with open(path, "rb") as src, _replacing(path, "wb") as dst:
        kept = src.readline()
        for raw, doc_id in _records(inputs, reader, where):
            line = raw + b"\n"
            if kept and line == kept:
                if doc_id not in became:
                    dst.write(kept)
                kept = src.readline()
            elif doc_id in unique:
                dst.write(line)
                unique.discard(doc_id)
        while kept:  # (never expected: what the inputs no longer hold is kept, not lost)
            dst.write(kept)
            kept = src.readline()


def write_final_output(output: IO[bytes], inputs: Sequence[str], reader: RecordSource, kept: Callable[[str], bool],
                       where: Where) -> None:
    """Write to a stream ``output`` every record that is not a duplicate in the end (``kept(id)``), in input order,
    once the recheck is done (a stream cannot be corrected afterwards)."""
    for raw, doc_id in _records(inputs, reader, where):
        if kept(doc_id):
            output.write(raw + b"\n")


def _records(inputs: Sequence[str], reader: RecordSource, where: Where) -> Iterator[tuple[bytes, str]]:
    """``(raw bytes, id)`` of every record of the run in input order: read again from the inputs, or from the raw
    bytes kept (an input that cannot be read again, such as standard input); each id once (an id's later records
    are dead letters)."""
    seen: set[str] = set()
    if not rereadable(inputs):
        for doc_id, (_, _, raw) in where.items():
            if raw is not None:
                yield raw, doc_id
        return
    for records in (reader.read_one(p) for p in inputs):
        for rec in records:
            if isinstance(rec, Document) and rec.id not in seen:
                seen.add(rec.id)
                yield rec.raw, rec.id


def _rewritable(fh: IO) -> str | None:
    """The real path of ``fh`` (symbolic links followed) when it is a regular file that can be written again
    whole, else None."""
    name = getattr(fh, "name", None)
    if not isinstance(name, str) or not os.path.isfile(name):
        return None
    try:
        return os.path.realpath(name) if fh.seekable() else None
    except (OSError, ValueError):
        return None


def is_rewritable(fh: IO | None) -> bool:
    return fh is not None and _rewritable(fh) is not None


@contextmanager
def _replacing(path: str, mode: str) -> Iterator[IO]:
    """A new version of the file ``path``, written beside it and put in its place (with its permissions) only
    when the block ends without an error; otherwise the file is left as it was and the new version removed."""
    tmp = path + ".recheck"
    try:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as dst:
            yield dst
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def rereadable(inputs: Sequence[str]) -> bool:
    """Whether every input is a regular file (read again by a recheck), not standard input or a pipe."""
    return all(p != "-" and os.path.isfile(p) for p in inputs)
