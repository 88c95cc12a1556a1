"""Moved to :mod:`es_simhash.files.sources`; this import path is kept for one release (0.2)."""

from es_simhash.files.sources import *  # noqa: F401,F403
from es_simhash.files.sources import __all__  # noqa: F401
