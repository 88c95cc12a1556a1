#!/usr/bin/env bash
# The Elasticsearch-backed tests (`pytest -m es`) against OpenSearch: one pass per version in OPENSEARCH_VERSIONS
# (below; env ES_SIMHASH_OPENSEARCH_VERSIONS overrides, e.g. "2.19.6"), each on a node of its own started by
# scripts/es_node.py --engine opensearch (the integ-test-zip from Maven Central; 2.x on a JDK 17-23, 3.x on 21+)
# and stopped at the end. The client is opensearch-py (the [opensearch] extra, in the test extra). Tests that start
# nodes of their own (faults, es_node) start OpenSearch ones too; tests of an Elasticsearch feature es-simhash does
# not use (marker elasticsearch_only) are left out; the secured-node tests (marker secured) run in the 2.x pass,
# the node-fault tests (marker faults) in the 3.x pass.
# scripts/test.sh calls it after the Elasticsearch passes.
# Under CI=true a node that cannot be had is a failure; elsewhere the pass is skipped with the reason.
# Extra arguments go to pytest, e.g. `bash scripts/test_opensearch.sh -k living_index`.
set -euo pipefail
cd "$(dirname "$0")/.."
OPENSEARCH_VERSIONS="${ES_SIMHASH_OPENSEARCH_VERSIONS:-2.19.6 3.3.2}"
in_ci() { case "${CI:-}" in [Tt][Rr][Uu][Ee]|1|[Yy][Ee][Ss]) return 0;; *) return 1;; esac; }
python3 -c "import opensearchpy" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
client=$(python3 -c 'import opensearchpy; print(opensearchpy.__versionstr__)')

# Nothing of the Elasticsearch passes' cluster may leak into these.
unset ES_URL ES_API_KEY ES_USERNAME ES_PASSWORD ES_CA_CERTS
export ES_SIMHASH_NODE_ENGINE=opensearch
status=0
port=""
trap '[ -z "$port" ] || python3 scripts/es_node.py -q stop --port "$port" >/dev/null 2>&1 || true' EXIT
for version in $OPENSEARCH_VERSIONS; do
    start=$(date +%s)
    export ES_SIMHASH_ES_VERSION="$version"
    if ! out=$(python3 scripts/es_node.py -q start --heap 1g); then
        if in_ci; then
            echo "error: could not start an OpenSearch $version node (CI=true, so the OpenSearch run fails)" >&2
            status=1
            continue
        fi
        echo "warning: could not start an OpenSearch $version node: its run is skipped" >&2
        continue
    fi
    eval "$out"   # export ES_URL=http://127.0.0.1:PORT
    port="${ES_URL##*:}"
    echo "OpenSearch $version at $ES_URL, opensearch-py $client"
    pass=0
    # (the tests of a secured node run on 2.x: the 3.x security plugin on Maven Central needs a module the
    # integ-test-zip lacks; scripts/es_node.py runs them on 2.19.4, the newest 2.x with its plugin there)
    marks="es and not elasticsearch_only"
    # (the node-fault tests, marker `faults`, are es-simhash's retries: they run on 3.x, the newest, not again on 2.x)
    case "$version" in 2.*) marks="$marks and not faults";; *) marks="$marks and not secured";; esac
    python3 -m pytest -m "$marks" -p no:cacheprovider --durations=15 "$@" || pass=$?
    python3 scripts/es_node.py -q stop --port "$port" >/dev/null || true
    port=""
    unset ES_URL
    echo "OpenSearch $version run: exit $pass, $(( $(date +%s) - start )) s in all"
    [ "$pass" -eq 0 ] || status=$pass
done
exit $status
