"""A new user's first hour: every mistake they are likely to make is one line saying what to fix.

Wrong URLs, a URL that reaches some other server, TLS on one side only, an index es-simhash did not make, a
command without its text, a file that is not what the option wants. Run as a user runs them (a real subprocess),
against real sockets: a plain-HTTP server, a TLS server, and a real Elasticsearch node where one is needed.
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from conftest import _http

import es_simhash

CODE = Path(es_simhash.__file__).resolve().parents[1]  # the subprocess runs the es_simhash this test imported


def run(*args, stdin=b"", env=None, cwd=None):
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "es_simhash", *map(str, args)], input=stdin,
                          capture_output=True, env=full, cwd=cwd, timeout=300)


def one_line_error(res, code: int) -> str:
    """The single stderr line of a failed run (asserting there is exactly one, and no traceback)."""
    err = res.stderr.decode()
    assert res.returncode == code, (res.returncode, err)
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("es-simhash: error: "), err
    assert "Traceback" not in err and "unexpected error" not in err
    return lines[0]


# -- real sockets that are not Elasticsearch --------------------------------------------------------------
HTML = b"<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body>\n<h1>Not Found</h1>\n" \
       b"<hr><address>nginx</address>\n</body>\n</html>\n"


class _Html(http.server.BaseHTTPRequestHandler):
    """A web server that is not Elasticsearch: a multi-line HTML 404 page for every request."""

    def _answer(self):
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(HTML)))
        self.end_headers()
        self.wfile.write(HTML)

    do_GET = do_POST = do_PUT = do_HEAD = _answer

    def log_message(self, *args):
        pass


def _serve(context: ssl.SSLContext | None = None):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def web_server():
    server = _serve()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """An HTTPS server with a self-signed certificate (what a secured Elasticsearch node serves)."""
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d / "key.pem",
                    "-out", d / "cert.pem", "-days", "2", "-subj", "/CN=localhost"],
                   check=True, capture_output=True, timeout=60)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "cert.pem", d / "key.pem")
    server = _serve(ctx)
    yield server.server_address[1]
    server.shutdown()


# -- URLs ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, says", [
    (["search", "x", "--es-url", "127.0.0.1:57649"], "invalid Elasticsearch URL '127.0.0.1:57649'"),
    (["init", "--index", "crawl", "--es-url", "http://127.0.0.1:99999"], "invalid Elasticsearch URL"),
    (["index", "-", "--es-url", "localhost:9200"], "e.g. http://localhost:9200"),
    (["kibana", "import", "--kibana-url", "http://127.0.0.1:99999"], "invalid Kibana URL"),
    (["kibana", "import", "--kibana-url", "127.0.0.1:5601"], "e.g. http://127.0.0.1:5601"),
])
def test_a_url_without_scheme_or_with_a_bad_port_is_one_line_and_exit_1(args, says):
    line = one_line_error(run(*args, env={"ES_URL": "", "KIBANA_URL": ""}), 1)
    assert says in line
    assert "ValueError" not in line


def test_the_url_of_a_server_that_is_not_elasticsearch_is_one_line(web_server):
    for args in (["search", "x"], ["init", "--index", "crawl"], ["check", "some text"]):
        line = one_line_error(run(*args, env={"ES_URL": web_server}), 3)
        assert f"the server at {web_server} is not Elasticsearch (HTTP 404, text/html" in line
        assert "<" not in line  # none of the HTML page


@pytest.mark.slow
def test_an_opensearch_node_is_told_from_its_answer_and_without_its_client_named_in_one_line(tmp_path):
    """A real OpenSearch node (scripts/es_node.py --engine opensearch) at ES_URL, no flag given: the commands speak
    OpenSearch to it; where opensearch-py is missing (a stand-in package that fails to import, first on the path),
    every command stops with exit 3 and one line that names the node and says how to install the client."""
    import es_node as esn

    node = esn.start_node(engine="opensearch", version=esn.OPENSEARCH_VERSION)
    try:
        res = run("init", "--index", "crawl", env={"ES_URL": node.url})
        assert res.returncode == 0, res.stderr.decode()
        res = run("check", "--index", "crawl", "some text", env={"ES_URL": node.url})
        assert res.returncode == 0 and b"0 near duplicates in 'crawl'" in res.stderr, res
        missing = tmp_path / "no-client" / "opensearchpy"
        missing.mkdir(parents=True)
        (missing / "__init__.py").write_text("raise ImportError('opensearch-py is not installed')\n")
        path = os.pathsep.join([str(missing.parent), str(CODE)])
        for args in (["init", "--index", "crawl"], ["search", "x"], ["check", "some text"]):
            line = one_line_error(run(*args, env={"ES_URL": node.url, "PYTHONPATH": path}), 3)
            assert f"the node at {node.url} is not Elasticsearch" in line, line
            assert "pip install 'es-simhash[opensearch]'" in line and "ES_URL" in line, line
    finally:
        node.close()


def test_https_to_a_plain_http_server_says_to_use_http(web_server):
    https = web_server.replace("http://", "https://")
    line = one_line_error(run("search", "x", "--es-url", https), 3)
    assert "does not answer TLS" in line and f"use {web_server}" in line
    assert "CA" not in line  # no certificate is involved: passing one would not help


def test_https_to_a_plain_http_elasticsearch_node_says_to_use_http(es_url):
    if not es_url.startswith("http://"):
        pytest.skip("ES_URL is not a plain-HTTP node")
    https = es_url.replace("http://", "https://")
    line = one_line_error(run("search", "x", "--es-url", https), 3)
    assert "does not answer TLS" in line and f"use {es_url}" in line and "CA" not in line


def test_http_to_an_https_server_says_to_use_https(tls_server):
    line = one_line_error(run("search", "x", "--es-url", f"http://127.0.0.1:{tls_server}"), 3)
    assert f"use https://127.0.0.1:{tls_server}" in line
    assert "is it running" not in line


def test_an_untrusted_certificate_still_asks_for_the_ca(tls_server):
    line = one_line_error(run("search", "x", "--es-url", f"https://127.0.0.1:{tls_server}"), 3)
    assert "TLS verification failed" in line and "--ca-certs" in line and "self-signed" in line


def test_a_kibana_url_that_is_not_kibana_is_one_line(web_server):
    line = one_line_error(run("kibana", "import", "--kibana-url", web_server), 3)
    assert f"the server at {web_server} is not Kibana" in line and "<" not in line


def test_a_kibana_url_pointed_at_elasticsearch_says_so(es_url, client):
    line = one_line_error(run("kibana", "import", "--kibana-url", es_url), 3)
    engine = {"elasticsearch": "Elasticsearch", "opensearch": "OpenSearch"}[client.engine]
    assert f"{es_url} is {engine}, not Kibana" in line
    assert "None" not in line


# -- indexes es-simhash did not make ------------------------------------------------------------------------
@pytest.fixture
def foreign_index(es_url):
    """An index some other program made: a document with a title and a body, none of es-simhash's fields."""
    name = f"test-foreign-{uuid.uuid4().hex[:8]}"
    status, body = _http("PUT", f"{es_url}/{name}", {"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
    assert status == 200, body
    status, body = _http("PUT", f"{es_url}/{name}/_doc/1?refresh=true",
                         {"title": "经济 改革", "body": "国有企业改革要有突破性进展"})
    assert status == 201, body
    yield name
    _http("DELETE", f"{es_url}/{name}")


def test_commands_refuse_an_index_es_simhash_did_not_make(es_url, foreign_index, tmp_path):
    env = {"ES_URL": es_url}
    for args in (["search", "改革"], ["clusters"], ["report", "-o", tmp_path / "r.html"],
                 ["check", "国有企业改革要有突破性进展"]):
        line = one_line_error(run(*args, "--index", foreign_index, env=env), 3)
        assert f"index '{foreign_index}' at {es_url} was not made by es-simhash" in line, args
    assert not (tmp_path / "r.html").exists()


def test_commands_refuse_an_index_that_does_not_exist(es_url, tmp_path):
    missing = f"test-missing-{uuid.uuid4().hex[:8]}"
    for args in (["search", "改革"], ["clusters"], ["report", "-o", tmp_path / "r.html"], ["check", "改革"]):
        line = one_line_error(run(*args, "--index", missing, env={"ES_URL": es_url}), 3)
        assert f"index '{missing}' does not exist at {es_url}" in line, args


# -- usage ----------------------------------------------------------------------------------------------------
def test_check_with_neither_text_nor_file_is_a_usage_error():
    # nothing listens on port 1: the usage error comes before any connection is tried
    res = run("check", "--index", "crawl", env={"ES_URL": "http://127.0.0.1:1"}, stdin=b"")
    line = one_line_error(res, 2)
    assert "no text to check" in line and "--file" in line
    assert b"near duplicate" not in res.stderr


def test_load_index_of_a_file_that_is_not_an_index_is_one_line(tmp_path):
    import numpy as np

    crawl = tmp_path / "crawl.jsonl"
    crawl.write_text('{"id": "a", "content": "hello world"}\n')
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    other = tmp_path / "other.npz"
    np.savez(other, a=np.arange(3))
    text = tmp_path / "notes.npz"
    text.write_text("not an index\n")
    for bad in (pickled, other, text):
        line = one_line_error(run("dedup", crawl, "--load-index", bad, "--dead-letters", tmp_path / "d.jsonl"), 1)
        assert f"{bad} is not an es-simhash index file" in line
        assert "pickle" not in line and "allow_pickle" not in line


def test_report_reads_a_gzipped_dedup_report(tmp_path):
    rows = [
        {"id": "a", "cluster": "a", "duplicate": False, "duplicate_of": None, "distance": None, "reason": "canonical"},
        {"id": "b", "cluster": "a", "duplicate": True, "duplicate_of": "a", "distance": 2, "reason": "simhash"},
        {"id": "c", "cluster": "c", "duplicate": False, "duplicate_of": None, "distance": None, "reason": "canonical"},
        {"id": "d", "cluster": "a", "duplicate": True, "duplicate_of": "a", "distance": 0, "reason": "exact"},
    ]
    path = tmp_path / "report.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    res = run("report", "--from-dedup", path, "-o", tmp_path / "r.html")
    assert res.returncode == 0, res.stderr.decode()
    assert "4 documents, 2 duplicates in 1 clusters" in res.stderr.decode()
    assert (tmp_path / "r.html").stat().st_size > 0

    (tmp_path / "cut.gz").write_bytes(path.read_bytes()[:-12])  # the end of the stream is missing
    line = one_line_error(run("report", "--from-dedup", tmp_path / "cut.gz", "-o", tmp_path / "c.html"), 1)
    assert "truncated or corrupt gzip" in line


# -- Ctrl-C and --resume -------------------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "crawl.jsonl.gz"


@pytest.fixture(scope="module")
def four_crawls(tmp_path_factory):
    """The example crawl four times over, ids made distinct: 2,628 lines, 2,620 records (8 dead letters)."""
    out = []
    for copy in range(4):
        for line in gzip.decompress(EXAMPLE.read_bytes()).splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            if isinstance(rec, dict) and "id" in rec:
                rec["id"] = f"{rec['id']}-copy{copy}"
            out.append(json.dumps(rec, ensure_ascii=False).encode())
    path = tmp_path_factory.mktemp("four") / "four.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def _summary_numbers(stderr: str) -> dict:
    import re

    m = re.search(r"\(([\d.]+)s, indexed ([\d,]+) into '[^']+'(?: \(and ([\d,]+) by the run it resumed\))?, "
                  r"([\d,]+) docs/s\)", stderr)
    assert m, stderr
    already = re.search(r"([\d,]+) were already indexed", stderr)
    num = lambda x: int(x.replace(",", "")) if x else None  # noqa: E731
    resumed = num(m.group(3))
    return {"elapsed": float(m.group(1)), "this_run": num(m.group(2)),
            "total": None if resumed is None else num(m.group(2)) + resumed,
            "rate": num(m.group(4)), "already": num(already.group(1)) if already else 0}


@pytest.mark.slow
def test_ctrl_c_during_index_says_what_was_saved_and_resume_reports_its_own_counts(es_url, es_index_name,
                                                                                    four_crawls, tmp_path):
    import signal
    import time

    env = {**os.environ, "ES_URL": es_url,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "es_simhash", "index", str(four_crawls), "--index", es_index_name,
           "--batch-size", "100", "--no-progress", "--report", "report.jsonl"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    saved = None
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:  # Ctrl-C once 1,000 lines are saved
        for path in tmp_path.glob(f"es-simhash-{es_index_name}-*.checkpoint.json"):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if sum(data["done"].values()) >= 1000:
                saved = path
        if saved:
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.05)
    err = proc.communicate(timeout=120)[1].decode()
    assert saved is not None, f"the run ended before 1,000 lines were saved: {err}"
    assert proc.returncode == 130, err
    lines = [x for x in err.splitlines() if x.strip()]
    # Ctrl-C stops the run once the batch being written is saved: one line says so at once, one line at the end
    assert len(lines) == 2 and lines[0].startswith("es-simhash: stopping once the batch being written is saved"), err
    checkpoint = json.loads(saved.read_text())  # what the interrupted run left, as the user finds it
    done = sum(checkpoint["done"].values())
    s = checkpoint["summary"]
    written = s["kept"] + s["duplicates"] - s["already_indexed"]
    assert f"interrupted: {done:,} input lines are done ({written:,} documents written" in lines[1]
    assert saved.name in lines[1] and "--resume" in lines[1]
    assert s["elapsed_seconds"] > 0
    # the report and dead letters are put in place when the run finishes; until then they are partial files
    report_path, dead_path = tmp_path / "report.jsonl", tmp_path / "dead-letters.jsonl"
    assert not report_path.exists() and not dead_path.exists()
    partial_report = tmp_path / "report.jsonl.es-simhash-partial"
    partial_dead = tmp_path / "dead-letters.jsonl.es-simhash-partial"
    assert len(partial_report.read_text().splitlines()) == s["kept"] + s["duplicates"]
    # a batch written after the last saved checkpoint (a kill between the two) left lines behind
    with open(partial_report, "a", encoding="utf-8") as fh:
        fh.write(partial_report.read_text().splitlines()[0] + "\n")
    with open(partial_dead, "a", encoding="utf-8") as fh:
        fh.write('{"source": "unsaved batch", "line": 1, "reason": "written after the checkpoint"}\n')

    started = time.monotonic()
    res = subprocess.run(cmd + ["--resume"], cwd=tmp_path, env=env, capture_output=True, timeout=600)
    wall = time.monotonic() - started
    err = res.stderr.decode()
    assert res.returncode == 0, err
    got = _summary_numbers(err)
    # every record is written once: by the first run, by this one, or (a batch in flight at Ctrl-C) already there
    assert written + got["this_run"] + got["already"] == 2620, (written, got)
    assert got["total"] == written + got["this_run"]
    # elapsed covers both runs; the rate is this run's documents over this run's seconds (at most its wall time)
    assert got["elapsed"] >= s["elapsed_seconds"]
    this_seconds = got["elapsed"] - s["elapsed_seconds"]
    assert this_seconds <= wall
    assert got["rate"] == pytest.approx(got["this_run"] / this_seconds, rel=0.1)
    assert got["rate"] < got["total"] / this_seconds * 0.9  # not every document over this run's seconds
    report = [json.loads(x)["id"] for x in report_path.read_text().splitlines()]
    assert len(report) == len(set(report)) == 2620  # each record reported once
    dead = [json.loads(x) for x in dead_path.read_text().splitlines()]
    assert len(dead) == 8 and "unsaved batch" not in {d["source"] for d in dead}
    assert not partial_report.exists() and not partial_dead.exists()


def test_resume_without_a_checkpoint_starts_from_the_top(es_url, es_index_name, tmp_path):
    # a run killed before its first batch was saved leaves no checkpoint: --resume must not refuse
    res = run("index", EXAMPLE, "--index", es_index_name, "--resume", "--no-progress", env={"ES_URL": es_url},
              cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 0, err
    assert "note: no checkpoint at" in err and "starting from the top" in err
    got = _summary_numbers(err)
    assert got["this_run"] == 655 and got["total"] is None  # the example's 657 lines hold 2 dead letters


# -- the README's examples ------------------------------------------------------------------------------------
README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_commands() -> list[str]:
    import re

    blocks = re.findall(r"```(?:console|bash)\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    return [line.split("#")[0] for block in blocks for line in block.splitlines()
            if line.startswith(("$ es-simhash", "es-simhash", "python scripts/", "$ python"))]


def test_every_file_the_readme_commands_name_is_in_the_repository():
    import re

    named = set()
    for cmd in _readme_commands():
        named.update(re.findall(r"(?<![\w/.-])((?:examples|scripts|bench|docs)/[\w./-]+)", cmd))
        named.update(m for m in re.findall(r"--file (\S+)", cmd))
    assert "examples/article.txt" in named
    root = README.parent
    missing = sorted(p for p in named if not (root / p).exists())
    assert not missing, f"the README's commands name files that are not in the repository: {missing}"


def test_the_readme_check_example_gives_the_readme_output(es_url, es_index_name, tmp_path):
    import re

    text = README.read_text(encoding="utf-8")
    shown = re.search(r"\$ es-simhash check --index crawl --file examples/article\.txt[^\n]*\n(\{[^\n]*\})\n", text)
    assert shown, "the README shows `check --file examples/article.txt` and its output"
    env = {"ES_URL": es_url}
    res = run("index", EXAMPLE, "--index", es_index_name, "--no-progress", env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    res = run("check", "--index", es_index_name, "--file", README.parent / "examples" / "article.txt", env=env)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout.decode().splitlines() == [shown.group(1)]
    assert f"1 near duplicate in '{es_index_name}'" in res.stderr.decode()
