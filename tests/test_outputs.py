"""Nothing a user types destroys a file: every output is refused when it is an input or another output, and a run
that fails or is interrupted leaves earlier outputs as they were. Run as a user runs them: `python -m es_simhash`
in a real process (the option refusals come before any connection, so `index` needs no node for them)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import chinese_articles

import es_simhash

CODE = Path(es_simhash.__file__).resolve().parents[1]
EXAMPLE = CODE / "examples" / "crawl.jsonl.gz"


def run(*args, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "es_simhash", *map(str, args)], capture_output=True, env=full,
                          cwd=cwd, timeout=timeout)


@pytest.fixture
def crawl(tmp_path: Path) -> Path:
    """A copy of the example crawl, and a symbolic link and a hard link to it."""
    path = tmp_path / "crawl.jsonl.gz"
    shutil.copyfile(EXAMPLE, path)
    (tmp_path / "link.jsonl.gz").symlink_to(path)
    os.link(path, tmp_path / "hard.jsonl.gz")
    return path


NAMES = ("crawl.jsonl.gz", "./crawl.jsonl.gz", "link.jsonl.gz", "hard.jsonl.gz")
"""The input itself: by its name, with ./, through a symbolic link, through a hard link."""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("command, option", [
    ("dedup", "--report"), ("dedup", "--output"), ("dedup", "--dead-letters"),
    ("index", "--report"), ("index", "--dead-letters"), ("index", "--checkpoint"),
    ("fit-idf", "--output"),
])
def test_an_output_that_is_the_input_is_refused_and_the_input_is_unchanged(crawl, tmp_path, command, option, name):
    before = crawl.read_bytes()
    args = [command, "crawl.jsonl.gz", option, name]
    if command == "index":
        args += ["--es-url", "http://127.0.0.1:9"]  # (refused before any connection: nothing listens there)
    res = run(*args, cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert f"{option} " in err and "is the input" in err and "give another path" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert crawl.read_bytes() == before


def test_the_html_report_and_saved_index_cannot_overwrite_their_inputs(crawl, tmp_path):
    before = crawl.read_bytes()
    assert run("dedup", crawl, "--report", "r.jsonl", "--no-progress", cwd=tmp_path).returncode == 0
    report = (tmp_path / "r.jsonl").read_bytes()
    res = run("report", "--from-dedup", "r.jsonl", "--input", "crawl.jsonl.gz", "--output", "r.jsonl", cwd=tmp_path)
    assert res.returncode == 1 and b"--output r.jsonl is the input r.jsonl" in res.stderr
    res = run("report", "--from-dedup", "r.jsonl", "--input", "crawl.jsonl.gz", "-o", "link.jsonl.gz", cwd=tmp_path)
    assert res.returncode == 1 and b"is the input" in res.stderr
    res = run("dedup", crawl, "--save-index", "x.npz", "--report", "x.npz", cwd=tmp_path)
    assert res.returncode == 1 and b"--report and --save-index name the same file" in res.stderr
    assert (tmp_path / "r.jsonl").read_bytes() == report and crawl.read_bytes() == before
    # a saved index read with --load-index is an input of the other outputs (but may be saved again in place)
    assert run("dedup", crawl, "--save-index", "day1", "--no-progress", cwd=tmp_path).returncode == 0
    saved = (tmp_path / "day1").read_bytes()  # (named as given: no .npz added)
    assert not (tmp_path / "day1.npz").exists()
    res = run("dedup", crawl, "--load-index", "day1", "--report", "day1", cwd=tmp_path)
    assert res.returncode == 1 and b"is the input day1" in res.stderr and (tmp_path / "day1").read_bytes() == saved
    res = run("dedup", crawl, "--load-index", "day1", "--save-index", "day1", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()


def test_two_outputs_that_are_one_file_are_refused_streams_are_not(crawl, tmp_path):
    res = run("dedup", crawl, "--report", "a.jsonl", "--output", "./a.jsonl", cwd=tmp_path)
    assert res.returncode == 1 and b"--report and --output name the same file" in res.stderr
    assert not (tmp_path / "a.jsonl").exists()
    res = run("dedup", crawl, "--report", "-", "--output", "-", cwd=tmp_path)
    assert res.returncode == 1 and b"both write to standard output" in res.stderr
    res = run("dedup", crawl, "--report", os.devnull, "--output", os.devnull, "--no-progress", cwd=tmp_path)
    assert res.returncode == 0 and b"read 657" in res.stderr, res.stderr.decode()
    res = run("dedup", crawl, "--report", "-", "--no-progress", cwd=tmp_path)
    lines = [json.loads(x) for x in res.stdout.decode().splitlines()]  # (the report on stdout)
    assert res.returncode == 0 and len({x["id"] for x in lines}) == 655 and "read 657" in res.stderr.decode()


def test_an_output_in_a_folder_that_takes_no_file_names_the_option(crawl, tmp_path):
    """/proc lets root "write" into it but creates no file there: the run is refused before anything is read, in
    one line naming the option and the folder (not a temporary file of the run's own)."""
    for option, path in (("--report", "/proc/report.jsonl"), ("--output", "/proc/self/unique.jsonl")):
        res = run("dedup", crawl, option, path, "--no-progress", cwd=tmp_path)
        err = res.stderr.decode().strip()
        assert res.returncode == 1 and err.count("\n") == 0, err
        assert f"{option} {path}" in err and ".tmp" not in err and "give another path" in err, err


def test_a_failing_output_leaves_an_earlier_report_as_it_was(crawl, tmp_path):
    """An output whose folder is missing is refused before anything is written, naming the option; an output that
    fails in the middle of the run (a full disk: /dev/full) leaves the other outputs as they were too."""
    old = tmp_path / "old.jsonl"
    old.write_text('{"the previous run": "report"}\n')
    res = run("dedup", crawl, "--report", old, "--output", "/missing-dir/u.jsonl", cwd=tmp_path)
    assert res.returncode == 1 and b"--output /missing-dir/u.jsonl: the folder /missing-dir does not exist" in res.stderr
    assert old.read_text() == '{"the previous run": "report"}\n'
    res = run("dedup", crawl, "--report", tmp_path, cwd=tmp_path)
    assert res.returncode == 1 and b"is a folder" in res.stderr and b"--report" in res.stderr
    if os.path.exists("/dev/full"):
        res = run("dedup", crawl, "--report", old, "--output", "/dev/full", "--dead-letters", "dl.jsonl",
                  "--no-progress", cwd=tmp_path)
        assert res.returncode == 1 and b"No space left on device" in res.stderr, res.stderr.decode()
        assert old.read_text() == '{"the previous run": "report"}\n'
        assert not (tmp_path / "dl.jsonl").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # (no temporary file left behind)


def test_an_interrupted_dedup_leaves_earlier_outputs_as_they_were(tmp_path):
    texts = [t for t in chinese_articles() if len(t) > 500] * 8
    crawl = tmp_path / "big.jsonl"
    crawl.write_text("".join(json.dumps({"id": f"d{i}", "content": t}, ensure_ascii=False) + "\n"
                             for i, t in enumerate(texts)), encoding="utf-8")
    (tmp_path / "r.jsonl").write_text("earlier report\n")
    (tmp_path / "o.jsonl").write_text("earlier output\n")
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "es_simhash", "dedup", str(crawl), "-r", "r.jsonl", "-o", "o.jsonl",
                             "--no-progress", "--batch-size", "50"], cwd=tmp_path, env=full, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not [p for p in os.listdir(tmp_path) if p.endswith(".tmp") and os.path.getsize(tmp_path / p)]:
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it wrote anything"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()
    assert b"no output was written (earlier files are as they were)" in err
    assert (tmp_path / "r.jsonl").read_text() == "earlier report\n" and (tmp_path / "o.jsonl").read_text() == \
        "earlier output\n"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_misspelt_text_field_fails_with_the_reason(crawl, tmp_path):
    res = run("dedup", crawl, "--text-field", "contnet", "--report", "r.jsonl", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 5, err
    assert "none of the 657 records read could be decided" in err and "no text field (looked for 'contnet'" in err
    assert "use --text-field" in err and not (tmp_path / "r.jsonl").exists()
    dead = [json.loads(x) for x in (tmp_path / "dead-letters.jsonl").read_text().splitlines()]
    assert len(dead) == 657 and [d["line"] for d in dead] == sorted(d["line"] for d in dead)


def test_a_run_that_decides_nothing_keeps_an_earlier_dead_letters_file(crawl, tmp_path):
    tmp_path = tmp_path / "work"  # (the crawl fixture writes into tmp_path)
    tmp_path.mkdir()
    (tmp_path / "dl.jsonl").write_text("earlier dead letters\n")
    (tmp_path / "r.jsonl").write_text("earlier report\n")
    res = run("dedup", crawl, "--text-field", "contnet", "--report", "r.jsonl", "--dead-letters", "dl.jsonl",
              cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 5 and "no text field (looked for 'contnet'" in err, err
    assert "dl.jsonl" not in err  # (the reasons are not in it: it was kept)
    assert (tmp_path / "dl.jsonl").read_text() == "earlier dead letters\n"
    assert (tmp_path / "r.jsonl").read_text() == "earlier report\n"
    assert sorted(os.listdir(tmp_path)) == ["dl.jsonl", "r.jsonl"]  # (no temporary or partial file left)


def test_explain_refuses_a_path_that_is_not_a_file(tmp_path):
    (tmp_path / "a.txt").write_text("内容去重是搜索引擎的基本功。" * 10, encoding="utf-8")
    res = run("explain", "artcle.txt", "a.txt", cwd=tmp_path)
    assert res.returncode == 1 and b"A: no such file artcle.txt (to compare it as a text, give --text)" in res.stderr
    res = run("explain", "a.txt", "sub/dir/b", cwd=tmp_path)
    assert res.returncode == 1 and b"B: no such file sub/dir/b" in res.stderr
    res = run("explain", tmp_path, tmp_path, cwd=tmp_path)
    assert res.returncode == 1 and b"is a folder, not a file" in res.stderr
    res = run("explain", "a.txt", "a.txt", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith(b"A duplicates B: yes (exact)")
    res = run("explain", "--text", "artcle.txt", "artcle.txt", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith(b"A duplicates B: yes (exact)")


def test_dead_letters_are_in_line_order_with_whole_characters(tmp_path):
    """Malformed lines and records refused later (a repeated id) are written in line order, and an excerpt is cut
    before a character, not inside it."""
    long = "中文" * 200
    lines = [json.dumps({"id": "a", "content": long}, ensure_ascii=False), "{broken",
             json.dumps({"id": "a", "content": "again " * 30}), "[1]", json.dumps({"id": "b", "content": long + "x"})]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = run("dedup", path, "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    dead = [json.loads(x) for x in (tmp_path / "dead-letters.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [d["line"] for d in dead] == [2, 3, 4]
    assert "duplicate id 'a'" in dead[1]["reason"] and "\\x" not in dead[1]["excerpt"]
    line = '{"id": "cc", "content": 5, "t": "' + long + '"}'
    with pytest.raises(UnicodeDecodeError):
        line.encode("utf-8")[:200].decode("utf-8")  # (200 bytes end inside a character)
    (tmp_path / "one.jsonl").write_text(line + "\n", encoding="utf-8")
    res = run("dedup", "one.jsonl", "--dead-letters", "d1.jsonl", cwd=tmp_path)
    assert res.returncode == 5
    excerpt = json.loads((tmp_path / "d1.jsonl").read_text(encoding="utf-8"))["excerpt"]
    assert line.startswith(excerpt) and len(excerpt.encode("utf-8")) == 198, excerpt


def test_kibana_export_writes_the_saved_objects_for_any_pattern(tmp_path):
    res = run("kibana", "export", "--index", "crawl-2026-*", "--output", "objects.ndjson", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    objects = [json.loads(x) for x in (tmp_path / "objects.ndjson").read_text().splitlines()]
    views = [o for o in objects if o["type"] == "index-pattern"]
    assert len(views) == 1 and views[0]["attributes"]["title"] == "crawl-2026-*"
    assert {o["type"] for o in objects} >= {"index-pattern", "search", "dashboard"}
    assert "es-simhash*" not in (tmp_path / "objects.ndjson").read_text()
    res = run("kibana", "export", "-i", "x*", "-o", "-", cwd=tmp_path)
    assert res.returncode == 0 and b'"title": "x*"' in res.stdout


def test_a_gzip_input_is_compared_by_file_not_by_name(tmp_path):
    """Two inputs given through different names of one file are one input: outputs are compared with both."""
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "a", "content": "x" * 200}) + "\n")
    res = run("dedup", path, tmp_path / "." / "c.jsonl.gz", "--output", tmp_path / "c.jsonl.gz", cwd=tmp_path)
    assert res.returncode == 1 and b"is the input" in res.stderr


# -- with a real node --------------------------------------------------------------------------------------
def _get(url: str):
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


def test_a_misspelt_text_field_creates_no_index(crawl, tmp_path, es_url, es_index_name):
    res = run("index", crawl, "--index", es_index_name, "--text-field", "contnet", "--no-progress", cwd=tmp_path,
              env={"ES_URL": es_url})
    err = res.stderr.decode()
    assert res.returncode == 5, err
    assert "none of the 657 records read could be decided" in err and "no text field (looked for 'contnet'" in err
    assert es_index_name not in _get(f"{es_url}/_cat/indices?format=json&expand_wildcards=all").__str__()
    assert not list(tmp_path.glob("*.checkpoint.json"))  # (the run finished: nothing to resume)


def test_an_index_run_that_decides_nothing_leaves_earlier_outputs_and_no_partial_file(crawl, tmp_path, es_url,
                                                                                       es_index_name):
    tmp_path = tmp_path / "work"  # (the crawl fixture writes into tmp_path)
    tmp_path.mkdir()
    (tmp_path / "blank.jsonl").write_text("\n   \n\n")
    res = run("index", "blank.jsonl", "--index", es_index_name, "--report", "R.jsonl", "--no-progress", cwd=tmp_path,
              env={"ES_URL": es_url})
    assert res.returncode == 5 and b"holds no records" in res.stderr, res.stderr.decode()
    assert sorted(os.listdir(tmp_path)) == ["blank.jsonl"]  # (no R.jsonl, no R.jsonl.es-simhash-partial)
    (tmp_path / "dl.jsonl").write_text("earlier dead letters\n")
    (tmp_path / "R.jsonl").write_text("earlier report\n")
    res = run("index", crawl, "--index", es_index_name, "--text-field", "contnet", "--report", "R.jsonl",
              "--dead-letters", "dl.jsonl", "--no-progress", cwd=tmp_path, env={"ES_URL": es_url})
    assert res.returncode == 5 and b"no text field (looked for 'contnet'" in res.stderr, res.stderr.decode()
    assert (tmp_path / "dl.jsonl").read_text() == "earlier dead letters\n"
    assert (tmp_path / "R.jsonl").read_text() == "earlier report\n"
    assert sorted(os.listdir(tmp_path)) == ["R.jsonl", "blank.jsonl", "dl.jsonl"]


def test_indexes_are_green_on_one_node(crawl, tmp_path, es_url, es_index_name):
    """The README's walk-through on its own single node: `init` and `index` leave a green index (replicas
    auto-expanded 0-1); --replicas 1 asks for a replica the node cannot place (yellow, as asked)."""
    env = {"ES_URL": es_url}
    assert run("init", "--index", es_index_name, cwd=tmp_path, env=env).returncode == 0
    assert run("index", crawl, "--index", es_index_name, "--no-progress", cwd=tmp_path, env=env).returncode == 0
    other = f"{es_index_name}-b"
    try:
        assert run("index", crawl, "--index", other, "--no-progress", cwd=tmp_path, env=env).returncode == 0
        rows = _get(f"{es_url}/_cat/indices/{es_index_name},{other}?format=json")
        assert {r["index"]: r["health"] for r in rows} == {es_index_name: "green", other: "green"}
        settings = _get(f"{es_url}/{other}/_settings")[other]["settings"]["index"]
        assert settings["auto_expand_replicas"] == "0-1"
    finally:
        import urllib.request

        for path in (other, f"_index_template/es-simhash-{other}"):
            urllib.request.urlopen(urllib.request.Request(f"{es_url}/{path}", method="DELETE"), timeout=30)


def test_explain_compares_a_file_with_a_stored_document(crawl, tmp_path, es_url, es_index_name):
    """Why did `check --file article.txt` match rmrb-0000? `explain article.txt rmrb-0000 --index NAME`."""
    env = {"ES_URL": es_url}
    assert run("index", crawl, "--index", es_index_name, "--no-progress", cwd=tmp_path, env=env).returncode == 0
    lines = gzip.open(crawl, "rt", encoding="utf-8").read().splitlines()
    records = {r["id"]: r for r in (json.loads(x) for x in lines if x.startswith('{"id": "rmrb-'))}
    (tmp_path / "article.txt").write_text("转载：" + records["rmrb-0000"]["content"], encoding="utf-8")
    check = run("check", "--file", "article.txt", "--index", es_index_name, cwd=tmp_path, env=env)
    assert check.returncode == 0 and json.loads(check.stdout.splitlines()[0])["id"] == "rmrb-0000"
    res = run("explain", "article.txt", "rmrb-0000", "--index", es_index_name, "--json", cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr.decode()
    out = json.loads(res.stdout)
    assert out["duplicate"] and out["reason"] in ("simhash", "sentences")
    res = run("explain", "article.txt", "no-such-id", "--index", es_index_name, cwd=tmp_path, env=env)
    assert res.returncode == 1 and b"no document 'no-such-id' in index" in res.stderr


def test_two_writers_of_one_input_count_what_each_wrote(tmp_path, es_url, es_index_name):
    """Two processes index the same file at once, each with its own checkpoint: each says how many documents it
    wrote and how many it found written already (by the other), and those add up to the input."""
    arts = [a for a in chinese_articles() if 300 < len(a) < 1500][:300]
    path = tmp_path / "same.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "content": a}, ensure_ascii=False) + "\n"
                            for i, a in enumerate(arts)), encoding="utf-8")
    full = {**os.environ, "ES_URL": es_url,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}
    procs = [subprocess.Popen([sys.executable, "-m", "es_simhash", "index", str(path), "--index", es_index_name,
                               "--batch-size", "20", "--no-progress", "--checkpoint", f"w{w}.json"], cwd=tmp_path,
                              env=full, stderr=subprocess.PIPE) for w in range(2)]
    outs = [p.communicate(timeout=600)[1].decode() for p in procs]
    import re

    assert all(p.returncode == 0 for p in procs), outs
    assert _get(f"{es_url}/{es_index_name}/_count")["count"] == len(arts)
    for err in outs:
        written = int(re.search(r"indexed ([\d,]+) into", err).group(1).replace(",", ""))
        found = re.search(r"([\d,]+) were already indexed", err)
        already = int(found.group(1).replace(",", "")) if found else 0
        assert written + already == len(arts), err
    # each document was created by one of them; the other found it (and left it as it was)
    assert sum(int(re.search(r"indexed ([\d,]+) into", e).group(1).replace(",", "")) for e in outs) == len(arts)
