"""Moved to :mod:`es_simhash.lookup.keys`; this import path is kept for one release (0.2)."""

from es_simhash.lookup.keys import *  # noqa: F401,F403
from es_simhash.lookup.keys import __all__  # noqa: F401
