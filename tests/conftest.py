"""Shared pytest fixtures: a real Elasticsearch node (no mocks).

- ``es_url`` (session): $ES_URL if set (it must answer), else a node started once per
  session with scripts/es_node.py and stopped at the end. When no node can be had the
  test FAILS under CI=true and is skipped (with the reason) elsewhere.
- ``es_node`` (session): the ``es_node.Node`` behind ``es_url``, for tests that stop, kill
  or restart it (with $ES_URL set, a separate node of our own is started for them).
- ``es_index_name`` (function): a fresh, unique, lowercase index name; the index is
  deleted afterwards over plain HTTP.
- ``client`` (function): an ``elasticsearch`` client for ``es_url``, made by es_simhash's own ``connect``.
- ``fingerprinter`` (module): a default ``Fingerprinter``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid

import pytest

import es_node as esn  # (scripts/es_node.py; scripts/ is on pytest's pythonpath)


@pytest.fixture
def cli():
    """``cli("dedup", path, "--report", r, cwd=tmp_path)``: es-simhash run in process (``support.run_cli``)."""
    from support import run_cli

    return run_cli


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "es: needs a real Elasticsearch node")
    config.addinivalue_line("markers", "slow: slow test (seconds to minutes)")
    config.addinivalue_line("markers", "elasticsearch_only: tries a feature of Elasticsearch's own, not es-simhash's "
                            "(the OpenSearch passes leave it out)")
    config.addinivalue_line("markers", "faults: node faults during ingest (tests/test_faults.py: a node killed, 429s, "
                            "a node of two lost): es-simhash's retries, run on the newest node of each engine "
                            "(Elasticsearch 9.x, OpenSearch 3.x); the 8.x and OpenSearch 2.x passes leave them out")
    config.addinivalue_line("markers", "secured: needs a node with security on (es_node's --security; on OpenSearch "
                            "2.x only: the OpenSearch 3.x pass leaves it out)")


ES_FIXTURES = {"es_url", "es_node", "es_index_name", "client"}
BACKEND_FIXTURES = {"make_index"}
"""Fixtures parametrised over the backends (``memory``, ``elastic``): their ``elastic`` variant needs a node too, which
it asks for inside the fixture (``request.getfixturevalue``), out of the collection's sight."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests that use the node fixtures are marked `es` automatically (`-m "not es"` deselects them, and the 8.x run
    # of scripts/test_es8.sh selects them with `-m es`), and so are the `elastic` variants of backend fixtures.
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if ES_FIXTURES & set(getattr(item, "fixturenames", ())) or any(
                params.get(name) == "elastic" for name in BACKEND_FIXTURES):
            item.add_marker(pytest.mark.es)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """Under CI=true no test skips: a skip (a missing node, corpus, tool or native core) is reported as a failure
    with its reason. (An expected failure, xfail, stays one.)"""
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where every test must run: {report.longrepr}"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _unavailable(reason: str):
    """Never skip silently in CI: there a missing node is a failure."""
    if _in_ci():
        pytest.fail(f"Elasticsearch node unavailable (CI=true, so this fails): {reason}", pytrace=False)
    pytest.skip(f"Elasticsearch node unavailable: {reason}")


def _http(method: str, url: str, body=None, timeout: float = 30.0):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw or b"null")
        except ValueError:
            return e.code, raw.decode(errors="replace")


@pytest.fixture(scope="session")
def _es_session():
    """(url, Node or None). Errors are cached by pytest, so a failed start is tried only once."""
    url = os.environ.get("ES_URL", "").strip().rstrip("/")
    if url:
        try:
            status, body = _http("GET", f"{url}/_cluster/health", timeout=10)
        except (OSError, urllib.error.URLError) as e:
            _unavailable(f"ES_URL={url} does not answer: {e}")
        if status != 200 or not isinstance(body, dict) or body.get("status") not in ("green", "yellow"):
            _unavailable(f"ES_URL={url} is not healthy: HTTP {status} {str(body)[:200]}")
        yield url, None
        return
    try:
        node = esn.start_node()
    except Exception as e:  # any reason at all: report it, never hide it
        _unavailable(f"{type(e).__name__}: {e}")
    try:
        yield node.url, node
    finally:
        node.close()


@pytest.fixture(scope="session")
def es_url(_es_session) -> str:
    return _es_session[0]


@pytest.fixture(scope="session")
def es_node(_es_session) -> "esn.Node":
    node = _es_session[1]
    if node is not None:
        yield node
        return
    # $ES_URL is an external node we must not kill: start one of our own for these tests.
    try:
        node = esn.start_node()
    except Exception as e:
        _unavailable(f"{type(e).__name__}: {e}")
    try:
        yield node
    finally:
        node.close()


@pytest.fixture
def es_index_name(es_url: str):
    name = f"test-{uuid.uuid4().hex[:8]}"
    yield name
    try:
        _http("DELETE", f"{es_url}/{name}?ignore_unavailable=true", timeout=60)
        _http("DELETE", f"{es_url}/_index_template/es-simhash-{name}", timeout=60)
    except (OSError, urllib.error.URLError):
        pass  # the node may be down on purpose (fault-injection tests)


@pytest.fixture
def client(es_url):
    from es_simhash.index.elastic import ConnectionSettings, connect

    return connect(ConnectionSettings(url=es_url))


@pytest.fixture(scope="module")
def fingerprinter():
    from es_simhash import Fingerprinter

    return Fingerprinter()
