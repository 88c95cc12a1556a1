"""The HTML report: its numbers against the index (read back document by document, not through report.py's
aggregations) and against the input, the same report from an embedded `dedup --report` file, escaping of hostile
crawled text, and a clear error when matplotlib is missing."""

import gzip
import html
import json
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import matplotlib  # noqa: F401  (a test dependency: the report draws its charts with it)
import pytest

from es_simhash.results import report
from es_simhash.results.report import data as report_data
from es_simhash.index.elastic import ConnectionSettings, connect
from support import run_cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "crawl.jsonl.gz"


def cli(*args, es_url=None, **kw):
    return run_cli(*args, es_url=es_url, **kw)


def all_docs(client, index):
    """Every document of the index (the example has a few hundred), read with a plain sorted search."""
    client.indices.refresh(index=index)
    hits = client.search(index=index, size=10_000, sort=[{"doc_id": "asc"}],
                         _source=["doc_id", "dup_cluster", "is_canonical", "dup_distance", "dup_reason",
                                  "crawl_time", "title", "url"])["hits"]["hits"]
    return [h["_source"] for h in hits]


def expected_from_docs(docs):
    sizes = Counter(d["dup_cluster"] for d in docs)
    dups = [d for d in docs if not d["is_canonical"]]
    by_day = Counter()
    dup_by_day = Counter()
    no_time = 0
    for d in docs:
        t = d.get("crawl_time")
        if not t:
            no_time += 1
            continue
        day = t[:10]
        by_day[day] += 1
        dup_by_day[day] += not d["is_canonical"]
    return {
        "documents": len(docs),
        "duplicates": len(dups),
        "size_distribution": dict(sorted(Counter(n for n in sizes.values() if n >= 2).items())),
        "reasons": Counter(d["dup_reason"] for d in docs),
        "distances": dict(sorted(Counter(d["dup_distance"] for d in dups).items())),
        "by_day": by_day,
        "dup_by_day": dup_by_day,
        "no_time": no_time,
        "sizes": sizes,
    }


def check_against(data, exp):
    assert data.documents == exp["documents"]
    assert data.duplicates == exp["duplicates"]
    assert data.size_distribution == exp["size_distribution"]
    assert data.clusters_with_duplicates == sum(exp["size_distribution"].values())
    assert dict(data.reasons) == dict(exp["reasons"])
    assert data.distance_totals() == exp["distances"]
    # the example spans three weeks: daily buckets
    assert data.timeline_interval == "1d"
    got = {b.start.strftime("%Y-%m-%d"): (b.documents, b.duplicates) for b in data.timeline if b.documents}
    assert got == {day: (n, exp["dup_by_day"][day]) for day, n in exp["by_day"].items()}
    assert data.without_time == exp["no_time"]
    for row in data.top_clusters:
        assert row.size == exp["sizes"][row.cluster]
    assert [r.size for r in data.top_clusters] == sorted((r.size for r in data.top_clusters), reverse=True)


@pytest.fixture
def indexed_example(es_url, es_index_name, tmp_path):
    res = cli("index", EXAMPLE, "--index", es_index_name, "--no-progress", "--report", tmp_path / "es.jsonl",
              "--dead-letters", tmp_path / "dead.jsonl", es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    return es_index_name, tmp_path / "es.jsonl"


def test_report_numbers_match_the_index(es_url, indexed_example, tmp_path):
    index, _ = indexed_example
    client = connect(ConnectionSettings(url=es_url))
    docs = all_docs(client, index)
    exp = expected_from_docs(docs)
    # and the index agrees with the input file itself: every well-formed record is there once
    raw = gzip.open(EXAMPLE, "rt", encoding="utf-8").read().splitlines()
    assert exp["documents"] == len(raw) - 2  # the example holds 2 malformed records (dead letters)
    assert exp["duplicates"] > 0 and len(exp["reasons"]) >= 3

    data = report.from_index(client, index, top=10)
    check_against(data, exp)
    top = data.top_clusters[0]
    canonical = next(d for d in docs if d["doc_id"] == top.cluster)
    assert (top.title, top.url) == (canonical.get("title"), canonical.get("url"))

    out = tmp_path / "report.html"
    res = cli("report", "--index", index, "-o", out, "--limit", "10", es_url=es_url)
    assert res.returncode == 0, res.stderr.decode()
    assert f"{exp['documents']:,} documents, {exp['duplicates']:,} duplicates" in res.stderr.decode()
    page = out.read_text(encoding="utf-8")
    # the numbers a reader sees: summary cards and the tables beside the charts
    cards = dict((k, v) for v, k in re.findall(r'<div class="v">([^<]+)</div><div class="k">([^<]+)</div>', page))
    assert cards["documents"] == f"{exp['documents']:,}" and cards["duplicates"] == f"{exp['duplicates']:,}"
    assert cards["duplicate rate"] == f"{100 * exp['duplicates'] / exp['documents']:.1f}%"
    for reason, n in exp["reasons"].items():
        assert re.search(rf"</span>{reason}</td><td class=\"n\">{n:,}</td>", page)
    sizes_table = page[page.index('id="sizes"'):page.index('id="top"')]
    assert [tuple(map(int, m)) for m in re.findall(r'<tr><td class="n">(\d+)</td><td class="n">(\d+)</td>',
                                                     sizes_table)] == list(exp["size_distribution"].items())
    dist_table = page[page.index('id="distances"'):page.index('id="reasons"')]
    assert [tuple(map(int, m)) for m in re.findall(r'<tr><td class="n">(\d+)</td><td class="n"><b>(\d+)</b>',
                                                     dist_table)] == list(exp["distances"].items())
    assert page.count("data:image/png;base64,") == 4
    # links to crawled pages only: no scripts, no remote resources
    assert not re.search(r'<(script|link|iframe)|src="http', page)


def test_report_from_the_embedded_dedup_file_matches_the_index(es_url, indexed_example, tmp_path):
    index, es_report = indexed_example
    res = cli("dedup", EXAMPLE, "--report", tmp_path / "mem.jsonl", "--dead-letters", tmp_path / "d.jsonl",
              "--no-progress")  # (each with its defaults: the same clusters)
    assert res.returncode == 0
    docs = all_docs(connect(ConnectionSettings(url=es_url)), index)
    exp = expected_from_docs(docs)
    data = report.from_dedup_report(str(tmp_path / "mem.jsonl"), [str(EXAMPLE)], top=10)
    check_against(data, exp)
    from_es = report.from_index(connect(ConnectionSettings(url=es_url)), index, top=10)
    assert [(r.cluster, r.size, r.title, r.url) for r in data.top_clusters] == \
        [(r.cluster, r.size, r.title, r.url) for r in from_es.top_clusters]
    out = tmp_path / "r.html"
    res = cli("report", "--from-dedup", tmp_path / "mem.jsonl", "--input", EXAMPLE, "-o", out,
              es_url="http://127.0.0.1:9")  # no server needed
    assert res.returncode == 0, res.stderr.decode()
    page = out.read_text(encoding="utf-8")  # the page the command wrote shows what the data says (--top 20)
    data = report.from_dedup_report(str(tmp_path / "mem.jsonl"), [str(EXAMPLE)], top=20)
    assert len(data.top_clusters) == 20
    cards = dict((k, v) for v, k in re.findall(r'<div class="v">([^<]*)</div><div class="k">([^<]*)</div>', page))
    assert cards["documents"] == f"{data.documents:,}" and cards["duplicates"] == f"{data.duplicates:,}"
    assert cards["clusters with duplicates"] == f"{data.clusters_with_duplicates:,}"
    top = page[page.index('id="top"'):page.index('id="timeline"')]
    assert re.findall(r'<td class="id">([^<]*)</td>', top) == [r.cluster for r in data.top_clusters]
    assert page.count('src="data:image/png;base64,') == 4  # sizes, timeline, distances, reasons
    assert "3 bits for long texts, 7 for short ones" in page  # the default rule's limits
    res = cli("report", "--from-dedup", tmp_path / "mem.jsonl", "-k", "5", "-o", out, es_url="http://127.0.0.1:9")
    assert res.returncode == 0 and "5 bits for long texts, 7 for short ones" in out.read_text(encoding="utf-8")


def _hostile(tmp_path):
    evil_title = '<script>alert("t")</script><img src=x onerror=alert(1)>'
    lines = [
        {"id": "a", "title": evil_title, "url": "javascript:alert(document.cookie)",
         "crawl_time": "2026-01-01T00:00:00Z", "content": "今天的天气非常好，适合出去散步和锻炼身体。我们一起去公园吧。"},
        {"id": "b", "title": "x", "url": 'https://ok.example/"><script>alert(2)</script>',
         "crawl_time": "2026-01-02T00:00:00Z", "content": "今天的天气非常好，适合出去散步和锻炼身体。我们一起去公园吧。"},
    ]
    crawl = tmp_path / "evil.jsonl"
    crawl.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    res = cli("dedup", crawl, "--report", tmp_path / "evil-report.jsonl", "--dead-letters", tmp_path / "d.jsonl")
    assert res.returncode == 0
    return crawl, tmp_path / "evil-report.jsonl"


def test_hostile_titles_and_urls_are_escaped(tmp_path):
    crawl, rep = _hostile(tmp_path)
    data = report.from_dedup_report(str(rep), [str(crawl)])
    assert data.duplicates == 1 and data.top_clusters[0].title.startswith("<script>")
    page = report.render_html(data)
    assert "<script" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;" in page
    assert 'href="javascript' not in page  # not a link at all
    assert 'href="https://ok.example/&quot;&gt;&lt;script&gt;' in page
    assert "default-src 'none'" in page


def test_the_page_states_the_limits_of_the_rule_it_was_given(tmp_path):
    """The footer and the distance section say the rule's own limits, not the defaults whatever -k was."""
    from es_simhash.decide.default import DefaultRule

    _, rep = _hostile(tmp_path)
    data = report.from_dedup_report(str(rep))
    page = report.render_html(data, rule=DefaultRule(k=6, short_k=9, sentence_k=14))
    assert "6 bits for long texts, 9 for short ones" in page and "(within 14 bits)" in page
    assert "<code>k</code> = 6 bits; 9 for short texts" in page
    assert "3 bits for long texts" not in page and "16 bits" not in page
    default = report.render_html(data)
    assert "3 bits for long texts, 7 for short ones" in default and "(within 16 bits)" in default


def test_report_without_input_and_on_empty_files(tmp_path):
    crawl, rep = _hostile(tmp_path)
    page = report.render_html(report.from_dedup_report(str(rep)))
    assert "No crawl input was joined in" in page and "no timeline" in page
    (tmp_path / "empty.jsonl").write_text("")
    assert "nothing to report" in report.render_html(report.from_dedup_report(str(tmp_path / "empty.jsonl")))
    res = cli("report", "--from-dedup", crawl, "-o", tmp_path / "x.html")  # the crawl is not a report file
    assert res.returncode == 1 and "is it the report of a dedup run?" in res.stderr.decode()
    res = cli("report", "--from-dedup", tmp_path / "missing.jsonl", "-o", tmp_path / "x.html")
    assert res.returncode == 1 and res.stderr.decode().strip().endswith("report file not found: " +
                                                                         str(tmp_path / "missing.jsonl"))


def test_a_crawl_input_that_holds_none_or_some_of_the_reports_ids_is_warned_of(tmp_path):
    """`report --from-dedup R --input OTHER`: the page is written (exit 0) and one line on stderr says how many of
    the report's ids the input holds, and what to check when it holds none."""
    crawl, rep = _hostile(tmp_path)
    out = tmp_path / "r.html"
    res = cli("report", "--from-dedup", rep, "--input", EXAMPLE, "-o", out)  # another crawl's input
    lines = res.stderr.decode().splitlines()
    assert res.returncode == 0 and out.exists(), res.stderr.decode()
    assert [x for x in lines if x.startswith("warning:")] == [
        f"warning: none of the report's 2 ids is in {EXAMPLE}: no titles, urls or crawl times were joined in; "
        "check that --input is the crawl input the dedup run read, with the same --id-field"]
    assert "none of the report's 2 ids" in html.unescape(out.read_text(encoding="utf-8"))  # (on the page too)
    half = tmp_path / "half.jsonl"
    half.write_text(crawl.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    res = cli("report", "--from-dedup", rep, "--input", half, "-o", out)
    assert res.returncode == 0 and f"warning: only 1 of the report's 2 ids are in {half}" in res.stderr.decode()
    res = cli("report", "--from-dedup", rep, "--input", crawl, "-o", out)  # the right input: no warning
    assert res.returncode == 0 and "warning" not in res.stderr.decode()


def test_missing_matplotlib_is_a_clear_one_line_error(tmp_path):
    _, rep = _hostile(tmp_path)
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from es_simhash.cli import main; sys.exit(main(sys.argv[1:]))")
    res = subprocess.run([sys.executable, "-c", code, "report", "--from-dedup", str(rep), "-o",
                          str(tmp_path / "r.html")], capture_output=True, timeout=120)
    err = res.stderr.decode().strip()
    assert res.returncode == 1 and err.count("\n") == 0
    assert "pip install 'es-simhash[report]'" in err


def test_time_buckets_of_the_file_report_are_aligned_like_elasticsearch():
    t = [(datetime(2026, 11, d, 9, tzinfo=timezone.utc), d % 2 == 0) for d in (1, 2, 2, 25)]
    buckets, name = report_data.bucket_times(t)  # 24 days: 12h buckets would be too many, days it is
    assert name == "1d" and len(buckets) == 25
    assert [(b.start.isoformat(), b.documents, b.duplicates) for b in buckets[:3]] == [
        ("2026-11-01T00:00:00+00:00", 1, 0), ("2026-11-02T00:00:00+00:00", 2, 2), ("2026-11-03T00:00:00+00:00", 0, 0)]
    assert report_data.bucket_times([])[0] == []
