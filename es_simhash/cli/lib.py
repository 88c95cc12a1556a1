"""The library as the commands call it, each module imported when a command first uses it: ``es-simhash --help``
and a usage error import none of them (the start-up budget: tests/test_startup.py, bench/cli.py ``help_s``).
Commands write ``lib.pipeline.run_checkpointed(...)``; the type checker sees the modules themselves. The commands'
other imports are the light ones (the standard library, :mod:`typer`, :mod:`es_simhash.defaults` and
:mod:`es_simhash.errors`)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _Module:
    """A module imported on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


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
else:
    clustering = _Module("es_simhash.clustering")
    elastic = _Module("es_simhash.index.elastic")
    engine = _Module("es_simhash.engine.dedup_engine")
    evaluate = _Module("es_simhash.results.evaluate")
    fingerprinter = _Module("es_simhash.fingerprint.fingerprinter")
    idf = _Module("es_simhash.fingerprint.idf")
    keys = _Module("es_simhash.lookup.keys")
    kibana = _Module("es_simhash.results.kibana")
    memory = _Module("es_simhash.index.memory")
    migrate = _Module("es_simhash.pipeline.migrate")
    outputs = _Module("es_simhash.files.outputs")
    pipeline = _Module("es_simhash.pipeline")
    report = _Module("es_simhash.results.report")
    rules = _Module("es_simhash.decide.default")
    search = _Module("es_simhash.results.search")
    settings = _Module("es_simhash.settings")
    sources = _Module("es_simhash.files.sources")
