"""The library as the commands call it, each module imported when a command first uses it: ``es-simhash --help``
and a usage error import none of them (the start-up budget: tests/test_startup.py, bench/cli.py ``help_s``).
Commands write ``lib.pipeline.run_checkpointed(...)``; the type checker sees the modules themselves. The commands'
other imports are the light ones (the standard library, :mod:`typer`, :mod:`es_simhash.defaults` and
:mod:`es_simhash.errors`)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["clustering", "elastic", "engine", "evaluate", "fingerprinter", "idf", "keys", "kibana", "memory",
           "migrate", "outputs", "pipeline", "report", "rules", "search", "settings", "sources"]

if TYPE_CHECKING:
    from es_simhash import clustering, pipeline, settings
    from es_simhash.decide import default as rules
    from es_simhash.engine import dedup_engine as engine
    from es_simhash.files import outputs, sources
    from es_simhash.fingerprint import fingerprinter, idf
    from es_simhash.index import elastic, memory
    from es_simhash.lookup import keys
    from es_simhash.pipeline import migrate
    from es_simhash.results import evaluate, kibana, report, search

_HOME = {
    "clustering": "es_simhash.clustering",
    "elastic": "es_simhash.index.elastic",
    "engine": "es_simhash.engine.dedup_engine",
    "evaluate": "es_simhash.results.evaluate",
    "fingerprinter": "es_simhash.fingerprint.fingerprinter",
    "idf": "es_simhash.fingerprint.idf",
    "keys": "es_simhash.lookup.keys",
    "kibana": "es_simhash.results.kibana",
    "memory": "es_simhash.index.memory",
    "migrate": "es_simhash.pipeline.migrate",
    "outputs": "es_simhash.files.outputs",
    "pipeline": "es_simhash.pipeline",
    "report": "es_simhash.results.report",
    "rules": "es_simhash.decide.default",
    "search": "es_simhash.results.search",
    "settings": "es_simhash.settings",
    "sources": "es_simhash.files.sources",
}


def __getattr__(name: str) -> ModuleType:
    """``lib.NAME``: the module, imported on first use and kept (later uses are plain attribute reads)."""
    path = _HOME.get(name)
    if path is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(path)
    globals()[name] = module
    return module
