"""The native core's tables, started on background threads as early as possible: jieba-rs's dictionary (read back
from the cache, or built: ~0.1 s of CPU) and jieba's IDF table (from the IDF cache). This module imports nothing but
the standard library, so the ``es-simhash`` command (:mod:`es_simhash.__main__`) starts them before it imports the
command line's modules (click, the engine), and they overlap those imports on another core instead of delaying the
first fingerprints."""

from __future__ import annotations

import os
from typing import Any


def python_engine_forced() -> bool:
    """Whether ``ES_SIMHASH_ENGINE=python`` in the environment forces the pure-Python reference engine."""
    from es_simhash import settings

    return settings.python_engine_forced()


def start_segmenter() -> bool:
    """Start building the native segmenter in the background. ``True`` when this call started it; ``False`` when it
    had been started, when the native core is not installed (or lacks background builds), or when
    ``ES_SIMHASH_ENGINE=python`` forces the reference. The built dictionary is kept in the cache
    (:func:`es_simhash.cache_dir.cache_root` ``/segmenter``, ~25 MB) and read back at the next start instead of
    built again (~0.01 s of copying instead of ~0.1 s of building). Fingerprints do not change: the same
    dictionary, built earlier or read back. A fork (``os.fork``, multiprocessing's "fork") waits for the build
    first, so a child never inherits a half-built one. (Whether the installed core is usable is checked when a
    fingerprinter is made: an unusable one only built a dictionary nobody uses.)"""
    start = _native_function("start_segmenter")
    if start is None:
        return False
    from es_simhash.settings import cache_root

    try:
        started = start(str(cache_root() / "segmenter"))
    except TypeError:  # (a core without the kept dictionary)
        started = start()
    if not started:
        return False
    _before_fork("wait_segmenter")
    return True


def start_default_idf() -> bool:
    """Start reading jieba's IDF table from the IDF cache (:mod:`es_simhash.idf_cache`) and building the native
    core's table from it on a background thread, so that the first texts do not wait for it (~0.05 s of reading
    and building on the main thread otherwise). ``True`` when this call started it; ``False`` when the table is not
    in the cache yet (the run then parses and caches it), when the native core is not installed (or lacks
    this), or when ``ES_SIMHASH_ENGINE=python`` forces the reference. A core made from the same cache entry takes
    the table; nothing else changes. A fork waits for the build first."""
    start = _native_function("start_idf_files")
    if start is None:
        return False
    from es_simhash.fingerprint import idf_cache

    try:
        entry = idf_cache.read(idf_cache.key(idf_cache.jieba_idf_path()))
    except (OSError, RuntimeError):  # (no jieba: the run says so)
        return False
    if entry is None or not start(entry.words, entry.values):
        return False
    _before_fork("wait_idf_files")
    return True


def _native_function(name: str) -> Any:
    """The native core's function ``name``, or ``None`` when the core is not installed, lacks it, or
    ``ES_SIMHASH_ENGINE=python`` forces the reference."""
    from es_simhash import _native

    return _native.function(name)


def _before_fork(wait: str) -> None:
    """Make ``os.fork`` (multiprocessing's "fork" too) call the native core's ``wait`` first: a child never inherits
    a half-built table from a thread it does not have."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_native_function(wait))
