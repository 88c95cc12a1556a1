"""A backend of one's own, written from :class:`~es_simhash.index.base.FingerprintIndex` alone (the storage
interface the engine never looks behind, as docs/how-it-works.md shows): a dict with brute-force lookups that
serve the rule's candidate contract through :func:`~es_simhash.lookup.candidates.found_by_lookup`. Plugged into the
engine it gives, record for record, the clusters the embedded index gives on the same input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from es_simhash import Fingerprinter
from es_simhash.decide.default import DefaultRule
from es_simhash.defaults import MAX_SENTENCE_DF
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.index.base import FingerprintIndex, Lookup, LookupResult
from es_simhash.index.memory import MemoryIndex
from es_simhash.lookup.candidates import CandidateContract, boilerplate_of, found_by_lookup, served
from es_simhash.lookup.keys import DEFAULT, LookupKeys
from es_simhash.pipeline import run_dedup
from es_simhash.records import StoredDoc

from support import chinese_articles, templated_crawl


class DictIndex:
    """Every stored document in a dict; a lookup reads them all."""

    max_sentence_df = MAX_SENTENCE_DF
    overlapping_writes = False  # (the engine writes a batch before it looks up the next)
    shared_writers = False  # (one process writes: no conditional writes, no settling)

    def __init__(self) -> None:
        self.docs: dict[str, StoredDoc] = {}
        self.config: dict[str, Any] | None = None

    @property
    def lookup_keys(self) -> LookupKeys:
        return DEFAULT

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract | int, exclude: Sequence[str] = ()
               ) -> list[LookupResult]:
        contract = served(contract, "the dict index")
        stored = [d for d in self.docs.values() if d.id not in set(exclude)]
        results = []
        for q in queries:
            fp = q.fingerprint
            df = {h: sum(h in d.fingerprint.hashes for d in stored) for h in fp.hashes}
            others = [d for d in stored if d.id != q.id]
            candidates = found_by_lookup(fp, others, boilerplate_of(fp, df, self.max_sentence_df),
                                         self.lookup_keys, contract)
            existing = self.docs.get(q.id) if q.id not in exclude else None
            results.append(LookupResult(existing, candidates, sentence_df=df))
        return results

    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        self.docs.update((d.id, d) for d in docs)
        return {}

    def require_settings(self, config: Mapping[str, Any]) -> None:
        if self.config is None:
            self.config = dict(config)
        elif self.config != dict(config):
            raise ValueError("these fingerprints were made with other settings")

    def __len__(self) -> int:
        return len(self.docs)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """Site-template reprints of short texts (boilerplate lines held by many documents) and articles with reprints
    cut short or wrapped in a site's lines."""
    records = templated_crawl(5, n=500)  # (each site line on ~80 reprints: boilerplate)
    arts = [a for a in chinese_articles() if 600 <= len(a) <= 2000][:30]
    records += [{"id": f"a{i}", "content": a} for i, a in enumerate(arts)]
    records += [{"id": f"a{i}-cut", "content": a[: len(a) * 2 // 3]} for i, a in enumerate(arts[:10])]
    records += [{"id": f"a{i}-site", "content": f"本网讯\n{a}\n（责任编辑：王芳）"} for i, a in enumerate(arts[10:20])]
    path = tmp_path_factory.mktemp("own") / "crawl.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def _clusters(index, crawl, tmp_path, name: str) -> dict[str, tuple[str, str | None]]:
    engine = DedupEngine.for_run(index, Fingerprinter(), DefaultRule.for_run(recheck=False), recheck=False,
                                 batch_size=40)
    report = tmp_path / f"{name}.jsonl"
    with report.open("w") as out:
        run_dedup([str(crawl)], engine, report=out, dead_letters=tmp_path / f"{name}-dead.jsonl")
    return {r["id"]: (r["cluster"], r["duplicate_of"]) for r in map(json.loads, report.read_text().splitlines())}


def test_a_backend_written_from_the_interface_alone_gives_the_embedded_indexs_clusters(crawl, tmp_path):
    own = DictIndex()
    assert isinstance(own, FingerprintIndex)
    got = _clusters(own, crawl, tmp_path, "own")
    want = _clusters(MemoryIndex(), crawl, tmp_path, "memory")
    assert len(got) == len(own) == 500 + 50
    assert sum(dup is not None for _, dup in want.values()) >= 250  # (the reprints found: something to miss)
    assert got == want


def open_dict_index(url: str, index: str) -> DictIndex:
    """The plug-in's ``open(url, index)`` (entry point ``dict`` in the group ``es_simhash.backends``)."""
    return DictIndex()


@pytest.fixture
def with_plugin(tmp_path):
    """The environment of a process in which a package registers the dict index as the backend of ``dict://``: its
    distribution's metadata on the path, as ``pip install`` leaves it."""
    site = tmp_path / "site"
    info = site / "own_dict_backend-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: own-dict-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[es_simhash.backends]\ndict = test_own_backend:open_dict_index\n")
    tests = Path(__file__).parent
    path = os.pathsep.join([str(site), str(tests), str(tests.parent / "bench"), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, ES_URL="dict://user:s3cret-pw@store/0")


def _cli(*args, env, cwd):
    run = subprocess.run([sys.executable, "-m", "es_simhash", *map(str, args)], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=600)
    return run.returncode, run.stdout, run.stderr


def test_a_backend_of_ones_own_plugs_into_the_command_line_by_its_urls_scheme(crawl, tmp_path, with_plugin):
    """A package registering the dict index under ``dict://`` makes `index` run on it with no change to the command
    line: the clusters the embedded index gives (decided on arrival: a dict cannot rewrite what it stored, so the
    run cannot take its decisions again). The commands that need Elasticsearch or OpenSearch, a run that would recheck
    into an index that cannot rewrite (exit 2), and a scheme nobody serves are each one line (a URL that cannot be used:
    exit 1, as any), the URL's password never shown."""
    env = with_plugin
    code, _, err = _cli("index", crawl, "--index", "crawl", "--no-recheck", "--report", tmp_path / "own.jsonl",
                        "--no-progress", env=env, cwd=tmp_path)
    assert code == 0, err
    lines = (tmp_path / "own.jsonl").read_text().splitlines()
    got = {r["id"]: (r["cluster"], r["duplicate_of"]) for r in map(json.loads, lines)}
    want = _clusters(MemoryIndex(), crawl, tmp_path, "memory")  # (the embedded index's decisions on arrival)
    assert len(got) == 550 and sum(dup is not None for _, dup in want.values()) >= 250
    assert got == want

    code, out, err = _cli("check", "--index", "crawl", "-", env=env, cwd=tmp_path)  # (a new process: nothing stored)
    assert (code, out) == (0, "") and "0 near duplicates" in err

    refusals = [
        (("index", crawl, "--index", "crawl2", "--no-progress"), 2, "--no-recheck"),
        (("repair", "--index", "crawl"), 1, "serves only index and check"),
        (("search", "--index", "crawl", "新闻"), 1, "serves only index and check"),
        (("index", crawl, "--index", "crawl3", "--es-url", "nosuch://user:s3cret-pw@h/0"), 1, "plug-ins: dict://"),
        (("clusters", "--index", "crawl", "--es-url", "nosuch://user:s3cret-pw@h/0"), 1, "no installed backend"),
    ]
    for args, exit_code, says in refusals:
        code, out, err = _cli(*args, env=env, cwd=tmp_path)
        assert code == exit_code and says in err and len(err.strip().splitlines()) == 1, (args, err)
        assert "--es-url" in err and "s3cret" not in err + out
