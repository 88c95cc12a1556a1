"""Moved to :mod:`es_simhash.readside.search`; this import path is kept for one release (0.2)."""

from es_simhash.readside.search import *  # noqa: F401,F403
from es_simhash.readside.search import __all__  # noqa: F401
