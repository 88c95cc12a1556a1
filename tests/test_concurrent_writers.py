"""Several `es-simhash index` processes writing into one Elasticsearch index at once end with the duplicate pairs of
one sequential run, also when one of them is killed (SIGKILL) mid-batch and run again.

The corpus: ~600 People's Daily and ~300 BBC News articles that are no near duplicates of each other, plus ~200
planted near copies (a few characters or words edited, a sentence dropped, or a header and footer line added;
built with a seeded random). It is cut into interleaved thirds (line i goes to writer i % 3) such that an original
and each of its copies are always in different writers' inputs, a copy often at about the same place in its input
as its original in another (both are then decided at about the same time).

"Pairs" are the unordered pairs of documents in one cluster (same ``dup_cluster``), read from the index after the
run. A missed pair is one a sequential run finds and the concurrent writers did not: two writers each looked up
their document before the other's was visible, so both stayed canonical.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations, permutations
from pathlib import Path

import pytest

from es_simhash import Fingerprinter
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document
from support import chinese_articles, english_articles

import concurrent_writers  # noqa: E402  (bench/concurrent_writers.py, on the path through support)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SEED = 20240601
WRITERS = 3
N_ZH, N_EN = 600, 300  # originals
N_ONE_COPY, N_TWO_COPIES = 170, 15  # originals with one planted copy / with two (a cluster over all three writers)
MIN_CHARS, MAX_CHARS = 300, 2500  # long enough to be reliably found, short enough to fingerprint quickly
NEAR = 0.5  # share of copies put within a few lines of their original's place (in another writer's input)
FIELDS = ["doc_id", "dup_cluster", "dup_of", "is_canonical", "dup_reason", "dup_distance", "simhash", "arrival"]
TIMEOUT = 300


# -- the corpus ------------------------------------------------------------------------------------------------
_SENTENCE = re.compile(r"[^。！？!?.\n]+[。！？!?.]*\s*")


def near_copy(text: str, kind: str, n: int, rng: random.Random, zh: bool) -> str:
    """A near copy of ``text``: ``edit`` (2-4 characters or words replaced in its middle), ``drop`` (one sentence of
    its middle left out) or ``wrap`` (a header and a footer line, different for each copy ``n``)."""
    if kind == "edit":
        if zh:
            chars = list(text)
            for _ in range(rng.randint(2, 4)):
                chars[rng.randrange(len(chars) // 5, 4 * len(chars) // 5)] = rng.choice("的了和在是")
            return "".join(chars)
        words = text.split(" ")
        for _ in range(rng.randint(2, 4)):
            words[rng.randrange(len(words) // 5, 4 * len(words) // 5)] = rng.choice(["the", "new", "said", "also"])
        return " ".join(words)
    if kind == "drop":
        sentences = _SENTENCE.findall(text)
        if len(sentences) >= 5:
            del sentences[rng.randrange(2, len(sentences) - 2)]
            return "".join(sentences)
    if zh:
        return f"【转载】第{n}号新闻网 {1 + n % 12}月{1 + n % 28}日\n{text}\n（责任编辑：编辑{n}号）"
    return f"Republished by news site number {n} on day {1 + n % 28}.\n\n{text}\n\nEditor on duty: desk {n}"


def _clusters(docs: list[tuple[str, str]], fingerprinter: Fingerprinter) -> dict[str, str]:
    """Id -> cluster, from the embedded engine (the same decisions as Elasticsearch's, sequentially)."""
    engine = DedupEngine(None, fingerprinter, batch_size=250)
    return {r.id: r.cluster for r in engine.process([Document(i, t) for i, t in docs])}


def pairs_of(cluster_of: dict[str, str]) -> set[tuple[str, str]]:
    """The unordered pairs (a < b) of documents in the same cluster."""
    members: dict[str, list[str]] = defaultdict(list)
    for doc_id, cluster in cluster_of.items():
        members[cluster].append(doc_id)
    return {p for ids in members.values() for p in combinations(sorted(ids), 2)}


def build_corpus(fingerprinter: Fingerprinter) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """(documents in corpus order, families): a family is an original and its planted copies. Only unambiguous
    data is kept: originals that no other original duplicates, and copies whose family comes out as exactly its
    own pairs, in forward and in reverse order, with the embedded engine."""
    rng = random.Random(SEED)
    zh = [a for a in chinese_articles() if MIN_CHARS <= len(a) <= MAX_CHARS]
    en = [a for a in english_articles() if MIN_CHARS <= len(a) <= MAX_CHARS]
    originals = [(f"zh{i:04d}", a) for i, a in sorted(rng.sample(list(enumerate(zh)), N_ZH))]
    originals += [(f"en{i:04d}", a) for i, a in sorted(rng.sample(list(enumerate(en)), N_EN))]
    # the corpora's own near duplicates (reprinted articles, two stories of one event quoting the same sentences)
    # would make clusters whose pairs depend on the order: an original in a cluster in either order is left out
    alone = set()
    for order in (originals, originals[::-1]):
        cluster_of = _clusters(order, fingerprinter)
        sizes: dict[str, int] = defaultdict(int)
        for c in cluster_of.values():
            sizes[c] += 1
        alone.add(frozenset(i for i, _ in order if sizes[cluster_of[i]] == 1))
    originals = [(i, t) for i, t in originals if all(i in a for a in alone)]
    text_of = dict(originals)
    chosen = rng.sample([i for i, _ in originals], N_ONE_COPY + N_TWO_COPIES)
    families: list[list[str]] = []
    copies: list[tuple[str, str]] = []
    n = 0
    for j, orig in enumerate(chosen):
        family = [orig]
        for c in range(1 if j < N_ONE_COPY else 2):
            kind = ("edit", "drop", "wrap")[n % 3]
            copy_id = f"{orig}-copy{c}-{kind}"
            copies.append((copy_id, near_copy(text_of[orig], kind, n, rng, orig.startswith("zh"))))
            family.append(copy_id)
            n += 1
        families.append(family)
    # concurrent writers decide a family in any order of its members: a family of three whose members do not come
    # out as one cluster in each of the six orders (two copies too far apart to pair without their original) has
    # no single sequential answer and is left out
    copy_text = dict(copies)
    families = [f for f in families if len(f) < 3 or all(
        len(set(_clusters([(x, text_of.get(x) or copy_text[x]) for x in order], fingerprinter).values())) == 1
        for order in permutations(f))]
    for _ in range(4):  # drop the copies of families that do not come out as exactly their own pairs
        docs = originals + [c for c in copies if any(c[0] in f for f in families)]
        expected = {p for f in families for p in combinations(sorted(f), 2)}
        forward = pairs_of(_clusters(docs, fingerprinter))
        reverse = pairs_of(_clusters(docs[::-1], fingerprinter))
        bad = {x for p in (forward ^ expected) | (reverse ^ expected) for x in p}
        if not bad:
            return docs, families
        families = [f for f in families if not bad.intersection(f)]
    raise AssertionError("the planted copies do not settle into unambiguous clusters")


def layout(docs: list[tuple[str, str]], families: list[list[str]], rng: random.Random) -> list[list[str]]:
    """The ids of each writer's input: the documents dealt round-robin after a shuffle, every copy in another
    writer's input than the rest of its family (half of them near its original's place there), equal lengths
    (+-1, longest first) so that corpus line i is line i // WRITERS of writer i % WRITERS."""
    family_of = {x: f for f in families for x in f}
    copies = [x for f in families for x in f[1:]]
    rest = [i for i, _ in docs if i not in copies]
    rng.shuffle(rest)
    parts: list[list[str]] = [rest[w::WRITERS] for w in range(WRITERS)]
    rng.shuffle(copies)
    for c in copies:
        taken = {w for w in range(WRITERS) for x in family_of[c] if x in parts[w]}
        free = [w for w in range(WRITERS) if w not in taken]
        w = min(free, key=lambda k: (len(parts[k]), rng.random()))
        orig = family_of[c][0]
        where = next(parts[k].index(orig) for k in range(WRITERS) if orig in parts[k])
        at = where + rng.randint(-3, 3) if rng.random() < NEAR else rng.randrange(len(parts[w]) + 1)
        parts[w].insert(max(0, min(at, len(parts[w]))), c)
    while max(map(len, parts)) - min(map(len, parts)) > 1:  # move documents of no family to balance
        long_, short = max(parts, key=len), min(parts, key=len)
        single = next(x for x in reversed(long_) if x not in family_of)
        long_.remove(single)
        short.insert(len(short) // 2, single)
    return sorted(parts, key=len, reverse=True)


@dataclass(repr=False)
class Corpus:
    dir: Path
    path: Path  # every document, line i from writer i % WRITERS
    reverse_path: Path
    parts: list[Path]
    ids: list[str]
    writer_of: dict[str, int]
    families: list[list[str]]

    def __repr__(self) -> str:
        return f"Corpus({len(self.ids)} documents, {len(self.families)} families, in {self.dir})"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    docs, families = build_corpus(Fingerprinter())
    parts = layout(docs, families, random.Random(SEED + 1))
    text_of = dict(docs)
    order = [parts[i % WRITERS][i // WRITERS] for i in range(sum(map(len, parts)))]
    assert sorted(order) == sorted(text_of)
    d = tmp_path_factory.mktemp("concurrent")

    def write(path: Path, ids: list[str]) -> Path:
        path.write_text("".join(json.dumps({"id": i, "content": text_of[i]}, ensure_ascii=False) + "\n" for i in ids),
                        encoding="utf-8")
        return path

    part_paths = []
    write(d / "corpus.jsonl", order)
    write(d / "corpus-reversed.jsonl", order[::-1])
    all_lines = (d / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for w in range(WRITERS):  # interleaved thirds of the corpus file itself: line i goes to writer i % WRITERS
        p = d / f"part{w}.jsonl"
        p.write_text("".join(all_lines[w::WRITERS]), encoding="utf-8")
        assert [json.loads(x)["id"] for x in all_lines[w::WRITERS]] == parts[w]
        part_paths.append(p)
    writer_of = {x: w for w in range(WRITERS) for x in parts[w]}
    for f in families:
        assert len({writer_of[x] for x in f}) == len(f), f
    return Corpus(d, d / "corpus.jsonl", d / "corpus-reversed.jsonl", part_paths, order, writer_of, families)


# -- running and reading ---------------------------------------------------------------------------------------
def _env(es_url: str) -> dict[str, str]:
    path = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)
    return dict(os.environ, ES_URL=es_url, PYTHONPATH=path)


def index_command(path: Path, index: str, batch_size: int, name: str) -> list[str]:
    """The command line of one writer; its checkpoint, report and dead letters are its own (``name``)."""
    return [sys.executable, "-m", "es_simhash", "index", str(path), "--index", index, "--no-progress",
            "--batch-size", str(batch_size), "--workers", "0", "--checkpoint", f"{name}.checkpoint.json",
            "--report", f"{name}.report.jsonl", "--dead-letters", f"{name}.dead-letters.jsonl"]


def start(cmd: list[str], es_url: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(es_url), cwd=cwd)


def finish(proc: subprocess.Popen, what: str) -> str:
    try:
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err.decode("utf-8", "replace")
    assert proc.returncode == 0, f"{what} exited with {proc.returncode}:\n{err}"
    return err


def read_docs(client, index: str) -> dict[str, dict]:
    """Every document of ``index`` (id -> the fields of FIELDS)."""
    return concurrent_writers.read_docs(client, index, FIELDS)


def cluster_pairs(docs: dict[str, dict]) -> set[tuple[str, str]]:
    return pairs_of({i: d["dup_cluster"] for i, d in docs.items()})


def violations(docs: dict[str, dict], ids: list[str]) -> list[str]:
    """Structural invariants of the stored clusters, checked on the raw documents."""
    out = []
    if len(docs) != len(ids) or set(docs) != set(ids):
        missing, unknown = sorted(set(ids) - set(docs)), sorted(set(docs) - set(ids))
        out.append(f"{len(docs)} documents for {len(ids)} input lines (missing {missing[:5]}, unknown {unknown[:5]})")
    for i, d in sorted(docs.items()):
        cluster, of, canonical = d.get("dup_cluster"), d.get("dup_of"), d.get("is_canonical")
        if d.get("doc_id") != i:
            out.append(f"{i}: doc_id {d.get('doc_id')!r}")
        head = docs.get(cluster)
        if head is None:
            out.append(f"{i}: dup_cluster {cluster!r} is no document")
        elif not head.get("is_canonical") or head.get("dup_cluster") != cluster:
            out.append(f"{i}: dup_cluster {cluster!r} is not canonical (is_canonical {head.get('is_canonical')}, "
                       f"its dup_cluster {head.get('dup_cluster')!r})")
        if of is not None and of not in docs:
            out.append(f"{i}: dup_of {of!r} is no document")
        if not (canonical is (of is None) and canonical is (cluster == i)):
            out.append(f"{i}: is_canonical {canonical}, dup_of {of!r}, dup_cluster {cluster!r} disagree")
    return out


def explain(expected: set, got: set, docs: dict[str, dict], writer_of: dict[str, int], what: str) -> str:
    missed, extra = sorted(expected - got), sorted(got - expected)

    def doc(x: str) -> str:
        d = docs.get(x, {})
        return (f"{x} [writer {writer_of.get(x)}, dup_cluster {d.get('dup_cluster')}, dup_of {d.get('dup_of')}, "
                f"{d.get('dup_reason')}, arrival {d.get('arrival')}]")

    lines = [f"{what}: {len(missed)} missed pairs and {len(extra)} extra pairs, against the {len(expected)} pairs of "
             f"a sequential run"]
    lines += [f"  missed: {doc(a)} ~ {doc(b)}" for a, b in missed[:6]]
    lines += [f"  extra:  {doc(a)} ~ {doc(b)}" for a, b in extra[:6]]
    return "\n".join(lines)


def check(client, index: str, corpus: Corpus, expected: set, what: str) -> None:
    docs = read_docs(client, index)
    bad = violations(docs, corpus.ids)
    assert not bad, f"{what}: {len(bad)} invariant violations:\n  " + "\n  ".join(bad[:10])
    got = cluster_pairs(docs)
    if got != expected:
        pytest.fail(explain(expected, got, docs, corpus.writer_of, what), pytrace=False)


@pytest.fixture(scope="module")
def indexes(es_url):
    """Makes index names of this module's own, and deletes the indexes (and their templates) at the end."""
    from es_simhash.index.elastic import ConnectionSettings, connect

    client = connect(ConnectionSettings(url=es_url))
    names: list[str] = []

    def new(tag: str) -> str:
        names.append(f"test-concurrent-{tag}-{uuid.uuid4().hex[:8]}")
        return names[-1]

    yield new
    for name in names:
        client.options(ignore_status=404).indices.delete(index=name)
        client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


@dataclass(repr=False)
class Sequential:
    forward: set
    reverse: set
    forward_docs: dict
    reverse_docs: dict

    def __repr__(self) -> str:
        return f"Sequential({len(self.forward)} pairs forward, {len(self.reverse)} in reverse)"


@pytest.fixture(scope="module")
def sequential(corpus, es_url, indexes) -> Sequential:
    """One writer over the whole corpus, in corpus order and in reverse order."""
    from es_simhash.index.elastic import ConnectionSettings, connect

    client = connect(ConnectionSettings(url=es_url))
    found = []
    for tag, path in (("fwd", corpus.path), ("rev", corpus.reverse_path)):
        index = indexes(f"seq-{tag}")
        finish(start(index_command(path, index, 50, f"seq-{tag}"), es_url, corpus.dir), f"sequential run ({tag})")
        docs = read_docs(client, index)
        found.append((cluster_pairs(docs), docs))
    return Sequential(found[0][0], found[1][0], found[0][1], found[1][1])


# -- tests -----------------------------------------------------------------------------------------------------
def test_sequential_pairs_do_not_depend_on_the_order(corpus, sequential):
    """The precondition of the comparisons below: on this corpus, one writer finds the same pairs in either order
    (so concurrent writers, which interleave in some other order, must find exactly these), and they are the
    planted ones: each original with each of its copies, every one across writers."""
    for what, docs in (("forward", sequential.forward_docs), ("reverse", sequential.reverse_docs)):
        bad = violations(docs, corpus.ids)
        assert not bad, f"sequential {what}: " + "\n  ".join(bad[:10])
    if sequential.forward != sequential.reverse:
        pytest.fail(explain(sequential.forward, sequential.reverse, sequential.reverse_docs, corpus.writer_of,
                            "one writer, reverse order"), pytrace=False)
    planted = {p for f in corpus.families for p in combinations(sorted(f), 2)}
    if sequential.forward != planted:
        pytest.fail(explain(planted, sequential.forward, sequential.forward_docs, corpus.writer_of,
                            "one writer, against the planted pairs"), pytrace=False)
    assert len(planted) >= 150 and all(corpus.writer_of[a] != corpus.writer_of[b] for a, b in planted)


@pytest.mark.parametrize("batch_size", [7, 50])
def test_concurrent_writers_find_the_pairs_of_a_sequential_run(corpus, sequential, es_url, client, es_index_name,
                                                               batch_size):
    assert sequential.forward == sequential.reverse  # precondition (see the test above)
    procs = [start(index_command(corpus.parts[w], es_index_name, batch_size, f"b{batch_size}-w{w}"), es_url,
                   corpus.dir) for w in range(WRITERS)]
    for w, p in enumerate(procs):
        finish(p, f"writer {w}")
    check(client, es_index_name, corpus, sequential.forward, f"{WRITERS} concurrent writers, batch size {batch_size}")


def test_concurrent_writers_into_an_alias_they_roll_over_find_the_pairs_of_a_sequential_run(
        corpus, sequential, es_url, client, es_index_name):
    """The writers of the test above writing into an alias over partitions that each of them rolls over between
    its batches (``--rollover-docs``): partitions are made while the others write (a writer's batch may land in a
    partition another writer just made, and a document another wrote is rewritten where it is). Every id is stored
    once across the partitions, the invariants hold, and the pairs are those of one sequential run."""
    from es_simhash.index.elastic import partition_template_name

    try:
        procs = [start(index_command(corpus.parts[w], es_index_name, 50, f"roll-w{w}") + ["--rollover-docs", "150"],
                       es_url, corpus.dir) for w in range(WRITERS)]
        for w, p in enumerate(procs):
            finish(p, f"writer {w}")
        assert len(client.indices.get_alias(name=es_index_name)) >= 3  # (rolled over while the others wrote)
        client.indices.refresh(index=es_index_name)
        assert client.count(index=es_index_name)["count"] == len(corpus.ids)  # (no id stored twice)
        check(client, es_index_name, corpus, sequential.forward, f"{WRITERS} concurrent writers through a rolled alias")
    finally:
        client.options(ignore_status=404).indices.delete(index=f"{es_index_name}-0*", expand_wildcards="all")
        client.options(ignore_status=404).indices.delete_index_template(name=partition_template_name(es_index_name))


def _stored(client, index: str, ids: list[str]) -> int:
    """How many of ``ids`` the index holds (0 while its shard cannot be searched yet)."""
    found = client.options(ignore_status=503, retry_on_status=()).count(index=index, query={"ids": {"values": ids}})
    return int(found.get("count", 0))  # (a 503's answer holds no count)


def _lines_done(checkpoint: Path) -> int:
    try:
        return sum(json.loads(checkpoint.read_text(encoding="utf-8"))["done"].values())
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.parametrize("again,rollover", [("--resume", None), ("from-scratch", None), ("--resume", 150)],
                         ids=["--resume", "from-scratch", "--resume-through-a-rolled-alias"])
def test_a_writer_killed_mid_batch_and_run_again_converges(corpus, sequential, es_url, client, es_index_name, again,
                                                            rollover):
    """Three writers; one is SIGKILLed mid-batch (its documents of the batch in flight written, its checkpoint not
    yet saved) once it has done a third of its input; the others finish; then its exact command is run again,
    with --resume (what the error message and README tell a user) or from scratch: both converge to the pairs of
    a sequential run. So do writers into an alias that each of them rolls over (``--rollover-docs``), the killed
    one resumed: every id stored once across the partitions."""
    from es_simhash.index.elastic import partition_template_name

    assert sequential.forward == sequential.reverse
    batch_size, victim = 5, 1
    cwd = corpus.dir / f"kill-{again.strip('-')}{'-rolled' if rollover else ''}"
    cwd.mkdir()
    rolls = ["--rollover-docs", str(rollover)] if rollover else []
    commands = [index_command(corpus.parts[w], es_index_name, batch_size, f"w{w}") + rolls for w in range(WRITERS)]
    try:
        _kill_one_and_run_it_again(corpus, sequential, es_url, client, es_index_name, again, commands, cwd, victim)
        if rollover:
            assert len(client.indices.get_alias(name=es_index_name)) >= 3  # (rolled over while the others wrote)
            assert client.count(index=es_index_name)["count"] == len(corpus.ids)  # (no id stored twice)
    finally:
        if rollover:
            client.options(ignore_status=404).indices.delete(index=f"{es_index_name}-0*", expand_wildcards="all")
            client.options(ignore_status=404).indices.delete_index_template(
                name=partition_template_name(es_index_name))


def _kill_one_and_run_it_again(corpus, sequential, es_url, client, es_index_name, again, commands, cwd, victim
                               ) -> None:
    """The writers of ``commands`` started, ``victim`` killed mid-batch, the others finished, the victim's command
    run again (``again``), the pairs checked."""
    procs = [start(cmd, es_url, cwd) for cmd in commands]
    checkpoint = cwd / f"w{victim}.checkpoint.json"
    victim_ids = [json.loads(x)["id"] for x in corpus.parts[victim].read_text(encoding="utf-8").splitlines()]
    try:
        deadline = time.monotonic() + TIMEOUT
        while not client.indices.exists(index=es_index_name):  # created by the first writer to get there
            assert procs[victim].poll() is None, f"the victim ended early: {procs[victim].returncode}"
            assert time.monotonic() < deadline, "no writer created the index"
            time.sleep(0.05)
        # (a new index is yellow already while its primary is initializing: wait until it can be searched)
        client.cluster.health(index=es_index_name, wait_for_status="yellow", wait_for_no_initializing_shards=True,
                              timeout="60s")
        while _stored(client, es_index_name, victim_ids) < len(victim_ids) // 3:
            assert procs[victim].poll() is None, f"the victim ended before it was killed: {procs[victim].returncode}"
            assert time.monotonic() < deadline, "the victim made no progress"
            time.sleep(0.01)
        # kill it mid-batch: at a moment when more of its documents are stored than its checkpoint covers. Seen so,
        # the victim is stopped (SIGSTOP: it saves nothing more) and looked at again; still so, it is killed, else
        # it goes on and the next such moment is taken.
        while True:
            assert procs[victim].poll() is None, "the victim ended before it was killed mid-batch"
            assert time.monotonic() < deadline, "no moment mid-batch was seen"
            if _stored(client, es_index_name, victim_ids) <= _lines_done(checkpoint):
                continue
            os.kill(procs[victim].pid, signal.SIGSTOP)
            client.indices.refresh(index=es_index_name)
            if _stored(client, es_index_name, victim_ids) > _lines_done(checkpoint):
                break
            os.kill(procs[victim].pid, signal.SIGCONT)
        os.kill(procs[victim].pid, signal.SIGKILL)
        assert procs[victim].wait(timeout=60) == -signal.SIGKILL, "the victim ended before it was killed"
        client.indices.refresh(index=es_index_name)
        done, stored = _lines_done(checkpoint), _stored(client, es_index_name, victim_ids)
        assert 0 < done < len(victim_ids), f"killed after {done} of {len(victim_ids)} lines"
        assert stored > done, f"killed between batches: {stored} documents stored, {done} lines saved"
        for w, p in enumerate(procs):
            if w != victim:
                finish(p, f"writer {w}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    rerun = commands[victim] + (["--resume"] if again == "--resume" else [])
    finish(start(rerun, es_url, cwd), f"the killed writer run again ({again})")
    what = (f"writer {victim} killed mid-batch with {done} of its {len(victim_ids)} lines checkpointed and {stored} "
            f"of its documents stored, run again {again}")
    check(client, es_index_name, corpus, sequential.forward, what)


def _new_texts(corpus_texts: list[str], fingerprinter: Fingerprinter, n: int) -> list[str]:
    """``n`` People's Daily articles (of the corpus's lengths) that the embedded engine finds no duplicate of among
    ``corpus_texts`` nor among each other: the new content of re-crawled pages."""
    from es_simhash.index.memory import MemoryIndex

    engine = DedupEngine(MemoryIndex(), fingerprinter, batch_size=250)
    seen = {r.cluster for r in engine.process([Document(f"c{i}", t) for i, t in enumerate(corpus_texts)])}
    used = set(corpus_texts)
    out = []
    for i, text in enumerate(a for a in chinese_articles() if MIN_CHARS <= len(a) <= MAX_CHARS and a not in used):
        [r] = engine.process([Document(f"new{i}", text)])
        if r.cluster not in seen and not r.duplicate:
            out.append(text)
            seen.add(r.cluster)
            if len(out) == n:
                return out
    raise AssertionError("not enough unrelated articles for the re-crawled pages")


def test_pages_re_crawled_by_another_process_while_the_writers_run(corpus, es_url, client, es_index_name):
    """The three writers of the corpus run while a fourth process indexes 60 of their pages (family members)
    again, each with an unrelated article's text, in batches of 5: the re-crawl of a page may land before or
    after its first indexing, so the content that stays is whichever was written last. Whatever stayed, the
    clusters are those of a sequential run over the texts the index ends with (read back from it), in either
    order, and no document is a duplicate of content that was replaced."""
    rng = random.Random(SEED + 2)
    text_of = {json.loads(x)["id"]: json.loads(x)["content"]
               for x in corpus.path.read_text(encoding="utf-8").splitlines()}
    fingerprinter = Fingerprinter()
    recrawled = rng.sample(sorted(x for f in corpus.families for x in f), 60)
    new = dict(zip(recrawled, _new_texts(list(text_of.values()), fingerprinter, len(recrawled))))
    cwd = corpus.dir / "recrawl"
    cwd.mkdir()
    recrawl = cwd / "recrawl.jsonl"
    recrawl.write_text("".join(json.dumps({"id": i, "content": t}, ensure_ascii=False) + "\n" for i, t in new.items()),
                       encoding="utf-8")
    commands = [index_command(corpus.parts[w], es_index_name, 7, f"w{w}") for w in range(WRITERS)]
    commands.append(index_command(recrawl, es_index_name, 5, "recrawl"))
    procs = [start(cmd, es_url, cwd) for cmd in commands]
    for w, p in enumerate(procs):
        finish(p, "the re-crawler" if w == WRITERS else f"writer {w}")
    docs = concurrent_writers.read_docs(client, es_index_name, FIELDS + ["content"])
    bad = violations(docs, corpus.ids)
    assert not bad, "invariant violations:\n  " + "\n  ".join(bad[:10])
    final = {i: docs[i]["content"] for i in corpus.ids}
    assert all(final[i] in (text_of[i], new.get(i)) for i in corpus.ids)
    stayed_new = sum(final[i] == new[i] for i in recrawled)
    forward = pairs_of(_clusters([(i, final[i]) for i in corpus.ids], fingerprinter))
    reverse = pairs_of(_clusters([(i, final[i]) for i in reversed(corpus.ids)], fingerprinter))
    assert forward == reverse, "the final texts' sequential pairs depend on the order: no reference to compare with"
    got = cluster_pairs(docs)
    if got != forward:
        holds = {i: "its re-crawl's text" if final[i] == new.get(i) else (
            "its first text (re-crawled)" if i in new else "its first text") for i in corpus.ids}
        odd = sorted({x for p in got ^ forward for x in p})
        pytest.fail(explain(forward, got, docs, corpus.writer_of,
                            f"{WRITERS} writers and a re-crawler ({stayed_new} of 60 new contents stayed)")
                    + "".join(f"\n  {i} holds {holds[i]}" for i in odd), pytrace=False)
