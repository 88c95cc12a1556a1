"""Inverse document frequency tables: jieba's by default, or learnt from your own crawl (``fit``).

The file format is jieba's ``idf.txt``: one ``word idf`` pair per line, so a table learnt here can also be
used with ``jieba.analyse`` and vice versa. Words missing from the table get the table's median IDF, as in
jieba's TF-IDF keyword extractor.
"""

from __future__ import annotations

import hashlib
import math
import os
import unicodedata
from collections import Counter
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from es_simhash.defaults import MIN_DF
from es_simhash.fingerprint import idf_cache
from es_simhash.fingerprint import text as _text

__all__ = ["IDFTable", "jieba_idf_path"]


def jieba_idf_path() -> Path:
    """Where jieba's bundled IDF table is (``RuntimeError`` when jieba is not installed)."""
    return idf_cache.jieba_idf_path()


class IDFTable:
    """A word -> IDF mapping with a default for unknown words.

    ``checksum`` identifies the table's content: fingerprints made with different tables are not comparable,
    so the fingerprint configuration records it.
    """

    _idf: dict[str, float]

    def __init__(self, idf: dict[str, float], default: float | None = None, source: str = "custom") -> None:
        if not idf and default is None:
            raise ValueError("an empty IDF table needs an explicit default")
        self._idf = idf
        if default is None:
            values = sorted(idf.values())
            default = values[len(values) // 2]
        self.default = float(default)
        self.source = source

    @cached_property
    def checksum(self) -> str:
        digest = hashlib.sha1()
        for word in sorted(self._idf):
            digest.update(f"{word}\t{self._idf[word]!r}\n".encode("utf-8"))
        digest.update(f"default\t{self.default!r}".encode())
        return digest.hexdigest()[:12]

    def __getattr__(self, name: str) -> Any:
        # A table read from the cache keeps the cache entry (``_cache_entry``) and makes its dict on first use: the
        # native core reads the entry's files itself, so a run with it never pays for the dict (~0.05 s).
        entry = self.__dict__.get("_cache_entry") if name == "_idf" else None
        if entry is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            idf = self.__dict__["_idf"] = idf_cache.load_words(entry)
        except (OSError, ValueError):  # (damaged, or deleted since: parsed again)
            idf = self.reload_from_source()
        return idf

    def reload_from_source(self) -> dict[str, float]:
        """For a table read from the cache whose entry turned out unusable when its files were read (damaged, or
        deleted while in use; the native core raises ``IdfCacheError``): the table parsed again from its file,
        which becomes this table's dict, and the cache entry written again. ``ValueError`` for a table that was not
        read from the cache."""
        path = self.__dict__.pop("_cache_source", None)
        if path is None:
            raise ValueError("this IDF table was not read from the IDF cache")
        self.__dict__.pop("_cache_entry", None)
        fresh = self._parse_and_keep(path, idf_cache.key(path))
        self.default = fresh.default
        self.__dict__["checksum"] = fresh.checksum
        self.__dict__["_idf"] = fresh._idf
        return fresh._idf

    def _native_idf(self) -> dict[str, float] | tuple[str, str]:
        """What the native core reads the table from: the paths of the cache entry's words and values files while
        the dict has not been made (then the core reads them and builds its table on its own thread), else the
        dict."""
        if "_idf" not in self.__dict__ and "_cache_entry" in self.__dict__:
            return self.__dict__["_cache_entry"].files  # (the same tuple each time: native cores are kept by it)
        return self._idf

    def extremes(self) -> tuple[float, float] | tuple[()]:
        """The smallest and the largest IDF in the table (``()`` when it is empty)."""
        entry = self.__dict__.get("_cache_entry")
        if "_idf" not in self.__dict__ and entry is not None:
            return entry.meta["min"], entry.meta["max"]
        if not self._idf:
            return ()
        import numpy as np

        values = np.fromiter(self._idf.values(), dtype=np.float64, count=len(self._idf))
        return float(values.min()), float(values.max())  # (NaN when one is: min() and max() would skip it)

    def __len__(self) -> int:
        return len(self._idf)

    def __contains__(self, word: object) -> bool:
        return word in self._idf

    def get(self, word: str) -> float:
        return self._idf.get(word, self.default)

    def items(self) -> Iterator[tuple[str, float]]:
        """The table's words and their IDF (the default is :attr:`default`)."""
        return iter(self._idf.items())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "IDFTable":
        """Read a jieba-format table (``word idf`` per line). Raises ``ValueError`` naming a bad line.

        A table read once is kept, parsed, under ``~/.cache/es-simhash/idf`` (``ES_SIMHASH_CACHE`` moves it; see
        :mod:`es_simhash.idf_cache`), keyed by what ``os.stat`` says of the file: jieba's 350,000 words take ~0.5 s
        to parse, which would be most of a short run's start-up. A cache that cannot be written or read is simply
        not used."""
        name = idf_cache.key(path)
        entry = idf_cache.read(name)
        if entry is not None:
            table = cls({}, entry.meta["default"], source=str(path))
            del table.__dict__["_idf"]  # (made from the entry on first use)
            table.__dict__["_cache_entry"] = entry
            table.__dict__["_cache_source"] = str(path)  # (parsed again should the entry prove unusable)
            table.__dict__["checksum"] = entry.meta["checksum"]  # (the cached_property's value, kept with the entry)
            return table
        return cls._parse_and_keep(path, name)

    @classmethod
    def _parse_and_keep(cls, path: str | os.PathLike[str], name: str) -> "IDFTable":
        """The table parsed from its file, and kept in the cache under key ``name``."""
        table = cls._parse(Path(path).read_bytes().decode("utf-8"), path)
        idf_cache.write(name, list(table._idf), table._idf.values(), table.default, table.checksum, table.extremes())
        return table

    @classmethod
    def _parse(cls, text: str, path: str | os.PathLike[str]) -> "IDFTable":
        # Normalising the whole file at once equals normalising each word (NFKC, casefold and the script fold act
        # within words here) and is several times faster than a call per word. Words that fold to one word (a
        # Traditional and a Simplified spelling) keep the lowest IDF of theirs: the folded word stands for all of
        # them, so its document frequency is at least the highest of theirs.
        from es_simhash.fingerprint.fold import fold_table

        data = unicodedata.normalize("NFKC", text).casefold().translate(fold_table())
        idf: dict[str, float] = {}
        for lineno, line in enumerate(data.splitlines(), 1):
            word, _, value = line.strip().rpartition(" ")
            if not word or word.startswith("#"):
                if line.strip() and not line.lstrip().startswith("#"):
                    raise ValueError(f"{path}:{lineno}: expected 'word idf', got {line[:60]!r}")
                continue
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: expected 'word idf', got {line[:60]!r}") from None
            word = word.strip()
            known = idf.get(word)
            idf[word] = number if known is None else min(known, number)
        if not idf:
            raise ValueError(f"{path}: no 'word idf' lines found")
        return cls(idf, source=str(path))

    @classmethod
    def jieba_default(cls) -> "IDFTable":
        """jieba's bundled table (about 350,000 words learnt from Chinese news and web text)."""
        return _jieba_default()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table in jieba's format (``word idf`` per line), beside ``path`` first and put in place at the
        end (:func:`~es_simhash.files.outputs.atomic_write`)."""
        from es_simhash.files.outputs import atomic_write

        with atomic_write(path) as fh:
            for word, value in sorted(self._idf.items(), key=lambda kv: (-kv[1], kv[0])):
                fh.write(f"{word} {value:.6f}\n")

    @classmethod
    def fit(
        cls,
        texts: Iterable[str],
        min_df: int = MIN_DF,
        segmenter: str = "auto",
    ) -> "IDFTable":
        """Learn IDF = ln(N / df) from a corpus (a word counts once per document).

        Words seen in fewer than ``min_df`` documents are left out (they get the median, like any unknown word):
        this keeps typos and one-off ids from bloating the table.
        """
        df: Counter[str] = Counter()
        n_docs = 0
        stop = _text.stopwords()
        for raw in texts:
            n_docs += 1
            normalized = _text.normalize(raw)
            words = {t for t in _text.segment(normalized, segmenter) if _text.content_key(t) == t and t not in stop}
            df.update(words)
        if n_docs == 0:
            raise ValueError("cannot learn an IDF table from an empty corpus")
        idf = {w: math.log(n_docs / c) for w, c in df.items() if c >= min_df}
        if not idf:
            raise ValueError(f"no word occurs in {min_df} or more of the {n_docs} documents: lower min_df")
        return cls(idf, source=f"fit({n_docs} docs)")


@lru_cache(maxsize=1)
def _jieba_default() -> IDFTable:
    table = IDFTable.load(jieba_idf_path())
    table.source = "jieba"
    return table
