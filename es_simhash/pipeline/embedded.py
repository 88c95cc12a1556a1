"""An embedded run (what ``es-simhash dedup`` makes, no server): :func:`open_memory_index` makes the in-memory
index or reads a saved one (with the fingerprint-version check), :func:`dedup_files` runs the inputs through it and
writes the outputs only when the run ends well. A saved index that cannot be used raises a
:class:`SavedIndexError` of the kind that says why.

``open_memory_index`` belongs with :class:`~es_simhash.index.memory.MemoryIndex` (it lives here until the index
package takes it)."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, ExitStack
from typing import Any, Callable, Sequence

from es_simhash.defaults import DEAD_LETTERS
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.errors import EsSimhashError, IndexFileError
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.keys import LookupKeys
from es_simhash.pipeline.checkpointed import NothingDecided
from es_simhash.pipeline.run import run_dedup
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary

__all__ = ["SavedIndexError", "IndexFileNotFound", "NotAnIndexFile", "UnreadableIndexFile", "OldFingerprints",
           "open_memory_index", "dedup_files"]


class SavedIndexError(EsSimhashError):
    """A saved in-memory index that cannot be used; ``path`` is the file."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class IndexFileNotFound(SavedIndexError):
    """No file at the path (the message names the ``.npz`` file beside it, if there is one)."""


class NotAnIndexFile(SavedIndexError):
    """A file that is not an es-simhash memory index (one written by :meth:`MemoryIndex.save` is)."""


class UnreadableIndexFile(SavedIndexError):
    """An index file that cannot be read (damaged, unreadable)."""


class OldFingerprints(SavedIndexError):
    """An index holding fingerprints of another version (``versions``): they would never match new ones; the index
    must be built again from its input."""

    def __init__(self, message: str, path: str, versions: list[int]) -> None:
        super().__init__(message, path)
        self.versions = versions


def open_memory_index(path: str | os.PathLike[str] | None = None,
                      lookup_keys: LookupKeys | None = None) -> MemoryIndex:
    """A new in-memory index with ``lookup_keys``, or (``path``) the one saved there, which keeps its own lookup
    keys and must hold fingerprints of the current version. Raises :class:`IndexFileNotFound`,
    :class:`NotAnIndexFile`, :class:`UnreadableIndexFile` or :class:`OldFingerprints`."""
    from es_simhash.fingerprint.model import FINGERPRINT_VERSION

    if path is None:
        return MemoryIndex() if lookup_keys is None else MemoryIndex(lookup_keys=lookup_keys)
    name = os.fspath(path)
    try:
        index = MemoryIndex.load(path)
    except FileNotFoundError:
        hint = f" (there is {name}.npz: give that name)" if os.path.isfile(f"{name}.npz") else ""
        raise IndexFileNotFound(f"index file not found: {name}{hint}", name) from None
    except IndexFileError:
        raise NotAnIndexFile(f"{name} is not an es-simhash index file", name) from None
    except (ValueError, OSError, KeyError) as exc:
        raise UnreadableIndexFile(f"cannot load index {name}: {exc}", name) from None
    old = sorted(index.fingerprint_versions() - {FINGERPRINT_VERSION})
    if old:
        raise OldFingerprints(f"{name} holds fingerprints of version {', '.join(map(str, old))}, not "
                              f"{FINGERPRINT_VERSION}: they would never match new ones; build it again from its input",
                              name, old)
    return index


def dedup_files(
    inputs: Sequence[str],
    engine: DedupEngine,
    reader: RecordSource,
    *,
    report: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    dead_letters: str | os.PathLike[str] = DEAD_LETTERS,
    save_index: str | os.PathLike[str] | None = None,
    recheck: bool = False,
    on_progress: Callable[[int, Summary], None] | None = None,
    on_recheck: Callable[[int, int], None] | None = None,
    display: AbstractContextManager[Any] | None = None,
) -> Summary:
    """:func:`~es_simhash.pipeline.run_dedup` of ``inputs`` through ``engine`` (whose index is a
    :class:`MemoryIndex`), with ``report`` and ``output`` written beside their paths and put in place only when
    the run ends well (an error or an interrupt leaves earlier files as they were), and the index saved to
    ``save_index`` at the end. ``display`` (a progress bar) is entered once the outputs are open. Raises
    :class:`NothingDecided` (nothing written) when no record could be decided; the other arguments are
    :func:`run_dedup`'s."""
    from es_simhash.files.outputs import AtomicFile

    with ExitStack() as stack:
        rep = stack.enter_context(AtomicFile(report)) if report else None
        out = stack.enter_context(AtomicFile(output, binary=True)) if output else None
        if display is not None:
            stack.enter_context(display)
        summary = run_dedup(inputs, engine, reader, report=rep, output=out, dead_letters=dead_letters,
                            on_progress=on_progress, recheck=recheck, on_recheck=on_recheck)
        if summary.undecided is not None:
            raise NothingDecided(summary)
        if save_index is not None:
            index = engine.index
            if not isinstance(index, MemoryIndex):
                raise TypeError(f"save_index: the engine's index is a {type(index).__name__}, not a MemoryIndex")
            index.save(save_index)
    return summary
