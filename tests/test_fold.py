"""The text a reader sees (fingerprint version 6): a reprint in Traditional script, through each of OpenCC's
conversions, and a converter's annotated copy are duplicates of their original; different articles in Traditional
script stay apart; the fold's data is OpenCC's, current and consistent. Texts are People's Daily articles
converted by OpenCC's own converter (the ``opencc`` package) and annotated with ``pypinyin``'s romanisation."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import pytest

from support import chinese_articles

from es_simhash import Fingerprinter
from es_simhash.fingerprint import fold
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.decide.default import DefaultRule
from es_simhash.records import Document
from es_simhash.index.memory import MemoryIndex
from es_simhash.files.sources import RecordReader
from es_simhash.fingerprint.text import normalize

ROOT = Path(__file__).resolve().parents[1]
CONVERSIONS = ("s2t", "s2tw", "s2hk", "s2twp")


@pytest.fixture(scope="module")
def convert():
    import opencc

    converters = {name: opencc.OpenCC(f"{name}.json") for name in CONVERSIONS}
    return lambda text, name: converters[name].convert(text)


@pytest.fixture(scope="module")
def articles() -> list[str]:
    return [a for a in chinese_articles() if 600 <= len(a) <= 2500][:40]


def decide(texts: list[str]) -> list:
    """Each text decided against the ones before it (the embedded engine, on arrival)."""
    engine = DedupEngine(MemoryIndex(), Fingerprinter(), DefaultRule())
    return list(engine.process(Document(f"d{i}", t) for i, t in enumerate(texts)))


def romanised(text: str, share: float, style: str, seed: int) -> str:
    from pypinyin import Style, pinyin

    kind = {"tone": Style.TONE, "digits": Style.TONE3, "zhuyin": Style.BOPOMOFO}[style]
    rng = random.Random(seed)
    out = []
    for ch in text:
        out.append(ch)
        if "\u4e00" <= ch <= "\u9fff" and rng.random() < share:
            out.append(f"({pinyin(ch, style=kind)[0][0]})")
    return "".join(out)


# -- what a user relies on -----------------------------------------------------------------------------------
@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_an_article_and_its_traditional_conversion_are_duplicates(articles, convert, conversion):
    """Every conversion of every article is a duplicate of it: exact for the character conversions, exact or
    within k bits for s2twp, which also swaps Taiwan's vocabulary (軟體 for 软件)."""
    for a in articles:
        t = convert(a, conversion)
        assert t != a
        original, copy = decide([a, t])
        assert copy.duplicate and copy.duplicate_of == "d0", (conversion, a[:40])
        if conversion != "s2twp":
            assert copy.reason == "exact"
        else:
            assert copy.reason in ("exact", "simhash", "sentences")


def test_a_traditional_original_and_its_simplified_reprint_are_duplicates(articles, convert):
    """The other way round: the Traditional text arrives first, the Simplified one is its reprint."""
    for a in articles[:10]:
        t = convert(a, "s2hk")
        _, copy = decide([t, a])
        assert copy.duplicate and copy.reason == "exact"


@pytest.mark.parametrize("style", ["tone", "digits", "zhuyin"])
def test_an_annotated_conversion_is_a_duplicate_of_its_original(articles, convert, style):
    for i, a in enumerate(articles[:15]):
        annotated = romanised(convert(a, "s2t"), 0.3, style, i)
        assert "(" in annotated
        _, copy = decide([a, annotated])
        assert copy.duplicate and copy.reason == "exact", (style, annotated[:80])


def test_ruby_markup_is_read_as_the_text_under_it(articles, convert):
    """A page with ruby annotations (``<ruby>內<rp>(</rp><rt>nèi</rt><rp>)</rp></ruby>``), read as a crawl is
    read (markup auto): the text is the article's."""
    from pypinyin import Style, pinyin

    a = articles[0]
    marked = "".join(f"<ruby>{c}<rp>(</rp><rt>{pinyin(c, style=Style.TONE)[0][0]}</rt><rp>)</rp></ruby>"
                     if "\u4e00" <= c <= "\u9fff" else c for c in convert(a, "s2tw"))
    line = ('{"id": "r", "content": "<p>' + marked.replace("\n", "</p><p>").replace('"', '\\"') + '</p>"}').encode()
    record = RecordReader(html="auto").parse("crawl.jsonl", 1, line)
    assert isinstance(record, Document) and record.html_stripped
    _, copy = decide([a, record.text])
    assert copy.duplicate and copy.reason == "exact"


def test_different_articles_in_traditional_script_stay_apart(articles, convert):
    texts = [convert(a, CONVERSIONS[i % 4]) for i, a in enumerate(articles)]
    results = decide(texts)
    assert not [r.id for r in results if r.duplicate]
    annotated = [romanised(t, 0.3, "tone", i) for i, t in enumerate(texts[:20])]
    assert not [r.id for r in decide(annotated) if r.duplicate]


def test_short_posts_in_either_script(convert):
    posts = ["今天的会议推迟到下午三点，请大家相互转告。", "这家新开的面馆味道不错，牛肉面分量很足。",
             "周末一起去爬山吧，天气预报说是晴天。"]
    texts = posts + [convert(p, "s2tw") for p in posts]
    results = decide(texts)
    assert [(r.duplicate, r.duplicate_of) for r in results] == [(False, None)] * 3 + [(True, "d0"), (True, "d1"),
                                                                                       (True, "d2")]


# -- the normalisation's parts -------------------------------------------------------------------------------
def test_romanisation_is_dropped_only_where_it_is_romanisation():
    cases = {
        "內(nèi)容(róng)去(qu4)重(ㄔㄨㄥˊ)": "内容去重",
        "内nèi容róng": "内容",  # toned pinyin without brackets
        "在2019年(2019)": "在2019年(2019)",  # a number
        "芯片(cpu)": "芯片(cpu)",  # not a syllable
        "咖啡café": "咖啡café",  # a word with an accent is not a syllable
        "中国zhōngguó": "中国zhōngguó",  # two syllables: a word, left alone
        "(nèi)容": "(nèi)容",  # not after an ideograph
        "內 (nèi)": "内 (nèi)",  # a space between
    }
    for raw, want in cases.items():
        assert normalize(raw) == want, raw


def test_invisible_characters_are_dropped():
    assert normalize("转\u200b发\u200d微\ufeff博\u00ad！") == "转发微博!"
    assert normalize("葛\U000e0100城") == "葛城"  # an ideographic variation selector


def test_invisible_is_every_format_character_and_variation_selector():
    """INVISIBLE is fixed (every engine and Python drops the same), and it is exactly Unicode 14.0's format
    characters (category Cf) and the variation selectors."""
    if unicodedata.unidata_version != "14.0.0":
        pytest.fail(f"this Python has Unicode {unicodedata.unidata_version}: compare INVISIBLE with it again")
    want = {cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and unicodedata.category(chr(cp)) == "Cf"}
    want |= set(range(0xFE00, 0xFE10)) | set(range(0xE0100, 0xE01F0))
    assert {cp for a, b in fold.INVISIBLE for cp in range(a, b + 1)} == want


def test_the_fold_table_is_what_gen_fold_writes():
    import gen_fold  # (scripts/gen_fold.py: scripts/ is on pytest's pythonpath)
    assert (ROOT / "es_simhash" / "data" / "fold.txt").read_text(encoding="utf-8") == gen_fold.render()


def test_every_opencc_character_entry_folds_its_two_sides_alike():
    """For every single-character entry of the four OpenCC tables the fold is built from, key and each value fold
    to one character; folding is idempotent; and a character folds into the main ideograph block or stays."""
    import gen_fold  # (scripts/gen_fold.py: scripts/ is on pytest's pythonpath)
    table = fold.fold_table()

    def f(c: str) -> int:
        return table.get(ord(c), ord(c))

    n = 0
    for name in gen_fold.DICTIONARIES:
        for key, values in gen_fold.entries(name):
            for v in values:
                if len(key) == 1 and len(v) == 1:
                    assert f(key) == f(v), (name, key, v)
                    n += 1
    assert n > 8000
    assert all(table.get(b, b) == b for b in table.values())
    # a class folds into the main ideograph block when it has a member there (no common character becomes a rare one)
    assert not [(chr(a), chr(b)) for a, b in table.items() if not 0x4E00 <= b <= 0x9FFF and 0x4E00 <= a <= 0x9FFF]
    common = "中国人民政府经济发展社会的是在了和有"
    assert normalize(common) == common  # the most used Simplified characters are what they are


def test_the_opencc_dictionaries_ship_with_their_licence():
    folder = ROOT / "es_simhash" / "data" / "opencc"
    assert "Apache License" in (folder / "LICENSE").read_text(encoding="utf-8")
    for name in ("STCharacters.txt", "TSCharacters.txt", "TWVariants.txt", "HKVariants.txt"):
        assert "License: Apache-2.0" in (folder / name).read_text(encoding="utf-8")[:400]


# -- on Elasticsearch --------------------------------------------------------------------------------------------
def test_search_finds_a_text_in_either_script(articles, convert, es_url, client, es_index_name, tmp_path, cli):
    """A Simplified article, and a Traditional (Taiwan) article, indexed: a query in either script finds each."""
    import json

    simplified, other = articles[1], articles[2]
    taiwan = convert(other, "s2tw")
    lines = [{"id": "s", "content": simplified, "title": simplified.split("\n")[0]},
             {"id": "t", "content": taiwan, "title": taiwan.split("\n")[0]}]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    res = cli("index", path, "--index", es_index_name, "--no-progress", es_url=es_url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    for query, want in ((convert(simplified.split("\n")[0], "s2t"), "s"),  # Traditional query, Simplified text
                        (other.split("\n")[0], "t")):  # Simplified query, Traditional text
        assert query not in (simplified + taiwan)
        found = cli("search", query, "--index", es_index_name, "--json", "-n", "1", es_url=es_url, cwd=tmp_path)
        assert found.returncode == 0, found.stderr.decode()
        assert json.loads(found.stdout.splitlines()[0])["id"] == want, query
    stored = client.get(index=es_index_name, id="t")["_source"]
    assert stored["content"] == taiwan and "content_folded" not in stored  # the text as crawled; the fold indexed only


def test_a_version_5_index_is_refused_and_migrate_makes_it_current(articles, convert, es_url, client,
                                                                   es_index_name, tmp_path, cli):
    """An index of version 5 holds a Simplified article and its Traditional reprint as two clusters (version 5
    saw code points): indexing into it is refused in one line naming `migrate`; `migrate` fingerprints every
    document again, and the reprint is an exact duplicate in the index of today's version (6 or later)."""
    import json

    from es_simhash.fingerprint import FINGERPRINT_VERSION
    from es_simhash.index.elastic import ElasticIndex, ensure_index
    from es_simhash.records import StoredDoc

    assert FINGERPRINT_VERSION >= 6
    old, new = f"{es_index_name}-v5", f"{es_index_name}-v{FINGERPRINT_VERSION}"
    fp = Fingerprinter()
    config = {**fp.config, "fingerprint_version": 5}
    try:
        ensure_index(client, old, config)
        original, reprint = articles[3], convert(articles[3], "s2hk")
        v5 = [StoredDoc(i, replace_version(fp.fingerprint(t), 5), i, text=t, arrival=n + 1)
              for n, (i, t) in enumerate((("a", original), ("a-hk", reprint)))]
        ElasticIndex(client, old).add(v5)
        path = tmp_path / "in.jsonl"
        path.write_text(json.dumps({"id": "x", "content": articles[4]}, ensure_ascii=False) + "\n", encoding="utf-8")
        refused = cli("index", path, "--index", old, "--no-progress", es_url=es_url, cwd=tmp_path)
        err = refused.stderr.decode()
        assert refused.returncode == 3 and len(err.strip().splitlines()) == 1, err
        assert f"fingerprint version 5 (this run: {FINGERPRINT_VERSION})" in err and "es-simhash migrate" in err, err
        res = cli("migrate", "--from", old, "--to", new, "--no-progress", es_url=es_url, cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        client.indices.refresh(index=new)
        moved = {h["_id"]: h["_source"] for h in client.search(index=new, size=10)["hits"]["hits"]}
        assert moved["a-hk"]["dup_of"] == "a" and moved["a-hk"]["dup_reason"] == "exact"
        assert {s["fingerprint_version"] for s in moved.values()} == {FINGERPRINT_VERSION}
    finally:
        for name in (old, new):
            client.indices.delete(index=name, ignore_unavailable=True)
            client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def replace_version(fingerprint, version: int):
    from dataclasses import replace

    return replace(fingerprint, version=version)
