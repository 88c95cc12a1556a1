"""Every engine es-simhash speaks to gives what the embedded index gives. This file runs in every pass: Elasticsearch
9.5 (the main run), 8.19 (scripts/test_es8.sh), OpenSearch 2.19 and 3.x (scripts/test_opensearch.sh); `dedup`,
the embedded index, is the reference each is held to.

- `index` with its defaults into a new index gives `dedup`'s (id, cluster), in its report and in the index, on one
  input holding site templates (reprints wrapped in a site's header and footer) and short texts;
- `repair --dry-run` prints what `repair` then does, line for line, on an index fed in two runs;
- `search` with duplicates filtered out returns one hit per cluster: the clusters of the documents the query
  matches, each once, whichever member the engine ranks first; a query longer than the engine takes is cut to it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

import accuracy  # (bench/accuracy.py)
from support import templated_crawl


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Reprints in site templates and short texts (People's Daily paragraphs, half wrapped in a site's header and
    footer), and articles with their copies, cuts, excerpts and minimal-change negatives (the accuracy benchmark's
    test split at a small scale: Chinese and English)."""
    split = accuracy.data.build("test", scale=0.05)
    out = [{"id": d.id, "content": d.text} for d in split.docs()]
    out += [{**r, "id": f"t-{r['id']}"} for r in templated_crawl(11, 300)]
    random.Random(5).shuffle(out)
    return out


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _clusters(path: Path) -> dict[str, str]:
    return {r["id"]: r["cluster"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _words(text: str) -> set[str]:
    """The English words of ``text`` as the standard analyzer reads them (Unicode word boundaries: "minister's" is
    one word), lowercased."""
    return set(re.findall(r"\w+(?:['’]\w+)*", text.lower()))


def test_index_gives_dedups_clusters_on_templates_and_short_texts(records, cli, es_url, client, es_index_name,
                                                                  tmp_path):
    from es_simhash.index.elastic import ElasticIndex

    path = _write(tmp_path / "crawl.jsonl", records)
    res = cli("dedup", path, "--report", "dedup.jsonl", "--dead-letters", "dead.jsonl", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    want = _clusters(tmp_path / "dedup.jsonl")
    reprints = [i for i in want if i.startswith("t-r")]
    joined = sum(want[i] == want[f"t-o{i[3:]}"] for i in reprints)
    assert len(reprints) // 4 < joined < len(reprints)  # (reprints in templates joined, not every short one)
    assert sum(want[i] != i for i in want if not i.startswith("t-")) > 20  # (and copies of articles)
    res = cli("index", path, "--index", es_index_name, "--report", "index.jsonl", "--dead-letters",
              "index-dead.jsonl", "--no-progress", cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    got = _clusters(tmp_path / "index.jsonl")
    assert got == want, (client.engine, sorted(i for i in got if got[i] != want[i])[:5])
    client.indices.refresh(index=es_index_name)
    held = {d.id: d.cluster for page in ElasticIndex(client, es_index_name).scan() for d in page}
    assert held == want, client.engine


def test_a_dry_run_prints_what_repair_then_does(records, cli, es_url, client, es_index_name, tmp_path):
    """Fed in two runs (each deciding on arrival into what the index holds), the index has clusters to set right:
    the dry run's lines are the repair's, and a second dry run finds nothing."""
    shuffled = list(records)
    random.Random(9).shuffle(shuffled)
    for day in range(2):
        res = cli("index", _write(tmp_path / f"day{day}.jsonl", shuffled[day::2]), "--index", es_index_name,
                  "--dead-letters", f"dead{day}.jsonl", "--no-progress", cwd=tmp_path, es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()
    dry = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", cwd=tmp_path, es_url=es_url)
    assert dry.returncode == 0, dry.stderr.decode()
    lines = dry.stdout.decode().splitlines()
    assert lines, "two runs in other halves left nothing to repair: the test has nothing to compare"
    done = cli("repair", "--index", es_index_name, "--no-progress", cwd=tmp_path, es_url=es_url)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().splitlines() == lines, client.engine
    again = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", cwd=tmp_path, es_url=es_url)
    assert again.returncode == 0 and again.stdout == b"", again.stdout.decode()[:300]


def test_search_returns_each_cluster_of_the_matching_documents_once(records, cli, es_url, client, es_index_name,
                                                                     tmp_path):
    path = _write(tmp_path / "crawl.jsonl", records)
    res = cli("index", path, "--index", es_index_name, "--report", "index.jsonl", "--dead-letters", "dead.jsonl",
              "--no-progress", cwd=tmp_path, es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    cluster = _clusters(tmp_path / "index.jsonl")
    words = ("government", "minister", "company")  # (English words: the standard analyzer reads them as one term)
    for word in words:
        matching = {r["id"] for r in records if word in _words(r["content"])}
        want = {cluster[i] for i in matching}
        assert len(want) < len(matching), word  # (some matching documents are copies of others)
        res = cli("search", word, "--index", es_index_name, "--limit", "500", "--json", es_url=es_url)
        assert res.returncode == 0, res.stderr.decode()
        hits = [json.loads(x) for x in res.stdout.decode().splitlines()]
        got = [h.get("cluster") or cluster[h["id"]] for h in hits]
        assert len(got) == len(set(got)), (client.engine, word)  # one hit per cluster
        assert set(got) == want, (client.engine, word)
        every = cli("search", word, "--index", es_index_name, "--limit", "500", "--json", "--all", es_url=es_url)
        assert {json.loads(x)["id"] for x in every.stdout.decode().splitlines()} == matching, (client.engine, word)
    # a query of 1,200 Chinese characters (a clause per character in each field searched): cut to what the engine
    # takes, said in a note, and answered
    text = "".join(r["content"] for r in records if r["id"].startswith("t-o"))[:1200]
    res = cli("search", text, "--index", es_index_name, "--json", es_url=es_url)
    assert res.returncode == 0, (client.engine, res.stderr.decode())
    assert re.search(r"note: the query is 1,200 characters long; searching with its first [\d,]+", res.stderr.decode())
    assert res.stdout.strip(), client.engine
