"""Moved to :mod:`es_simhash.readside.kibana`; this import path is kept for one release (0.2)."""

from es_simhash.readside.kibana import *  # noqa: F401,F403
from es_simhash.readside.kibana import __all__  # noqa: F401


if __name__ == "__main__":  # `python -m es_simhash.kibana`, as before: regenerate the shipped file
    from es_simhash.readside.kibana.objects import write_ndjson

    print(write_ndjson())
