"""Faults during ingest, against real Elasticsearch nodes: a node killed (SIGKILL) mid-ingest and restarted,
giving up and resuming from the checkpoint, backpressure (429) from a tiny write queue."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from support import chinese_articles, english_articles

pytestmark = pytest.mark.slow


def cli_popen(*args, es_url, cwd):
    env = dict(os.environ, ES_URL=es_url)
    return subprocess.Popen([sys.executable, "-m", "es_simhash", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)


def count(url, index):
    try:
        with urllib.request.urlopen(f"{url}/{index}/_count", timeout=5) as r:
            return json.load(r)["count"]
    except OSError:
        return -1


def all_ids(url, index, n):
    req = urllib.request.Request(f"{url}/{index}/_search", method="POST",
                                 data=json.dumps({"size": n + 10, "_source": ["dup_cluster", "dup_of"],
                                                  "sort": [{"doc_id": "asc"}]}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        hits = json.load(r)["hits"]["hits"]
    return {h["_id"]: (h["_source"]["dup_cluster"], h["_source"]["dup_of"]) for h in hits}


@pytest.fixture(scope="module")
def big_crawl(tmp_path_factory):
    zh = chinese_articles()[:2500]
    en = english_articles()[:1200]
    lines = [{"id": f"z{i}", "content": a} for i, a in enumerate(zh)] + \
            [{"id": f"e{i}", "content": a} for i, a in enumerate(en)]
    lines += [{"id": f"z{i}-r", "content": zh[i] + "（完）"} for i in range(0, 2500, 25)]
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    d = path.parent
    ref = subprocess.run([sys.executable, "-m", "es_simhash", "dedup", path, "--report", d / "ref.jsonl",
                          "--no-progress"], capture_output=True, cwd=d)
    assert ref.returncode == 0, ref.stderr
    expected = {r["id"]: (r["cluster"], r["duplicate_of"]) for r in map(json.loads, (d / "ref.jsonl").open())}
    return path, expected


def wait_for_count(url, index, at_least, proc, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if count(url, index) >= at_least:
            return
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.2)
    raise AssertionError("ingest made no progress")


def test_node_killed_mid_ingest_is_retried_and_nothing_is_lost(es_node, big_crawl, tmp_path):
    path, expected = big_crawl
    index = "faults-kill"
    proc = cli_popen("index", path, "--index", index, "--batch-size", "100", "--retry-for", "240",
                     "--no-progress", es_url=es_node.url, cwd=tmp_path)
    try:
        wait_for_count(es_node.url, index, 600, proc)
        es_node.kill()
        time.sleep(3)
        es_node.start()
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    assert f"read {len(expected):,}" in err.decode() and "retrying" in err.decode()
    assert all_ids(es_node.url, index, len(expected)) == expected


def test_gives_up_with_a_checkpoint_and_resume_finishes(es_node, big_crawl, tmp_path):
    path, expected = big_crawl
    index = "faults-resume"
    proc = cli_popen("index", path, "--index", index, "--batch-size", "100", "--retry-for", "3",
                     "--report", "r.jsonl", "--no-progress", es_url=es_node.url, cwd=tmp_path)
    try:
        wait_for_count(es_node.url, index, 600, proc)
        es_node.kill()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        es_node.start()
    assert proc.returncode == 4, err.decode()
    message = err.decode().strip().splitlines()[-1]
    assert "--resume" in message and (tmp_path / "es-simhash.checkpoint.json").exists()
    resumed = subprocess.run([sys.executable, "-m", "es_simhash", "index", path, "--index", index, "--batch-size",
                              "100", "--report", "r.jsonl", "--resume", "--no-progress"],
                             capture_output=True, cwd=tmp_path, env=dict(os.environ, ES_URL=es_node.url),
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert f"read {len(expected):,}  kept" in resumed.stderr.decode()  # counts carried over from the first run
    assert not (tmp_path / "es-simhash.checkpoint.json").exists()
    assert all_ids(es_node.url, index, len(expected)) == expected
    report = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in report) == sorted(expected)  # each record reported exactly once
