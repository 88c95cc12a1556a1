"""Moved to :mod:`es_simhash.cluster.maintenance`; this import path is kept for one release (0.2)."""

from es_simhash.cluster.maintenance import *  # noqa: F401,F403
from es_simhash.cluster.maintenance import __all__  # noqa: F401
