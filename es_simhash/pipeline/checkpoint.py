"""Checkpoints: what a run has written, saved after each batch so an interrupted run resumes where it stopped
(``--resume``), with the lock that keeps two runs off one checkpoint and the mark a resumed batch is settled with."""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from es_simhash.errors import CheckpointInUse, NoCheckpoint
from es_simhash.files.outputs import AtomicFile
from es_simhash.errors import OutputError
from es_simhash.pipeline.summary import Summary


class Checkpoint:
    """Where a run got to, saved atomically after every batch, so an interrupted ``index`` can ``--resume``.

    Everything up to ``done[source]`` lines of each input has been indexed, reported and dead-lettered; the
    saved ``summary`` counts exactly those lines. A run holds the checkpoint's lock (:meth:`lock`, a
    ``.lock`` file beside it naming the process) while it works, so a second run given the same checkpoint
    stops with :class:`CheckpointInUse` before it reads or writes anything; a lock left by a killed process
    (no such process on this host any more) is taken over.

    The run's report and dead letters are written as partial files beside their paths
    (:data:`~es_simhash.files.outputs.PARTIAL_SUFFIX`) and put in place when it finishes: an earlier report is never
    cut into, and a resumed run appends to the partial files of the run it resumes (the checkpoint records their
    paths, so a resume that names others is refused). ``batch_size`` is the size of the next batch, so a resumed
    run cuts its batches where the interrupted one did: the first batch it decides is the one that run was writing
    when it stopped (:meth:`DedupEngine.process_batches`' ``resumed``).
    """

    FORMAT = "es-simhash-checkpoint/1"

    def __init__(self, path: str | os.PathLike[str], inputs: Sequence[str]) -> None:
        self.path = os.fspath(path)
        self.inputs = [os.path.abspath(p) if p != "-" else p for p in inputs]
        self.done: dict[str, int] = {}
        self.summary = Summary()
        self.batch_size: int | None = None
        """The size of the next batch (saved, so a resumed run cuts its batches where this one did)."""
        self.mark: Any = None
        """The visible mark the next batch was decided with (:attr:`DedupEngine.next_mark`; JSON)."""
        self.outputs: dict[str, str] = {}
        """The run's resumable outputs: ``report`` and ``dead_letters``, absolute paths."""
        self.since: int | None = None
        """When the run began (microseconds since the epoch, as :attr:`~es_simhash.index.base.StoredDoc.arrival`):
        every document it decided arrived then or later (a resumed run keeps the first run's)."""
        self.far: dict[str, Any] | None = None
        """The run's :class:`~es_simhash.engine.decisions.FarMarks` (:meth:`FarMarks.saved`; JSON): the canonicals
        its recheck settles, of the batches saved."""
        self.rechecked: dict[str, list] | None = None
        """Once every input line is done and the final recheck has begun: each document it changed so far, with
        its ``[duplicate_of, reason]`` before (``None``: the recheck has not begun)."""
        self.started_over = False
        """Whether a resume was asked for and there was no checkpoint to resume (the run it resumes stopped before
        its first batch was saved, or finished): this new one starts from the top
        (:func:`~es_simhash.pipeline.checkpointed.open_checkpoint`)."""
        self._locks = 0

    @staticmethod
    def default_path(index: str, inputs: Sequence[str]) -> str:
        """The checkpoint of a run of ``inputs`` into ``index`` when none is named: in the current folder, named
        after the index and a digest of the inputs' absolute paths, so runs on other inputs (concurrent writers
        into one index) never share one, and the same command finds its own again with ``--resume``."""
        import hashlib

        names = "\n".join(os.path.abspath(p) if p != "-" else p for p in inputs)
        return f"es-simhash-{index}-{hashlib.sha1(names.encode('utf-8')).hexdigest()[:10]}.checkpoint.json"

    @property
    def lock_path(self) -> str:
        return f"{self.path}.lock"

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the checkpoint for this run (re-entrant); raises :class:`CheckpointInUse` when a live process holds
        it."""
        if self._locks == 0:
            self._acquire()
        self._locks += 1
        try:
            yield
        finally:
            self._locks -= 1
            if self._locks == 0:
                try:
                    os.remove(self.lock_path)
                except FileNotFoundError:
                    pass

    def _acquire(self) -> None:
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S")}
        for _ in range(2):
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._holder()
                if holder is not None and not _alive(holder):
                    os.remove(self.lock_path)  # left by a process that was killed: take it over
                    continue
                who = (f"process {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}"
                       if holder else "another process")
                raise CheckpointInUse(
                    f"checkpoint {self.path} is in use by {who}: give each concurrent run its own checkpoint"
                ) from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(me, fh)
            return
        raise CheckpointInUse(f"checkpoint {self.path} is in use by another process")

    def _holder(self) -> dict | None:
        try:
            with open(self.lock_path, encoding="utf-8") as fh:
                data = json.load(fh)
            return data if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    @classmethod
    def load(cls, path: str | os.PathLike[str], inputs: Sequence[str]) -> "Checkpoint":
        cp = cls(path, inputs)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise NoCheckpoint(f"no checkpoint at {path}: nothing to resume") from None
        except (OSError, ValueError) as exc:
            raise ValueError(f"unreadable checkpoint {path}: {exc}") from None
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"{path} is not an es-simhash checkpoint")
        if data["inputs"] != cp.inputs:
            raise ValueError(f"checkpoint {path} is for other inputs: {', '.join(data['inputs'])}")
        cp.done = {k: int(v) for k, v in data["done"].items()}
        s = data["summary"]
        cp.summary = Summary(
            read=s["read"], kept=s["kept"], duplicates=s["duplicates"], dead_letters=s["dead_letters"],
            already_indexed=s["already_indexed"], reasons=dict(s["reasons"]),
            encoding_fallbacks=int(s.get("encoding_fallbacks", 0)), html_stripped=int(s.get("html_stripped", 0)),
            elapsed=float(s.get("elapsed_seconds", 0.0)), dead_reasons=dict(s.get("dead_reasons", {})),
        )
        cp.summary.resumed_indexed = cp.summary.indexed
        cp.summary.resumed_already = cp.summary.already_indexed
        cp.summary.resumed_elapsed = cp.summary.elapsed
        cp.batch_size = data.get("batch_size")
        cp.mark = data.get("mark")
        cp.outputs = dict(data.get("outputs", {}))
        cp.since = data.get("since")
        cp.rechecked = data.get("rechecked")
        cp.far = data.get("far")
        return cp

    def save(self, summary: Summary) -> None:
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"format": self.FORMAT, "inputs": self.inputs, "done": self.done, "batch_size": self.batch_size,
                       "mark": self.mark, "since": self.since, "far": self.far, "rechecked": self.rechecked,
                       "outputs": self.outputs, "summary": summary.to_dict()}, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def output(self, name: str, option: str, path: str | os.PathLike[str] | None) -> None:
        """Record the run's output ``name`` (``report``, ``dead_letters``) at ``path``; a resumed run must name the
        same file the interrupted run wrote (:class:`~es_simhash.errors.OutputError` otherwise: its partial file
        is beside that one)."""
        real = None if path is None else os.path.realpath(path)
        if self.done:
            was = self.outputs.get(name)
            if was != real:
                said = f"{option} {was}" if was else f"no {option}"
                raise OutputError(f"{option}: the interrupted run was given {said}: resume with the same, or start "
                                  "the run anew instead of resuming it")
        if real is None:
            self.outputs.pop(name, None)
        else:
            self.outputs[name] = real

    def open_report(self, path: str | os.PathLike[str]) -> AtomicFile:
        """The run's ``report`` file for :func:`run_dedup`, as a context manager giving the file to write: written
        as a partial file beside ``path`` and put in place when the block ends well (an earlier report stays as it
        was until then); a resumed run cuts the partial file of the run it resumes back to the lines this checkpoint
        accounts for (a batch written after the last save goes: the run writes it again) and appends. Take
        :meth:`lock` first, so a run that holds the checkpoint is never cut into."""
        self.output("report", "--report", path)
        report = AtomicFile(path, resumable=True)
        report.open(self.summary.kept + self.summary.duplicates if self.done else None)
        return report

    def remove(self) -> None:
        for p in (self.path, f"{self.path}.tmp"):
            if os.path.exists(p):
                os.remove(p)


def _alive(holder: dict) -> bool:
    """Whether the process named by a lock file may still be running (always assumed on another host)."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(holder["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, ValueError, TypeError):
        return True
    return True
