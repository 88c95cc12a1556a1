"""Where es-simhash keeps what it computed once and reads back at the next start: ``~/.cache/es-simhash``, or the
folder ``ES_SIMHASH_CACHE`` names. Its parts: ``idf`` (parsed IDF tables, :mod:`es_simhash.idf_cache`) and
``segmenter`` (the native core's built dictionary). Deleting the folder only costs time. Standard library only:
the command reads the cache before its heavy imports (:mod:`es_simhash.early_start`)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("ES_SIMHASH_CACHE") or Path.home() / ".cache" / "es-simhash")
