"""Crawl phenomena for the accuracy benchmark: what real crawls contain and the six main streams do not.

``build(split, seed, scale)`` returns extra streams, each built from the same split's originals as
``accuracy_data`` (dev and test never share an original) and scored the same way (pairwise, per stream):

* ``zh spaced``    short Chinese texts and their reposts spaced out character by character (``转 发 ： 相 关 ...``,
                   with ASCII or ideographic spaces, whole or in part); every other spaced text is a negative.
* ``zh repeated``  Chinese articles of a court-report style, where an anonymised name (``某某``) is repeated after
                   every clause: unrelated articles share that one heavily repeated term (hard negatives); their
                   reprints (site wrappers, ads, deletions, typos) are the positives.
* ``zh template``  short posts built from a few templates: a forum share line (same prefix, another post's title
                   and link) and a site header and disclaimer (来源/作者/特别声明) around a short body. Different
                   posts of one template are negatives; a post reposted (the same body and link, lightly edited, or
                   the same body under another site's header) is a positive.
* ``zh markup``, ``en markup``  articles as crawlers save them with HTML left in the text (tags, ``style``
                   attributes, entities, whole pages with scripts and styles): positives are the same article with
                   other markup or none; negatives are pages that are mostly one site's markup around different
                   short texts.
* ``zh gbk``       a crawl from several crawlers, some of which saved GB18030 (GBK) bytes: the same article arrives in
                   UTF-8 from one crawler and in GB18030 from another.
* ``zh traditional`` long, medium and short Chinese texts reprinted in Traditional script through OpenCC's four
                   conversions (``s2t``, ``s2tw``, ``s2hk``, ``s2twp``: Taiwan's vocabulary too, ``软件`` -> ``軟體``),
                   some after another reprint edit (a site wrapper, ads, deletions, typos); a quarter of the
                   originals are themselves in Traditional script, so different articles in Traditional script are
                   the hard negatives.
* ``zh annotated`` articles reprinted by converter sites: romanisation after some characters (pinyin with tone
                   marks or tone digits, or zhuyin, in brackets), often in Traditional script too, with lines of
                   spam above; or as HTML with ruby annotations (``<ruby>內<rt>nèi</rt></ruby>``). Annotated
                   copies of different articles are the hard negatives.

Every document carries ``raw``: its JSON Lines record as the crawler wrote it (bytes, in its encoding).
es-simhash reads it as its CLI does by default for a crawl (``RecordReader(encoding="auto", html="auto")``); the
peers get ``peer_text``: the line decoded as UTF-8 with replacement characters (what ``open(path, errors=
"replace")`` gives a script) and the record's text as it is.
"""

from __future__ import annotations

import json
import random
import sys
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy_data as data  # noqa: E402
from accuracy_data import Doc, _deal, _key, _paras, _pools, _rng  # noqa: E402

__all__ = ["PHENOMENA", "SIZES", "build", "peer_text"]

PHENOMENA = [("zh", "spaced"), ("zh", "repeated"), ("zh", "template"), ("zh", "markup"), ("en", "markup"),
             ("zh", "gbk"), ("zh", "traditional"), ("zh", "annotated")]
SIZES = {("zh", "spaced"): 200, ("zh", "repeated"): 120, ("zh", "template"): 240, ("zh", "markup"): 120,
         ("en", "markup"): 120, ("zh", "gbk"): 150, ("zh", "traditional"): 240, ("zh", "annotated"): 150}


def record(doc_id: str, text: str, encoding: str = "utf-8") -> bytes:
    """The JSON Lines record of a document, as a crawler writes it (non-ASCII characters unescaped)."""
    return json.dumps({"id": doc_id, "text": text}, ensure_ascii=False).encode(encoding)


def peer_text(doc: Doc) -> str:
    """What a script without es-simhash reads from the record: UTF-8 with replacement characters, text as is."""
    if doc.raw is None:
        return doc.text
    return json.loads(doc.raw.decode("utf-8", "replace"))["text"]


def _shingles(text: str, n: int = 3) -> set[str]:
    key = _key(text)
    return {key[i : i + n] for i in range(max(1, len(key) - n + 1))}


def _originals(split: str, seed: int, lang: str, name: str, pool: list[str], n: int):
    """``(i, text, cluster id, rng)`` of ``n`` originals drawn from ``pool``: each text once, near copies included
    (an original whose character 3-shingles overlap an earlier one's by 0.8 Jaccard or more is left out: the pool
    holds a few sayings twice, with other punctuation or attribution, and the truth would call them two texts)."""
    rng = _rng(seed, split, lang, name)
    seen: set[str] = set()
    kept: list[set[str]] = []
    for i in sorted(rng.sample(range(len(pool)), min(n, len(pool)))):
        text = pool[i]
        if _key(text) in seen:
            continue
        seen.add(_key(text))
        mine = _shingles(text)
        if any(len(mine & other) >= 0.8 * len(mine | other) for other in kept):
            continue
        kept.append(mine)
        cid = f"{split}-{lang}-{name}-{i:05d}"
        yield i, text, cid, _rng(seed, cid)


# -- spaced-out reposts --------------------------------------------------------------------------------------
_SPACED_PREFIXES = ["转 发 微 博 ： ", "转 ： ", "", "", "分 享 ： "]


def spaced(text: str, rng: random.Random, share: float = 1.0, space: str = " ") -> str:
    """``text`` with ``space`` between adjacent characters (a share of the gaps, all by default)."""
    chars = [c for c in text if not c.isspace()]
    out = [chars[0]] if chars else []
    for c in chars[1:]:
        out.append(space + c if rng.random() < share else c)
    return "".join(out)


def _spaced_stream(split: str, seed: int, n: int) -> list[Doc]:
    docs: list[Doc] = []
    for _, text, cid, r in _originals(split, seed, "zh", "spaced", _deal(_pools()[("zh", "short")], split), n):
        first = spaced(text, r) if r.random() < 0.3 else text  # some originals are themselves spaced out
        docs.append(Doc(cid, first, cid, "zh", "spaced", "original"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                kind = r.choice(("all", "prefix", "ideographic", "part"))
                if kind == "all":
                    vt = spaced(text, r)
                elif kind == "prefix":
                    vt = r.choice(_SPACED_PREFIXES) + spaced(text, r)
                elif kind == "ideographic":
                    vt = spaced(text, r, space="\u3000")
                else:
                    vt = spaced(text, r, share=0.5)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "spaced", "variant", f"spaced:{kind}"))
        if r.random() < 0.1:
            mc = data.minimal_change(text, "zh", r)
            if mc is not None and _key(mc[0]) != _key(text):
                docs.append(Doc(f"{cid}-mc", spaced(mc[0], r), f"{cid}-mc", "zh", "spaced", "minimal", mc[1]))
    return docs


# -- one term repeated all over a text -----------------------------------------------------------------------
_REPEATED = ["某某称", "被告人某某", "某某公司"]


def repeated(text: str, term: str) -> str:
    """``term`` after every clause (an anonymised name in a court report, a company name in a press release)."""
    out = []
    for c in text:
        out.append(c)
        if c in "，。；":
            out.append(term)
    return "".join(out)


def _repeated_stream(split: str, seed: int, n: int) -> list[Doc]:
    pool = [t for t in _deal(_pools()[("zh", "medium")], split) if len(t) >= 250] + \
        [t for t in _deal(_pools()[("zh", "long")], split) if len(t) < 1500]
    rng = _rng(seed, split, "zh", "repeated")
    docs: list[Doc] = []
    for i in sorted(rng.sample(range(len(pool)), min(n, len(pool)))):
        cid = f"{split}-zh-repeated-{i:05d}"
        r = _rng(seed, cid)
        text = repeated(pool[i], _REPEATED[i % len(_REPEATED)])
        docs.append(Doc(cid, text, cid, "zh", "repeated", "original"))
        if r.random() < data.VARIANT_SHARE:
            for v in range(r.choice((1, 1, 2))):
                edit, strength = r.choice(("wrap", "ads", "delete", "typo", "punct", "reprint")), r.choice((1, 2))
                vt, site = data.edit_long(text, "zh", edit, strength, r, pool)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "repeated", "variant", f"{edit}:{strength}", site))
    return docs


# -- templated short posts -----------------------------------------------------------------------------------
_FORUMS = [("天涯社区", "bbs.tianya.cn/post-free-{n}-1.shtml"), ("百度贴吧", "tieba.baidu.com/p/{n}"),
           ("豆瓣小组", "www.douban.com/group/topic/{n}/"), ("凯迪社区", "club.kdnet.net/dispbbs.asp?id={n}")]
_SHARE = ["我在{forum}发现了一篇好帖子，推荐给大家一起看看：《{title}》 http://{link}",
          "分享自{forum}：【{title}】 点击查看全文 http://{link}",
          "【转帖】{title}（来自{forum}，原帖地址：http://{link} ）"]
_HEADER_SITES = ["江南都市网", "华夏经纬网", "中国网", "东方资讯", "北方网"]
_AUTHORS = ["王建国", "李晓明", "张华", "陈静", "刘洋", "赵敏", "佚名"]
_NOTICE = ("特别声明：本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性；"
           "如其他媒体、网站或个人从本网站转载使用，须保留本网站注明的“来源”，并自负版权等法律责任。")


def _title(text: str) -> str:
    """A post title from a short text: its first clause (10..30 characters)."""
    for end in range(10, min(30, len(text))):
        if text[end] in "，。；！？,.;!?":
            return text[:end]
    return text[:20]


def share_post(title: str, forum: int, shape: int, post: int) -> str:
    name, link = _FORUMS[forum]
    return _SHARE[shape].format(forum=name, title=title, link=link.format(n=post))


def header_post(body: str, site: str, author: str) -> str:
    return f"来源：{site}　作者：{author}\n{body}\n{_NOTICE}"


def _template_stream(split: str, seed: int, n: int) -> list[Doc]:
    docs: list[Doc] = []
    for i, body, cid, r in _originals(split, seed, "zh", "template", _deal(_pools()[("zh", "short")], split), n):
        if i % 2:  # a forum share line: another post's title and link in the same words
            forum, shape, post = i % len(_FORUMS), (i // 2) % len(_SHARE), 1_000_000 + r.randrange(9_000_000)
            title = _title(body)
            text = share_post(title, forum, shape, post)
            site = f"share-{forum}-{shape}"
            docs.append(Doc(cid, text, cid, "zh", "template", "original", site=site))
            if r.random() < 0.5:  # reposted: the same post shared again, through another share button
                vt = share_post(title, forum, (shape + 1) % len(_SHARE), post)
                docs.append(Doc(f"{cid}-v0", vt, cid, "zh", "template", "variant", "share:other-shape", site))
        else:  # a site header and disclaimer around a short body
            site = _HEADER_SITES[i % len(_HEADER_SITES)]
            text = header_post(body, site, r.choice(_AUTHORS))
            docs.append(Doc(cid, text, cid, "zh", "template", "original", site=site))
            if r.random() < 0.6:
                for v in range(r.choice((1, 1, 2))):
                    kind = r.choice(("other-site", "edited", "bare"))
                    if kind == "other-site":  # reprinted by another site with the same header template
                        vt = header_post(body, r.choice([s for s in _HEADER_SITES if s != site]), r.choice(_AUTHORS))
                    elif kind == "edited":
                        vt = header_post(data.edit_short(body, "zh", r.choice(("punct", "typo", "suffix")), 1, r),
                                         site, r.choice(_AUTHORS))
                    else:  # the body alone, reposted without the site's header
                        vt = data.edit_short(body, "zh", "repost", r.choice((1, 2)), r)
                    docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "template", "variant", f"header:{kind}",
                                    site if kind != "bare" else ""))
    return docs


# -- markup --------------------------------------------------------------------------------------------------
_STYLE = ("body{margin:0;padding:0;font-family:\"Microsoft YaHei\",Arial,sans-serif}.nav li{float:left;"
          "list-style:none;margin-right:12px}.article p{text-indent:2em;line-height:1.8;font-size:16px}"
          ".footer{clear:both;color:#999;border-top:1px solid #ddd}")
_SCRIPT = ("var _hmt=_hmt||[];(function(){var hm=document.createElement(\"script\");hm.src=\"https://hm.example.com/"
           "hm.js?3f2a9b\";var s=document.getElementsByTagName(\"script\")[0];s.parentNode.insertBefore(hm,s);})();")
_NAV = {"zh": ["首页", "新闻", "财经", "体育", "娱乐", "科技", "房产", "汽车"],
        "en": ["Home", "News", "Business", "Sport", "Culture", "Technology", "Travel", "Weather"]}


def _paragraphs_html(text: str, lang: str, r: random.Random) -> str:
    out = []
    for p in _paras(text):
        if lang == "zh":
            p = p.replace("“", "&ldquo;").replace("”", "&rdquo;")
        else:
            p = p.replace("&", "&amp;").replace("'", "&#39;")
        style = r.choice(('', ' style="text-indent:2em;font-size:14px;color:#333"', ' class="content-p"'))
        out.append(f"<p{style}>&nbsp;&nbsp;{p}</p>")
    return "".join(out)


def page(text: str, lang: str, r: random.Random, site: int = 0) -> str:
    """A whole saved page: head with style and script, a navigation bar, the article, a footer."""
    nav = "".join(f'<li><a href="/{i}/">{n}</a></li>' for i, n in enumerate(_NAV[lang]))
    foot = "版权所有 © 2024" if lang == "zh" else "Copyright &copy; 2024. All rights reserved."
    return (f"<html><head><meta charset=\"utf-8\"><style>{_STYLE}</style><script>{_SCRIPT}</script></head>"
            f"<body><ul class=\"nav\" id=\"site-{site}\">{nav}</ul><div class=\"article\">"
            f"{_paragraphs_html(text, lang, r)}</div><div class=\"footer\">{foot}</div></body></html>")


def fragment(text: str, lang: str, r: random.Random) -> str:
    """Markup remnants: the article's paragraphs as HTML, with inline styles and entities."""
    return f'<div class="article" style="width:640px">{_paragraphs_html(text, lang, r)}</div>'


def _markup_stream(split: str, seed: int, lang: str, n: int) -> list[Doc]:
    pool = _deal(_pools()[(lang, "medium")], split)
    rng = _rng(seed, split, lang, "markup")
    docs: list[Doc] = []
    chosen = sorted(rng.sample(range(len(pool)), min(n, len(pool))))
    shorts = _deal(_pools()[(lang, "short")], split)
    for i in chosen:
        text = pool[i]
        cid = f"{split}-{lang}-markup-{i:05d}"
        r = _rng(seed, cid)
        form = r.choice(("page", "fragment", "plain"))
        first = page(text, lang, r) if form == "page" else fragment(text, lang, r) if form == "fragment" else text
        docs.append(Doc(cid, first, cid, lang, "markup", "original", f"markup:{form}"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 2))):
                vform = r.choice(("page", "fragment", "plain"))
                body = text if r.random() < 0.5 else data.edit_short(text, lang, "punct", 1, r)
                vt = page(body, lang, r, site=v) if vform == "page" else fragment(body, lang, r) \
                    if vform == "fragment" else body
                docs.append(Doc(f"{cid}-v{v}", vt, cid, lang, "markup", "variant", f"markup:{vform}"))
        if r.random() < 0.4:  # a page that is mostly the site's markup around a different short text
            other = r.choice(shorts)
            mid = f"{cid}-mostly-markup"
            docs.append(Doc(mid, page(other, lang, r), mid, lang, "markup", "negative", "mostly-markup", "page"))
    return docs


# -- GBK crawlers --------------------------------------------------------------------------------------------
def _gbk_stream(split: str, seed: int, n: int) -> list[Doc]:
    pool = _deal(_pools()[("zh", "medium")], split)
    rng = _rng(seed, split, "zh", "gbk")
    docs: list[Doc] = []
    for i in sorted(rng.sample(range(len(pool)), min(n, len(pool)))):
        cid = f"{split}-zh-gbk-{i:05d}"
        r = _rng(seed, cid)
        text = pool[i]
        enc = "gb18030" if r.random() < 0.5 else "utf-8"
        docs.append(Doc(cid, text, cid, "zh", "gbk", "original", f"encoding:{enc}"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 2))):
                venc = "utf-8" if enc == "gb18030" else "gb18030"
                edit, strength = r.choice(("wrap", "ads", "typo", "punct", "delete")), r.choice((1, 2))
                vt, site = data.edit_long(text, "zh", edit, strength, r, pool)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "gbk", "variant", f"encoding:{venc}", site))
    return docs


# -- Traditional script -------------------------------------------------------------------------------------
CONVERSIONS = ("s2t", "s2tw", "s2hk", "s2twp")


@lru_cache(maxsize=None)
def _converter(name: str):
    import opencc  # (the OpenCC package: pip install ".[bench]")

    return opencc.OpenCC(f"{name}.json")


def traditional(text: str, conversion: str) -> str:
    """``text`` converted by OpenCC (``s2t``, ``s2tw``, ``s2hk`` or ``s2twp``)."""
    return _converter(conversion).convert(text)


def _traditional_stream(split: str, seed: int, n: int) -> list[Doc]:
    pools = {b: _deal(_pools()[("zh", b)], split) for b in ("long", "medium", "short")}
    docs: list[Doc] = []
    longer: list[str] = []  # the keys of the long and medium originals
    for bucket, share in (("long", 0.4), ("medium", 0.3), ("short", 0.3)):
        pool = pools[bucket]
        for _, text, cid, r in _originals(split, seed, "zh", f"traditional-{bucket}", pool, int(round(n * share))):
            if bucket == "short" and any(_key(text) in k for k in longer):
                continue  # (a People's Daily sentence of an article drawn here: the same text, not a negative)
            longer.append(_key(text))
            first = traditional(text, r.choice(CONVERSIONS)) if r.random() < 0.25 else text
            docs.append(Doc(cid, first, cid, "zh", "traditional", "original", f"bucket:{bucket}"))
            if r.random() < 0.75:
                for v in range(r.choice((1, 1, 2, 3))):
                    conversion = r.choice(CONVERSIONS)
                    edit = r.choice(("none", "none", "wrap", "ads", "delete", "typo", "punct"))
                    if bucket == "short":
                        edit = {"wrap": "prefix", "ads": "suffix", "delete": "punct"}.get(edit, edit)
                        edited = text if edit == "none" else data.edit_short(text, "zh", edit, 1, r)
                    else:
                        edited = text if edit == "none" else data.edit_long(text, "zh", edit, r.choice((1, 2)), r,
                                                                            pool)[0]
                    docs.append(Doc(f"{cid}-v{v}", traditional(edited, conversion), cid, "zh", "traditional",
                                    "variant", f"{conversion}:{edit}"))
    return docs


# -- converter residue: romanisation, ruby ---------------------------------------------------------------------
_SPAM = ["【最新】免费领取价值千元大礼包，点击进入官网", "热门搜索：股票 基金 理财 房价 汽车报价", "本站域名已更换，请收藏新网址",
         "手机版 | 电脑版 | 简体中文 | 繁體中文"]


def _romanised(ch: str, style: str) -> str:
    from pypinyin import Style, pinyin  # (pip install ".[bench]")

    kind = {"tone": Style.TONE, "digits": Style.TONE3, "zhuyin": Style.BOPOMOFO}[style]
    return pinyin(ch, style=kind)[0][0]


def annotated(text: str, r: random.Random, share: float, style: str) -> str:
    """``text`` with the romanisation of a ``share`` of its ideographs in brackets after them (``內(nèi)``)."""
    out = []
    for ch in text:
        out.append(ch)
        if "\u4e00" <= ch <= "\u9fff" and r.random() < share:
            out.append(f"({_romanised(ch, style)})")
    return "".join(out)


def ruby(text: str, r: random.Random, share: float) -> str:
    """``text`` as HTML paragraphs with ruby annotations on a ``share`` of its ideographs."""
    def mark(ch: str) -> str:
        if "\u4e00" <= ch <= "\u9fff" and r.random() < share:
            return f"<ruby>{ch}<rp>(</rp><rt>{_romanised(ch, 'tone')}</rt><rp>)</rp></ruby>"
        return ch

    return "".join(f"<p>{''.join(map(mark, p))}</p>" for p in _paras(text))


def _annotated_stream(split: str, seed: int, n: int) -> list[Doc]:
    pool = _deal(_pools()[("zh", "long")], split) + _deal(_pools()[("zh", "medium")], split)
    docs: list[Doc] = []
    for _, text, cid, r in _originals(split, seed, "zh", "annotated", pool, n):
        if r.random() < 0.2:  # some originals are themselves annotated (negatives of each other)
            first = annotated(text, r, r.choice((0.1, 0.3)), "tone")
        else:
            first = text
        docs.append(Doc(cid, first, cid, "zh", "annotated", "original"))
        if r.random() < 0.75:
            for v in range(r.choice((1, 1, 2))):
                kind = r.choice(("tone", "tone", "digits", "zhuyin", "ruby"))
                base = traditional(text, r.choice(CONVERSIONS[:3])) if r.random() < 0.6 else text
                if kind == "ruby":
                    vt = ruby(base, r, r.choice((0.1, 0.3, 1.0)))
                else:
                    vt = annotated(base, r, r.choice((0.05, 0.2, 0.5)), kind)
                    if r.random() < 0.5:
                        vt = "\n".join(r.sample(_SPAM, r.choice((1, 2)))) + "\n" + vt
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "annotated", "variant", f"annotated:{kind}"))
    return docs


def _encode(docs: list[Doc]) -> list[Doc]:
    """Each document's record, in the encoding its crawler wrote (``edit`` says so in the GBK stream)."""
    for d in docs:
        enc = d.edit.split(":", 1)[1] if d.edit.startswith("encoding:") else "utf-8"
        try:
            d.raw = record(d.id, d.text, enc)
        except UnicodeEncodeError:  # a character GB18030 lacks cannot happen (it covers Unicode); keep UTF-8
            d.raw = record(d.id, d.text)
    return docs


def build(split: str, seed: int = 1998, scale: float = 1.0) -> dict[tuple[str, str], list[Doc]]:
    """The crawl-phenomena streams of one split, each in a seeded random order."""
    if split not in ("dev", "test"):
        raise ValueError("split is 'dev' or 'test'")
    makers = {
        ("zh", "spaced"): lambda n: _spaced_stream(split, seed, n),
        ("zh", "repeated"): lambda n: _repeated_stream(split, seed, n),
        ("zh", "template"): lambda n: _template_stream(split, seed, n),
        ("zh", "markup"): lambda n: _markup_stream(split, seed, "zh", n),
        ("en", "markup"): lambda n: _markup_stream(split, seed, "en", n),
        ("zh", "gbk"): lambda n: _gbk_stream(split, seed, n),
        ("zh", "traditional"): lambda n: _traditional_stream(split, seed, n),
        ("zh", "annotated"): lambda n: _annotated_stream(split, seed, n),
    }
    out = {}
    for g in PHENOMENA:
        docs = _encode(makers[g](max(4, int(round(SIZES[g] * scale)))))
        _rng(seed, split, *g, "order").shuffle(docs)
        out[g] = docs
    return out


if __name__ == "__main__":  # a look at the streams
    import collections

    for name in ("dev", "test"):
        for g, docs in build(name).items():
            kinds = collections.Counter(d.kind for d in docs)
            print(name, g, len(docs), "docs", len({d.cluster for d in docs}), "clusters", dict(kinds))
    for g, docs in build("dev", scale=0.05).items():
        for d in docs[:4]:
            print(g, d.kind, d.edit, repr(d.text[:120]))
