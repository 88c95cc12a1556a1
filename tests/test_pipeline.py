"""run_dedup, Checkpoint and Summary in-process (the CLI tests run them end to end): an interrupted checkpointed
run resumed gives exactly the report, output and dead letters of an uninterrupted one, with counts and times
carried over; the report of a resumed run is cut back to what the checkpoint accounts for, then appended to."""

import io
import json

import pytest

from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.decide.default import DefaultRule
from es_simhash.index.memory import MemoryIndex
from es_simhash.pipeline import Checkpoint, NoCheckpoint, Summary, run_dedup
from es_simhash.files.sources import check_inputs
from es_simhash.errors import InputError
from es_simhash.records import record_meta
from support import english_articles


@pytest.fixture(scope="module")
def articles():
    return [a for a in english_articles() if 1500 <= len(a) <= 4000][:40]


@pytest.fixture
def crawl(tmp_path, articles):
    lines = [json.dumps({"id": f"a{i}", "content": a, "title": f"t{i}"}) for i, a in enumerate(articles)]
    lines += [json.dumps({"id": f"copy{i}", "content": articles[i] + " (reprint)"}) for i in range(0, 40, 5)]
    lines.insert(7, '{"id": "broken", ')
    lines.insert(30, "[1, 2]")
    path = tmp_path / "crawl.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _engine(batch_size=6):
    return DedupEngine(MemoryIndex(), batch_size=batch_size)


def test_run_dedup_writes_report_output_and_dead_letters(crawl, tmp_path):
    report, output = io.StringIO(), io.BytesIO()
    s = run_dedup([str(crawl)], _engine(), report=report, output=output, dead_letters=tmp_path / "dead.jsonl")
    assert (s.read, s.kept, s.duplicates, s.dead_letters) == (50, 40, 8, 2) and s.reconciles
    rows = [json.loads(x) for x in report.getvalue().splitlines()]
    assert [r["id"] for r in rows] == [f"a{i}" for i in range(40)] + [f"copy{i}" for i in range(0, 40, 5)]
    assert all(r["duplicate"] and r["duplicate_of"] == r["id"].replace("copy", "a") for r in rows[40:])
    assert output.getvalue().count(b"\n") == 40 and b"reprint" not in output.getvalue()
    dead = [json.loads(x) for x in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert [d["line"] for d in dead] == [8, 31] and s.dead_letter_path == str(tmp_path / "dead.jsonl")
    assert s.indexed == 48 and s.indexed_this_run == 48 and s.elapsed > 0


def test_an_interrupted_checkpointed_run_resumes_to_the_same_result(crawl, tmp_path):
    whole = io.StringIO()
    run_dedup([str(crawl)], _engine(), report=whole, dead_letters=tmp_path / "whole-dead.jsonl")

    cp_path, rep_path, dead = tmp_path / "cp.json", tmp_path / "rep.jsonl", tmp_path / "dead.jsonl"
    calls = []

    def stop_after_three(_bytes, summary):
        calls.append(summary.read)
        if len(calls) == 3:
            raise KeyboardInterrupt

    index = MemoryIndex()  # the index survives (it is Elasticsearch in real life); the process does not
    cp = Checkpoint(cp_path, [str(crawl)])
    with pytest.raises(KeyboardInterrupt), cp.open_report(rep_path) as rep:
        run_dedup([str(crawl)], DedupEngine(index, batch_size=6), report=rep, dead_letters=dead,
                  on_progress=stop_after_three, checkpoint=cp)
    with open(rep_path, "a", encoding="utf-8") as fh:
        fh.write('{"id": "written after the last save"}\n')  # a batch whose checkpoint was never saved

    saved = Checkpoint.load(cp_path, [str(crawl)])
    assert saved.summary.read == calls[-1] and saved.summary.elapsed > 0  # counts and seconds are carried over
    assert saved.summary.resumed_indexed == saved.summary.indexed and saved.summary.resumed_elapsed > 0
    with saved.open_report(rep_path) as rep:  # cut back to the saved lines, then appended to
        s = run_dedup([str(crawl)], DedupEngine(index, batch_size=6), report=rep, dead_letters=dead,
                      checkpoint=saved)
    assert rep_path.read_text(encoding="utf-8") == whole.getvalue()
    assert dead.read_text() == (tmp_path / "whole-dead.jsonl").read_text()
    assert (s.read, s.kept, s.duplicates, s.dead_letters) == (50, 40, 8, 2)
    assert s.indexed == 48 and s.indexed_this_run == 48 - saved.summary.resumed_indexed > 0
    assert s.elapsed_this_run < s.elapsed and s.rate_this_run == pytest.approx(s.indexed_this_run / s.elapsed_this_run)
    assert not cp_path.exists()  # a finished run leaves no checkpoint
    with pytest.raises(NoCheckpoint):
        Checkpoint.load(cp_path, [str(crawl)])


def test_a_checkpoint_is_for_its_own_inputs_only(crawl, tmp_path):
    cp = Checkpoint(tmp_path / "cp.json", [str(crawl)])
    cp.done = {str(crawl): 5}
    cp.save(Summary(read=5, kept=5, elapsed=1.5))
    with pytest.raises(ValueError, match="is for other inputs"):
        Checkpoint.load(tmp_path / "cp.json", [str(tmp_path / "other.jsonl")])
    loaded = Checkpoint.load(tmp_path / "cp.json", [str(crawl)])
    assert loaded.done == {str(crawl): 5} and loaded.summary.elapsed == 1.5 and loaded.summary.resumed_indexed == 5


def test_a_new_run_truncates_its_report(tmp_path):
    rep = tmp_path / "rep.jsonl"
    rep.write_text("old line\n")
    with Checkpoint(tmp_path / "cp.json", ["x"]).open_report(rep) as fh:
        fh.write("new\n")
    assert rep.read_text() == "new\n"


def test_inputs_are_checked_before_anything_is_read(tmp_path):
    check_inputs(["-"])
    with pytest.raises(InputError, match="input not found"):
        check_inputs([str(tmp_path / "missing.jsonl")])
    with pytest.raises(InputError, match="is a directory"):
        check_inputs([str(tmp_path)])


def test_record_meta_takes_the_first_usable_field():
    assert record_meta({"headline": "h", "link": "http://x", "date": "2026-01-01", "title": ""}) == \
        ("h", "http://x", "2026-01-01")
    assert record_meta(None) == (None, None, None)


def test_the_dedup_command_is_run_dedup(crawl, tmp_path, cli):
    """End to end: `es-simhash dedup` writes what run_dedup returns and reports its counts (both with the recheck
    and the rule the command runs)."""
    from es_simhash import Fingerprinter

    engine = DedupEngine.for_run(MemoryIndex(), Fingerprinter(), DefaultRule.rechecked(), batch_size=1000)
    with open(tmp_path / "lib.jsonl", "w", encoding="utf-8") as report:
        s = run_dedup([str(crawl)], engine, report=report, dead_letters=tmp_path / "lib-dead.jsonl", recheck=True)
    res = cli("dedup", crawl, "--report", "r.jsonl", "--dead-letters", "dead.jsonl", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    assert (tmp_path / "r.jsonl").read_text(encoding="utf-8") == (tmp_path / "lib.jsonl").read_text(encoding="utf-8")
    assert (tmp_path / "dead.jsonl").read_text() == (tmp_path / "lib-dead.jsonl").read_text()
    assert f"read {s.read:,}  kept {s.kept:,}  duplicates {s.duplicates:,}  dead letters {s.dead_letters:,}" \
        in res.stderr.decode()


def test_resuming_after_any_batch_gives_the_uninterrupted_result(tmp_path, monkeypatch):
    """The batches grow at the start and shrink at the end (the last ones are cut from records read ahead): a run
    interrupted after any of them, dead letters at its start, middle and very end included, resumes to exactly
    the report and dead letters of one uninterrupted run."""
    from es_simhash.pipeline import run as pipeline

    monkeypatch.setattr(pipeline, "FIRST_BATCH", 4)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()
    lines = []
    for i in range(70):
        text = " ".join(words[(i * 7 + j) % len(words)] + str(i % 23) for j in range(40))
        lines.append(json.dumps({"id": f"d{i}", "text": text}))
    lines.insert(0, "{not json")
    lines.insert(33, "{not json")
    lines += ["{not json", "[]"]  # (the final lines of the file)
    crawl = tmp_path / "crawl.jsonl"
    crawl.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def engine(index=None):
        return DedupEngine(index if index is not None else MemoryIndex(), batch_size=16)

    whole, whole_dead = io.StringIO(), tmp_path / "whole-dead.jsonl"
    sizes = []
    s = run_dedup([str(crawl)], engine(), report=whole, dead_letters=whole_dead,
                  on_progress=lambda _b, summary: sizes.append(summary.read))
    assert (s.read, s.dead_letters) == (74, 4) and s.reconciles
    assert [json.loads(x)["id"] for x in whole.getvalue().splitlines()] == [f"d{i}" for i in range(70)]
    assert [json.loads(x)["line"] for x in whole_dead.read_text().splitlines()] == [1, 34, 73, 74]
    assert len(sizes) > 6  # (4, 8, 16, 16, ... then smaller batches to the end; the last call: after the run)
    for stop_at in range(1, len(sizes)):
        cp_path, rep_path, dead = tmp_path / f"cp{stop_at}.json", tmp_path / f"r{stop_at}.jsonl", tmp_path / f"d{stop_at}"
        index, calls = MemoryIndex(), []

        def stop(_bytes, _summary):
            calls.append(1)
            if len(calls) == stop_at:
                raise KeyboardInterrupt

        cp = Checkpoint(cp_path, [str(crawl)])
        with pytest.raises(KeyboardInterrupt), cp.open_report(rep_path) as rep:
            run_dedup([str(crawl)], engine(index), report=rep, dead_letters=dead, on_progress=stop, checkpoint=cp)
        saved = Checkpoint.load(cp_path, [str(crawl)])
        with saved.open_report(rep_path) as rep:
            run_dedup([str(crawl)], engine(index), report=rep, dead_letters=dead, checkpoint=saved)
        assert rep_path.read_text(encoding="utf-8") == whole.getvalue(), stop_at
        assert dead.read_text() == whole_dead.read_text(), stop_at


@pytest.mark.parametrize("text", ["a1", 'quote " and \\ backslash', "tab\tnew\nline\x00\x1f\x7f", "中文 é 🙂",
                                  "\u2028\u2029/</script>", ""])
def test_a_report_line_is_the_json_of_the_result(text):
    """Each ``--report`` line is exactly ``json.dumps`` of the result's fields plus source and line (non-ASCII kept)."""
    from es_simhash.records import Result
    from es_simhash.pipeline.summary import report_line

    for res in (Result(text, "c" + text, True, text + "x", 3, "simhash"), Result(text, text, False, None, None,
                                                                                "canonical")):
        expected = json.dumps({**res.to_dict(), "source": "in/" + text, "line": 12}, ensure_ascii=False) + "\n"
        assert report_line(res, "in/" + text, 12) == expected
        assert json.loads(report_line(res, "in/" + text, 12))["id"] == text


@pytest.mark.parametrize("batch_size, n", [(10, 19), (80, 159), (3, 20)])
def test_no_batch_is_bigger_than_the_batch_size(tmp_path, batch_size, n):
    """``--batch-size`` bounds every batch (one lookup and one bulk request each), the last ones included."""
    crawl = tmp_path / "crawl.jsonl"
    crawl.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text number {i} " * 5}) + "\n" for i in range(n)),
                     encoding="utf-8")
    reads = []
    engine = DedupEngine(MemoryIndex(), batch_size=batch_size)
    s = run_dedup([str(crawl)], engine, report=io.StringIO(), dead_letters=tmp_path / "dead.jsonl",
                  on_progress=lambda _b, summary: reads.append(summary.read))
    sizes = [b - a for a, b in zip([0] + reads, reads)]
    assert s.read == n and sum(sizes) == n and max(sizes) <= batch_size, sizes


def test_progress_ends_at_the_input_size_with_a_recheck(tmp_path):
    """The recheck reads the inputs again to correct the output (here: a forum template's second post, put with the
    first on arrival, is taken back); the progress reported stays at the bytes the run read (a progress bar ends
    at 100%, not 200%)."""
    from test_cli import FORUM_BODIES, FORUM_NOTICE

    from es_simhash.decide.default import DefaultRule
    from es_simhash.files.sources import RecordReader

    lines = [{"id": f"p{i}", "content": f"【城市生活】网友原创\n{body}\n{FORUM_NOTICE}"} for i, body in enumerate(FORUM_BODIES)]
    crawl = tmp_path / "forum.jsonl"
    crawl.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    seen = []
    with open(tmp_path / "out.jsonl", "wb") as output:
        s = run_dedup([str(crawl)], DedupEngine(MemoryIndex(), rule=DefaultRule.rechecked(), batch_size=6),
                      output=output, dead_letters=tmp_path / "dead.jsonl", recheck=True,
                      on_progress=lambda b, _s: seen.append(b))
    assert s.taken_back >= 1  # (the inputs were read again)
    total = RecordReader.total_bytes([str(crawl)])
    assert seen[-1] == total and max(seen) == total


def test_progress_follows_the_records_decided_and_the_recheck_has_its_own(tmp_path):
    """The position reported after a batch is how far into the input the records decided so far go: it stays
    below the input's size until the last batch is decided (fingerprinting reads ahead), and the recheck reports
    the documents it has decided again, up to its total."""
    from test_cli import FORUM_BODIES, FORUM_NOTICE

    from es_simhash.decide.default import DefaultRule
    from es_simhash.files.sources import RecordReader

    lines = [{"id": f"p{i}", "content": f"【城市生活】网友原创\n{FORUM_BODIES[i % 4]}{i}\n{FORUM_NOTICE}"}
             for i in range(300)]
    crawl = tmp_path / "forum.jsonl"
    crawl.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    total = RecordReader.total_bytes([str(crawl)])
    seen, rechecked = [], []
    s = run_dedup([str(crawl)], DedupEngine(MemoryIndex(), rule=DefaultRule.rechecked(), batch_size=50),
                  dead_letters=tmp_path / "dead.jsonl", recheck=True, report=io.StringIO(),
                  on_progress=lambda b, summary: seen.append((b, summary.read)),
                  on_recheck=lambda done, of: rechecked.append((done, of)))
    assert s.read == 300
    decided = [(b, n) for b, n in seen if n < 300]
    assert decided and all(b < total for b, _ in decided)  # (not at 100% while records are still being decided)
    assert [b for b, _ in seen] == sorted(b for b, _ in seen) and seen[-1][0] == total
    assert rechecked and rechecked[-1] == (300, 300) and all(d <= of for d, of in rechecked)


def _random_index(seed: int, rule):
    """A small seeded index of random fingerprints sharing sentences from a small pool (many pairs near the rule's
    bounds), decided one document at a time; and the summary of that run."""
    import random

    from es_simhash.records import Document
    from es_simhash.fingerprint.model import Fingerprint

    r = random.Random(seed)
    pool = list(range(1, r.randint(5, 14)))
    engine = DedupEngine(MemoryIndex(), rule=rule, batch_size=1)
    summary = Summary()
    for i in range(r.randint(4, 10)):
        simhash = 0x9E3779B97F4A7C15
        for b in r.sample(range(64), r.randint(0, 22)):
            simhash ^= 1 << b
        fp = Fingerprint(simhash, 1000 + i, tuple(sorted(r.sample(pool, r.randint(1, min(5, len(pool)))))), 40, 800,
                         False)
        res = engine.process_batch([Document(f"d{i:02d}", "t")], [fp])[0]
        summary.read += 1
        summary.duplicates += res.duplicate
        summary.kept += not res.duplicate
    return engine, summary


@pytest.mark.parametrize("seeds, rechecked", [(range(300), False), ([1173, 1227], True), ([1681, 2680], False)])
def test_the_recheck_summary_counts_both_directions(seeds, rechecked):
    """The recheck takes duplicates back, and can make canonicals duplicates (after a split, a document that arrived
    between the halves can belong with one of them: seeds found so): the summary says how many of each, and
    reconciles (read = kept + duplicates) with the index as the recheck leaves it."""
    from es_simhash.decide.default import DefaultRule
    from es_simhash.pipeline.recheck import recheck_run

    became_somewhere = False
    for seed in seeds:
        engine, summary = _random_index(seed, DefaultRule.rechecked() if rechecked else DefaultRule())
        before = {d.id: d.duplicate_of for page in engine.index.scan() for d in page}
        outcome = recheck_run(engine, summary, since=0, scope=None)
        after = {d.id: d.duplicate_of for page in engine.index.scan() for d in page}
        became = sum(before[i] is None and after[i] is not None for i in after)
        back = sum(before[i] is not None and after[i] is None for i in after)
        assert (summary.became, summary.taken_back) == (became, back) == (len(outcome.became()),
                                                                           len(outcome.taken_back())), seed
        assert summary.kept == sum(v is None for v in after.values()), seed
        assert summary.read == summary.kept + summary.duplicates, seed
        became_somewhere |= became > 0
    assert became_somewhere or len(seeds) > 2
