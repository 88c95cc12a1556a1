"""Pages as scrapers deliver them (fingerprint version 7), from People's Daily articles of the test corpus: HTML
entities left in the text, hard line breaks, a copy cut short, a copy with words replaced ("伪原创"), a site's
header and footer, each alone and two at a time, are found duplicates of their article; two reports written from
one template (a market report, a weather report) about different events (other date, place and figures) are not,
and an update of one event is."""

from __future__ import annotations

import html
import itertools
import random
import re

import pytest

from es_simhash import Fingerprinter
from es_simhash.decide.default import DefaultRule
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.records import Document
from es_simhash.index.memory import MemoryIndex
from es_simhash.clustering import recheck


import corpora  # noqa: E402  bench/corpora.py


@pytest.fixture(scope="module")
def long_articles():
    """People's Daily articles of 800 characters or more in at least 6 paragraphs (long reprints)."""
    return [a for a in corpora.peoples_daily_articles(min_chars=800) if a.count("\n") >= 5][:24]


@pytest.fixture(scope="module")
def fingerprinter():
    return Fingerprinter()


def clusters(fingerprinter, texts: dict[str, str]) -> dict[str, str]:
    """Each text's cluster as `es-simhash dedup` decides them (in the order given, then the recheck)."""
    index = MemoryIndex()
    engine = DedupEngine(index, fingerprinter, DefaultRule.rechecked())
    out = {r.id: r.cluster for r in engine.process(Document(i, t) for i, t in texts.items())}
    for change in recheck(index, engine.rule).changes:
        out[change.id] = change.doc.cluster
    return out


# -- the ways a page reaches a crawler -----------------------------------------------------------------------------
def entities(text: str, r: random.Random) -> str:
    """Punctuation and spaces as HTML character references, some escaped twice (no markup around them)."""
    names = {"“": "&ldquo;", "”": "&rdquo;", "，": "&#xff0c;", "。": "&#12290;", "、": "&#x3001;", " ": "&nbsp;"}
    out = "".join(names.get(c, c) if r.random() < 0.8 else c for c in text)
    return out.replace("&ldquo;", "&amp;ldquo;", 3)


def hard_wrap(text: str, r: random.Random) -> str:
    """Lines broken every 30-45 characters, inside words and numbers too (print and PDF extraction)."""
    width = r.randint(30, 45)
    return "\n\n".join("\n".join(p[i:i + width] for i in range(0, len(p), width)) for p in text.split("\n"))


def cut(text: str, r: random.Random, share: float | None = None) -> str:
    """The first 55-75% of the article and a "read more" link."""
    keep = int(len(text) * (share if share is not None else r.uniform(0.55, 0.75)))
    return text[:keep] + r.choice(("……阅读全文", "(未完，点击查看全文)"))


_WORD = re.compile(r"[\u4e00-\u9fff]{2}")


def rewrite(text: str, r: random.Random) -> str:
    """About a tenth of the two-ideograph words replaced by another word (a "伪原创" site's synonym pass)."""
    import jieba

    pool = ["认为", "表示", "进行", "方面", "工作", "问题", "发展", "情况", "重要", "地区", "目前", "已经"]
    words = jieba.lcut(text)
    return "".join(r.choice(pool) if _WORD.fullmatch(w) and r.random() < 0.12 else w for w in words)


def boilerplate(text: str, r: random.Random) -> str:
    """A site's header and footer: source, editor, font size, share buttons, related headlines."""
    site = r.choice(("中国新闻网", "新浪新闻", "环球网"))
    header = f"{site}首页 > 新闻中心 > 国内新闻\n字号：大 中 小　打印　关闭\n来源：人民日报　编辑：王小明"
    related = "\n".join(f"·相关新闻：{h}" for h in ("全国春运客流创新高", "多地出台稳就业新举措", "今冬明春天气展望"))
    footer = f"分享到：微信 微博 QQ空间\n{related}\n版权所有 {site} 未经授权禁止转载"
    return f"{header}\n{text}\n{footer}"


WAYS = {"entities": entities, "wrapped": hard_wrap, "cut": cut, "rewritten": rewrite, "boilerplate": boilerplate}


def apply(ways: tuple[str, ...], text: str, seed: int) -> str:
    r = random.Random(seed)
    for way in sorted(ways, key=["rewritten", "cut", "boilerplate", "wrapped", "entities"].index):
        text = WAYS[way](text, r)
    return text


@pytest.mark.parametrize("ways", [(w,) for w in WAYS] + list(itertools.combinations(WAYS, 2)),
                         ids=lambda ways: "+".join(ways))
def test_each_way_alone_and_two_at_a_time_is_found(fingerprinter, long_articles, ways):
    texts = {}
    for n, article in enumerate(long_articles[:8]):
        texts[f"a{n}"] = article
        texts[f"a{n}-copy"] = apply(ways, article, seed=n)
    got = clusters(fingerprinter, texts)
    missed = [i for i in texts if i.endswith("-copy") and got[i] != got[i[:-5]]]
    assert not missed, f"{'+'.join(ways)}: {missed} not found"
    assert len({got[f"a{n}"] for n in range(8)}) == 8  # the articles themselves stay apart


def test_a_copy_cut_after_55_percent_is_found(fingerprinter):
    """Prose articles (most sentences of 20 characters or more; a list of names cut at 55% keeps little but its
    list), none quoting another (the corpus holds a speech and the report that quotes it), cut after 55%: each is
    found as its article's duplicate."""
    import statistics

    from es_simhash.fingerprint import text

    prose, seen = [], set()
    for a in corpora.peoples_daily_articles(min_chars=800)[:80]:
        keys = text._keys_many([text.normalize(a)], 8)[0][1]
        if statistics.median(map(len, keys)) >= 20 and not seen.intersection(keys):
            prose.append(a)
            seen.update(k for k in keys if len(k) >= 20)
    assert len(prose) >= 50
    texts = {}
    for n, article in enumerate(prose):
        texts[f"a{n}"] = article
        texts[f"a{n}-cut"] = cut(article, random.Random(n), share=0.55)
    got = clusters(fingerprinter, texts)
    missed = [n for n in range(len(prose)) if got[f"a{n}-cut"] != got[f"a{n}"]]
    assert not missed, missed


def test_an_entity_text_escaped_twice_reads_as_once(fingerprinter, long_articles):
    article = long_articles[0]
    once = html.escape(article).replace("，", "&#65292;")
    twice = once.replace("&", "&amp;")
    assert fingerprinter.fingerprint(twice) == fingerprinter.fingerprint(article)
    assert fingerprinter.fingerprint(hard_wrap(article, random.Random(1))) == fingerprinter.fingerprint(article)


# -- template news ---------------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"[0-9０-９]+(?:[.．][0-9０-９]+)?")
_PLACES = ("北京", "上海", "广州", "南京", "武汉", "成都", "西安", "沈阳", "杭州", "重庆")


def another_event(text: str, seed: int) -> str:
    """The same template told of another event: every number and every place of the list replaced, each the same
    way wherever it is written."""
    r = random.Random(seed)
    numbers: dict[str, str] = {}

    def number(m: re.Match) -> str:
        n = m.group()
        if n not in numbers:
            numbers[n] = "".join(str(r.randint(1, 9)) if c.isdigit() else c for c in n)
        return numbers[n]

    places = dict(zip(_PLACES, r.sample(_PLACES, len(_PLACES))))
    text = _NUMBER.sub(number, text)
    return re.sub("|".join(_PLACES), lambda m: places[m.group()], text)


def update(text: str) -> str:
    """An update of the same event: one figure changed."""
    m = _NUMBER.search(text[len(text) // 2:])
    if not m:
        return text + "（更新）"
    at = len(text) // 2 + m.start()
    return text[:at] + "9" + text[at + 1:]


def template_report(n: int) -> str:
    """A market report as a daily template writes it: 12 figures and a city."""
    r = random.Random(n)
    city = _PLACES[n % len(_PLACES)]
    f = [f"{r.randint(10, 99)}.{r.randint(0, 9)}" for _ in range(12)]
    return (f"{city}农副产品批发市场{r.randint(1, 12)}月{r.randint(1, 28)}日行情\n"
            f"本报讯 据{city}市物价局监测，昨日{city}农副产品批发市场蔬菜均价每公斤{f[0]}元，比前一日上涨{f[1]}%。"
            f"其中白菜每公斤{f[2]}元，萝卜每公斤{f[3]}元，西红柿每公斤{f[4]}元，黄瓜每公斤{f[5]}元。\n"
            f"肉类价格基本稳定，猪肉每公斤{f[6]}元，牛肉每公斤{f[7]}元，羊肉每公斤{f[8]}元，鸡蛋每公斤{f[9]}元。"
            f"水产品方面，鲤鱼每公斤{f[10]}元，带鱼每公斤{f[11]}元。\n"
            "市物价局有关负责人表示，近期蔬菜上市量增加，预计价格将保持平稳，市民可放心选购。"
            "物价部门将继续加强市场监测，及时发布价格信息，维护市场秩序。\n"
            "据了解，今年以来本市加大了蔬菜基地建设力度，新建和改造蔬菜大棚数千亩，"
            "为保障节日期间市场供应打下了良好基础。")


def weather_report(n: int) -> str:
    """A daily weather report: the date, a city, temperatures, wind and rain figures."""
    r = random.Random(1000 + n)
    city = _PLACES[(3 * n) % len(_PLACES)]
    t = [r.randint(-5, 35) for _ in range(6)]
    return (f"{city}{r.randint(1, 12)}月{r.randint(1, 28)}日天气预报\n"
            f"本报讯 据{city}市气象台预报，今天白天{city}晴转多云，最高气温{t[0]}摄氏度，最低气温{t[1]}摄氏度，"
            f"偏北风{r.randint(2, 6)}到{r.randint(3, 7)}级。\n"
            f"明天多云转阴，局部地区有小雨，降水概率{r.randint(20, 90)}%，最高气温{t[2]}摄氏度，最低气温{t[3]}摄氏度。"
            f"后天阴有中雨，过程降水量{r.randint(10, 60)}毫米，最高气温{t[4]}摄氏度，最低气温{t[5]}摄氏度。\n"
            "气象专家提醒，近期冷空气活动频繁，气温变化较大，市民应注意适时增减衣物，预防感冒。"
            "出行的市民请关注天气变化，驾车注意安全，农业生产单位要做好防寒防冻工作。")


def test_template_news_about_another_event_stays_apart_and_an_update_joins(fingerprinter):
    texts = {}
    for n in range(10):
        report = template_report(n)
        texts[f"r{n}"] = report
        texts[f"r{n}-other"] = another_event(report, seed=100 + n)
        texts[f"r{n}-update"] = update(report)
    for n in range(10):
        report = weather_report(n)
        texts[f"w{n}"] = report
        texts[f"w{n}-other"] = another_event(report, seed=200 + n)
    got = clusters(fingerprinter, texts)
    merged = [i for i in texts if i.endswith("-other") and got[i] == got[i[:-6]]]
    assert not merged, f"other events merged with their template's: {merged}"
    assert all(got[f"r{n}-update"] == got[f"r{n}"] for n in range(10)), "an update of one event is its report"


# -- both backends, and the upgrade from version 6 ----------------------------------------------------------------------
@pytest.fixture(params=["memory", "elastic"])
def backend(request):
    """A new, empty index of the parametrised backend."""
    if request.param == "memory":
        yield MemoryIndex()
        return
    from es_simhash.index.elastic import ConnectionSettings, ElasticIndex, connect, ensure_index

    client = connect(ConnectionSettings(url=request.getfixturevalue("es_url")))
    name = request.getfixturevalue("es_index_name")
    ensure_index(client, name, Fingerprinter().config)
    yield ElasticIndex(client, name)
    client.indices.delete(index=name, ignore_unavailable=True)
    client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def test_rewritten_and_cut_copies_are_found_alike_in_memory_and_in_elasticsearch(fingerprinter, long_articles,
                                                                                 backend):
    """Found through their fuzzy hashes alone (two shared bring a candidate), in the batch being decided and in the
    index: the same clusters in small batches on either backend as in one batch in memory."""
    texts = {}
    for n, article in enumerate(long_articles[:6]):
        texts[f"a{n}"] = article
        texts[f"a{n}-rewritten"] = apply(("rewritten",), article, seed=n)
        texts[f"a{n}-cut+rewritten"] = apply(("cut", "rewritten"), article, seed=50 + n)
        texts[f"a{n}-wrapped+rewritten"] = apply(("wrapped", "rewritten"), article, seed=90 + n)
    engine = DedupEngine(backend, fingerprinter, DefaultRule.rechecked(), batch_size=5)
    got = {r.id: r.cluster for r in engine.process(Document(i, t) for i, t in texts.items())}
    for change in recheck(backend, engine.rule).changes:
        got[change.id] = change.doc.cluster
    assert got == clusters(fingerprinter, texts)
    assert all(got[i] == got[i.split("-")[0]] for i in texts), got


def test_a_version_6_index_is_refused_and_migrate_finds_the_rewritten_copies(fingerprinter, long_articles, es_url,
                                                                             client, es_index_name, tmp_path, cli):
    """An index of version 6 holds an article and its "伪原创" rewrite as two clusters (version 6 had no fuzzy
    hashes): indexing into it is refused in one line naming `migrate`; `migrate` fingerprints every document again,
    and the rewrite is a duplicate of its article in the index of today's version."""
    import json
    from dataclasses import replace

    from es_simhash.fingerprint import FINGERPRINT_VERSION
    from es_simhash.records import StoredDoc
    from es_simhash.index.elastic import ElasticIndex, ensure_index

    assert FINGERPRINT_VERSION >= 7
    old, new = f"{es_index_name}-v6", f"{es_index_name}-v{FINGERPRINT_VERSION}"
    article = long_articles[2]
    rewritten = apply(("rewritten",), article, seed=7)
    try:
        ensure_index(client, old, {**fingerprinter.config, "fingerprint_version": 6})
        v6 = [StoredDoc(i, replace(fingerprinter.fingerprint(t), version=6, fuzzy=(), fuzzy_digests=0, number_bag=0),
                        i, text=t, arrival=n + 1)
              for n, (i, t) in enumerate((("a", article), ("a-rewritten", rewritten)))]
        ElasticIndex(client, old).add(v6)
        path = tmp_path / "in.jsonl"
        path.write_text(json.dumps({"id": "x", "content": long_articles[3]}, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        refused = cli("index", path, "--index", old, "--no-progress", es_url=es_url, cwd=tmp_path)
        err = refused.stderr.decode()
        assert refused.returncode == 3 and len(err.strip().splitlines()) == 1, err
        assert f"fingerprint version 6 (this run: {FINGERPRINT_VERSION})" in err and "es-simhash migrate" in err, err
        res = cli("migrate", "--from", old, "--to", new, "--no-progress", es_url=es_url, cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        client.indices.refresh(index=new)
        moved = {h["_id"]: h["_source"] for h in client.search(index=new, size=10)["hits"]["hits"]}
        assert moved["a-rewritten"]["dup_cluster"] == moved["a"]["dup_cluster"], moved  # (one cluster: a migrated
        # index decides its documents as a set; either may head it)
        assert {s["fingerprint_version"] for s in moved.values()} == {FINGERPRINT_VERSION}
        assert all(s.get("fuzzy_digests") for s in moved.values())
    finally:
        for name in (old, new):
            client.indices.delete(index=name, ignore_unavailable=True)
            client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")
