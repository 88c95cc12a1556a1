"""Moved to :mod:`es_simhash.readside.evaluate`; this import path is kept for one release (0.2)."""

from es_simhash.readside.evaluate import *  # noqa: F401,F403
from es_simhash.readside.evaluate import __all__  # noqa: F401
