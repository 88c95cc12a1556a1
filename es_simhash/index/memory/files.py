"""The embedded index's file format (``.npz``: numpy arrays and a JSON header): :func:`save` a
:class:`~es_simhash.index.memory.store.MemoryStore` (written atomically), :func:`read` a file and
:func:`restore` what it holds into a new store."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from es_simhash.errors import IndexFileError, UnreadableIndexFile
from es_simhash.files.outputs import atomic_write
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.records import StoredDoc
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.store import MemoryStore
from es_simhash.lookup.keys import SEGMENTS, LookupKeys

if TYPE_CHECKING:
    import numpy as np

FORMAT = "es-simhash-memory-index/2"
"""The format :func:`save` writes: the header names the lookup keys (and, ``fingerprint``, the fingerprint
settings of the documents, when known)."""
FORMAT_V1 = "es-simhash-memory-index/1"
"""The format with no lookup keys in its header: its keys are the four 16-bit segments (``SEGMENTS``)."""

_COLUMNS = ("simhash", "content_hash", "n_features", "n_chars", "short", "version")
"""The per-document arrays every file holds (beside ``meta``, ``sentence_counts`` and ``sentences``)."""
_OPTIONAL_COLUMNS = ("word_bag", "number_bag", "fuzzy_digests", "date_bag", "place_bag")
"""Per-document arrays a file may lack (read as zeros)."""


def save(store: MemoryStore, path: str | os.PathLike[str], fingerprint: dict[str, Any] | None = None) -> None:
    """Write the live documents of ``store`` to the file ``path``, named as given (numpy's ``.npz`` format: arrays
    + JSON; no pickle), with ``fingerprint``, the settings they were made with
    (:meth:`~es_simhash.fingerprint.config.FingerprintSettings.meta`; None: not known). The file is written
    beside its path and put in place at the end, so a failed save leaves an earlier file as it was
    (:func:`~es_simhash.files.outputs.atomic_write`)."""
    with atomic_write(os.fspath(path), binary=True) as fh:
        write(store, fh, fingerprint)


def write(store: MemoryStore, fh: Any, fingerprint: dict[str, Any] | None = None) -> None:
    """Write the live documents of ``store`` to the open binary file ``fh`` (the format of :func:`save`)."""
    import numpy as np

    docs = store.live_docs()
    fps = [d.fingerprint for d in docs]
    sentence_counts = np.array([len(f.hashes) for f in fps], dtype=np.int64)
    meta = {
        "format": FORMAT,
        "max_sentence_df": store.max_sentence_df,
        "lookup": store.lookup_keys.to_meta(),
        "fingerprint": fingerprint,
        "docs": [[d.id, d.cluster, d.duplicate_of, d.distance, d.reason, d.arrival] for d in docs],
    }
    np.savez_compressed(
        fh,
        meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
        simhash=np.array([f.simhash for f in fps], dtype=np.uint64),
        content_hash=np.array([f.content_hash for f in fps], dtype=np.uint64),
        n_features=np.array([f.n_features for f in fps], dtype=np.int64),
        n_chars=np.array([f.n_chars for f in fps], dtype=np.int64),
        short=np.array([f.short for f in fps], dtype=bool),
        version=np.array([f.version for f in fps], dtype=np.int64),
        word_bag=np.array([f.word_bag for f in fps], dtype=np.uint64),
        number_bag=np.array([f.number_bag for f in fps], dtype=np.uint64),
        fuzzy_digests=np.array([f.fuzzy_digests for f in fps], dtype=np.uint64),
        date_bag=np.array([f.date_bag for f in fps], dtype=np.uint64),
        place_bag=np.array([f.place_bag for f in fps], dtype=np.uint64),
        sentence_counts=sentence_counts,
        sentences=np.array([h for f in fps for h in f.hashes], dtype=np.uint64),
    )


@dataclass
class SavedIndex:
    """What a file holds: the store's settings, the fingerprint settings its documents were made with
    (``fingerprint``: :meth:`~es_simhash.fingerprint.config.FingerprintSettings.meta`, None when the file records
    none), the documents in row order, and the columns they were made from (``arrays``: the per-document arrays;
    ``counts``: sentence hashes per document; ``flat``: all of them)."""

    max_sentence_df: int
    lookup_keys: LookupKeys
    fingerprint: dict[str, Any] | None
    docs: list[StoredDoc]
    arrays: dict[str, np.ndarray]
    counts: np.ndarray
    flat: np.ndarray


_REBUILD = "build it again from its input (dedup --save-index)"
"""What to do with an index file that cannot be used."""


def read(path: str | os.PathLike[str]) -> SavedIndex:
    """Read a file written by :func:`save` (or in :data:`FORMAT_V1`). Raises :class:`IndexFileError` for a file
    that is not an es-simhash memory index, :class:`UnreadableIndexFile` for one that is damaged (empty, cut short,
    arrays missing or of the wrong shape or type), ``FileNotFoundError`` for none."""
    import zipfile
    import zlib

    import numpy as np

    name = os.fspath(path)

    def damaged(what: str) -> UnreadableIndexFile:
        return UnreadableIndexFile(f"cannot read index {name}: {what}: {_REBUILD}", name)

    if os.path.isfile(name) and os.path.getsize(name) == 0:
        raise damaged("the file is empty")
    fmt = None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            fmt = meta.get("format") if isinstance(meta, dict) else None
            if fmt not in (FORMAT, FORMAT_V1):
                raise IndexFileError(f"{path}: not an es-simhash memory index ({fmt!r})")
            missing = [k for k in (*_COLUMNS, "sentence_counts", "sentences") if k not in z.files]
            if missing:
                raise damaged(f"it has no {', '.join(missing)} array")
            arrays = {k: z[k] for k in _COLUMNS}
            for extra in _OPTIONAL_COLUMNS:
                arrays[extra] = (z[extra] if extra in z.files else np.zeros(len(arrays["simhash"]), np.uint64))
            counts = z["sentence_counts"]
            flat = z["sentences"]
    except (IndexFileError, UnreadableIndexFile, FileNotFoundError):
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # a zip file cut short or damaged
        raise damaged(f"the .npz file is damaged or cut short ({type(exc).__name__}: {exc})") from None
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:  # not .npz, no meta, not JSON
        if fmt is not None:  # (the header said it is one: a member is damaged)
            raise damaged(f"{type(exc).__name__}: {exc}") from None
        raise IndexFileError(f"{path}: not an es-simhash memory index ({type(exc).__name__}: {exc})") from None
    problem = _check(meta, arrays, counts, flat)
    if problem:
        raise damaged(problem)
    keys = LookupKeys.from_meta(meta.get("lookup")) if fmt == FORMAT else SEGMENTS
    ends = np.cumsum(counts).tolist()
    flat_py = flat.tolist()
    cols = [arrays[k].tolist() for k in _COLUMNS + _OPTIONAL_COLUMNS]
    docs = []
    start = 0
    for (doc_id, cluster, dup_of, distance, reason, *arrival), sim, ch, nf, nc, short, ver, wb, nb, fd, db, pb, end in zip(
        meta["docs"], *cols, ends
    ):
        fp = Fingerprint(sim, ch, tuple(flat_py[start:end]), nf, nc, short, ver, wb, number_bag=nb, fuzzy_digests=fd,
                         date_bag=db, place_bag=pb)
        start = end
        docs.append(StoredDoc(doc_id, fp, cluster, dup_of, distance, reason, arrival=arrival[0] if arrival else 0))
    return SavedIndex(meta["max_sentence_df"], keys, meta.get("fingerprint"), docs, arrays, counts, flat)


def _check(meta: dict[str, Any], arrays: dict[str, np.ndarray], counts: np.ndarray, flat: np.ndarray) -> str:
    """What makes a file's header and arrays unusable together ('' when nothing does): each array one integer
    (or, ``short``, boolean) value per document, the sentence counts adding up to the sentences held."""
    docs = meta.get("docs")
    if not isinstance(docs, list) or not all(isinstance(d, list) and 5 <= len(d) <= 6 for d in docs):
        return "its header lists no documents"
    if type(meta.get("max_sentence_df")) is not int:
        return "its header has no max_sentence_df"
    fingerprint = meta.get("fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, dict):
        return "its header's fingerprint settings are not a record"
    n = len(docs)
    for key, arr in (*arrays.items(), ("sentence_counts", counts)):
        if arr.shape != (n,) or arr.dtype.kind not in ("b" if key == "short" else "iu"):
            return (f"its {key} array is {arr.dtype} of shape {arr.shape}, not one "
                    f"{'boolean' if key == 'short' else 'integer'} per document ({n})")
    if flat.ndim != 1 or flat.dtype.kind not in "iu":
        return f"its sentences array is {flat.dtype} of shape {flat.shape}, not a list of integers"
    if (counts < 0).any() or int(counts.sum()) != len(flat):
        return f"its sentence counts add up to {int(counts.sum())}, not the {len(flat)} sentences it holds"
    return ""


def restore(store: MemoryStore, saved: SavedIndex, native: bool) -> None:
    """Put the documents of ``saved`` into the empty ``store`` (made with its settings), sorted into one run.
    ``native``: the native sentence postings will be built from the rows when first needed (else the dict of lists
    is built now)."""
    import numpy as np

    docs, arrays, counts, flat = saved.docs, saved.arrays, saved.counts, saved.flat
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):  # not written by save() (ids repeat): replay the adds to get replacements right
        store.add(docs, native)
        return
    # A saved index holds live documents with distinct ids, so replaying add() would only append: build the
    # same state column-wise instead.
    n = len(docs)
    store.docs = docs
    store.row_of = dict(zip(ids, range(n)))
    store.versions = dict(zip(ids, range(1, n + 1)))
    store.writes = n
    store.append_rows(0, arrays["simhash"].astype(np.uint64), arrays["n_features"] > 0, ())
    # content hash -> first row holding it (rows with content only), as add() would have kept it
    has_content = np.flatnonzero(arrays["n_chars"] != 0)
    hashes, first = np.unique(arrays["content_hash"].astype(np.uint64)[has_content], return_index=True)
    store.content = dict(zip(hashes.tolist(), has_content[first].tolist()))
    later = np.ones(len(has_content), dtype=bool)
    later[first] = False
    for row in has_content[later].tolist():  # (copies of a content: few)
        store.content_more.setdefault(int(arrays["content_hash"][row]), []).append(row)
    # sentence hash -> rows in row order (a stable sort by hash keeps rows ascending within a hash)
    if flat.size and not (native and _native.NATIVE_POSTINGS is not None):
        sentence_rows = np.repeat(np.arange(n), counts)
        order = np.argsort(flat, kind="stable")
        keys_, starts = np.unique(flat[order], return_index=True)
        row_lists = np.split(sentence_rows[order], starts[1:])
        store.sentences = {k: r.tolist() for k, r in zip(keys_.tolist(), row_lists)}
    store.rebuild()
