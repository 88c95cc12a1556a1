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
from typing import Any, Iterable, Iterator

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
        # A table read from the cache keeps the cache's words and values (``_cached``) and makes its dict on first
        # use: the native core reads them directly, so a run with it never pays for the dict (~0.05 s).
        cached = self.__dict__.get("_cached") if name == "_idf" else None
        if cached is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        words, values = cached
        idf = self.__dict__["_idf"] = dict(zip(words.decode("utf-8").split("\n"), values.tolist()))
        return idf

    def _native_idf(self) -> dict[str, float] | tuple[bytes, Any]:
        """What the native core reads the table from: the cache's ``(words, values)`` while the dict has not been
        made (then the core builds its table on its own thread), else the dict."""
        if "_idf" not in self.__dict__ and "_cached" in self.__dict__:
            return self.__dict__["_cached"]
        return self._idf

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

        A table read once is kept, parsed, under ``~/.cache/es-simhash/idf`` (``ES_SIMHASH_CACHE`` moves it), keyed
        by a hash of the file's bytes: jieba's 350,000 words take ~0.5 s to parse and ~0.05 s to read back, which
        is most of a short run's start-up. A cache that cannot be written or read is simply not used."""
        raw = Path(path).read_bytes()
        key = f"{hashlib.blake2b(raw, digest_size=16).hexdigest()}-{_CACHE_FORMAT}"
        cached = _read_cached(key)
        if cached is not None:
            words, values, default, checksum = cached
            table = cls({}, default, source=str(path))
            del table.__dict__["_idf"]  # (made from _cached on first use)
            table.__dict__["_cached"] = (words, values)
            table.__dict__["checksum"] = checksum  # (the cached_property's value, computed when it was cached)
            return table
        table = cls._parse(raw.decode("utf-8"), path)
        _write_cached(key, table)
        return table

    @classmethod
    def _parse(cls, text: str, path: str | os.PathLike[str]) -> "IDFTable":
        # Normalising the whole file at once equals normalising each word (NFKC and casefold act within
        # words here) and is several times faster than a call per word.
        data = unicodedata.normalize("NFKC", text).casefold()
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


_CACHE_FORMAT = 1  # bump when the parse or the cache files change


def _cache_dir() -> Path:
    return Path(os.environ.get("ES_SIMHASH_CACHE") or Path.home() / ".cache" / "es-simhash") / "idf"


def _read_cached(key: str) -> tuple[bytes, Any, float, str] | None:
    """(words, values, default, checksum) from the cache (words: the UTF-8 words joined by ``\\n``; values: their
    IDF, a float64 array), or None (missing, unreadable, or not matching itself)."""
    import json

    import numpy as np

    folder = _cache_dir()
    try:
        meta = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        words = (folder / f"{key}.words").read_bytes()
        words.decode("utf-8")  # (checked here: a broken file is not used)
        values = np.load(folder / f"{key}.npy", allow_pickle=False)
    except (OSError, ValueError):
        return None
    n = words.count(b"\n") + 1
    if n != meta.get("n") or values.shape != (n,) or values.dtype != np.float64:
        return None
    return words, values, float(meta["default"]), str(meta["checksum"])


def _write_cached(key: str, table: IDFTable) -> None:
    """Keep a parsed table (written to temporary names, then renamed: a reader never sees half a file)."""
    import json

    import numpy as np

    folder = _cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        words = list(table._idf)
        if any("\n" in w for w in words):
            return
        tmp = f".{os.getpid()}.tmp"
        (folder / f"{key}.words{tmp}").write_text("\n".join(words), encoding="utf-8")
        with open(folder / f"{key}.npy{tmp}", "wb") as fh:
            np.save(fh, np.fromiter(table._idf.values(), dtype=np.float64, count=len(words)), allow_pickle=False)
        (folder / f"{key}.json{tmp}").write_text(json.dumps(
            {"n": len(words), "default": table.default, "checksum": table.checksum}), encoding="utf-8")
        for ext in ("words", "npy", "json"):  # the .json last: it is what a reader opens first
            os.replace(folder / f"{key}.{ext}{tmp}", folder / f"{key}.{ext}")
    except OSError:
        pass


@lru_cache(maxsize=1)
def _jieba_default() -> IDFTable:
    table = IDFTable.load(jieba_idf_path())
    table.source = "jieba"
    return table
