"""Shared helpers of the Elasticsearch / OpenSearch benchmarks (``bench/ingest.py``, ``bench/lookup.py``,
``bench/engines.py``).

Everything goes through the client of ``es_simhash.index.elastic.connect`` (``client.engine`` says which engine
answers), in ``elasticsearch-py``'s keyword form, so the benchmarks run on Elasticsearch 8/9 and OpenSearch 2/3
alike: no ``elasticsearch.helpers`` here, bulk loads go through ``client.streaming_bulk``.

* :func:`es_node`: a context manager giving the URL of the node to use: ``--es-url`` / ``ES_URL`` when given,
  else a private node (Elasticsearch, or OpenSearch with ``engine="opensearch"``) started with
  ``scripts/es_node.py``'s ``start_node`` and closed (stopped, folder removed) on exit, also on error or Ctrl-C;
* :func:`fresh_index` / :func:`drop_index`: an index made by ``ensure_index`` (the shipped template) under a
  unique ``bench-...`` name, and its removal (index and its template);
* :func:`bulk_load`: a timed preload (a pool of threads, each sending whole chunks with ``client.streaming_bulk``)
  with refreshes off, then a refresh and a force-merge;
* small formatting helpers in the house style of ``bench/*.py``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import os
import statistics
import sys
import time
import uuid
from typing import Iterator, Sequence
from _common import fmt_table, verdicts  # noqa: E402,F401  (re-exported for ingest/lookup)

_HERE = os.path.dirname(os.path.abspath(__file__))
_SCRIPTS = os.path.join(os.path.dirname(_HERE), "scripts")


@contextlib.contextmanager
def es_node(url: str | None, heap: str, engine: str = "elasticsearch", version: str | None = None
            ) -> Iterator[tuple[str, str]]:
    """Yields ``(url, description)``. Starts (and always closes) a private node unless ``url`` is given: an
    Elasticsearch node, or with ``engine="opensearch"`` an OpenSearch one; ``version``: the engine's version
    (default: ``scripts/es_node.py``'s pinned one)."""
    if url:
        yield url, f"external node {url}"
        return
    if _SCRIPTS not in sys.path:
        sys.path.insert(0, _SCRIPTS)
    from es_node import start_node  # noqa: E402

    t0 = time.perf_counter()
    node = start_node(heap=heap, engine=engine, version=version)
    try:
        yield node.url, (f"private {engine} node {node.url} (heap {heap}, started in "
                         f"{time.perf_counter() - t0:.0f} s)")
    finally:
        node.close()


def client_for(url: str):
    from es_simhash.index.elastic import ConnectionSettings, connect

    return connect(ConnectionSettings(url=url, request_timeout=300.0))


ENGINE_TITLES = {"elasticsearch": "Elasticsearch", "opensearch": "OpenSearch"}


def server_info(client) -> str:
    """``"Elasticsearch 9.5.2"`` or ``"OpenSearch 2.19.6"``: the engine and version of the node answering."""
    from es_simhash.index.elastic import server_version

    return f"{ENGINE_TITLES.get(client.engine, client.engine)} {server_version(client)}"


def is_opensearch(client) -> bool:
    return client.engine == "opensearch"


def unique_name(prefix: str) -> str:
    return f"bench-{prefix}-{uuid.uuid4().hex[:8]}"


def fresh_index(client, prefix: str, fingerprint_config: dict, replicas: int = 0) -> str:
    """A new index made by ``ensure_index`` (the shipped template), 0 replicas by default (one node)."""
    from es_simhash.index.elastic import ensure_index

    name = unique_name(prefix)
    created = ensure_index(client, name, fingerprint_config, replicas=replicas)
    assert created, name
    return name


def drop_index(client, name: str) -> None:
    client.options(ignore_status=404).indices.delete(index=name)
    client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def percentile(xs: Sequence[float], p: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(xs, dtype=float), p))


def add_node_options(ap, heap: str) -> None:
    """``--es-url`` (default ``$ES_URL``) and ``--heap`` for the private node started when no URL is given."""
    ap.add_argument("--es-url", default=os.environ.get("ES_URL"),
                    help="use this Elasticsearch or OpenSearch node (default: $ES_URL, else start a private "
                    "Elasticsearch node)")
    ap.add_argument("--heap", default=heap, help=f"heap of the private node (default {heap})")


def fresh_index_with_keys(client, prefix: str, fingerprint_config: dict, lookup_keys, replicas: int = 0) -> str:
    """Like :func:`fresh_index`, recording ``lookup_keys`` (``es_simhash.lookup.keys.LookupKeys``) in the mapping."""
    from es_simhash.index.elastic import ensure_index

    name = unique_name(prefix)
    created = ensure_index(client, name, fingerprint_config, replicas=replicas, lookup_keys=lookup_keys)
    assert created, name
    return name


def store_stats(client, name: str) -> tuple[int, int, int]:
    """``(store bytes, segments, docs)`` of an index's primaries (``_stats/store,segments,docs``)."""
    stats = client.indices.stats(index=name, metric="store,segments,docs")["indices"][name]["primaries"]
    return int(stats["store"]["size_in_bytes"]), int(stats["segments"]["count"]), int(stats["docs"]["count"])


def parallel_bulk(client, actions, threads: int, chunk: int) -> int:
    """Send ``actions`` in bulk requests of ``chunk`` actions, ``threads`` requests at a time: the actions are
    drawn (from the generator, in this thread) chunk by chunk, each chunk sent whole by ``client.streaming_bulk``
    in a pool of ``threads`` threads, at most ``2 * threads`` chunks drawn and not yet answered (as
    ``elasticsearch.helpers.parallel_bulk``'s queue; the OpenSearch client has none). Items refused with 429 are
    retried with backoff. Returns the number of actions that failed."""
    failed = 0
    it = iter(actions)

    def send(part: list) -> int:
        return sum(not ok for ok, _ in client.streaming_bulk(part, chunk_size=len(part), raise_on_error=False,
                                                              yield_ok=False, max_retries=8, initial_backoff=1,
                                                              max_backoff=30))

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="bulk") as pool:
        pending: set[concurrent.futures.Future] = set()
        try:
            while True:
                part = list(itertools.islice(it, chunk))
                if not part:
                    break
                pending.add(pool.submit(send, part))
                if len(pending) >= 2 * max(1, threads):
                    done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    failed += sum(f.result() for f in done)
            failed += sum(f.result() for f in concurrent.futures.as_completed(pending))
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    return failed


def bulk_load(client, name: str, actions, expect: int, threads: int, chunk: int, merge_segments: int
              ) -> dict[str, float]:
    """Load ``actions`` into ``name`` with :func:`parallel_bulk` (``threads`` x ``chunk``) and refreshes off,
    then refresh, force-merge to ``merge_segments`` segments (none when it is 0) and refresh again; refreshes back
    to the template's 1 s. Checks that nothing failed and the index holds ``expect`` documents. Returns timings
    (s): ``bulk_s``, ``refresh_s``, ``merge_s``, ``total_s``."""
    client.indices.put_settings(index=name, settings={"index": {"refresh_interval": "-1"}})
    t0 = time.perf_counter()
    failed = parallel_bulk(client, actions, threads, chunk)
    t1 = time.perf_counter()
    client.indices.refresh(index=name)
    t2 = time.perf_counter()
    if merge_segments > 0:
        client.options(request_timeout=7200).indices.forcemerge(index=name, max_num_segments=merge_segments)
        client.indices.refresh(index=name)
    t3 = time.perf_counter()
    client.indices.put_settings(index=name, settings={"index": {"refresh_interval": "1s"}})
    count = int(client.count(index=name)["count"])
    assert failed == 0 and count == expect, (failed, count, expect)
    return {"bulk_s": t1 - t0, "refresh_s": t2 - t1, "merge_s": t3 - t2, "total_s": t3 - t0}
