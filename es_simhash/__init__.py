"""es-simhash: near-duplicate detection for crawled Chinese and English text, embedded or on Elasticsearch.

The front door: everything a script needs is importable from here, e.g.
``from es_simhash import DedupEngine, MemoryIndex, ElasticIndex, Fingerprinter, DefaultRule, Document``.
Names are imported on first use, so ``import es_simhash`` stays cheap (the command starts its background work
before numpy and the engine are loaded: :mod:`es_simhash.__main__`).
"""
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

__version__ = "0.1.0"

_HOME = {
    # fingerprints
    "FINGERPRINT_VERSION": "fingerprint.model", "Fingerprint": "fingerprint.model", "hash64": "fingerprint.model",
    "Fingerprinter": "fingerprint.fingerprinter", "IDFTable": "fingerprint.idf",
    # the engine, its rule and the records it takes and gives
    "DedupEngine": "engine.dedup_engine", "Document": "records", "Result": "records",
    "DefaultRule": "decide.default", "Decision": "records", "StoredDoc": "records",
    # the two indexes
    "MemoryIndex": "index.memory", "ElasticIndex": "index.elastic", "ConnectionSettings": "index.elastic",
    "connect": "index.elastic", "ensure_index": "index.elastic",
    # runs over files, and keeping clusters true
    "run_dedup": "pipeline", "Summary": "pipeline", "Checkpoint": "pipeline", "migrate": "pipeline.migrate",
    "recheck": "clustering", "settle": "clustering", "delete": "clustering", "repair": "clustering",
    # errors: every error raised on purpose is an EsSimhashError with a one-line message
    "EsSimhashError": "errors", "ElasticError": "errors", "InvalidSetting": "errors", "MaintenanceError": "errors",
    "IndexFileError": "errors", "InputError": "errors", "OutputError": "errors", "SavedIndexError": "errors",
}
__all__ = ["Checkpoint", "ConnectionSettings", "Decision", "DedupEngine", "DefaultRule", "Document", "ElasticError",
           "ElasticIndex", "EsSimhashError", "FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "IDFTable",
           "IndexFileError", "InputError", "InvalidSetting", "MaintenanceError", "MemoryIndex", "OutputError",
           "Result", "SavedIndexError", "StoredDoc", "Summary", "connect", "delete", "ensure_index", "hash64", "migrate", "recheck",
           "repair", "run_dedup", "settle", "__version__"]

if _TYPE_CHECKING:
    from es_simhash.clustering import delete, recheck, repair, settle
    from es_simhash.decide.default import DefaultRule
    from es_simhash.records import Decision
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.records import Document, Result
    from es_simhash.errors import (
        ElasticError,
        EsSimhashError,
        IndexFileError,
        InputError,
        InvalidSetting,
        MaintenanceError,
        OutputError,
        SavedIndexError,
    )
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.fingerprint.idf import IDFTable
    from es_simhash.fingerprint.model import FINGERPRINT_VERSION, Fingerprint, hash64
    from es_simhash.records import StoredDoc
    from es_simhash.index.elastic import ConnectionSettings, ElasticIndex, connect, ensure_index
    from es_simhash.index.memory import MemoryIndex
    from es_simhash.pipeline import Checkpoint, Summary, run_dedup
    from es_simhash.pipeline.migrate import migrate


def __getattr__(name: str) -> _Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
