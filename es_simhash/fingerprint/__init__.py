"""Fingerprints: the text a reader sees (``text``, ``fold``), IDF weights (``idf``, ``idf_cache``), and the 64-bit
SimHash with its sentence signature and shingle sketch: ``model`` (the :class:`Fingerprint`), ``hashes`` (content,
sentence and sketch hashes), ``config`` (the settings), ``reference`` (the Python engine), ``native_core`` (the
adapter to the Rust core), ``fingerprinter`` (:class:`Fingerprinter`, which chooses between them).

The names below are loaded on first use: ``es_simhash.fingerprint.early_start`` must be importable before numpy
and the engine are (the command starts the native core's builds there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from es_simhash.fingerprint.fingerprinter import (
        FINGERPRINT_VERSION,
        NEGATIONS,
        SKETCH_BIT,
        WEIGHT_SCALE,
        Fingerprint,
        Fingerprinter,
        content_hashes,
        contradicting_pair,
        contradicts,
        hash64,
        is_sketch,
        sentence_hashes,
        text_contradicts,
    )

__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "hash64", "is_sketch", "WEIGHT_SCALE", "SKETCH_BIT",
           "sentence_hashes", "content_hashes", "contradicts", "contradicting_pair", "text_contradicts", "NEGATIONS"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from es_simhash.fingerprint import fingerprinter

        return getattr(fingerprinter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
