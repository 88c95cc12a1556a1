"""Inverse document frequency tables: jieba's by default, or learnt from your own crawl (``fit``).

The file format is jieba's ``idf.txt``: one ``word idf`` pair per line, so a table learnt here can also be
used with ``jieba.analyse`` and vice versa. Words missing from the table get the table's median IDF, as in
jieba's TF-IDF keyword extractor.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import unicodedata
from collections import Counter
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterable

from . import text as _text

__all__ = ["IDFTable", "jieba_idf_path"]


def jieba_idf_path() -> Path:
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("jieba is not installed: pip install jieba (it ships the default IDF table)")
    return Path(list(spec.submodule_search_locations)[0]) / "analyse" / "idf.txt"


class IDFTable:
    """A word -> IDF mapping with a default for unknown words.

    ``checksum`` identifies the table's content: fingerprints made with different tables are not comparable,
    so the fingerprint configuration records it.
    """

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

    def __len__(self) -> int:
        return len(self._idf)

    def __contains__(self, word: object) -> bool:
        return word in self._idf

    def get(self, word: str) -> float:
        return self._idf.get(word, self.default)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "IDFTable":
        """Read a jieba-format table (``word idf`` per line). Raises ``ValueError`` naming a bad line."""
        with open(path, encoding="utf-8") as fh:
            # Normalising the whole file at once equals normalising each word (NFKC and casefold act within
            # words here) and is several times faster than a call per word.
            data = unicodedata.normalize("NFKC", fh.read()).casefold()
        idf: dict[str, float] = {}
        for lineno, line in enumerate(data.splitlines(), 1):
            word, _, value = line.strip().rpartition(" ")
            if not word or word.startswith("#"):
                if line.strip() and not line.lstrip().startswith("#"):
                    raise ValueError(f"{path}:{lineno}: expected 'word idf', got {line[:60]!r}")
                continue
            try:
                idf[word.strip()] = float(value)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: expected 'word idf', got {line[:60]!r}") from None
        if not idf:
            raise ValueError(f"{path}: no 'word idf' lines found")
        return cls(idf, source=str(path))

    @classmethod
    def jieba_default(cls) -> "IDFTable":
        """jieba's bundled table (about 350,000 words learnt from Chinese news and web text)."""
        return _jieba_default()

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            for word, value in sorted(self._idf.items(), key=lambda kv: (-kv[1], kv[0])):
                fh.write(f"{word} {value:.6f}\n")

    @classmethod
    def fit(
        cls,
        texts: Iterable[str],
        min_df: int = 2,
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
