"""Moved to :mod:`es_simhash.lookup.hamming`; this import path is kept for one release (0.2)."""

from es_simhash.lookup.hamming import *  # noqa: F401,F403
from es_simhash.lookup.hamming import __all__  # noqa: F401
