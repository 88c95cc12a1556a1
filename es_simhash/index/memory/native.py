"""The embedded index's native parts, when the native core is installed and not turned off
(``ES_SIMHASH_MEMORY_NATIVE=0``): the batched SimHash lookup and the sentence postings. Read through this module
at call time (tests swap them)."""

from __future__ import annotations

from es_simhash import _native, settings


def native_lookup():
    """``es_simhash_native.memory_lookup`` when the native core is installed (and not turned off), else ``None``."""
    return getattr(_native.installed(), "memory_lookup", None) if settings.memory_native() else None


NATIVE_LOOKUP = native_lookup()


def native_postings():
    """``es_simhash_native.SentencePostings`` when the native core is installed (and not turned off), else ``None``."""
    return getattr(_native.installed(), "SentencePostings", None) if native_lookup() is not None else None


NATIVE_POSTINGS = native_postings()
