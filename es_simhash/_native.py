"""The native core (``es_simhash_native``, built from ``native/``): the one module that imports it. Standard library
only, so the command can start the core's background builds before its heavy imports.

Users of the core ask here: :func:`module` for the module (``None`` when it is not installed or
``ES_SIMHASH_ENGINE=python`` forces the reference), :func:`function` for one of its functions (``None`` as well
when an older core lacks it).
"""

from __future__ import annotations

from typing import Any

from . import settings

__all__ = ["module", "installed", "function"]


def installed() -> Any:
    """The ``es_simhash_native`` module when it is installed, whatever the environment says; else ``None``."""
    try:
        import es_simhash_native  # type: ignore[import-not-found]
    except ImportError:
        return None
    return es_simhash_native


def module() -> Any:
    """The ``es_simhash_native`` module, or ``None`` when it is not installed or the reference engine is forced
    (``ES_SIMHASH_ENGINE=python``)."""
    return None if settings.python_engine_forced() else installed()


def function(name: str) -> Any:
    """The native core's function ``name``, or ``None`` (no core, the reference forced, or a core without it)."""
    return getattr(module(), name, None)


def import_error() -> str | None:
    """Why the module cannot be imported (``None`` when it can)."""
    try:
        import es_simhash_native  # type: ignore[import-not-found]  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None
