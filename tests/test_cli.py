"""The command line, end to end, as a user runs it (in process, through the console script's ``main``; one test
runs the installed entry point in a real subprocess)."""

import gzip
import json
import math
import subprocess
import sys

import pytest

from es_simhash.fingerprint import FINGERPRINT_VERSION, Fingerprinter
from es_simhash.fingerprint.text import normalize, segment
from support import chinese_articles, english_articles, run_cli


def run(*args, stdin=b"", cwd=None):
    return run_cli(*args, stdin=stdin, cwd=cwd)


def content_order(texts: dict[str, str]) -> list[str]:
    """The ids of ``texts`` (plain text) in the order dedup decides a set of records in, a function of the records
    alone (content hash, then id: ``index.base.precedence_key``): the first of a cluster heads it."""
    fingerprinter = Fingerprinter()
    return sorted(texts, key=lambda i: (fingerprinter.fingerprint(texts[i]).content_hash, i))


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """A crawl file with planted near duplicates, exact duplicates, empty texts and broken lines. ``truth``: id ->
    the document it duplicates (None: a canonical). Of each planted pair, the first in content order (content
    hash, then id: ``index.base.precedence_key``, the order dedup decides a set of records in) is the canonical
    and the other its duplicate; an exact copy has its original's content hash, so the smaller id of the two
    ("exact..." sorts before "o...") heads their cluster."""
    zh = [a for a in chinese_articles() if 800 <= len(a) <= 3000][:80]
    en = [a for a in english_articles() if 1500 <= len(a) <= 4000][:40]
    lines, truth = [], {}

    def planted(original: str, copy: str, text: str) -> None:
        lines.append({"id": copy, "content": text})
        first, then = content_order({original: next(x["content"] for x in lines if x["id"] == original), copy: text})
        truth[first], truth[then] = None, first

    for i, a in enumerate(zh + en):
        lines.append({"id": f"o{i}", "content": a})
        truth[f"o{i}"] = None
    for i in range(0, 80, 8):
        planted(f"o{i}", f"near{i}", zh[i].replace("，", ",", 2) + "（完）")
    for i in range(0, 40, 10):
        planted(f"o{80 + i}", f"exact{i}", en[i].replace("  ", " ") + "  ")
    lines += [{"id": "empty1", "content": ""}, {"id": "empty2", "content": ""}, {"id": "punct", "content": "!!!"}]
    truth.update(empty1=None, empty2=None, punct=None)
    raw = [json.dumps(x, ensure_ascii=False).encode() for x in lines]
    raw.insert(50, b'{"id": "broken", "content": ')
    raw.insert(90, b"\xff\xfe not json")
    raw.append(json.dumps({"id": "o3", "content": "same id again"}).encode())
    path = tmp_path_factory.mktemp("crawl") / "crawl.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n".join(raw) + b"\n"))
    return path, truth, len(raw)


def test_dedup_end_to_end(crawl, tmp_path):
    path, truth, n_lines = crawl
    res = run("dedup", path, "--report", tmp_path / "r.jsonl", "--output", tmp_path / "o.jsonl",
              "--dead-letters", tmp_path / "dead.jsonl")
    assert res.returncode == 0, res.stderr.decode()
    report = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    dead = [json.loads(x) for x in (tmp_path / "dead.jsonl").read_text().splitlines()]
    kept = (tmp_path / "o.jsonl").read_bytes().splitlines()
    # nothing lost: every line is in the report or a dead letter
    assert len(report) + len(dead) == n_lines
    assert sorted(d["line"] for d in dead) == [51, 91, n_lines]
    assert "duplicate id 'o3'" in dead[-1]["reason"]
    assert [r["line"] for r in report] == sorted(r["line"] for r in report)  # input order
    got = {r["id"]: (r["duplicate_of"] if r["duplicate"] else None) for r in report}
    assert got == truth
    assert all(r["reason"] == "exact" for r in report if truth[r["id"]] and truth[r["id"]].startswith("exact"))
    assert all(r["cluster"] == truth[r["id"]] for r in report if truth[r["id"]])
    # the output: the input's own lines (bytes as read) of every record that is not a duplicate, in input order
    seen, want = set(), []
    for line in gzip.decompress(path.read_bytes()).splitlines():
        try:
            doc_id = json.loads(line)["id"]
        except (ValueError, KeyError):
            continue  # (a dead letter)
        if doc_id in truth and truth[doc_id] is None and doc_id not in seen:
            want.append(line)
        seen.add(doc_id)
    assert kept == want and len(kept) == sum(1 for v in truth.values() if v is None)
    summary = res.stderr.decode()
    assert f"read {n_lines}" in summary and f"duplicates {len([v for v in truth.values() if v])}" in summary
    assert "dead letters 3" in summary


FORUM_NOTICE = ("温馨提示：本版帖子仅代表网友个人看法，与本论坛立场无关；如需转载请联系原作者并注明出处，"
                "因转载引起的一切纠纷由转载者自行承担，本论坛不承担任何法律责任。")
FORUM_BODIES = ["这周六上午九点在湖边公园集合，一起骑车去北山看红叶。", "新开的面馆味道真不错，牛肉面分量足，价格也公道。",
                "孩子的数学作业越来越难了，晚上陪写作业到十一点。", "家里的老猫今年十六岁了，每天还要在阳台晒两个小时太阳。"]


def test_dedup_takes_back_a_merge_made_before_the_template_was_known(tmp_path):
    # four forum posts of one template (a board line, a short body, a notice that is most of the post) with other
    # bodies, between articles, and a repost of the first post's body under another board. Decided in precedence
    # order without the recheck, the second post decided meets the template seen once and is put with the first
    # one decided; the recheck knows the template from the whole input and takes that merge back, in the report
    # and the output.
    articles = [a for a in chinese_articles() if 300 <= len(a) <= 800][:4]
    lines = []
    for i, body in enumerate(FORUM_BODIES):
        lines.append({"id": f"a{i}", "content": articles[i]})
        lines.append({"id": f"p{i}", "content": f"【城市生活】网友原创\n{body}\n{FORUM_NOTICE}"})
    lines.append({"id": "repost", "content": f"【户外运动】网友原创\n{FORUM_BODIES[0]}\n{FORUM_NOTICE}"})
    path = tmp_path / "forum.jsonl"
    path.write_bytes(b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines))
    raw = path.read_bytes().splitlines(keepends=True)
    out = {}
    for flag in ("--no-recheck", "--recheck"):
        res = run("dedup", path, "--report", tmp_path / f"r{flag}.jsonl", "--output", tmp_path / f"o{flag}.jsonl",
                  flag)
        assert res.returncode == 0, res.stderr.decode()
        report = [json.loads(x) for x in (tmp_path / f"r{flag}.jsonl").read_text().splitlines()]
        assert [r["line"] for r in report] == list(range(1, len(lines) + 1))  # one line per record, input order
        out[flag] = ({r["id"]: r["cluster"] for r in report}, (tmp_path / f"o{flag}.jsonl").read_bytes(),
                     res.stderr.decode())
    arrival, _, _ = out["--no-recheck"]
    posts = [f"p{i}" for i in range(len(FORUM_BODIES))]
    merged = [p for p in posts if arrival[p] != p]
    assert len(merged) == 1 and arrival[merged[0]] in posts and arrival["repost"] in posts
    final, kept, summary = out["--recheck"]
    # (p0 and its repost: one cluster, headed by the first of them in content order, the order dedup decides in)
    head = content_order({x["id"]: x["content"] for x in lines if x["id"] in ("p0", "repost")})[0]
    assert final == {**arrival, merged[0]: merged[0], "p0": head, "repost": head}
    # the output: every record that is not a duplicate in the end, as the input has it, in input order
    assert kept == b"".join(line for line, x in zip(raw, lines) if final[x["id"]] == x["id"])
    assert "duplicates 1 " in summary and "1 duplicates no more" in summary
    # from standard input, which cannot be read again: the same report and output, in input order
    res = run("dedup", "-", "--report", tmp_path / "r-stdin.jsonl", "--output", tmp_path / "o-stdin.jsonl",
              stdin=path.read_bytes())
    assert res.returncode == 0, res.stderr.decode()
    report = [json.loads(x) for x in (tmp_path / "r-stdin.jsonl").read_text().splitlines()]
    assert {r["id"]: r["cluster"] for r in report} == final and len(report) == len(lines)
    from_file = [json.loads(x) for x in (tmp_path / "r--recheck.jsonl").read_text().splitlines()]
    assert [{**r, "source": None} for r in report] == [{**r, "source": None} for r in from_file]
    assert (tmp_path / "o-stdin.jsonl").read_bytes() == kept
    # one file for both is refused before anything is written
    same = run("dedup", path, "--report", tmp_path / "same.jsonl", "--output", tmp_path / "same.jsonl")
    assert same.returncode == 1 and b"same file" in same.stderr and not (tmp_path / "same.jsonl").exists()


def test_dedup_with_a_loaded_index_reports_only_its_own_records(tmp_path):
    # yesterday's run (decided on arrival) holds a template's first two posts in one cluster; today's posts of
    # the template make the recheck take yesterday's second post back: it changes in the index, but the summary
    # and the report are today's records only, and still reconcile
    day1, day2 = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    post = "【城市生活】网友原创\n{}\n" + FORUM_NOTICE
    day1.write_text("".join(json.dumps({"id": f"p{i}", "content": post.format(b)}, ensure_ascii=False) + "\n"
                            for i, b in enumerate(FORUM_BODIES[:2])), encoding="utf-8")
    day2.write_text("".join(json.dumps({"id": f"q{i}", "content": post.format(b)}, ensure_ascii=False) + "\n"
                            for i, b in enumerate(FORUM_BODIES[2:])), encoding="utf-8")
    first = run("dedup", day1, "--report", tmp_path / "r1.jsonl", "--no-recheck", "--save-index", tmp_path / "i.npz")
    assert first.returncode == 0 and [json.loads(x)["cluster"] for x in
                                      (tmp_path / "r1.jsonl").read_text().splitlines()] == ["p0", "p0"]
    res = run("dedup", day2, "--load-index", tmp_path / "i.npz", "--report", tmp_path / "r2.jsonl",
              "--output", tmp_path / "o2.jsonl", "--save-index", tmp_path / "i2.npz")
    assert res.returncode == 0, res.stderr.decode()
    summary = res.stderr.decode()
    assert "read 2  kept 2  duplicates 0" in summary and "1 documents indexed before this run changed" in summary
    assert [json.loads(x)["id"] for x in (tmp_path / "r2.jsonl").read_text().splitlines()] == ["q0", "q1"]
    assert (tmp_path / "o2.jsonl").read_bytes() == day2.read_bytes()  # (both posts of day 2 kept, as read)


def test_rerun_gives_the_same_report(crawl, tmp_path):
    path, _, _ = crawl
    for name in ("a", "b"):
        assert run("dedup", path, "--report", tmp_path / f"{name}.jsonl", "--dead-letters",
                   tmp_path / "d.jsonl").returncode == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_worker_processes_give_the_same_report_and_dead_letters(crawl, tmp_path):
    path, _, _ = crawl
    for name, extra in (("inline", ()), ("workers", ("--workers", "2", "--batch-size", "16"))):
        res = run("dedup", path, "--report", tmp_path / f"{name}.jsonl", "--dead-letters",
                  tmp_path / f"{name}-dead.jsonl", "--output", tmp_path / f"{name}-out.jsonl", *extra)
        assert res.returncode == 0, res.stderr.decode()
    for suffix in (".jsonl", "-dead.jsonl", "-out.jsonl"):
        assert (tmp_path / f"inline{suffix}").read_bytes() == (tmp_path / f"workers{suffix}").read_bytes()


@pytest.mark.parametrize("name", ["idx.npz", "myidx", "yesterday.index"])
def test_saved_index_catches_duplicates_of_yesterdays_crawl(tmp_path, name):
    """--save-index writes the file it is given, named as given, and --load-index NAME reads it back: today's copy
    of d7 is one cluster with it (the documents of the saved index and today's decided as one set, the first in
    content order heading it)."""
    zh = [a for a in chinese_articles() if 800 <= len(a)][:20]
    day1, day2 = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    day1.write_text("".join(json.dumps({"id": f"d{i}", "content": a}) + "\n" for i, a in enumerate(zh)))
    day2.write_text(json.dumps({"id": "new", "content": zh[7] + "（完）"}) + "\n")
    assert run("dedup", day1, "--save-index", name, cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in ("day1.jsonl", "day2.jsonl")) == [name]
    res = run("dedup", day2, "--load-index", name, "--report", tmp_path / "r.jsonl", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    first, then = content_order({"d7": zh[7], "new": zh[7] + "（完）"})
    assert json.loads((tmp_path / "r.jsonl").read_text())["cluster"] == first
    assert json.loads((tmp_path / "r.jsonl").read_text())["duplicate_of"] == (first if then == "new" else None)


def test_an_input_that_holds_no_record_exits_5_and_keeps_earlier_outputs(tmp_path, crawl):
    """One rule for a run that decides nothing, whatever the reason (an empty input, blank lines only, a misspelt
    --text-field): exit 5 with the reason, and the outputs of an earlier run are left as they were."""
    path, _, _ = crawl
    outputs = ("--report", tmp_path / "r.jsonl", "--output", tmp_path / "o.jsonl")
    assert run("dedup", path, *outputs).returncode == 0
    before = [(tmp_path / n).read_bytes() for n in ("r.jsonl", "o.jsonl")]
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n  \n\n")
    for args in (["empty.jsonl"], ["blank.jsonl"], ["-"], [path, "--text-field", "contnet"]):
        res = run("dedup", *args, *outputs, cwd=tmp_path)
        err = res.stderr.decode()
        assert res.returncode == 5 and err.count("\n") == 1, (args, err)
        assert ("holds no records" in err) != (args[-1] == "contnet"), err
        assert [(tmp_path / n).read_bytes() for n in ("r.jsonl", "o.jsonl")] == before, args


def test_stdin_and_text_field(tmp_path):
    data = (json.dumps({"key": 1, "txt": "重复的内容在这里出现了很多次，这是一段足够长的中文文本。" * 3}) + "\n") * 2
    res = run("dedup", "-", "--text-field", "txt", "--id-field", "key", "--report", tmp_path / "r.jsonl",
              "--dead-letters", tmp_path / "d.jsonl", stdin=data.encode())
    assert res.returncode == 0
    assert "dead letters 1" in res.stderr.decode()  # the second record repeats id 1


def test_errors_are_one_line_with_a_nonzero_exit(tmp_path):
    res = run("dedup", tmp_path / "missing.jsonl")
    assert res.returncode == 1
    assert res.stderr.decode().strip() == f"es-simhash: error: input not found: {tmp_path / 'missing.jsonl'}"
    res = run("dedup", tmp_path / "x.jsonl", "--bogus")
    assert res.returncode == 2 and b"Traceback" not in res.stderr
    (tmp_path / "bad-idf.txt").write_text("no numbers here\n")
    (tmp_path / "in.jsonl").write_text('{"content": "x"}\n')
    res = run("dedup", tmp_path / "in.jsonl", "--idf", tmp_path / "bad-idf.txt")
    assert res.returncode == 1 and b"Traceback" not in res.stderr and b"IDF" in res.stderr


def test_fingerprint_command(tmp_path):
    res = run("fingerprint", "新华社北京电 国务院总理今天会见了来访的外国客人，双方就共同关心的问题交换了意见。")
    fp = json.loads(res.stdout)
    assert res.returncode == 0 and fp["fingerprint_version"] == FINGERPRINT_VERSION and len(fp["segments"]) == 4
    assert int(fp["simhash"], 16) == sum(int(s, 16) << (16 * i) for i, s in enumerate(fp["segments"]))
    empty = json.loads(run("fingerprint", "-", stdin=b"...").stdout)
    assert empty["empty"] and empty["segments"] == []
    for command in ("fingerprint", "check"):  # no text at all is a usage error, as for every command that takes one
        res = run(command)
        assert res.returncode == 2 and b"no text" in res.stderr and res.stdout == b""


def test_version_flag_and_command():
    from es_simhash import __version__

    for args in (["--version"], ["version"]):
        res = run(*args)
        assert res.returncode == 0 and res.stdout.decode().strip() == __version__
    real = subprocess.run([sys.executable, "-m", "es_simhash", "--version"], capture_output=True, timeout=120)
    assert real.returncode == 0 and real.stdout.decode().strip() == __version__


def test_one_short_option_means_one_thing_in_every_command():
    """A short option names the same long option wherever it appears (-n is always --limit, -i --index, ...), and
    a concept has one name: the index is --index everywhere, Kibana's commands included."""
    import typer.main

    from es_simhash.cli import app

    group = typer.main.get_command(app)
    meaning: dict[str, set[str]] = {}
    names: set[str] = set()

    def walk(command) -> None:
        for sub in getattr(command, "commands", {}).values():
            walk(sub)
        for param in (p for p in command.params if p.param_type_name == "option"):
            longs = [o for o in param.opts + param.secondary_opts if o.startswith("--")]
            names.update(longs)
            for short in (o for o in param.opts if not o.startswith("--")):
                meaning.setdefault(short, set()).update(longs[:1])

    walk(group)
    assert {s: m for s, m in meaning.items() if len(m) != 1} == {}
    assert meaning["-n"] == {"--limit"} and meaning["-i"] == {"--index"} and meaning["-o"] == {"--output"}
    assert not names & {"--index-pattern", "--top", "--size"}


def test_fit_idf_learns_a_table_that_dedup_uses(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"content": a}) + "\n" for a in english_articles()[:300]))
    res = run("fit-idf", corpus, "-o", tmp_path / "idf.txt")
    assert res.returncode == 0, res.stderr
    table = dict(line.rsplit(" ", 1) for line in (tmp_path / "idf.txt").read_text().splitlines())
    words = [set(segment(normalize(a))) for a in english_articles()[:300]]  # each document's words
    for word in ("government", "football", "minister"):  # IDF = ln(N / documents holding the word)
        df = sum(1 for w in words if word in w)
        assert 2 <= df < len(words) and float(table[word]) == pytest.approx(math.log(len(words) / df), abs=1e-3)
    assert all(float(v) > 0 for v in table.values())  # no word is in every document
    assert "the" not in table  # stop words are not learnt
    assert run("dedup", corpus, "--idf", tmp_path / "idf.txt").returncode == 0


def test_fit_idf_with_a_misspelt_text_field_names_the_field_and_the_fields_seen(tmp_path):
    corpus = tmp_path / "p1.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "content": a}) + "\n"
                              for i, a in enumerate(english_articles()[:5])))
    res = run("fit-idf", corpus, "--text-field", "contnet", "-o", tmp_path / "idf.txt")
    err = res.stderr.decode()
    assert res.returncode == 1 and err.count("\n") == 1, err
    assert err.startswith("es-simhash: error: no record has a text to learn from: no text field (looked for "
                          "'contnet'; the record has 'id', 'content'; use --text-field)"), err
    assert not (tmp_path / "idf.txt").exists()


@pytest.mark.parametrize("suffix,compress", [(".bz2", "bzip2"), (".xz", "xz"), (".zst", "zstd")])
def test_bzip2_and_xz_inputs_are_read_and_a_zstd_one_is_refused_in_one_line(tmp_path, suffix, compress):
    import shutil

    if shutil.which(compress) is None:
        pytest.skip(f"no {compress} program")
    plain = tmp_path / "crawl.jsonl"
    texts = english_articles()[:4]
    plain.write_text("".join(json.dumps({"id": f"d{i}", "content": t}) + "\n"
                             for i, t in enumerate([*texts, texts[0]])))
    subprocess.run([compress, "-k", "-q", str(plain)], check=True)  # (the real tool: crawl.jsonl + suffix)
    packed = tmp_path / f"crawl.jsonl{suffix}"
    res = run("dedup", packed, "--report", "r.jsonl", "--no-progress", cwd=tmp_path)
    err = res.stderr.decode()
    if compress == "zstd":
        assert res.returncode == 1 and err == (f"es-simhash: error: {packed} is zstd-compressed: decompress it first "
                                               f"(zstd -d {packed}), or compress it with gzip, bzip2 or xz\n"), err
        piped = run("dedup", "-", "--no-progress", stdin=packed.read_bytes(), cwd=tmp_path)
        assert piped.returncode == 1 and piped.stderr.decode().startswith(
            "es-simhash: error: stdin is zstd-compressed: decompress it first (zstd -d)"), piped.stderr
        assert piped.stderr.decode().count("\n") == 1
        return
    assert res.returncode == 0 and "read 5  kept 4  duplicates 1  dead letters 0" in err, err
    report = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["id"], r["duplicate_of"], r["line"]) for r in report] == \
        [("d0", None, 1), ("d1", None, 2), ("d2", None, 3), ("d3", None, 4), ("d4", "d0", 5)]


def test_help_explains_commands():
    res = run("--help")
    out = res.stdout.decode()
    assert res.returncode == 0 and "dedup" in out and "fingerprint" in out and "fit-idf" in out
    real = subprocess.run([sys.executable, "-m", "es_simhash", "--help"], capture_output=True, timeout=120)
    assert real.returncode == 0 and real.stdout == res.stdout  # the module entry point, in a real process


def test_index_and_migrate_batch_as_the_engine_does_with_elasticsearch():
    """The commands that write into Elasticsearch take the engine's batch size for an index that shares writers
    (each batch costs the cluster a refresh and a settling), not the embedded one's."""
    import inspect

    from es_simhash.cli.elastic import index_cmd, migrate
    from es_simhash.defaults import BATCH_SIZE, SHARED_BATCH_SIZE
    from es_simhash.engine.dedup_engine import DedupEngine

    assert SHARED_BATCH_SIZE > BATCH_SIZE
    for command in (index_cmd, migrate):
        assert inspect.signature(command).parameters["batch_size"].default == SHARED_BATCH_SIZE
    assert DedupEngine().batch_size == BATCH_SIZE  # (the embedded index)


def test_a_gbk_crawl_with_encoding_auto(tmp_path):
    """A crawl saved in GBK (a common Chinese site encoding): by default every line is a dead letter, and the run
    fails (exit 5) with the reason, which names --encoding auto, on the terminal; with it, every record is read,
    its reprint found, and the summary counts the lines read as GB18030."""
    zh = chinese_articles()[:6]
    lines = [{"id": f"p{i}", "content": t} for i, t in enumerate(zh)] + [{"id": "copy", "content": zh[2] + "（完）"}]
    path = tmp_path / "gbk.jsonl"
    path.write_bytes(b"".join(json.dumps(x, ensure_ascii=False).encode("gb18030") + b"\n" for x in lines))
    strict = run("dedup", path, "--report", "r.jsonl", "--no-progress", cwd=tmp_path)
    assert strict.returncode == 5, strict.stderr.decode()
    assert "none of the 7 records read could be decided: not UTF-8 (invalid byte" in strict.stderr.decode()
    assert "try --encoding auto" in strict.stderr.decode()
    assert "try --encoding auto" in (tmp_path / "dead-letters.jsonl").read_text(encoding="utf-8")
    assert not (tmp_path / "r.jsonl").exists()  # (a run that decided nothing writes no report)
    res = run("dedup", path, "--encoding", "auto", "--report", "r.jsonl", "--no-progress", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 0 and "read 7  kept 6  duplicates 1  dead letters 0" in err, err
    assert "7 records were not UTF-8 and were read as GB18030" in err
    report = {r["id"]: r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    first, then = content_order({"p2": zh[2], "copy": zh[2] + "（完）"})  # (the first in content order heads it)
    assert report[then]["duplicate_of"] == first and report[first]["duplicate_of"] is None
    bad = run("dedup", path, "--encoding", "klingon", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.decode() == (
        "es-simhash: error: invalid value for --encoding: 'klingon' is not a codec name; use utf-8, auto, gb18030, "
        "big5 or another Python codec\n")


def test_html_pages_are_read_as_text_and_counted(tmp_path):
    zh = chinese_articles()[40:42]
    wrap = '<div class="main" style="font-size:16px;color:#333"><p>{}</p><p>责任编辑：某某</p></div>'
    lines = [{"id": "a", "content": wrap.format(zh[0])}, {"id": "b", "content": wrap.format(zh[1])},
             {"id": "a-text", "content": zh[0]}, {"id": "plain", "content": "当 a < b 时"}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    res = run("dedup", "in.jsonl", "--report", "r.jsonl", "--no-progress", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 0 and "2 records carried HTML" in err, err
    report = {r["id"]: r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    # (a's text and a-text: one cluster, headed by the first of the two in content order)
    assert report["a-text"]["cluster"] == report["a"]["cluster"] in ("a", "a-text")
    assert {report["a"]["duplicate_of"], report["a-text"]["duplicate_of"]} in ({None, "a"}, {None, "a-text"})
    assert report["b"]["duplicate_of"] is None
    kept = run("dedup", "in.jsonl", "--html", "keep", "--no-progress", cwd=tmp_path)
    assert kept.returncode == 0 and "carried HTML" not in kept.stderr.decode()
    bad = run("dedup", "in.jsonl", "--html", "maybe", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.decode() == (
        "es-simhash: error: invalid value for --html: 'maybe' is not a markup mode; use auto, strip, keep\n")


def test_a_saved_index_of_an_older_fingerprint_version_is_refused(tmp_path):
    """Fingerprints of another version never match (version 4 reads spaces and repeated terms differently): a
    saved embedded index of version 3 must be rebuilt, not silently used."""
    from es_simhash.fingerprint import Fingerprint
    from es_simhash.records import StoredDoc
    from es_simhash.index.memory import MemoryIndex

    old = MemoryIndex()
    old.add([StoredDoc("a", Fingerprint(1, 2, (), 10, 300, False, version=FINGERPRINT_VERSION - 1), "a")])
    old.save(tmp_path / "old.npz")
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "b", "content": "今天的天气很好，适合出去散步。"}) + "\n")
    res = run("dedup", "in.jsonl", "--load-index", "old.npz", cwd=tmp_path)
    assert res.returncode == 1 and f"fingerprints of version {FINGERPRINT_VERSION - 1}" in res.stderr.decode()


def test_explain_says_why_in_words_and_json(tmp_path):
    article = chinese_articles()[7]
    (tmp_path / "a.txt").write_text("本网讯 " + article + "（完）", encoding="utf-8")
    res = run("explain", "a.txt", article, cwd=tmp_path)
    out = res.stdout.decode()
    assert res.returncode == 0 and out.startswith("A duplicates B: yes (simhash)"), out
    assert "both long: SimHash" in out and "k = 3" in out
    res = run("explain", "他不同意这个方案。", "他同意这个方案。", "--json", cwd=tmp_path)
    got = json.loads(res.stdout)
    assert got["duplicate"] is False and got["vetoed_by"].startswith("the meaning guard")
    other = chinese_articles()[8]
    got = json.loads(run("explain", article, other, "--json", cwd=tmp_path).stdout)
    assert got["duplicate"] is False and got["distance"] > 3 and got["shared_sentences"] == 0


def test_the_command_line_starts_without_rich_or_pydantic(tmp_path):
    """Start-up: `--help` and a `dedup --no-progress` run import Typer, not rich (only progress bars and tables
    need it, when drawn) nor pydantic (Typer 0.29's option adapters cost ~0.09 s a run), in a fresh process."""
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "今天天气很好"}\n', encoding="utf-8")
    probe = ("import sys\nfrom es_simhash import cli\ncode = cli.main(sys.argv[1:])\n"
             "print(code, *sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pydantic', 'typer', 'click'}),"
             " file=sys.stderr)")
    for args in (["--help"], ["dedup", "in.jsonl", "--no-progress"]):
        res = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, timeout=120, cwd=tmp_path)
        assert res.stderr.decode().splitlines()[-1] == "0 typer", (args, res.stderr.decode())
