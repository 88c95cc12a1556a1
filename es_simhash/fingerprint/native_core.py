"""The adapter to the native core (``native/``, module ``es_simhash_native``): whether it is usable here and
why not, one core per configuration and process (built ahead of a fork), the early start of its segmenter, and
the notice when Python does the work instead."""

from __future__ import annotations

import importlib.util
import logging
import os
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from es_simhash import _native
from es_simhash.fingerprint import early_start
from es_simhash.fingerprint.events import place_list
from es_simhash.fingerprint.model import FINGERPRINT_VERSION

if TYPE_CHECKING:
    from es_simhash.fingerprint.config import FingerprintSettings
    from es_simhash.fingerprint.idf import IDFTable

LN_TABLE_SIZE = 1 << 16  # tf="sublinear": numpy's ln(1..65536) handed to the native core (more: Python)
_log = logging.getLogger(__name__)
ROW_FIELDS = 14  # the fields of a fingerprint row of the native core (Fingerprint's, in order)
NOTICED: list[str] = []


@lru_cache(maxsize=1)
def native_module() -> tuple[Any, str | None]:
    """``(es_simhash_native, None)`` when the native core is installed and usable here, else ``(None, reason)``."""
    es_simhash_native = _native.installed()
    if es_simhash_native is None:
        return None, f"es_simhash_native is not installed ({_native.import_error()})"
    native_version = getattr(es_simhash_native, "FINGERPRINT_VERSION", 4)
    if native_version != FINGERPRINT_VERSION:
        return None, (f"es_simhash_native computes fingerprint version {native_version}, this es-simhash "
                      f"{FINGERPRINT_VERSION} (reinstall it: pip install ./native)")
    if getattr(es_simhash_native, "ROW_FIELDS", 8) != ROW_FIELDS:
        return None, "es_simhash_native does not match this es-simhash (reinstall it: pip install ./native)"
    if es_simhash_native.UNIDATA_VERSION != unicodedata.unidata_version:
        return None, (f"es_simhash_native has the character tables of Unicode {es_simhash_native.UNIDATA_VERSION}, "
                      f"this Python {unicodedata.unidata_version} (rebuild it with this Python)")
    rjieba = installed_version("rjieba")
    if rjieba is not None and rjieba != RJIEBA_VERSION:
        return None, (f"rjieba {rjieba} is installed; the native core segments as rjieba {RJIEBA_VERSION} "
                      f"(jieba-rs {es_simhash_native.JIEBA_RS_VERSION})")
    return es_simhash_native, None


def installed_version(name: str) -> str | None:
    """The installed version of the distribution ``name`` (None when it is not installed). From the name of its
    ``NAME-VERSION.dist-info`` folder beside the package when there is one (``importlib.metadata`` costs ~15 ms of
    imports, on every command that fingerprints), else from ``importlib.metadata``."""
    try:
        spec = importlib.util.find_spec(name)  # (finds it without importing it)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return None
    if spec.origin and os.path.isabs(spec.origin):  # (not "built-in" or "frozen")
        found = list(Path(spec.origin).parent.parent.glob(f"{name}-[0-9]*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(name) + 1:-len(".dist-info")]
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001  (no metadata: as if not installed, the segmenter check decides)
        return None


NATIVE_CORES: dict[tuple, tuple[Any, Any, Any]] = {}  # see core_for


def core_for(idf: IDFTable, stopwords: frozenset[str], settings: FingerprintSettings, segmenter: str) -> Any:
    """The native core for these tables and settings: made once per process for each IDF table, stop-word set and
    settings, and shared by every fingerprinter with the same ones (it is thread-safe). Handing jieba's 350,000-word
    table to Rust as a dict costs ~0.05 s, as much as fingerprinting a few hundred texts; a table read from the IDF
    cache goes as the paths of the cache's files, which the core reads on a thread of its own, or takes the table
    the command started building early (:mod:`~es_simhash.fingerprint.early_start`)."""
    module = native_module()[0]
    source = idf._native_idf()  # (the dict, or the IDF cache's files: see IDFTable)
    key = (id(source), idf.default, id(stopwords), *settings.as_tuple(), segmenter)
    cached = NATIVE_CORES.get(key)
    if cached is not None and cached[0] is source and cached[1] is stopwords:
        return cached[2]
    s = settings
    core = module.NativeFingerprinter(
        source, idf.default, stopwords, min_token_len=s.min_token_len, sentences=s.sentences,
        min_sentence_chars=s.min_sentence_chars, short_chars=s.short_chars, sketch=s.sketch,
        sketch_chars=s.sketch_chars, sketch_shingle=s.sketch_shingle, line_sketch=s.line_sketch, tf=s.tf,
        ln_table=ln_table() if s.tf == "sublinear" else None, fuzzy=s.fuzzy,
        place_list=place_list())
    while len(NATIVE_CORES) >= 8:  # a few configurations per process at most, in practice one
        NATIVE_CORES.pop(next(iter(NATIVE_CORES)))[2].wait()  # (built: see _wait_for_native_cores)
    NATIVE_CORES[key] = (source, stopwords, core)  # (holding the objects keeps their ids theirs)
    return core


def forget(core: Any) -> None:
    """Drop ``core`` from the shared cores (its IDF cache files turned out unusable: the next one is made anew)."""
    for key, (_, _, cached) in list(NATIVE_CORES.items()):
        if cached is core:
            del NATIVE_CORES[key]


def is_idf_cache_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the native core's ``IdfCacheError``: the IDF cache's files could not be read."""
    return isinstance(exc, getattr(native_module()[0], "IdfCacheError", ()))


def _wait_for_native_cores() -> None:
    """Before a fork: every native core is built (one whose IDF table is still being built on its own thread would
    wait for a thread the child does not have). A core leaves ``NATIVE_CORES`` built, so these are all."""
    for _, _, native in list(NATIVE_CORES.values()):
        native.wait()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_wait_for_native_cores)  # (nothing to wait for while no core was made)

RJIEBA_VERSION = "0.2.2"  # its jieba-rs is the native core's (native/Cargo.toml)


def start_native_segmenter() -> bool:
    """Start building the native core's segmenter (jieba-rs's dictionary: ~0.2 s of CPU that the first text would
    otherwise wait for) on a background thread, so it overlaps what the caller does next: reading the IDF table
    and the input, on another core. ``True`` when this call started it; ``False`` when it had been started, when
    the native core is not installed or not usable here, or when ``ES_SIMHASH_ENGINE=python`` forces the reference.
    Fingerprints do not change: the same dictionary, built earlier. A fork waits for the build first
    (:func:`es_simhash.early_start.start_segmenter`, which the command line calls before its imports)."""
    if early_start.python_engine_forced() or native_module()[0] is None:
        return False
    return early_start.start_segmenter()


def notice_once(reason: str) -> None:
    """One line, once per process: the native core is missing, the pure-Python engine is used."""
    if not NOTICED:
        NOTICED.append(reason)
        _log.warning("es-simhash: native fingerprint core unavailable (%s); using the pure-Python engine: same "
                     "fingerprints, slower (pip install ./native to build it)", reason)



@lru_cache(maxsize=1)
def ln_table() -> list[float]:
    """``numpy.log(k)`` for k = 1 .. :data:`LN_TABLE_SIZE`, for the native core's ``tf="sublinear"``."""
    import numpy as np

    return np.log(np.arange(1, LN_TABLE_SIZE + 1, dtype=np.int64)).tolist()
