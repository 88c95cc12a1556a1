"""Moved to :mod:`es_simhash.files.markup`; this import path is kept for one release (0.2)."""

from es_simhash.files.markup import *  # noqa: F401,F403
from es_simhash.files.markup import __all__  # noqa: F401
