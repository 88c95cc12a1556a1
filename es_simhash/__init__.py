"""es-simhash: near-duplicate detection for crawled Chinese and English text."""
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

__version__ = "0.1.0"
__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "IDFTable", "hash64", "__version__"]

if _TYPE_CHECKING:
    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.fingerprint.model import FINGERPRINT_VERSION, Fingerprint, hash64
    from es_simhash.fingerprint.idf import IDFTable

_HOME = {"FINGERPRINT_VERSION": "fingerprint.fingerprinter", "Fingerprint": "fingerprint.fingerprinter",
         "Fingerprinter": "fingerprint.fingerprinter", "hash64": "fingerprint.fingerprinter",
         "IDFTable": "fingerprint.idf"}


def __getattr__(name: str) -> _Any:
    """The package's names, imported on first use: ``import es_simhash.fingerprint.early_start`` loads no numpy, so the
    ``es-simhash`` command starts its background work before the heavy imports (:mod:`es_simhash.__main__`)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
