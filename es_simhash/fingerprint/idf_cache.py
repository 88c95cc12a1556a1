"""The parsed-IDF cache: a table file read once is kept, parsed, under ``~/.cache/es-simhash/idf``
(``ES_SIMHASH_CACHE`` moves it), so later runs do not parse it again (jieba's 350,000 words take ~0.5 s to parse).

An entry is three files named by the table file's key (:func:`key`): ``.words`` (the words, UTF-8, joined by
``\\n``), ``.f64`` (one little-endian float64 per word) and ``.json`` (their number, the default, the checksum and
the extreme values). The native core reads the first two itself, on a thread of its own. This module imports only
the standard library: the ``es-simhash`` command reads the cache before its heavy imports
(:mod:`es_simhash.early_start`)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from pathlib import Path
from typing import Any, Iterable, NamedTuple

from es_simhash.settings import cache_root

FORMAT = 3
"""Bumped when the parse or the cache files change (then every entry is made again)."""


class Entry(NamedTuple):
    files: tuple[str, str]
    """The paths of the words file and of the values file: what the native core reads (one tuple, so the cores
    made from it can be kept by it)."""
    meta: dict[str, Any]
    """``n`` (words), ``words_bytes`` (the words file's size), ``default``, ``checksum``, ``min``, ``max``."""

    @property
    def words(self) -> str:
        return self.files[0]

    @property
    def values(self) -> str:
        return self.files[1]


def folder() -> Path:
    return cache_root() / "idf"


def jieba_idf_path() -> Path:
    """jieba's bundled table (``RuntimeError`` when jieba is not installed). Found without importing jieba."""
    from importlib.util import find_spec

    spec = find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("jieba is not installed: pip install jieba (it ships the default IDF table)")
    return Path(list(spec.submodule_search_locations)[0]) / "analyse" / "idf.txt"


def key(path: str | os.PathLike[str]) -> str:
    """The cache key of a table file, from what ``os.stat`` says of it (its size, times of change and inode) and
    its real path, as Python keys its bytecode cache by a source file's size and time: a file changed in any way
    (even to the same size, with its modification time set back) gets another key, without reading its ~6 MB.
    Like that cache, it can miss a rewrite to the same size within one tick of a coarse file-system clock, or
    behind a network file system's stale attributes: delete the cache folder then. ``OSError``
    (``FileNotFoundError``) when it cannot be read."""
    real = os.path.realpath(path)
    st = os.stat(real)
    ident = f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\0{st.st_dev}"
    digest = hashlib.blake2b(ident.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return f"{digest}-{FORMAT}"


def _paths(name: str) -> tuple[Path, Path, Path]:
    base = folder()
    return base / f"{name}.json", base / f"{name}.words", base / f"{name}.f64"


def read(name: str) -> Entry | None:
    """The entry for key ``name``, or ``None`` (missing, unreadable, or whose files are not the sizes its
    ``.json`` says; the files themselves are read later, by whoever needs the table)."""
    meta_path, words, values = _paths(name)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if os.path.getsize(values) != 8 * int(meta["n"]) or os.path.getsize(words) != int(meta["words_bytes"]):
            return None
        meta["default"] = float(meta["default"])
        meta["checksum"] = str(meta["checksum"])
        meta["min"], meta["max"] = float(meta["min"]), float(meta["max"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Entry((str(words), str(values)), meta)


def load_words(entry: Entry) -> dict[str, float]:
    """The table of an entry, as a dict (``ValueError`` if its files do not pair up)."""
    words = Path(entry.words).read_bytes().decode("utf-8").split("\n")
    values = array("d")
    values.frombytes(Path(entry.values).read_bytes())
    if sys.byteorder == "big":
        values.byteswap()
    if len(words) != len(values):
        raise ValueError(f"IDF cache {entry.words}: {len(words)} words, {len(values)} values")
    return dict(zip(words, values.tolist()))


def write(name: str, words: list[str], values: Iterable[float], default: float, checksum: str,
          extremes: tuple[float, float] | tuple[()]) -> None:
    """Keep a parsed table under key ``name`` (written to temporary names, then renamed, the ``.json`` last: a
    reader never sees half an entry). ``extremes``: the smallest and largest value. A table with a word holding
    ``\\n``, or a cache that cannot be written, is not kept."""
    if not words or any("\n" in w for w in words):
        return
    data = array("d", values)
    if len(data) != len(words):
        raise ValueError("one value per word")
    joined = "\n".join(words).encode("utf-8")
    lo, hi = extremes if extremes else (default, default)
    meta = {"n": len(words), "words_bytes": len(joined), "default": default, "checksum": checksum,
            "min": lo, "max": hi}
    if sys.byteorder == "big":
        data.byteswap()
    meta_path, words_path, values_path = _paths(name)
    tmp = f".{os.getpid()}.tmp"
    try:
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        Path(f"{words_path}{tmp}").write_bytes(joined)
        Path(f"{values_path}{tmp}").write_bytes(data.tobytes())
        Path(f"{meta_path}{tmp}").write_text(json.dumps(meta), encoding="utf-8")
        for path in (words_path, values_path, meta_path):
            os.replace(f"{path}{tmp}", path)
    except OSError:
        pass
