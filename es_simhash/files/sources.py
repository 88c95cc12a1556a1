"""Reading crawl output: JSON Lines, plain or compressed (gzip, bzip2, xz), from files or stdin, with dead letters.

Every non-blank line is either a :class:`Document` or a :class:`DeadLetter` carrying its line number and a
one-line reason; nothing is dropped silently and nothing raises on bad data. Blank lines are not records.
Compression is recognised by its magic bytes, so ``crawl.jsonl.gz``, ``.bz2``, ``.xz``, a misnamed file, and a
compressed stdin all work; a zstd-compressed input is refused with an :class:`InputError` (the standard library
has no zstd: decompress it first).
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import json
import os
import sys
import zlib
from dataclasses import dataclass
from typing import IO, Any, BinaryIO, Iterator, Sequence

from es_simhash.records import Document
from es_simhash.files.markup import HTML_MODES, text_of
from es_simhash.errors import InputError, InvalidValue
from es_simhash.records import (
    DEFAULT_ID_FIELDS,
    DEFAULT_TEXT_FIELDS,
    MAX_ID_BYTES,
)

__all__ = ["DeadLetter", "RecordReader", "DeadLetterWriter", "check_inputs", "excerpt"]

_EXCERPT = 200
_FALLBACK = "gb18030"  # what --encoding auto tries after UTF-8
_NO_SURROGATES = frozenset({"utf-8", _FALLBACK})  # codecs that never decode bytes to a lone surrogate
_CHUNK = 1 << 20


@dataclass(slots=True)
class DeadLetter:
    source: str
    line: int
    reason: str
    excerpt: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "reason": self.reason, "excerpt": self.excerpt}


def check_inputs(inputs: Sequence[str]) -> None:
    """Raise :class:`InputError` for the first of ``inputs`` (paths, ``-`` for stdin) that is missing, a
    directory, unreadable or zstd-compressed, before anything is read or written."""
    for p in inputs:
        if p != "-" and not os.path.exists(p):
            raise InputError(f"input not found: {p}")
        if p != "-" and os.path.isdir(p):
            raise InputError(f"input is a directory, expected a JSON Lines file: {p}")
        if p != "-" and os.path.isfile(p):
            try:
                with open(p, "rb") as fh:
                    head = fh.read(6)
            except OSError as exc:
                raise InputError(f"cannot read input {p}: {exc.strerror or exc}") from None
            if compression_of(head) == "zstd":
                raise InputError(f"{p} is zstd-compressed: decompress it first (zstd -d {p}), or compress it with "
                                 "gzip, bzip2 or xz")


def excerpt(raw: bytes, limit: int = _EXCERPT) -> str:
    """The first ``limit`` bytes of a line as text, for a dead letter: cut before a character the limit would
    split, bytes that are not UTF-8 shown as ``\\xNN`` escapes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
    return decoder.decode(raw[:limit], final=len(raw) <= limit)


def _fields_of(obj: dict[str, Any], most: int = 8) -> str:
    """The fields a record has, for a reason: ``the record has 'content', 'id'`` (the first ``most``)."""
    if not obj:
        return "the record has no fields"
    names = [repr(name if len(name) <= 40 else name[:40] + "...") for name in list(obj)[:most]]
    more = f" and {len(obj) - most:,} more" if len(obj) > most else ""
    return f"the record has {', '.join(names)}{more}"


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
"""The first bytes of each compressed format (a compressed line of JSON begins with none of them)."""


def compression_of(head: bytes) -> str | None:
    """The compression the first bytes of an input show (``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zstd"``), or
    ``None``."""
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)


_BROKEN: tuple[type[BaseException], ...] = (EOFError, OSError, zlib.error)
"""What reading truncated or corrupt gzip or bzip2 data raises."""


def _decompressed(raw: BinaryIO, compression: str | None) -> tuple[BinaryIO, tuple[type[BaseException], ...]]:
    """``raw`` read through its decompressor (gzip, bzip2 and xz: the standard library's, imported when used), and
    the errors reading it raises when the compressed data is truncated or corrupt."""
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb"), _BROKEN  # type: ignore[return-value]
    if compression == "bzip2":
        import bz2

        return bz2.BZ2File(raw, mode="rb"), _BROKEN  # type: ignore[return-value]
    if compression == "xz":
        import lzma

        return lzma.LZMAFile(raw, mode="rb"), (*_BROKEN, lzma.LZMAError)  # type: ignore[return-value]
    return raw, _BROKEN


class _CountingReader(io.RawIOBase):
    """Counts bytes taken from the underlying (possibly compressed) stream, for progress bars."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        data = self._raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


class RecordReader:
    """Reads JSON Lines crawl output into :class:`Document` objects and :class:`DeadLetter` objects.

    ``text_field``/``id_field``: the field to use; ``None`` tries :data:`DEFAULT_TEXT_FIELDS` /
    :data:`DEFAULT_ID_FIELDS` in order. A record without any id (fields missing, ``null`` or empty) gets
    ``SOURCE:LINE`` (stable when the same file is ingested again); an id that is not a string or a whole number (an
    array, an object, a boolean) makes the record a dead letter. Ids longer than 512 bytes become ``sha256:<hex>`` of
    themselves.

    ``encoding``: of the input lines: ``"utf-8"`` (the default), any Python codec name (``"gb18030"``, ``"big5"``,
    ...), or ``"auto"``: each line is decoded as UTF-8, and a line that is not UTF-8 as GB18030 (a superset of GBK
    and GB2312, still common on Chinese sites); the record then says so (:attr:`Document.encoding`). A line that
    decodes under none of them is a dead letter.

    ``html``: ``"keep"`` (the default) takes the text as it is; ``"auto"`` replaces a text that carries HTML
    markup (:func:`es_simhash.files.markup.looks_like_html`) with the text of that markup; ``"strip"`` does so for
    every text (:func:`es_simhash.files.markup.strip_html`: a real HTML parser; entities decoded, scripts and styles
    dropped). The record's field then holds that text too (the original line stays in :attr:`Document.raw`).
    """

    def __init__(
        self,
        text_field: str | None = None,
        id_field: str | None = None,
        max_record_bytes: int = 16 << 20,
        encoding: str = "utf-8",
        html: str = "keep",
    ) -> None:
        if html not in HTML_MODES:
            raise InvalidValue(f"{html!r} is not a markup mode; use {', '.join(HTML_MODES)}", "html")
        self.html = html
        if encoding != "auto":
            try:
                encoding = codecs.lookup(encoding).name
            except LookupError:
                raise InvalidValue(f"{encoding!r} is not a codec name; use utf-8, auto, gb18030, big5 or another "
                                   "Python codec", "encoding") from None
        self.encoding = encoding
        self.text_fields = (text_field,) if text_field else DEFAULT_TEXT_FIELDS
        self.id_fields = (id_field,) if id_field else DEFAULT_ID_FIELDS
        self.explicit_text = text_field is not None
        self.explicit_id = id_field is not None
        self.max_record_bytes = max_record_bytes
        self.bytes_read = 0
        """How far into the inputs the reader is, in bytes of the files (up to the end of the last line read; for a
        gzip file, the compressed bytes read so far): drives progress bars."""

    @staticmethod
    def total_bytes(paths: Sequence[str]) -> int | None:
        """Sum of the input sizes, or ``None`` when one is stdin or not a regular file."""
        total = 0
        for p in paths:
            if p == "-" or not os.path.isfile(p):
                return None
            total += os.path.getsize(p)
        return total

    def read(self, paths: Sequence[str]) -> Iterator[Document | DeadLetter]:
        for path in paths:
            yield from self.read_one(path)

    def read_one(self, path: str, skip_lines: int = 0) -> Iterator[Document | DeadLetter]:
        """Records and dead letters of one input; ``skip_lines`` lines are read past without parsing."""
        name = "stdin" if path == "-" else path
        raw: BinaryIO = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        counter = _CountingReader(raw)
        base = self.bytes_read
        try:
            buffered = io.BufferedReader(counter, buffer_size=_CHUNK)
            compression = compression_of(buffered.peek(6)[:6])
            if compression == "zstd":
                raise InputError(f"{name} is zstd-compressed: decompress it first (zstd -d), or compress it with "
                                 "gzip, bzip2 or xz")
            stream, broken = _decompressed(buffered, compression)
            line_no = 0
            at = 0  # (bytes of the lines read, in a file that is not compressed)
            while True:
                try:
                    line, too_long, size = self._next_line(stream)
                except broken as exc:  # truncated or corrupt compressed data
                    self.bytes_read = base + counter.count
                    yield DeadLetter(name, line_no + 1, f"unreadable input, stopped reading this file: {exc}")
                    return
                at += size
                self.bytes_read = base + (counter.count if compression else at)
                if line is None:
                    return
                line_no += 1
                if line_no <= skip_lines:
                    continue
                if too_long:
                    yield DeadLetter(
                        name, line_no, f"record longer than {self.max_record_bytes} bytes", excerpt(line)
                    )
                    continue
                if not line.strip():  # blank lines are not records
                    continue
                yield self.parse(name, line_no, line)
        finally:
            if path != "-":
                raw.close()

    def _next_line(self, stream: BinaryIO) -> tuple[bytes | None, bool, int]:
        """The next line (without its newline), whether it exceeded ``max_record_bytes`` (then only its beginning
        is returned and the rest is skipped without being held in memory), and how many bytes it took."""
        line = stream.readline(self.max_record_bytes + 1)
        if not line:
            return None, False, 0
        if len(line) > self.max_record_bytes and not line.endswith(b"\n"):
            head, size = line[:_EXCERPT], len(line)
            while True:  # skip the rest of the over-long line in bounded chunks
                more = stream.readline(_CHUNK)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    break
            return head, True, size
        return line.rstrip(b"\r\n"), False, len(line)

    def parse(self, source: str, line_no: int, raw: bytes) -> Document | DeadLetter:
        """One line of JSON Lines to a :class:`Document`, or a :class:`DeadLetter` saying what is wrong."""
        try:
            decoded, encoding = self._decode(raw)
            if line_no == 1:
                decoded = decoded.removeprefix("\ufeff")
            obj = _json_object(decoded)
            # (decoded from UTF-8 or GB18030, a lone surrogate can only come from a \u escape: a line without one
            # needs no check; other codecs, such as utf-7, can make one)
            text, text_field = self._text(obj, check_surrogates="\\u" in decoded or encoding not in _NO_SURROGATES)
            doc_id = self._id(obj, source, line_no)
        except _Bad as bad:
            return DeadLetter(source, line_no, str(bad), excerpt(raw))
        stripped = False
        if self.html != "keep":
            text, stripped = text_of(text, self.html)
            if stripped:
                obj[text_field] = text
        return Document(doc_id, text, obj, source, line_no, raw, encoding, stripped)

    def _decode(self, raw: bytes) -> tuple[str, str]:
        """The line as text and the encoding it was decoded with."""
        if b"\x00" in raw:
            raise _Bad("NUL byte in the line (binary data?)")
        encoding = "utf-8" if self.encoding == "auto" else self.encoding
        try:
            return raw.decode(encoding), encoding
        except UnicodeDecodeError as exc:
            if self.encoding != "auto":
                hint = "; GBK or binary? try --encoding auto" if encoding == "utf-8" else ""
                shown = "UTF-8" if encoding == "utf-8" else encoding
                raise _Bad(f"not {shown} (invalid byte 0x{raw[exc.start]:02x} at offset {exc.start}{hint})") from None
            try:
                return raw.decode(_FALLBACK), _FALLBACK
            except UnicodeDecodeError:
                raise _Bad(f"neither UTF-8 nor {_FALLBACK} (invalid byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start} for UTF-8; binary, or another encoding: --encoding NAME)") from None

    def _text(self, obj: dict[str, Any], check_surrogates: bool = True) -> tuple[str, str]:
        """The record's text and the field it came from."""
        for name in self.text_fields:
            if name in obj:
                value = obj[name]
                if not isinstance(value, str):
                    if self.explicit_text or not any(isinstance(obj.get(n), str) for n in self.text_fields):
                        raise _Bad(f"field {name!r} is {_type_name(value)}, not a string")
                    continue
                if check_surrogates:
                    try:
                        value.encode("utf-8")
                    except UnicodeEncodeError:
                        raise _Bad("text contains invalid Unicode (a lone surrogate escape such as \\ud800)") from None
                return value, name
        raise _Bad(f"no text field (looked for {', '.join(map(repr, self.text_fields))}; {_fields_of(obj)}; use "
                   "--text-field)")

    def _id(self, obj: dict[str, Any], source: str, line_no: int) -> str:
        """The record's id: the first id field holding a string or a whole number (one that is missing, ``null`` or
        an empty string holds no id: the next is looked at), else ``file:line``; a digest when it is too long to be
        one. An id field holding anything else (an array, an object, a boolean, a number with a decimal point) makes
        the record a dead letter: it is never replaced by ``file:line``."""
        doc_id = None
        for name in self.id_fields:
            value = obj.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                what = "a number with a decimal point" if isinstance(value, float) else _type_name(value)
                raise _Bad(f"id field {name!r} is {what}, not a string or whole number")
            doc_id = str(value)
            break
        if doc_id is None:
            if self.explicit_id:
                raise _Bad(f"no id in field {self.id_fields[0]!r}: missing, null or empty (the --id-field)")
            doc_id = f"{os.path.basename(source)}:{line_no}"
        try:
            id_bytes = doc_id.encode("utf-8")
        except UnicodeEncodeError:
            raise _Bad("id contains invalid Unicode (a lone surrogate escape)") from None
        if len(id_bytes) > MAX_ID_BYTES:
            doc_id = "sha256:" + hashlib.sha256(id_bytes).hexdigest()
        return doc_id


class _Bad(Exception):
    """A line that is not a record: the dead letter's reason."""


def _json_object(decoded: str) -> dict[str, Any]:
    try:
        obj = json.loads(decoded)
    except json.JSONDecodeError as exc:
        raise _Bad(f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise _Bad("JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise _Bad(f"expected a JSON object, got {_type_name(obj)}")
    return obj


class DeadLetterWriter:
    """Writes dead letters as JSON Lines, in the order they are written (:func:`~es_simhash.pipeline.run_dedup`
    writes them in line order). The file is only created when the first dead letter arrives, and it is written
    beside its path and put in place when the writer is closed after a run that ended well
    (:class:`~es_simhash.files.outputs.AtomicFile`): a failed run leaves an earlier file as it was.

    ``resumable`` (a checkpointed run): written as ``PATH.es-simhash-partial``, kept when the run stops;
    ``keep_lines``: the number of dead letters the run being resumed wrote (its partial file is cut back to them
    and appended to)."""

    def __init__(self, path: str | os.PathLike[str], resumable: bool = False, keep_lines: int = 0) -> None:
        from es_simhash.files.outputs import AtomicFile

        self.path = os.fspath(path)
        self.count = 0
        """Dead letters written through this writer (not counting the ``keep_lines`` of the run it resumes)."""
        self.kept = keep_lines
        self._file = AtomicFile(self.path, resumable=resumable)
        self._fh: IO[str] | None = self._file.open(keep_lines) if keep_lines else None
        self.written = False
        """Whether :meth:`close` put a file in place (some dead letters, of this run or of the one it resumed)."""

    def write(self, letter: DeadLetter) -> None:
        if self._fh is None:
            self._fh = self._file.open()
        self._fh.write(json.dumps(letter.to_dict(), ensure_ascii=False) + "\n")
        self.count += 1

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def close(self, ok: bool = True) -> None:
        """Put the file in place (``ok``: the run ended well; nothing is created when there were no dead letters),
        or leave the path as it was (a resumable run keeps its partial file for ``--resume``)."""
        if self._fh is None:
            return
        self._fh = None
        if ok:
            self._file.commit()
            self.written = True
        else:
            self._file.abort()

    def discard(self) -> None:
        """Leave the path as it was: what was written goes, the partial file of a resumable writer too."""
        self._fh = None
        self._file.discard()

    def __enter__(self) -> "DeadLetterWriter":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(ok=exc_type is None)
