"""Moved to :mod:`es_simhash.fingerprint.text`; this import path is kept for one release (0.2)."""

from es_simhash.fingerprint.text import *  # noqa: F401,F403
from es_simhash.fingerprint.text import __all__  # noqa: F401
