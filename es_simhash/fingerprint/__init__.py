"""Fingerprints: the text a reader sees (``text``, ``fold``), IDF weights (``idf``, ``idf_cache``), and the 64-bit
SimHash with its sentence signature and shingle sketch: ``model`` (the :class:`Fingerprint`), ``hashes`` (content,
sentence and sketch hashes), ``config`` (the settings), ``reference`` (the Python engine), ``native_core`` (the
adapter to the Rust core), ``fingerprinter`` (:class:`Fingerprinter`, which chooses between them).

The names below are loaded on first use: ``es_simhash.fingerprint.early_start`` must be importable before numpy
and the engine are (the command starts the native core's builds there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.fingerprint.model import (
        FINGERPRINT_VERSION,
        SKETCH_BIT,
        WEIGHT_SCALE,
        Fingerprint,
        hash64,
        is_sketch,
    )
    from es_simhash.fingerprint.hashes import (
        NEGATIONS,
        content_hashes,
        contradicting_pair,
        contradicts,
        sentence_hashes,
        text_contradicts,
    )

__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "hash64", "is_sketch", "WEIGHT_SCALE", "SKETCH_BIT",
           "sentence_hashes", "content_hashes", "contradicts", "contradicting_pair", "text_contradicts", "NEGATIONS"]


_HOME = {"Fingerprinter": "fingerprinter", "NEGATIONS": "hashes", "content_hashes": "hashes",
         "contradicting_pair": "hashes", "contradicts": "hashes", "sentence_hashes": "hashes",
         "text_contradicts": "hashes"}
"""Where each name lives (the rest: :mod:`~es_simhash.fingerprint.model`)."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_HOME.get(name, 'model')}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
