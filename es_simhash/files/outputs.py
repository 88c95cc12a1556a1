"""Output files that cannot hurt the inputs or each other.

Every file a run writes (report, output, dead letters, checkpoint, saved index, IDF table, HTML report, Kibana
objects) goes through this module:

* :func:`check_outputs` refuses, before anything is read or written, an output that is the same file as an input
  or as another output (compared by resolved path and by device and inode, so ``./x``, symbolic links and hard
  links count), an output that is a folder, and one whose folder does not exist or cannot be written;
  ``-`` (standard output) and files that are not regular files (``/dev/null``, a pipe) are always fine.
* :class:`AtomicFile` writes a file under a temporary name in its folder and renames it into place only when the
  run ends well, so a failed or interrupted run leaves an earlier file of that name as it was. A *resumable* one
  (a checkpointed ``index`` or ``migrate``) writes ``NAME.es-simhash-partial`` instead and keeps it when the run
  stops, so ``--resume`` goes on appending to it (:meth:`AtomicFile.open` with ``keep_lines``).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Iterator, Sequence

from es_simhash.errors import OutputError

__all__ = ["Output", "check_outputs", "AtomicFile", "atomic_write", "PARTIAL_SUFFIX", "is_stream"]

PARTIAL_SUFFIX = ".es-simhash-partial"
"""What a resumable output is written as until its run finishes (beside it, in the same folder)."""


@dataclass(frozen=True)
class Output:
    """One output of a run: the option that names it (for messages) and its path (``None``: not asked for)."""

    option: str
    path: str | os.PathLike[str] | None


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is ``-`` (standard output) or an existing file that is not a regular file (``/dev/null``,
    a pipe, a terminal): written as it is, never through a temporary file, and never a conflict."""
    p = os.fspath(path)
    if p == "-":
        return True
    try:
        return not stat.S_ISREG(os.stat(p).st_mode) and not stat.S_ISDIR(os.stat(p).st_mode)
    except OSError:
        return False


def _identity(path: str) -> tuple[Any, ...] | None:
    """What makes two paths the same file: device and inode for an existing regular file, the resolved path for
    one that does not exist yet; ``None`` for a stream."""
    if is_stream(path):
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return ("path", os.path.realpath(path))
    except OSError:
        return ("path", os.path.realpath(path))
    return ("file", st.st_dev, st.st_ino)


def _writable(option: str, path: str) -> None:
    """Refuse an output that is a folder, or whose folder is missing or read-only (one line naming the option)."""
    if os.path.isdir(path):
        raise OutputError(f"{option} {path} is a folder: give a file path")
    folder = os.path.dirname(os.path.realpath(path)) or "."
    if not os.path.isdir(folder):
        raise OutputError(f"{option} {path}: the folder {folder} does not exist: create it first or give another "
                          "path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {path}: cannot write in the folder {folder} (permission denied): give another "
                          "path")
    try:  # (what the run will do: a file beside it, renamed into place; /proc, a read-only mount refuse it)
        fd, probe = tempfile.mkstemp(prefix=".es-simhash-probe.", dir=folder)
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot create a file in the folder {folder} "
                          f"({(exc.strerror or str(exc)).lower()}): give another path") from None
    os.close(fd)
    os.remove(probe)


def check_outputs(inputs: Sequence[str | os.PathLike[str]], outputs: Sequence[Output],
                  input_name: str = "input") -> None:
    """Raise :class:`OutputError` (naming the option) for the first output that is the same file as one of
    ``inputs`` or as another of ``outputs``, or that cannot be written (see the module's text). ``-`` in
    ``inputs`` (standard input) and outputs that are streams never conflict; two outputs that are both ``-`` do
    (both would write to standard output)."""
    seen_inputs: list[tuple[tuple[Any, ...], str]] = []
    for p in inputs:
        s = os.fspath(p)
        if s == "-":
            continue
        ident = _identity(s)
        if ident is not None:
            seen_inputs.append((ident, s))
    taken: list[tuple[tuple[Any, ...], Output]] = []
    stdout: Output | None = None
    for out in outputs:
        if out.path is None:
            continue
        s = os.fspath(out.path)
        if s == "-":
            if stdout is not None:
                raise OutputError(f"{stdout.option} and {out.option} both write to standard output (-): give one of "
                                  "them a file")
            stdout = out
            continue
        ident = _identity(s)
        if ident is None:  # /dev/null, a pipe: nothing to destroy
            continue
        for other, name in seen_inputs:
            if other == ident:
                raise OutputError(f"{out.option} {s} is the {input_name} {name}: writing it would destroy the "
                                  f"{input_name}; give another path")
        for other, prev in taken:
            if other == ident:
                raise OutputError(f"{prev.option} and {out.option} name the same file ({s}): give each its own")
        _writable(out.option, s)
        taken.append((ident, out))


def _new_file_mode() -> int:
    """The permissions ``open(path, "w")`` gives a new file (0666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class AtomicFile:
    """A file written beside ``path`` and put in its place by :meth:`commit` (with the permissions of the file it
    replaces, or of a new file): until then, and for good when :meth:`abort` is called instead, a file already at
    ``path`` is left as it was. ``path`` may be a symbolic link: the file it points to is replaced.

    ``resumable``: the file is written as ``path`` + :data:`PARTIAL_SUFFIX` and :meth:`abort` keeps it, so a run
    resumed from a checkpoint reopens it with :meth:`open` (``keep_lines``) and appends. ``-`` is standard output
    and a stream (``/dev/null``, a pipe) is written directly (commit and abort do nothing to it).

    Use it as a context manager (commit on success, abort on an error or an interrupt), or call :meth:`open`,
    then :meth:`commit` or :meth:`abort`.
    """

    def __init__(self, path: str | os.PathLike[str], binary: bool = False, resumable: bool = False) -> None:
        self.path = os.fspath(path)
        self.binary = binary
        self.resumable = resumable
        self.stream = is_stream(self.path)
        self.target = self.path if self.stream else os.path.realpath(self.path)
        self.tmp: str | None = None
        self.fh: IO[Any] | None = None

    @property
    def partial(self) -> str:
        """Where a resumable file is written until its run finishes."""
        return self.target + PARTIAL_SUFFIX

    def open(self, keep_lines: int | None = None) -> IO[Any]:
        """Open the file for writing: a new temporary file; for a resumable one with ``keep_lines``, the partial file
        of the run being resumed, cut back to its first ``keep_lines`` lines and appended to (:class:`OutputError`
        when it is missing or shorter: the run it resumes did not write it)."""
        if self.fh is not None:
            return self.fh
        if self.path == "-":
            self.fh = sys.stdout.buffer if self.binary else sys.stdout
            return self.fh
        mode = "wb" if self.binary else "w"
        encoding = None if self.binary else "utf-8"
        if self.stream:
            self.fh = open(self.path, mode, encoding=encoding)  # noqa: SIM115 - closed by commit/abort
            return self.fh
        if self.resumable:
            self.tmp = self.partial
            if keep_lines:
                have = trim_lines(self.tmp, keep_lines)
                if have < keep_lines:
                    raise OutputError(
                        f"{self.path}: the interrupted run's partial file {self.tmp} holds {have:,} of its {keep_lines:,} "
                        "lines: start the run anew instead of resuming it (indexing again changes nothing)")
                self.fh = open(self.tmp, "ab" if self.binary else "a", encoding=encoding)  # noqa: SIM115
                return self.fh
            self.fh = open(self.tmp, mode, encoding=encoding)  # noqa: SIM115
            return self.fh
        folder, name = os.path.split(self.target)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
        os.close(fd)  # (opened again by name: the file object's name is then its path)
        self.fh = open(self.tmp, mode, encoding=encoding)  # noqa: SIM115 - closed by commit/abort
        return self.fh

    def commit(self) -> None:
        """Put the written file in place (an unopened file is opened first: the run wrote nothing to it)."""
        fh = self.open()
        if self.path == "-":
            fh.flush()
            return
        fh.flush()
        if not self.stream:
            os.fsync(fh.fileno())
        fh.close()
        self.fh = None
        if self.stream or self.tmp is None:
            return
        try:
            mode = stat.S_IMODE(os.stat(self.target).st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        os.chmod(self.tmp, mode)
        os.replace(self.tmp, self.target)
        self.tmp = None

    def abort(self) -> None:
        """Leave ``path`` as it was: the temporary file is removed (a resumable one is kept, flushed, for
        ``--resume``)."""
        fh, self.fh = self.fh, None
        if fh is not None and self.path != "-":
            try:
                fh.close()
            except OSError:
                pass
        if self.tmp is not None and not self.resumable:
            try:
                os.remove(self.tmp)
            except FileNotFoundError:
                pass
            self.tmp = None

    def discard(self) -> None:
        """Remove what was written, the partial file of a resumable one too (``path`` is left as it was)."""
        self.resumable = False
        self.abort()

    def __enter__(self) -> IO[Any]:
        return self.open()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


@contextmanager
def atomic_write(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """``with atomic_write(path) as fh:`` the new file is in place when the block ends without an error, and an
    earlier file at ``path`` is left as it was when it does not (:class:`AtomicFile`)."""
    with AtomicFile(path, binary=binary) as fh:
        yield fh


def trim_lines(path: str | os.PathLike[str], keep: int) -> int:
    """Cut a JSON Lines file back to its first ``keep`` lines (a run stopped between writing a batch and saving its
    checkpoint left that batch's lines behind; the resumed run writes them again). Returns how many lines it
    holds now (fewer than ``keep`` when it was shorter; 0 when it is missing)."""
    try:
        fh = open(path, "r+b")  # noqa: SIM115
    except FileNotFoundError:
        return 0
    with fh:
        seen = 0
        offset = 0
        for line in fh:
            if seen == keep:
                fh.truncate(offset)
                return seen
            seen += 1
            offset += len(line)
        return seen
