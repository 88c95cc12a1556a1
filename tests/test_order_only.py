"""The same input gives the same clusters: decisions depend on the input order alone, not on ``--batch-size``,
``--workers``, the backend, an interruption and ``--resume``, or running the same input again.

The inputs are seeded random crawls of templated short texts (``support.templated_crawl``): real People's Daily
paragraphs, half of them reprinted inside one of three site headers and footers, so each template line is held by
far more documents than the boilerplate bound, and whether a line counted as boilerplate when a text arrived
decides the text. (Before decisions were made by input order alone, every seed here gave other clusters at batch
sizes 100, 500 and 1000 than at batch size 1.) The embedded oracle is `dedup` at ``--batch-size 1``: `dedup`
decides the records as a set at the end of the run (``pipeline.precedence``), so its clusters must not depend on
the batch size nor the workers. `index --no-recheck` still decides each record on arrival, against what was indexed
before it: its oracle is the library's run on arrival (``run_dedup`` over a ``MemoryIndex`` without the recheck,
one document at a time), which nothing decides in a batch.
"""

from __future__ import annotations

import json
import os
from collections import Counter
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from support import templated_crawl

import es_simhash

CODE = Path(es_simhash.__file__).resolve().parents[1]
SEEDS = (0, 1, 2)
N = 2000


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def crawls(tmp_path_factory) -> dict[int, Path]:
    folder = tmp_path_factory.mktemp("order-only")
    return {seed: _write(folder / f"crawl-{seed}.jsonl", templated_crawl(seed, N)) for seed in SEEDS}


def clusters(report: Path) -> dict[str, tuple[str, str | None]]:
    """id -> (cluster, duplicate_of) from a ``--report`` file."""
    rows = [json.loads(x) for x in report.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: (r["cluster"], r["duplicate_of"]) for r in rows}


def differing(a: dict, b: dict) -> list[str]:
    assert a.keys() == b.keys()
    return sorted(i for i in a if a[i] != b[i])


def dedup(cli, crawl: Path, cwd: Path, name: str, *args: str) -> dict[str, tuple[str, str | None]]:
    res = cli("dedup", crawl, "--report", f"{name}.jsonl", "--dead-letters", f"{name}-dead.jsonl", "--no-progress",
              *args, cwd=cwd)
    assert res.returncode == 0, res.stderr.decode()
    return clusters(cwd / f"{name}.jsonl")


@pytest.fixture(scope="module")
def one_at_a_time(crawls, tmp_path_factory):
    """The embedded oracle: each seed's clusters as `dedup --no-recheck --batch-size 1` gives them (decided as a set
    at the end of the run, in precedence order, without the recheck)."""
    from support import run_cli

    cwd = tmp_path_factory.mktemp("oracle")
    return {seed: dedup(run_cli, crawl, cwd, f"one-{seed}", "--no-recheck", "--batch-size", "1")
            for seed, crawl in crawls.items()}


@pytest.fixture(scope="module")
def rechecked(crawls, tmp_path_factory):
    """What `dedup` gives with its defaults (decided as a set, then the recheck): what `index` into a new index must
    give with its defaults."""
    from support import run_cli

    cwd = tmp_path_factory.mktemp("oracle-rechecked")
    return {seed: dedup(run_cli, crawl, cwd, f"one-{seed}", "--batch-size", "1") for seed, crawl in crawls.items()}


@pytest.fixture(scope="module")
def on_arrival(crawls, tmp_path_factory):
    """The oracle of `index --no-recheck` (each record decided on arrival, against what was indexed before it):
    each seed's clusters as the library's run on arrival gives them, one document at a time (``run_dedup`` over a
    ``MemoryIndex``, ``recheck=False``, with the rule the command decides with then: ``DefaultRule(k=K)``)."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.memory import MemoryIndex
    from es_simhash.pipeline import run_dedup

    folder = tmp_path_factory.mktemp("oracle-arrival")
    got = {}
    for seed, crawl in crawls.items():
        index = MemoryIndex()
        engine = DedupEngine.for_run(index, Fingerprinter(), DefaultRule(), recheck=False, batch_size=1)
        run_dedup([str(crawl)], engine, recheck=False, dead_letters=folder / f"dead-{seed}.jsonl")
        got[seed] = {d.id: (d.cluster, d.duplicate_of) for page in index.scan() for d in page}
    return got


@pytest.mark.parametrize("seed", SEEDS)
def test_embedded_clusters_do_not_depend_on_the_batch_size_or_the_workers(seed, crawls, one_at_a_time, cli, tmp_path):
    crawl, want = crawls[seed], one_at_a_time[seed]
    assert sum(c != i for i, (c, _) in want.items()) > N // 3  # (the reprints found: the test has something to miss)
    for batch_size in (7, 100, 500, 1000):
        got = dedup(cli, crawl, tmp_path, f"b{batch_size}", "--no-recheck", "--batch-size", str(batch_size))
        assert not differing(want, got), (seed, batch_size, differing(want, got)[:5])
    for workers in ("0", "2"):
        got = dedup(cli, crawl, tmp_path, f"w{workers}", "--no-recheck", "--workers", workers)
        assert not differing(want, got), (seed, workers, differing(want, got)[:5])


def test_the_recheck_does_not_depend_on_the_batch_size(crawls, cli, tmp_path):
    """`dedup` takes its decisions again at the end (--recheck, the default): the result too is the same for
    every batch size."""
    crawl = crawls[SEEDS[0]]
    want = dedup(cli, crawl, tmp_path, "r1", "--batch-size", "1")
    for batch_size in (100, 1000):
        got = dedup(cli, crawl, tmp_path, f"r{batch_size}", "--batch-size", str(batch_size))
        assert not differing(want, got), (batch_size, differing(want, got)[:5])


# -- which canonicals the recheck settles -----------------------------------------------------------------
def settling_every_canonical(crawl: Path) -> dict[str, tuple[str, str | None]]:
    """The clusters of `dedup`'s run of ``crawl`` (its documents decided as a set, without the far sentence bound,
    then rechecked: ``es_simhash.pipeline.precedence.decide_set``) with a recheck that settles every canonical with
    long sentences (the library's ``recheck`` default)."""
    from es_simhash import Fingerprinter
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.files.sources import RecordReader
    from es_simhash.index.memory import MemoryIndex
    from es_simhash.pipeline.precedence import decide_set
    from es_simhash.records import Document, StoredDoc

    rule = DefaultRule.rechecked()
    index = MemoryIndex()
    engine = DedupEngine(index, rule=rule.on_arrival(), recheck_rule=rule)
    docs = [d for d in RecordReader().read([str(crawl)]) if isinstance(d, Document)]
    fps = Fingerprinter().fingerprint_many([d.text for d in docs])
    decide_set(engine, [StoredDoc(d.id, fp, d.id) for d, fp in zip(docs, fps)],
               settles=lambda d: bool(d.fingerprint.sentences))
    return {d.id: (d.cluster, d.duplicate_of) for page in index.scan() for d in page}


@pytest.mark.parametrize("seed", [*SEEDS, 3, 4, "example"])
def test_the_recheck_gives_the_clusters_of_settling_every_canonical(seed, crawls, cli, tmp_path):
    """A run's recheck settles only the canonicals its set pass's decisions call into question (those the far
    sentence bound would have made duplicates), not every canonical with long sentences: the clusters are the
    same all the same, at any batch size."""
    if seed == "example":
        crawl = CODE / "examples" / "crawl.jsonl.gz"
    else:
        crawl = crawls[seed] if seed in crawls else _write(tmp_path / f"crawl-{seed}.jsonl", templated_crawl(seed, N))
    want = settling_every_canonical(crawl)
    for batch_size in ("1", "500"):
        got = dedup(cli, crawl, tmp_path, f"b{batch_size}", "--batch-size", batch_size)
        assert not differing(want, got), (seed, batch_size, differing(want, got)[:5])


def test_the_recheck_looks_up_only_the_canonicals_called_into_question(crawls, tmp_path):
    """The recheck of a run looks up the canonicals the far sentence bound would have made duplicates in the run's
    decisions (the set pass in precedence order, :attr:`DedupEngine.far_marks`), and those near a change, not every
    canonical with long sentences: settling a canonical costs the recheck a lookup.

    (A lookup is counted against a canonical when the index holds the document as a canonical at that moment: the
    recheck also decides every near duplicate again, a lookup each, and one it splits from its cluster ends a
    canonical, so the canonicals of the end are not all those the recheck could have settled.)"""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.engine.dedup_engine import DedupEngine
    from es_simhash.index.memory import MemoryIndex
    from es_simhash.pipeline import run_dedup

    class Counting(MemoryIndex):
        as_canonical: Counter[str] = Counter()

        def lookup(self, queries, *args, **kwargs):
            for q in queries:
                d = self.get(q.id)
                if d is not None and d.cluster == d.id and d.fingerprint.sentences:
                    self.as_canonical[q.id] += 1
            return super().lookup(queries, *args, **kwargs)

    index = Counting()
    rule = DefaultRule.rechecked()
    engine = DedupEngine(index, rule=rule.on_arrival(), recheck_rule=rule)
    summary = run_dedup([str(crawls[SEEDS[0]])], engine, recheck=True, dead_letters=tmp_path / "dead.jsonl")
    assert summary.rechecked  # (the recheck changed clusters here)
    canonicals = {d.id for page in index.scan() for d in page if d.cluster == d.id and d.fingerprint.sentences}
    assert len(canonicals) > 800
    assert len(index.as_canonical) < len(canonicals) // 10, (len(index.as_canonical), len(canonicals))


# -- the recheck's summary line against --no-recheck ----------------------------------------------------
RECHECK_LINE = re.compile(r"recheck: once the input's templates were known, ([\d,]+) records were decided otherwise "
                          r"than with --no-recheck: ([\d,]+) duplicates no more, ([\d,]+) became duplicates, "
                          r"([\d,]+) moved to another cluster or original \(")


def recheck_counts(stderr: str) -> tuple[int, int, int, int]:
    """(records, no more, became, moved) of the summary's ``recheck:`` line."""
    found = RECHECK_LINE.search(stderr)
    assert found, stderr
    return tuple(int(x.replace(",", "")) for x in found.groups())  # type: ignore[return-value]


def compared(rechecked: Path, arrival: Path) -> tuple[int, int, int]:
    """(no more, became, moved) between two ``--report`` files of one input: duplicate without the recheck and not
    with it; duplicate with it and not without; duplicate in both, in another cluster or of another document."""
    a, b = clusters(rechecked), clusters(arrival)
    assert a.keys() == b.keys()
    no_more = sum(b[i][1] is not None and a[i][1] is None for i in a)
    became = sum(a[i][1] is not None and b[i][1] is None for i in a)
    moved = sum(a[i][1] is not None and b[i][1] is not None and a[i] != b[i] for i in a)
    return no_more, became, moved


def duplicates(stderr: str) -> int:
    return int(stderr.split("duplicates ")[1].split()[0].replace(",", ""))


@pytest.mark.parametrize("seed", [*SEEDS, "example"])
def test_dedup_recheck_line_counts_what_no_recheck_reports_otherwise(seed, crawls, cli, tmp_path):
    """The summary's recheck line counts the records whose report line differs from a run of the same input with
    --no-recheck: the three counts are those a user gets by comparing the two reports."""
    crawl = CODE / "examples" / "crawl.jsonl.gz" if seed == "example" else crawls[seed]
    runs = {}
    for name, args in (("with", ()), ("without", ("--no-recheck",))):
        res = cli("dedup", crawl, "--report", f"{name}.jsonl", "--dead-letters", f"{name}-dead.jsonl",
                  "--no-progress", *args, cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        runs[name] = res.stderr.decode()
    no_more, became, moved = compared(tmp_path / "with.jsonl", tmp_path / "without.jsonl")
    assert "recheck:" not in runs["without"]
    if seed == "example":  # (decided in precedence order, the recheck changes nothing there: nor does the line)
        assert no_more + became + moved == 0 and "recheck:" not in runs["with"], runs["with"]
        return
    assert no_more + became + moved > 0  # (the recheck changed something here: the test has something to count)
    assert recheck_counts(runs["with"]) == (no_more + became + moved, no_more, became, moved), runs["with"]
    assert duplicates(runs["with"]) - duplicates(runs["without"]) == became - no_more
    assert "recheck:" not in runs["without"]


# -- Elasticsearch ---------------------------------------------------------------------------------------
def _env(es_url: str) -> dict[str, str]:
    path = os.pathsep.join(x for x in (str(CODE), os.environ.get("PYTHONPATH", "")) if x)
    return dict(os.environ, ES_URL=es_url, PYTHONPATH=path)


def index_cmd(crawl: Path, index: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "es_simhash", "index", str(crawl), "--index", index, "--no-progress",
            "--report", "report.jsonl", "--checkpoint", "cp.json", *args]


def run_index(crawl: Path, index: str, es_url: str, cwd: Path, *args: str) -> str:
    res = subprocess.run(index_cmd(crawl, index, *args), capture_output=True, env=_env(es_url), cwd=cwd, timeout=600)
    assert res.returncode == 0, res.stderr.decode()
    return res.stderr.decode()


def stored(client, index: str) -> dict[str, tuple[str, str | None]]:
    """id -> (cluster, duplicate_of) of every document in the index, read back."""
    from es_simhash.index.elastic import ElasticIndex

    client.indices.refresh(index=index)
    return {d.id: (d.cluster, d.duplicate_of) for page in ElasticIndex(client, index).scan() for d in page}


def test_index_gives_the_clusters_dedup_gives_and_a_re_run_changes_nothing(crawls, on_arrival, rechecked, es_url,
                                                                          client, es_index_name, tmp_path):
    """`index` into a new index and `dedup`, each with its defaults, build the same clusters from one input (both
    decide the records as a set at the end, then recheck); a re-run changes nothing. With --no-recheck, `index`
    keeps the decisions made on arrival: those of the library's run on arrival (``on_arrival``)."""
    seed = SEEDS[1]
    assert any(rechecked[seed][i] != on_arrival[seed][i] for i in rechecked[seed])  # (the end changes some)
    run_index(crawls[seed], es_index_name, es_url, tmp_path)
    first = stored(client, es_index_name)
    assert not differing(rechecked[seed], first), differing(rechecked[seed], first)[:5]
    assert clusters(tmp_path / "report.jsonl") == first
    err = run_index(crawls[seed], es_index_name, es_url, tmp_path)  # the same input again: idempotent
    assert f"indexed 0 into {es_index_name!r}" in err and f"{N:,} were already indexed" in err, err
    again = stored(client, es_index_name)
    assert not differing(first, again), differing(first, again)[:5]
    arrival = f"{es_index_name}-arrival"
    try:
        run_index(crawls[seed], arrival, es_url, tmp_path, "--no-recheck")
        got = stored(client, arrival)
        assert not differing(on_arrival[seed], got), differing(on_arrival[seed], got)[:5]
    finally:
        client.options(ignore_status=404).indices.delete(index=arrival)


def test_index_recheck_line_counts_what_index_no_recheck_reports_otherwise(crawls, es_url, client, es_index_name,
                                                                           tmp_path):
    """`index`'s recheck line, likewise: against `index --no-recheck` of the same input into another index."""
    seed = SEEDS[2]
    arrival = f"{es_index_name}-arrival"
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    try:
        err = run_index(crawls[seed], es_index_name, es_url, tmp_path / "with")
        plain = run_index(crawls[seed], arrival, es_url, tmp_path / "without", "--no-recheck")
    finally:
        client.options(ignore_status=404).indices.delete(index=arrival)
    no_more, became, moved = compared(tmp_path / "with" / "report.jsonl", tmp_path / "without" / "report.jsonl")
    assert no_more + became + moved > 0
    assert recheck_counts(err) == (no_more + became + moved, no_more, became, moved), err
    assert duplicates(err) - duplicates(plain) == became - no_more


def _count(es_url: str, index: str) -> int:
    try:
        with urllib.request.urlopen(f"{es_url}/{index}/_count", timeout=10) as resp:
            return int(json.loads(resp.read())["count"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.parametrize("round_", range(3))
def test_a_run_killed_at_a_random_point_and_resumed_gives_the_same_clusters(round_, crawls, rechecked, es_url,
                                                                             client, es_index_name, tmp_path):
    """`index` is SIGKILLed once the index holds a random share of the input (mid-batch or not), then the same
    command with --resume finishes: the clusters are those of one uninterrupted run, and the counts add up."""
    seed = SEEDS[round_ % len(SEEDS)]
    rng = random.Random(f"kill-{round_}")
    at = rng.randrange(N // 10, 9 * N // 10)
    proc = subprocess.Popen(index_cmd(crawls[seed], es_index_name, "--batch-size", "100"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(es_url), cwd=tmp_path)
    deadline = time.monotonic() + 300
    try:
        while _count(es_url, es_index_name) < at:
            assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    checkpoint = json.loads((tmp_path / "cp.json").read_text())
    done = sum(checkpoint["done"].values())
    assert 0 < done < N, f"killed after {done} lines were saved"
    err = run_index(crawls[seed], es_index_name, es_url, tmp_path, "--batch-size", "100", "--resume")
    got = stored(client, es_index_name)
    assert len(got) == N
    assert not differing(rechecked[seed], got), (at, done, differing(rechecked[seed], got)[:5])
    assert clusters(tmp_path / "report.jsonl") == got  # (the report of the two runs together: every record, once)
    written = int(err.split("indexed ")[1].split(" into")[0].replace(",", ""))
    before = int(err.split("(and ")[1].split(" by the run it resumed")[0].replace(",", ""))
    already = int(err.split(" were already indexed")[0].rsplit("\n", 1)[-1].replace(",", "")) \
        if "were already indexed" in err else 0
    assert written + before + already == N, err


def test_a_run_killed_during_its_recheck_and_resumed_gives_the_same_clusters_and_counts(crawls, rechecked, es_url,
                                                                                       client, es_index_name,
                                                                                       tmp_path):
    """`index` is SIGKILLed once every record is decided and the final recheck has begun (its checkpoint says so);
    the same command with --resume takes the recheck again: the clusters, the report and the counts are those of
    one uninterrupted run."""
    seed = SEEDS[2]
    checkpoint = tmp_path / "cp.json"
    proc = subprocess.Popen(index_cmd(crawls[seed], es_index_name), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(es_url), cwd=tmp_path)
    deadline = time.monotonic() + 300
    try:
        while True:
            assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, "no recheck"
            try:
                if json.loads(checkpoint.read_text()).get("rechecked") is not None:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sum(json.loads(checkpoint.read_text())["done"].values()) == N
    err = run_index(crawls[seed], es_index_name, es_url, tmp_path, "--resume")
    got = stored(client, es_index_name)
    assert not differing(rechecked[seed], got), differing(rechecked[seed], got)[:5]
    assert clusters(tmp_path / "report.jsonl") == got
    kept = sum(1 for i, (c, _) in got.items() if c == i)
    assert f"read {N:,}  kept {kept:,}  duplicates {N - kept:,}  dead letters 0" in err, err
    assert not checkpoint.exists()
