"""The ``es-simhash`` command (and ``python -m es_simhash``): for a command that segments text, the native
segmenter's dictionary and (unless ``--idf`` names another) jieba's IDF table start building on other threads
*before* the command line's modules are imported (numpy, click, the engine: ~0.1 s that the builds overlap), then
:func:`es_simhash.cli.main` runs the command."""

from __future__ import annotations

import os
import sys

SEGMENTING_COMMANDS = frozenset({"fingerprint", "dedup", "index", "check", "explain", "evaluate", "migrate"})
"""Commands that fingerprint texts (``--help`` of any of them does not)."""


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Set to 1 for the command unless set already: no command does linear algebra, but numpy's OpenBLAS starts a
thread per core when it is imported and they spin for a while: ~8% of the CPU time of a ``dedup`` of 5,000 news
texts (``perf record``, 2 cores), taken from the threads that fingerprint and decide."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")
    if args and args[0] in SEGMENTING_COMMANDS and "--help" not in args and "-h" not in args:
        from es_simhash.fingerprint.early_start import start_default_idf, start_segmenter

        start_segmenter()
        if "--idf" not in args and not any(a.startswith("--idf=") for a in args):
            start_default_idf()
    from es_simhash.cli.app import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
