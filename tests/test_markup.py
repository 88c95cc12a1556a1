"""Markup in crawl text: stripped with an HTML parser, so pages that share a site's markup are not duplicates
for it, and a reprint in other markup still is."""

from __future__ import annotations

import json

from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document
from es_simhash.files.markup import looks_like_html, strip_html, text_of
from es_simhash.files.sources import RecordReader
from support import chinese_articles

TEMPLATE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>某某日报网</title>
<style>body {{ font-family: "Microsoft YaHei", sans-serif; color: #333333; }} .nav a {{ margin: 0 8px; }}</style>
<script type="text/javascript">var _hmt = _hmt || []; (function() {{ var hm = document.createElement("script");
hm.src = "https://hm.example.com/hm.js?0123456789abcdef"; }})();</script></head>
<body><div class="header" style="width: 1200px; margin: 0 auto; background-color: #f5f5f5; border-bottom: 1px solid #dddddd">
<div class="nav" style="float: left; font-size: 14px; line-height: 40px"><span style="color:#999999">导航</span></div></div>
<div class="content" style="width: 860px; float: left; padding: 20px 30px; font-size: 16px; line-height: 28px">
<p style="text-indent: 2em">{body}</p></div>
<div class="footer" style="clear: both; width: 1200px; margin: 0 auto; font-size: 12px; color: #999999; text-align: center">
<span style="font-family: Arial">&copy;</span></div></body></html>"""


def test_the_text_of_a_page_is_what_a_browser_shows():
    page = ('<div class="x" style="color:red">今天&nbsp;天气<b>很好</b>，&ldquo;大家&rdquo;都出去了。</div>'
            '<script>document.write("<p>广告</p>")</script><p>第二段<br>换行 &amp; 结束 <!-- 注释 --></p>')
    assert strip_html(page) == "今天 天气很好，“大家”都出去了。\n第二段\n换行 & 结束"
    assert looks_like_html(page) and not looks_like_html("当 a < b 且 c > d 时") and not looks_like_html("<3")
    assert text_of("AT&amp;T 与 a<b", "auto") == ("AT&amp;T 与 a<b", False)  # no markup: kept as it is
    assert text_of("AT&amp;T", "strip") == ("AT&T", True) and text_of(page, "keep") == (page, False)


def test_pages_that_share_only_a_sites_markup_are_not_duplicates_but_a_reprint_is():
    a, b = (t[:120] for t in chinese_articles()[30:32])
    pages = [TEMPLATE.format(body=a), TEMPLATE.format(body=b),
             f'<article><h1>转载</h1><div class="c">{a}</div></article>']  # a's text in other markup

    def duplicate_of(mode: str) -> list[str | None]:
        reader = RecordReader(html=mode)
        records = [reader.parse("in.jsonl", i, json.dumps({"id": str(i), "content": p}).encode())
                   for i, p in enumerate(pages)]
        return [r.duplicate_of for r in DedupEngine().process(Document(rec.id, rec.text) for rec in records)]

    assert duplicate_of("keep")[1] == "0"  # fingerprinted with its markup, b "duplicates" a: what --html fixes
    assert duplicate_of("auto") == [None, None, "0"]
