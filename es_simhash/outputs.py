"""Moved to :mod:`es_simhash.files.outputs`; this import path is kept for one release (0.2)."""

from es_simhash.files.outputs import *  # noqa: F401,F403
from es_simhash.files.outputs import __all__  # noqa: F401
