"""The ``es-simhash`` command line: a thin layer over the Python API."""

from es_simhash.cli.app import app, main

__all__ = ["app", "main"]
