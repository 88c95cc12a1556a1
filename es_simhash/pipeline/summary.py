"""What a run counts and reports: :class:`Summary` (indexed, duplicates, dead letters by kind, ...) and the lines of
the JSON Lines report."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _json_str  # (what json.dumps(..., ensure_ascii=False) writes)

from es_simhash.records import Result

_FIELDS = re.compile(r"; the record has [^;)]*")
"""The fields of the record a reason names (``es_simhash.files.sources``: ``no text field (...; the record has ...)``)."""
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")


@dataclass
class Summary:
    """Counts of one run. ``read == kept + duplicates + dead_letters`` always holds."""

    read: int = 0
    kept: int = 0
    """Records that are not duplicates (canonical documents, including ones without usable features)."""
    duplicates: int = 0
    dead_letters: int = 0
    already_indexed: int = 0
    """Of ``kept + duplicates``: records found already indexed with the same content (idempotent re-run)."""
    elapsed: float = 0.0
    """Seconds of work, summed over resumed runs."""
    dead_letter_path: str | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    encoding_fallbacks: int = 0
    """Records that were not UTF-8 and were decoded as GB18030 (``RecordReader(encoding="auto")``)."""
    html_stripped: int = 0
    """Records whose text was HTML, replaced by the text of that markup (``RecordReader(html=...)``)."""
    resumed_indexed: int = 0
    """Of :attr:`indexed`: documents written by the earlier runs this one resumed (from the checkpoint)."""
    resumed_elapsed: float = 0.0
    """Of :attr:`elapsed`: seconds of the earlier runs this one resumed."""
    resumed_already: int = 0
    """Of :attr:`already_indexed`: found by the earlier runs this one resumed."""
    rechecked: int = 0
    """Records whose report line the final recheck changed (``run_dedup(recheck=True)``): decided otherwise than
    on arrival, where the same run with ``--no-recheck`` stops (both decide on arrival alike:
    :meth:`~es_simhash.decide.default.DefaultRule.on_arrival`). Of them, :attr:`taken_back` are duplicates no more
    (duplicates with ``--no-recheck``, not with the recheck), :attr:`became` became duplicates (the other way
    round), :attr:`moved` are duplicates either way, in another cluster or of another document; any others kept
    their match, with another reason or distance."""
    taken_back: int = 0
    became: int = 0
    moved: int = 0
    rechecked_earlier: int = 0
    """Documents of an index loaded from an earlier run whose cluster the recheck changed (not records of this
    run: they are in the index, not in the report)."""
    dead_reasons: dict[str, int] = field(default_factory=dict)
    """How many dead letters had each kind of reason (reasons that differ in their numbers alone are one kind),
    under the first reason of that kind."""

    @property
    def undecided(self) -> str | None:
        """When no record could be decided (the input held none, or every one was a dead letter): one line saying
        so, with the most common reason; else ``None``. ``es-simhash`` then exits with code 5, creates no index and
        leaves earlier output files as they were."""
        if self.kept or self.duplicates:
            return None
        if not self.read:
            return "the input holds no records (it is empty, or only blank lines): nothing was decided"
        reason, n = max(self.dead_reasons.items(), key=lambda kv: (kv[1], kv[0]), default=("unknown", 0))
        which = "" if n == self.read else f"; the most common reason ({n:,} of them)"
        return f"none of the {self.read:,} records read could be decided{which}: {reason}"

    @property
    def reconciles(self) -> bool:
        return self.read == self.kept + self.duplicates + self.dead_letters

    @property
    def indexed(self) -> int:
        """Documents written into the index (over resumed runs too): the decided ones not already there."""
        return self.kept + self.duplicates - self.already_indexed

    @property
    def indexed_this_run(self) -> int:
        return self.indexed - self.resumed_indexed

    @property
    def elapsed_this_run(self) -> float:
        return max(self.elapsed - self.resumed_elapsed, 0.0)

    @property
    def rate_this_run(self) -> float:
        """Documents written per second by this run alone (not counting the runs it resumed)."""
        return self.indexed_this_run / self.elapsed_this_run if self.elapsed_this_run else 0.0

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "kept": self.kept,
            "duplicates": self.duplicates,
            "dead_letters": self.dead_letters,
            "already_indexed": self.already_indexed,
            "reasons": dict(sorted(self.reasons.items())),
            "elapsed_seconds": round(self.elapsed, 3),
            "dead_letter_file": self.dead_letter_path,
            "encoding_fallbacks": self.encoding_fallbacks,
            "html_stripped": self.html_stripped,
            "rechecked": self.rechecked,
            "taken_back": self.taken_back,
            "became": self.became,
            "moved": self.moved,
            "rechecked_earlier": self.rechecked_earlier,
            "dead_reasons": dict(sorted(self.dead_reasons.items())),
        }


def reason_kind(reason: str) -> str:
    """A dead letter's reason with its numbers (a byte, an offset, a column) and the fields its record has left
    out: its kind."""
    return _NUMBERS.sub("#", _FIELDS.sub("", reason))


def report_line(res: Result, source: str | None, line: int | None) -> str:
    """The ``--report`` line of one result: ``json.dumps({**res.to_dict(), "source": source, "line": line},
    ensure_ascii=False)`` and a newline, written out field by field (a third of the time, on every record)."""
    dup_of = "null" if res.duplicate_of is None else _json_str(res.duplicate_of)
    distance = "null" if res.distance is None else int(res.distance)
    return (f'{{"id": {_json_str(res.id)}, "cluster": {_json_str(res.cluster)}, '
            f'"duplicate": {"true" if res.duplicate else "false"}, "duplicate_of": {dup_of}, "distance": {distance}, '
            f'"reason": {_json_str(res.reason)}, "source": {"null" if source is None else _json_str(source)}, '
            f'"line": {"null" if line is None else int(line)}}}\n')


def count_result(summary: Summary, res: Result) -> None:
    summary.read += 1
    if res.duplicate:
        summary.duplicates += 1
    else:
        summary.kept += 1
    if res.already_indexed:
        summary.already_indexed += 1
    summary.reasons[res.reason] = summary.reasons.get(res.reason, 0) + 1


