"""The embedded index's file format (``.npz``: numpy arrays and a JSON header), written atomically."""

from __future__ import annotations

import json
import os
from typing import Any, TypeVar

from es_simhash.errors import IndexFileError
from es_simhash.fingerprint.model import Fingerprint
from es_simhash.index.base import StoredDoc
from es_simhash.index.memory import native as _native
from es_simhash.index.memory.store import MemoryStore
from es_simhash.lookup.keys import SEGMENTS, LookupKeys

_FORMAT = "es-simhash-memory-index/2"
_FORMAT_V1 = "es-simhash-memory-index/1"  # before lookup keys: the four 16-bit segments

M = TypeVar("M", bound="MemoryFiles")


class MemoryFiles(MemoryStore):
    """Saving the embedded index to a file and loading it (``--save-index`` / ``--load-index``)."""

    # -- persistence ---------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to the file ``path``, named as given (numpy's ``.npz`` format: arrays + JSON; no pickle).
        The file is written beside its path and put in place at the end, so a failed save leaves an earlier file as
        it was (:func:`~es_simhash.files.outputs.atomic_write`)."""
        from es_simhash.files.outputs import atomic_write

        with atomic_write(os.fspath(path), binary=True) as fh:
            self._save(fh)

    def _save(self, fh: Any) -> None:
        import numpy as np

        docs = self.docs()
        fps = [d.fingerprint for d in docs]
        sentence_counts = np.array([len(f.hashes) for f in fps], dtype=np.int64)
        meta = {
            "format": _FORMAT,
            "max_sentence_df": self.max_sentence_df,
            "lookup": self.lookup_keys.to_meta(),
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
            sentence_counts=sentence_counts,
            sentences=np.array([h for f in fps for h in f.hashes], dtype=np.uint64),
        )

    @classmethod
    def load(cls: type[M], path: str | os.PathLike[str]) -> M:
        """Read a file written by :meth:`save`. A file from a release before lookup keys keeps its four 16-bit
        segments (:data:`es_simhash.keys.SEGMENTS`), so it answers as it did. Raises :class:`IndexFileError`
        for a file that is not an es-simhash memory index."""
        import numpy as np
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                fmt = meta.get("format") if isinstance(meta, dict) else None
                if fmt not in (_FORMAT, _FORMAT_V1):
                    raise IndexFileError(f"{path}: not an es-simhash memory index ({fmt!r})")
                arrays = {k: z[k] for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version")}
                for extra in ("word_bag", "number_bag", "fuzzy_digests"):  # (not in files of earlier fingerprint versions)
                    arrays[extra] = (z[extra] if extra in z.files else np.zeros(len(arrays["simhash"]), np.uint64))
                counts = z["sentence_counts"]
                flat = z["sentences"]
        except (IndexFileError, FileNotFoundError):
            raise
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:  # not .npz, no meta, not JSON
            raise IndexFileError(f"{path}: not an es-simhash memory index ({type(exc).__name__}: {exc})") from None
        keys = LookupKeys.from_meta(meta.get("lookup")) if fmt == _FORMAT else SEGMENTS
        index = cls(max_sentence_df=meta["max_sentence_df"], lookup_keys=keys)
        ends = np.cumsum(counts).tolist()
        flat_py = flat.tolist()
        cols = [arrays[k].tolist()
                for k in ("simhash", "content_hash", "n_features", "n_chars", "short", "version", "word_bag", "number_bag",
                          "fuzzy_digests")]
        docs = []
        start = 0
        for (doc_id, cluster, dup_of, distance, reason, *arrival), sim, ch, nf, nc, short, ver, wb, nb, fd, end in zip(
            meta["docs"], *cols, ends
        ):
            fp = Fingerprint(sim, ch, tuple(flat_py[start:end]), nf, nc, short, ver, wb, number_bag=nb, fuzzy_digests=fd)
            start = end
            docs.append(StoredDoc(doc_id, fp, cluster, dup_of, distance, reason, arrival=arrival[0] if arrival else 0))
        ids = [d.id for d in docs]
        if len(set(ids)) != len(ids):  # not written by save() (ids repeat): replay the adds to get replacements right
            index.add(docs)
            return index
        # A saved index holds live documents with distinct ids, so replaying add() would only append: build the
        # same state column-wise instead.
        n = len(docs)
        index._docs = docs
        index._row_of = dict(zip(ids, range(n)))
        index._versions = dict(zip(ids, range(1, n + 1)))
        index._writes = n
        index._append_rows(0, arrays["simhash"].astype(np.uint64), arrays["n_features"] > 0, ())
        # content hash -> first row holding it (rows with content only), as add() would have kept it
        has_content = np.flatnonzero(arrays["n_chars"] != 0)
        hashes, first = np.unique(arrays["content_hash"].astype(np.uint64)[has_content], return_index=True)
        index._content = dict(zip(hashes.tolist(), has_content[first].tolist()))
        later = np.ones(len(has_content), dtype=bool)
        later[first] = False
        for row in has_content[later].tolist():  # (copies of a content: few)
            index._content_more.setdefault(int(arrays["content_hash"][row]), []).append(row)
        # sentence hash -> rows in row order (a stable sort by hash keeps rows ascending within a hash); native
        # postings are built from the rows when first needed
        if flat.size and not (index.native and _native.NATIVE_POSTINGS is not None):
            sentence_rows = np.repeat(np.arange(n), counts)
            order = np.argsort(flat, kind="stable")
            keys_, starts = np.unique(flat[order], return_index=True)
            row_lists = np.split(sentence_rows[order], starts[1:])
            index._sentences = {k: r.tolist() for k, r in zip(keys_.tolist(), row_lists)}
        index._rebuild()
        return index
