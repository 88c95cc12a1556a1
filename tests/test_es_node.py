"""The local Elasticsearch test node really runs (scripts/es_node.py + tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import es_node as esn  # (scripts/ is on pytest's pythonpath)

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "es_node.py"


def test_node_reports_the_major_version_asked_for(es_url):
    # This distribution (integ-test-zip) lacks the rest-root module, so `GET /` (and the
    # Python client's ping()/info()) answer 405; the nodes API tells the version instead.
    # 9 by default; scripts/test_es8.sh asks for 8.x (ES_SIMHASH_ES_VERSION).
    status, body = esn.http_request("GET", f"{es_url}/_nodes/_local?filter_path=nodes.*.version")
    assert status == 200, body
    versions = [n["version"] for n in body["nodes"].values()]
    major = esn.es_version().split(".")[0]
    assert versions and all(v.split(".")[0] == major for v in versions), (versions, esn.es_version())


def test_cluster_is_healthy(es_url):
    status, body = esn.http_request("GET", f"{es_url}/_cluster/health")
    assert status == 200
    assert body["status"] in ("green", "yellow")


def test_refreshed_document_is_found_by_term_query(es_url, es_index_name):
    url = f"{es_url}/{es_index_name}"
    status, body = esn.http_request("PUT", url, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"fp": {"type": "keyword"}, "n": {"type": "long"}}},
    })
    assert status == 200, body
    status, body = esn.http_request("PUT", f"{url}/_doc/a1?refresh=true", {"fp": "abc123", "n": 7})
    assert status == 201, body
    esn.http_request("PUT", f"{url}/_doc/a2?refresh=true", {"fp": "zzz999", "n": 8})

    status, body = esn.http_request("POST", f"{url}/_search", {"query": {"term": {"fp": "abc123"}}})
    assert status == 200, body
    hits = body["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["a1"]
    assert hits[0]["_source"] == {"fp": "abc123", "n": 7}


def test_index_name_fixture_gives_fresh_lowercase_names(es_url, es_index_name):
    assert es_index_name == es_index_name.lower() and es_index_name.startswith("test-")
    status, _ = esn.http_request("HEAD", f"{es_url}/{es_index_name}")
    assert status == 404


@pytest.mark.slow
def test_kill_then_start_keeps_flushed_document(es_node):
    index = f"test-restart-{uuid.uuid4().hex[:8]}"
    url = f"{es_node.url}/{index}"
    try:
        status, body = esn.http_request("PUT", url, {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {"fp": {"type": "keyword"}}},
        })
        assert status == 200, body
        status, body = esn.http_request("PUT", f"{url}/_doc/d1?refresh=true", {"fp": "survivor"})
        assert status == 201, body
        status, body = esn.http_request("POST", f"{url}/_flush")
        assert status == 200, body

        port, data_dir, old_pid = es_node.http_port, es_node.node_dir, es_node.pid
        es_node.kill()
        assert not es_node.is_running()
        with pytest.raises(OSError):
            esn.http_request("GET", f"{es_node.url}/_cluster/health", timeout=5)

        es_node.start()
        assert (es_node.http_port, es_node.node_dir) == (port, data_dir)
        assert es_node.pid != old_pid
        status, body = esn.http_request("POST", f"{url}/_search", {"query": {"term": {"fp": "survivor"}}})
        assert status == 200, body
        assert [h["_id"] for h in body["hits"]["hits"]] == ["d1"]
    finally:
        if es_node.is_running():
            esn.http_request("DELETE", url)


def test_settings_merge_and_removal():
    node = esn.Node(http_port=19200, transport_port=19300, data_dir="/tmp/unused-es-simhash-node",
                    settings={"thread_pool.write.queue_size": 1, "discovery.type": None})
    s = node.settings()
    assert s["thread_pool.write.queue_size"] == 1
    assert "discovery.type" not in s
    assert s["http.port"] == 19200 and s["transport.port"] == 19300
    assert s["xpack.security.enabled"] is False
    assert node.url == "http://127.0.0.1:19200"


def test_cli_errors_are_one_line():
    proc = subprocess.run([sys.executable, str(SCRIPT), "-q", "stop", "--port", "1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("error: no node started by this tool on port 1")
    assert "Traceback" not in proc.stderr


def _cli(*args, env):
    return subprocess.run([sys.executable, str(SCRIPT), "-q", *map(str, args)], capture_output=True, text=True,
                          timeout=400, env=env)


@pytest.mark.slow
def test_cli_start_prints_the_export_line_and_a_node_comes_back_with_its_data(tmp_path):
    """README flow: `start --data DIR` prints `export ES_URL=...`; after `stop`, `start --data DIR` brings the same
    node back (same URL, the document still there); after a crash (SIGKILL), `restart` does."""
    import os
    import re
    import shutil
    import tempfile

    # own state files (never another session's nodes); the distribution already unpacked
    env = {**os.environ, "ES_SIMHASH_CACHE": str(tmp_path / "cache"), "ES_SIMHASH_DIST_DIR": str(esn.dist_root())}
    data = tempfile.mkdtemp(prefix="es-simhash-test-data-", dir="/tmp")  # the node's user must reach it
    try:
        started = _cli("start", "--data", data, env=env)
        assert started.returncode == 0, started.stderr
        assert re.fullmatch(r"export ES_URL=http://127\.0\.0\.1:\d+\n", started.stdout), started.stdout
        url = started.stdout.strip().split("=", 1)[1]
        status, body = esn.http_request("PUT", f"{url}/kept/_doc/d1?refresh=true", {"fp": "survivor"})
        assert status == 201, body
        status, body = esn.http_request("POST", f"{url}/kept/_flush")
        assert status == 200, body

        stopped = _cli("stop", env=env)
        assert stopped.returncode == 0 and f"stopped {url}" in stopped.stdout, stopped.stderr
        assert f"start --data {Path(data).resolve()}" in stopped.stdout

        again = _cli("start", "--data", data, env=env)
        assert again.returncode == 0, again.stderr
        assert again.stdout == started.stdout  # the same node: same URL
        status, body = esn.http_request("GET", f"{url}/kept/_doc/d1")
        assert status == 200 and body["_source"] == {"fp": "survivor"}, body

        port = int(url.rsplit(":", 1)[1])
        state = json.loads((tmp_path / "cache" / "nodes" / f"{port}.json").read_text())
        esn.Node.from_state(state).kill()  # a crash: the state stays recorded
        with pytest.raises(OSError):
            esn.http_request("GET", f"{url}/_cluster/health", timeout=5)
        restarted = _cli("restart", env=env)
        assert restarted.returncode == 0, restarted.stderr
        assert restarted.stdout == started.stdout
        status, body = esn.http_request("GET", f"{url}/kept/_doc/d1")
        assert status == 200 and body["_source"] == {"fp": "survivor"}, body
    finally:
        _cli("stop", "--all", env=env)
        shutil.rmtree(data, ignore_errors=True)


def test_cli_restart_with_no_node_recorded_says_how_to_keep_data(tmp_path):
    import os

    res = _cli("restart", env={**os.environ, "ES_SIMHASH_CACHE": str(tmp_path)})
    assert res.returncode == 1
    assert res.stderr.strip().startswith("error: no node recorded") and "--data" in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("engine, version, user", [("elasticsearch", None, "elastic"),
                                                    ("opensearch", "2.19.6", "admin")])
def test_cli_start_with_tls_prints_what_points_es_simhash_at_a_secured_node(tmp_path, engine, version, user):
    """The secured-cluster walk-through: `start --tls` prints the export lines of the URL, the user, the password
    and the CA; with them, and nothing else, es-simhash creates an index over HTTPS with basic auth. OpenSearch 2.x
    runs as 2.19.4, the newest 2.x whose security plugin Maven Central serves."""
    import os
    import shlex

    env = {k: v for k, v in os.environ.items() if k not in ("ES_SIMHASH_ES_VERSION", "ES_SIMHASH_NODE_ENGINE")}
    env.update({"ES_SIMHASH_CACHE": str(tmp_path / "cache"), "ES_SIMHASH_DIST_DIR": str(esn.dist_root()),
                "ES_SIMHASH_NODE_ENGINE": engine, **({"ES_SIMHASH_ES_VERSION": version} if version else {})})
    try:
        started = _cli("start", "--tls", env=env)
        assert started.returncode == 0, started.stderr
        exports = dict(line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines())
        assert sorted(exports) == ["ES_CA_CERTS", "ES_PASSWORD", "ES_URL", "ES_USERNAME"], started.stdout
        assert exports["ES_URL"].startswith("https://") and exports["ES_USERNAME"] == user
        if engine == "opensearch":
            status, body = esn.http_request("GET", exports["ES_URL"] + "/", ca_cert=exports["ES_CA_CERTS"],
                                            auth=(user, shlex.split(exports["ES_PASSWORD"])[0]))
            assert status == 200 and body["version"]["number"] == "2.19.4", body
        settings = {k: shlex.split(v)[0] for k, v in exports.items()}
        clean = {k: v for k, v in os.environ.items() if not k.startswith("ES_")}
        res = subprocess.run([sys.executable, "-m", "es_simhash", "init", "--index", "walk-through"],
                             capture_output=True, env={**clean, **settings, "HOME": str(tmp_path)}, timeout=300)
        assert res.returncode == 0, res.stderr.decode()
        assert f"index 'walk-through' created at {settings['ES_URL']}" in res.stderr.decode()
        assert settings["ES_PASSWORD"].encode() not in res.stderr + res.stdout
        res = subprocess.run([sys.executable, "-m", "es_simhash", "init", "--index", "walk-through"],
                             capture_output=True, env={**clean, "ES_URL": settings["ES_URL"],
                                                       "ES_CA_CERTS": settings["ES_CA_CERTS"],
                                                       "HOME": str(tmp_path)}, timeout=300)
        assert res.returncode == 3 and "needs credentials" in res.stderr.decode()
        # status asks as the node's TLS needs: its CA; without the password, it answers (health needs it)
        unset = {k: v for k, v in env.items() if k not in ("ES_PASSWORD", "ES_NODE_PASSWORD")}
        status = _cli("status", env=unset)
        assert status.returncode == 0, status.stdout + status.stderr
        assert f"{settings['ES_URL']}  answering over TLS, security on: set ES_PASSWORD" in status.stdout
        status = _cli("status", env={**unset, "ES_PASSWORD": settings["ES_PASSWORD"]})
        assert status.returncode == 0 and status.stdout.startswith(f"{settings['ES_URL']}  green  ") or \
            status.stdout.startswith(f"{settings['ES_URL']}  yellow  "), status.stdout + status.stderr
        assert settings["ES_PASSWORD"] not in status.stdout + status.stderr
    finally:
        _cli("stop", "--all", env=env)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.19.6", "3.3.2"])
def test_cli_starts_an_opensearch_node_as_it_starts_elasticsearch(tmp_path, version):
    """`--engine opensearch --version V start` starts OpenSearch V (2.19 on Java 17, 3.x on Java 21+) and prints the
    same export line; the node answers `GET /` as OpenSearch, indexes and finds a document, `status` names it and
    `stop` stops it. Security asked of 3.x (whose security plugin on Maven Central its zip cannot load): one line."""
    import os
    import re

    import shutil
    import tempfile

    esn.ensure_distribution(version, "opensearch")  # (downloaded and unpacked once, in the shared cache)
    data = tempfile.mkdtemp(prefix="es-simhash-test-data-", dir="/tmp")  # the node's user must reach it
    env = {k: v for k, v in os.environ.items() if k not in ("ES_SIMHASH_ES_VERSION", "ES_SIMHASH_NODE_ENGINE")}
    own = {**env, "ES_SIMHASH_CACHE": str(tmp_path / "cache"),  # (this test's nodes only)
           "ES_SIMHASH_DIST_DIR": str(esn.dist_root())}
    try:
        if version.startswith("3."):
            refused = _cli("--engine", "opensearch", "--version", version, "start", "--security", env=own)
            assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
            assert "no security plugin for OpenSearch 3.3.2" in refused.stderr and "2.19.4" in refused.stderr
        started = _cli("--engine", "opensearch", "--version", version, "start", env=own)
        assert started.returncode == 0, started.stderr
        assert re.fullmatch(r"export ES_URL=http://127\.0\.0\.1:\d+\n", started.stdout), started.stdout
        url = started.stdout.strip().split("=", 1)[1]
        status, body = esn.http_request("GET", f"{url}/")
        assert status == 200 and body["version"]["distribution"] == "opensearch", body
        assert body["version"]["number"] == version, body
        status, body = esn.http_request("PUT", f"{url}/kept/_doc/d1?refresh=true", {"fp": "abc123"})
        assert status == 201, body
        status, body = esn.http_request("POST", f"{url}/kept/_search", {"query": {"term": {"fp": "abc123"}}})
        assert status == 200 and body["hits"]["total"]["value"] == 1, body
        listed = _cli("status", env=own)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert re.search(rf"{re.escape(url)}  (green|yellow)  OpenSearch {re.escape(version)}  ", listed.stdout), \
            listed.stdout
        stopped = _cli("stop", env=own)
        assert stopped.returncode == 0 and f"stopped {url}" in stopped.stdout, stopped.stderr
        with pytest.raises(OSError):
            esn.http_request("GET", f"{url}/", timeout=5)
        # a kept folder: the same OpenSearch node comes back with its data; as Elasticsearch, one line says how
        again = _cli("--engine", "opensearch", "--version", version, "start", "--data", data, env=own)
        assert again.returncode == 0, again.stderr
        url = again.stdout.strip().split("=", 1)[1]
        status, body = esn.http_request("PUT", f"{url}/kept/_doc/d1?refresh=true", {"fp": "survivor"})
        assert status == 201, body
        status, body = esn.http_request("POST", f"{url}/kept/_flush")
        assert status == 200, body
        assert _cli("stop", env=own).returncode == 0
        refused = _cli("start", "--data", data, env=own)
        assert refused.returncode == 1 and "--engine opensearch" in refused.stderr, refused.stderr
        back = _cli("--engine", "opensearch", "--version", version, "start", "--data", data, env=own)
        assert back.returncode == 0 and back.stdout == again.stdout, back.stderr
        status, body = esn.http_request("GET", f"{url}/kept/_doc/d1")
        assert status == 200 and body["_source"] == {"fp": "survivor"}, body
    finally:
        _cli("stop", "--all", env=own)
        shutil.rmtree(data, ignore_errors=True)
