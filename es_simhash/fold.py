"""Moved to :mod:`es_simhash.fingerprint.fold`; this import path is kept for one release (0.2)."""

from es_simhash.fingerprint.fold import *  # noqa: F401,F403
from es_simhash.fingerprint.fold import __all__  # noqa: F401
