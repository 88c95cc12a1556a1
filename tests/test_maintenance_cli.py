"""`es-simhash delete`, `repair` and `migrate` against a real node, as a user runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import es_simhash
from es_simhash.fingerprint import FINGERPRINT_VERSION, Fingerprinter
from support import chinese_articles, english_articles, popcount_reference, reference_simhash, run_cli


def cli(*args, es_url: str, cwd, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, es_url=es_url, cwd=cwd, stdin=stdin if stdin is not None else b"")


def content_order(texts: dict[str, str]) -> list[str]:
    """The ids of ``texts`` (one cluster's) in the order a set run (``index`` into a new index, ``migrate``) decides
    them, a function of the records alone (``index.base.precedence_key``: content hash, then id): the first is
    the cluster's canonical, and the documents arrive in this order."""
    fingerprinter = Fingerprinter()
    return sorted(texts, key=lambda i: (fingerprinter.fingerprint(texts[i]).content_hash, i))


def texts_of(path: Path, *ids: str) -> dict[str, str]:
    """The texts of ``ids`` in the crawl file ``path``."""
    lines = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    return {r["id"]: r["content"] for r in lines if r["id"] in ids}


def index_templates_without_recheck(es_url: str, index: str, tmp_path: Path) -> Path:
    """A crawl of short texts inside site templates (seed 5, 1,600 records) indexed with --no-recheck: decisions as
    made on arrival, before the templates were known (what repair takes again). Returns the input's path."""
    from support import templated_crawl

    path = tmp_path / "templated.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in templated_crawl(5, 1600)),
                    encoding="utf-8")
    res = cli("index", path, "--index", index, "--no-progress", "--no-recheck", es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    return path


def raw_state(client, index: str) -> dict[str, dict]:
    client.indices.refresh(index=index)
    hits = client.search(index=index, size=10_000, query={"match_all": {}},
                         source=["dup_cluster", "dup_of", "is_canonical", "fingerprint_version", "content"])
    return {h["_id"]: h["_source"] for h in hits["hits"]["hits"]}


def assert_consistent(state: dict[str, dict]) -> None:
    for doc_id, s in state.items():
        cluster = s["dup_cluster"]
        assert cluster in state and state[cluster]["dup_cluster"] == cluster, f"{doc_id}: cluster {cluster} broken"
        assert s["dup_of"] is None or s["dup_of"] in state, f"{doc_id}: duplicate of missing {s['dup_of']}"
        assert s["is_canonical"] == (s["dup_of"] is None) == (cluster == doc_id), (doc_id, s)


@pytest.fixture
def crawl(tmp_path):
    """20 Chinese and 10 English articles, and two reprints of each of the first two Chinese ones."""
    zh, en = chinese_articles()[:20], english_articles()[:10]
    lines = [{"id": f"zh{i}", "content": t, "title": f"标题{i}"} for i, t in enumerate(zh)]
    lines += [{"id": f"en{i}", "content": t} for i, t in enumerate(en)]
    for i in range(2):
        lines.append({"id": f"zh{i}-reprint", "content": zh[i][:150] + "，" + zh[i][150:]})
        lines.append({"id": f"zh{i}-repost", "content": "转载：" + zh[i]})
    path = tmp_path / "crawl.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path, len(lines)


def test_delete_a_canonical_from_the_command_line(es_url, es_index_name, client, crawl, tmp_path):
    path, n = crawl
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
    before = raw_state(client, es_index_name)
    # (the cluster is headed by its first member in content order, and its members arrive in that order)
    head, second, third = content_order(texts_of(path, "zh0", "zh0-reprint", "zh0-repost"))
    assert before[second]["dup_cluster"] == before[third]["dup_cluster"] == head
    (tmp_path / "ids.txt").write_text(f"# taken down\n{head}\n\nno-such-page\n")
    res = cli("delete", "--ids", "ids.txt", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    changes = [json.loads(x) for x in res.stdout.decode().splitlines()]
    assert {c["id"]: c["change"] for c in changes} == {head: "deleted", second: "re-decided", third: "re-decided"}
    assert "deleted 1 of 2 documents" in res.stderr.decode() and "1 not found" in res.stderr.decode()
    after = raw_state(client, es_index_name)
    assert len(after) == n - 1 and head not in after
    assert_consistent(after)
    # the earliest remaining member is the new canonical
    assert after[second]["dup_cluster"] == second and after[third]["dup_of"] == second
    # and nothing else moved
    assert {i: s["dup_cluster"] for i, s in after.items() if not i.startswith("zh0")} == {
        i: s["dup_cluster"] for i, s in before.items() if not i.startswith("zh0")}
    # what users see: the deleted page nowhere, the cluster's size true
    top = cli("clusters", "--index", es_index_name, "--json", "--limit", "100", es_url=es_url, cwd=tmp_path)
    sizes = {r["cluster"]: r["size"] for r in map(json.loads, top.stdout.decode().splitlines())}
    zh1 = content_order(texts_of(path, "zh1", "zh1-reprint", "zh1-repost"))[0]
    assert head not in sizes and sizes[second] == 2 and sizes[zh1] == 3
    found = cli("search", "转载", "--index", es_index_name, "--json", "--all", "-n", "100", es_url=es_url,
                cwd=tmp_path)
    assert found.returncode == 0 and head not in {json.loads(x)["id"] for x in found.stdout.decode().splitlines()}


def test_delete_needs_ids_and_an_existing_index(es_url, es_index_name, tmp_path):
    res = cli("delete", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 2 and "no ids given" in res.stderr.decode()
    res = cli("delete", "x", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 3 and f"index '{es_index_name}' does not exist" in res.stderr.decode()


def test_repair_an_index_broken_through_the_elasticsearch_api(es_url, es_index_name, client, crawl, tmp_path):
    path, n = crawl
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
    good = {i: s["dup_cluster"] for i, s in raw_state(client, es_index_name).items()}
    # (each cluster is headed by its first member in content order: zh1's by zh1, its reprints arriving after it)
    assert content_order(texts_of(path, "zh1", "zh1-reprint", "zh1-repost")) == ["zh1", "zh1-reprint", "zh1-repost"]
    assert good["zh1-reprint"] == good["zh1-repost"] == "zh1"

    def overwrite(doc_id, **fields):
        src = client.get(index=es_index_name, id=doc_id)["_source"]
        src.update(fields)
        client.index(index=es_index_name, id=doc_id, document=src, refresh=True)

    overwrite("zh0-reprint", dup_cluster="zh0-reprint", dup_of=None, is_canonical=True)  # a second canonical
    overwrite("zh1-reprint", dup_cluster="deleted-page", dup_of="deleted-page")          # points at nothing
    overwrite("zh1-repost", dup_cluster="zh0-reprint", dup_of="zh1")                      # cluster not canonical
    client.delete(index=es_index_name, id="zh1", refresh=True)                            # a canonical gone
    broken = raw_state(client, es_index_name)
    dry = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert dry.returncode == 0 and dry.stdout and "would change" in dry.stderr.decode(), dry.stderr.decode()
    assert raw_state(client, es_index_name) == broken
    res = cli("repair", "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    fixed = raw_state(client, es_index_name)
    assert_consistent(fixed)
    assert fixed["zh0-reprint"]["dup_cluster"] == good["zh0-reprint"] == content_order(
        texts_of(path, "zh0", "zh0-reprint", "zh0-repost"))[0]
    # zh1 is gone: its two reprints form one cluster again, the earlier one canonical
    assert fixed["zh1-reprint"]["dup_cluster"] == fixed["zh1-repost"]["dup_cluster"] == "zh1-reprint"
    assert {i: s["dup_cluster"] for i, s in fixed.items() if not i.startswith("zh1")} == {
        i: c for i, c in good.items() if not i.startswith("zh1")}
    again = cli("repair", "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == b"" and "nothing to fix" in again.stderr.decode()
    assert raw_state(client, es_index_name) == fixed


def test_a_dry_run_is_the_repair_without_its_writes_and_an_index_built_with_defaults_needs_none(
        es_url, es_index_name, client, tmp_path):
    """On a crawl of short texts inside site templates indexed with --no-recheck (decisions as made on arrival,
    before the templates were known), `repair --dry-run` prints exactly the lines and counts `repair` then prints
    (every change once), and leaves the index as it was; after the repair, and on an index `index` built with its
    defaults, a dry run finds nothing."""
    path = index_templates_without_recheck(es_url, es_index_name, tmp_path)
    before = raw_state(client, es_index_name)
    dry = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert dry.returncode == 0 and raw_state(client, es_index_name) == before
    real = cli("repair", "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert real.returncode == 0
    lines = real.stdout.decode().splitlines()
    assert len(lines) >= 5 and dry.stdout == real.stdout  # (the same changes, in the same order)
    assert len({json.loads(x)["id"] + json.loads(x)["change"] for x in lines}) == len(lines)  # (each once)
    assert dry.stderr.decode().replace("would change", "changed") == real.stderr.decode()
    assert_consistent(raw_state(client, es_index_name))
    again = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert again.stdout == b"" and "nothing to fix" in again.stderr.decode()
    built = f"{es_index_name}-defaults"
    try:
        assert cli("index", path, "--index", built, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
        fresh = cli("repair", "--index", built, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
        assert fresh.stdout == b"" and "nothing to fix" in fresh.stderr.decode(), fresh.stdout.decode()[:500]
    finally:
        client.options(ignore_status=404).indices.delete(index=built)


def test_a_repair_right_after_a_delete_moves_nothing_to_another_cluster(es_url, es_index_name, client, tmp_path):
    """`delete` of a canonical whose cluster holds short texts inside a site's template (a crawl indexed with the
    defaults: decisions rechecked): its members are decided again with the rule repair checks, so a repair right
    after moves no document into another cluster (it may point a member at another member of its own cluster:
    delete decides the members by arrival, repair's last step the whole index as a set), and a second repair
    changes nothing. r693 (o693's text in the template) ends a duplicate of o693, not of r729 (the
    deleted text in the template): the template's lines alone do not make a duplicate. (The texts of this cluster
    are weather forecast headings that differ in their dates; r729 may stay with them through another forecast
    in its own footer, r578, as the documents are decided in content order.)"""
    from support import templated_crawl

    path = tmp_path / "templated.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in templated_crawl(5, 1600)),
                    encoding="utf-8")
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
    before = raw_state(client, es_index_name)
    # (o729's cluster: short texts, their reprints in the template, and a reprint of o729 itself)
    assert {i for i, s in before.items() if s["dup_cluster"] == "o729"} >= {"o729", "o693", "r693", "r729"}
    res = cli("delete", "o729", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    changed = {json.loads(x)["id"] for x in res.stdout.decode().splitlines()}
    assert {"o729", "o693", "r693", "r729"} <= changed
    after = raw_state(client, es_index_name)
    assert_consistent(after)
    assert after["r693"]["dup_cluster"] == after["o693"]["dup_cluster"] and after["r693"]["dup_of"] == "o693"
    assert after["r729"]["dup_of"] != "r693" and after["r693"]["dup_of"] != "r729"
    real = cli("repair", "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert real.returncode == 0, real.stderr.decode()
    moved = [c for c in map(json.loads, real.stdout.decode().splitlines()) if c["cluster"] != c["was_cluster"]]
    assert not moved, moved
    dry = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert dry.returncode == 0 and dry.stdout == b"", dry.stdout.decode()
    assert "nothing to fix" in dry.stderr.decode()


def _counts(stderr: bytes, verb: str) -> str:
    """The counts of a repair's summary line (``checked N documents in 'X': VERB COUNTS``)."""
    line = stderr.decode().strip().splitlines()[-1]
    assert f": {verb} " in line, line
    return line.split(f": {verb} ", 1)[1]


def test_an_interrupted_dry_run_says_it_changed_nothing_and_goes_on_as_a_dry_run(es_url, es_index_name, client,
                                                                                 tmp_path):
    """Ctrl-C during `repair --dry-run` (a real process, stopped once it has printed a change): the line says
    nothing was changed and what it found so far (the lines it printed, the start of the whole dry run's), gives
    the command that goes on with the dry run, and says the real repair starts from the top; doing both fixes
    all that the whole dry run reported."""
    index_templates_without_recheck(es_url, es_index_name, tmp_path)
    # canonicals deleted through the API (another tool): members that point at missing documents, in every page
    # of the scan (what repair fixes page by page; the rest of the decisions are its last step's, the set's)
    state = raw_state(client, es_index_name)
    heads = sorted({s["dup_cluster"] for i, s in state.items() if s["dup_cluster"] != i})
    for head in heads[::max(1, len(heads) // 40)]:
        client.delete(index=es_index_name, id=head)
    before = raw_state(client, es_index_name)
    whole = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr.decode()
    env = {**os.environ, "ES_URL": es_url, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(es_simhash.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")]))}
    for _ in range(3):  # (a dry run that ends between its first change and the signal, on a busy machine: again)
        with open(tmp_path / "dry.jsonl", "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "es_simhash", "repair", "--index", es_index_name,
                                     "--dry-run", "--no-progress"], cwd=tmp_path, env=env, stdout=out,
                                    stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            while not (tmp_path / "dry.jsonl").stat().st_size:  # (printed once the page of the first change is checked)
                assert proc.poll() is None and time.monotonic() < deadline, \
                    "the dry run ended before it printed a change"
                time.sleep(0.01)
            proc.send_signal(signal.SIGINT)
            err = proc.communicate(timeout=120)[1].decode()
        if not (proc.returncode == 0 and (tmp_path / "dry.jsonl").read_bytes() == whole.stdout):
            break
    assert proc.returncode == 130, err
    printed = (tmp_path / "dry.jsonl").read_bytes()
    assert whole.stdout.startswith(printed) and len(printed) < len(whole.stdout)
    found = Counter(json.loads(x)["change"] for x in printed.decode().splitlines())
    so_far = ", ".join(f"{n:,} {why}" for why, n in sorted(found.items()))
    assert re.search(r"^es-simhash: error: dry run interrupted after checking [\d,]+ documents: nothing was changed "
                     rf"\(so far it would change {so_far}\); ", err), err
    assert "is fixed" not in err and raw_state(client, es_index_name) == before
    go_on = re.search(r"run `(es-simhash repair --index \S+ --dry-run --after \S+)` to go on with the dry run;", err)
    assert go_on, err
    assert err.rstrip().endswith("a real repair must start from the top, as the dry run fixed nothing: "
                                 f"`es-simhash repair --index {es_index_name}`")
    more = cli(*go_on.group(1).split()[1:], "--no-progress", es_url=es_url, cwd=tmp_path)
    assert more.returncode == 0 and "would change" in more.stderr.decode(), more.stderr.decode()
    assert raw_state(client, es_index_name) == before
    real = cli("repair", "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert real.returncode == 0 and _counts(real.stderr, "changed") == _counts(whole.stderr, "would change")
    again = cli("repair", "--index", es_index_name, "--dry-run", "--no-progress", es_url=es_url, cwd=tmp_path)
    assert "nothing to fix" in again.stderr.decode()


def _version2_index(client, name: str, docs: list[tuple[str, str | None]]) -> None:
    """An index as release 0.x with fingerprint version 2 left it: its config in ``_meta``, the four segment
    fields and no lookup keys, no ``arrival``; the clusters as that release decided them (here: all canonical)."""
    from es_simhash.index.elastic import index_template

    template = index_template()["template"]
    mappings = template["mappings"]
    for field in ("arrival", "lookup_keys"):
        mappings["properties"].pop(field)
    mappings["_source"] = {}
    mappings["_meta"] = {"managed_by": "es-simhash", "fingerprint": {"fingerprint_version": 2, "idf": "0"}}
    client.indices.create(index=name, mappings=mappings, settings=template["settings"])
    for i, (doc_id, text) in enumerate(docs):
        src = {"doc_id": doc_id, "fingerprint_version": 2, "simhash": f"{i:016x}", "sentences": [],
               "n_features": 1, "n_chars": 1, "short": False, "seg0": "0000", "dup_cluster": doc_id, "dup_of": None,
               "is_canonical": True, "dup_reason": "canonical", "indexed_at": f"2025-01-01T00:00:{i:02d}Z",
               "record": {"source": "old-crawler"}}
        if text is not None:
            src["content"] = text
        client.index(index=name, id=doc_id, document=src)
    client.indices.refresh(index=name)


def test_migrate_a_version_2_index_and_switch_an_alias(es_url, es_index_name, client, tmp_path):
    zh = chinese_articles()[:12]
    docs = [(f"p{i}", t) for i, t in enumerate(zh)]
    docs += [("p0-copy", "转载：" + zh[0]), ("lost-text", None), ("p1-copy", zh[1] + "（完）")]
    old, new, alias = f"{es_index_name}-v2", f"{es_index_name}-v3", f"{es_index_name}-live"
    try:
        _version2_index(client, old, docs)
        refused = cli("index", "-", "--index", old, "--no-progress", es_url=es_url, cwd=tmp_path,
                      stdin=json.dumps({"id": "x", "content": zh[5]}).encode())
        assert refused.returncode == 3 and "other settings" in refused.stderr.decode()  # why migrate exists
        res = cli("migrate", "--from", old, "--to", new, "--alias", alias, "--batch-size", "4", "--report",
                  "r.jsonl", "--no-progress", es_url=es_url, cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        err = res.stderr.decode()
        assert "read 15  kept 12  duplicates 2  dead letters 1" in err and f"alias '{alias}' now points" in err
        letters = [json.loads(x) for x in (tmp_path / "dead-letters.jsonl").read_text().splitlines()]
        assert [(d["reason"], d["excerpt"]) for d in letters] == [("no stored text to fingerprint again",
                                                                   "lost-text")]
        state = raw_state(client, new)
        assert len(state) == 14 and {s["fingerprint_version"] for s in state.values()} == {FINGERPRINT_VERSION}
        assert_consistent(state)
        # (each cluster is headed by its first member in content order, the other a duplicate of it)
        for pair in ({"p0": zh[0], "p0-copy": "转载：" + zh[0]}, {"p1": zh[1], "p1-copy": zh[1] + "（完）"}):
            first, then = content_order(pair)
            assert state[first]["dup_of"] is None and state[then]["dup_of"] == first
        assert client.get(index=new, id="p3")["_source"]["record"] == {"source": "old-crawler"}
        assert sorted(client.indices.get_alias(name=alias)) == [new]
        assert client.count(index=old)["count"] == 15  # the old index is left as it was
        # running it again changes nothing (every document is already there with the same content)
        again = cli("migrate", "--from", old, "--to", new, "--no-progress", es_url=es_url, cwd=tmp_path)
        assert again.returncode == 0 and "14 were already indexed" in again.stderr.decode(), again.stderr.decode()
    finally:
        for name in (old, new):
            client.indices.delete(index=name, ignore_unavailable=True)
            client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def test_an_interrupted_migration_goes_on_from_its_checkpoint(es_url, es_index_name, client, fingerprinter, tmp_path):
    """Python API: a migration stopped after its second batch (Ctrl-C) and run again with its checkpoint ends with
    every document once, the counts of one whole run, and each document reported once."""
    from es_simhash.pipeline import migrate as maintenance
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.records import Document
    from es_simhash.index.elastic import ElasticIndex, ensure_index
    from es_simhash.pipeline import Checkpoint

    zh = chinese_articles()[20:40]
    old, new = f"{es_index_name}-old", f"{es_index_name}-new"
    try:
        ensure_index(client, old, fingerprinter.config)
        docs = [Document(f"p{i}", t) for i, t in enumerate(zh)] + [Document("p3-copy", "转载：" + zh[3])]
        list(DedupEngine(ElasticIndex(client, old), fingerprinter, batch_size=7).process(docs))
        ensure_index(client, new, fingerprinter.config)
        source = ElasticIndex(client, old)
        inputs = [maintenance.migration_input(source)]
        cp_path, report_path = tmp_path / "m.checkpoint.json", tmp_path / "m.jsonl"

        def engine():
            return DedupEngine(ElasticIndex(client, new), fingerprinter, batch_size=5)

        def stop_after_two(done: int, summary) -> None:
            if summary.read >= 10:
                raise KeyboardInterrupt

        with open(report_path, "w", encoding="utf-8") as report, pytest.raises(KeyboardInterrupt):
            maintenance.migrate(source, engine(), checkpoint=Checkpoint(cp_path, inputs), report=report,
                                dead_letters=str(tmp_path / "dead.jsonl"), on_progress=stop_after_two)
        assert Checkpoint.load(cp_path, inputs).summary.read == 10
        with open(report_path, "a", encoding="utf-8") as report:
            summary = maintenance.migrate(source, engine(), checkpoint=Checkpoint.load(cp_path, inputs),
                                          report=report, dead_letters=str(tmp_path / "dead.jsonl"))
        assert (summary.read, summary.kept, summary.duplicates, summary.already_indexed) == (21, 20, 1, 0)
        reported = [json.loads(x)["id"] for x in report_path.read_text().splitlines()]
        assert sorted(reported) == sorted(d.id for d in docs)
        state = raw_state(client, new)
        assert len(state) == 21 and state["p3-copy"]["dup_of"] == "p3"
        assert not cp_path.exists()  # a finished run removes its checkpoint
    finally:
        for name in (old, new):
            client.indices.delete(index=name, ignore_unavailable=True)
            client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def test_explain_two_stored_documents_by_id(es_url, es_index_name, client, crawl, tmp_path):
    path, _ = crawl
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
    res = cli("explain", "zh0-repost", "zh0", "--index", es_index_name, "--json", es_url=es_url, cwd=tmp_path)
    got = json.loads(res.stdout)
    assert res.returncode == 0 and got["duplicate"] is True, res.stderr.decode()
    # the distance is the one the independent reference SimHash gives the two stored texts (both long articles:
    # within k = 3 bits a simhash duplicate)
    texts = {r["id"]: r["content"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    want = popcount_reference(reference_simhash(texts["zh0-repost"]) ^ reference_simhash(texts["zh0"]))
    assert got["distance"] == want <= 3 and got["reason"] == "simhash"
    first, then = content_order({i: texts[i] for i in ("zh0", "zh0-repost")})
    assert raw_state(client, es_index_name)[then]["dup_of"] == first  # (the first in content order heads it)
    missing = cli("explain", "zh0", "nope", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert missing.returncode == 1 and "no document 'nope'" in missing.stderr.decode()


def test_check_and_explain_refuse_another_idf_table_than_the_index_was_built_with(es_url, es_index_name, crawl,
                                                                                   tmp_path):
    """``check`` and ``explain --index`` with an IDF table the index was not built with would compare fingerprints
    that are not comparable (as ``index`` into it refuses to): one line naming both tables' checksums and what to
    do; with the index's own table they answer."""
    import re

    path, _ = crawl
    (tmp_path / "my-idf.txt").write_text("中国 1.5\n发展 2.5\n经济 3.0\n人民 1.0\n", encoding="utf-8")
    assert cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path).returncode == 0
    text = {r["id"]: r["content"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}["zh0"]
    (tmp_path / "zh0.txt").write_text(text, encoding="utf-8")
    for args in (["check", "--file", "zh0.txt"], ["explain", "zh0.txt", "zh0"]):
        res = cli(*args, "--index", es_index_name, "--idf", "my-idf.txt", es_url=es_url, cwd=tmp_path)
        err = res.stderr.decode()
        lines = err.splitlines()
        assert res.returncode == 3 and len(lines) == 1 and "Traceback" not in err, (args, err)
        assert f"index {es_index_name!r} holds fingerprints made with other settings" in lines[0]
        built, now = re.search(r'IDF table checksum "(\w+)" \(this run: "(\w+)"\)', lines[0]).groups()
        assert built != now and "--idf" in lines[0] and not res.stdout
    found = cli("check", "--file", "zh0.txt", "--index", es_index_name, es_url=es_url, cwd=tmp_path)
    assert found.returncode == 0 and json.loads(found.stdout.splitlines()[0])["id"] == "zh0"
