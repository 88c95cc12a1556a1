"""Moved to :mod:`es_simhash.engine.engine`; this import path is kept for one release (0.2)."""

from es_simhash.engine.engine import *  # noqa: F401,F403
from es_simhash.engine.engine import __all__  # noqa: F401
