"""Event identity, page furniture and edits together: streams of People's Daily articles for the accuracy benchmark.

``build(split, seed, scale)`` returns the streams of one split, built from that split's articles (``accuracy_data``'s
pools: dev and test never share an original) and scored as the other streams are (pairwise, per stream). The
labels come from how each text is made, never from es-simhash:

* ``other event``  template reports of other events: an article (one with an event date, a place and figures) and
                   reports written from it about other events, with every date, weekday and time, every Chinese place
                   name and every figure replaced (a weather report of another year, a bulletin of another day, the
                   statistics of another month). Reports of different events are NOT duplicates; a report reprinted
                   under a site's header and footer is a duplicate of that report.
* ``other date``   the same, with only the dates, weekdays and times replaced (places and figures as they are).
* ``other place``  the same, with only the place names replaced, everywhere they occur (dates and figures as they are).
* ``update``       an article reported again on the same dates at the same places with 40-85% of its figures
                   revised (a later count, a corrected total), sometimes with one added sentence: a duplicate.
* ``page dates``   reprints carrying their own page date: a site's header or byline with another date and time
                   (``发布时间：2024-03-02 10:21``, ``来源：XX网 2024年3月2日``, ``编辑：...``), sometimes a footer with
                   one more: duplicates of the article. Some originals only appear under such a header themselves, so
                   different articles under one site's header are the hard negatives.
* ``ascii punct``  the article's ，。！？；： written ,.!?;: with no space after: a duplicate.
* ``ascii punct+edit`` the same with a second edit: a new headline, a cut copy, a site's boilerplate, words replaced
                   by synonyms (``accuracy_pages.rewrite``), spaces between the characters (PDF extraction) or hard
                   line breaks.
* ``comments``     copies that carry a comment section of their own (``热门评论``: nicknames, short comments, likes and
                   reply links) that is 30-80% of the page, alone or with a second edit: duplicates; a third of the
                   originals carry comments of their own too.
* ``shared comments`` one comment section under two different articles (sites show their "hot comments" under
                   several pages): the two pages are NOT duplicates; each article also appears bare half the time.
* ``three edits``  copies with three edits at once, drawn from the edits of every stream (entities, hard line
                   breaks, a cut, synonyms, boilerplate, ASCII punctuation, half-width punctuation with full-width
                   digits and letters, typos, ads, deleted sentences, a new headline, comments, a page date, PDF
                   spacing): duplicates.

Dates are read in the forms the corpus and crawled pages write them: ``１９９８年１月５日``, ``１２月５日``, ``５日``,
``一九九八年一月五日``, ``星期三``/``周三``, ``１０时３０分``, ``2023-12-05``, in ASCII or full-width digits. Places are
the words People's Daily's annotators tagged as place names (``corpora.peoples_daily_places``) that name a Chinese
province, city, county, district, town or township, found as jieba's words (so ``隆重庆祝`` holds no ``重庆``); each is
replaced by another of its kind (a county by a county) wherever it appears.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
import random

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy_crawl as crawl  # noqa: E402
import accuracy_data as data  # noqa: E402
import accuracy_pages as pages  # noqa: E402
import corpora  # noqa: E402
from accuracy_data import Doc, _deal, _key, _paras, _pools, _rng  # noqa: E402

__all__ = ["STREAMS", "NEGATIVE_STREAMS", "build", "negatives_merged", "other_event", "update", "ascii_punct",
           "comment_section", "page_header", "EDITS3"]

OTHER_EVENT, OTHER_DATE, OTHER_PLACE = ("zh", "other event"), ("zh", "other date"), ("zh", "other place")
UPDATE, PAGE_DATES = ("zh", "update"), ("zh", "page dates")
ASCII, ASCII_EDIT = ("zh", "ascii punct"), ("zh", "ascii punct+edit")
COMMENTS, SHARED_COMMENTS, THREE_EDITS = ("zh", "comments"), ("zh", "shared comments"), ("zh", "three edits")
STREAMS = [OTHER_EVENT, OTHER_DATE, OTHER_PLACE, UPDATE, PAGE_DATES, ASCII, ASCII_EDIT, COMMENTS, SHARED_COMMENTS,
           THREE_EDITS]
# streams whose pairs of different documents in one group (``Doc.site``) are counted: merged per 100 pairs
NEGATIVE_STREAMS = [OTHER_EVENT, OTHER_DATE, OTHER_PLACE, SHARED_COMMENTS]
SIZES = {OTHER_EVENT: 100, OTHER_DATE: 100, OTHER_PLACE: 100, UPDATE: 110, PAGE_DATES: 110, ASCII: 110,
         ASCII_EDIT: 110, COMMENTS: 110, SHARED_COMMENTS: 60, THREE_EDITS: 120}

# -- digits ----------------------------------------------------------------------------------------------------
_D = "[0-9０-９]"
_FW = str.maketrans("０１２３４５６７８９", "0123456789")
_TO_FW = str.maketrans("0123456789", "０１２３４５６７８９")
_CN_DIGIT = "〇一二三四五六七八九"


def _int(s: str) -> int:
    return int(s.translate(_FW))


def _like(n: int, s: str) -> str:
    """``n`` written as ``s`` is: full-width or ASCII digits, zero-padded to its width when ``s`` is."""
    out = str(n).zfill(len(s)) if s[0] in "0０" and len(s) > 1 else str(n)
    return out.translate(_TO_FW) if s[0] in "０１２３４５６７８９" else out


def _cn_small(n: int) -> str:
    """1..39 in Chinese numerals as dates write them (十二, 二十一, 三十)."""
    tens, ones = divmod(n, 10)
    return (("" if tens == 1 else _CN_DIGIT[tens]) + "十" if tens else "") + (_CN_DIGIT[ones] if ones else "")


def _cn_value(s: str) -> int:
    if "十" not in s:
        return sum(_CN_DIGIT.index(c) * 10 ** i for i, c in enumerate(reversed(s.replace("零", "〇"))))
    tens, _, ones = s.partition("十")
    return (_CN_DIGIT.index(tens) if tens else 1) * 10 + (_CN_DIGIT.index(ones) if ones else 0)


# -- dates, weekdays, times --------------------------------------------------------------------------------------
_CN_NUM = "[一二三四五六七八九十]"
_DATE = re.compile(
    rf"(?<!{_D})(?P<iso>(?P<iy>{_D}{{4}})(?P<sep>[-/])(?P<im>{_D}{{1,2}})(?P=sep)(?P<id>{_D}{{1,2}}))"
    rf"|(?<!{_D})(?P<y>{_D}{{4}})(?=年)|(?<!{_D})(?P<m>{_D}{{1,2}})(?=月)|(?<!{_D})(?P<d>{_D}{{1,2}})(?=日)"
    rf"|(?P<cy>[〇零一二三四五六七八九]{{4}})(?=年)"
    rf"|(?<=年)(?P<cm>{_CN_NUM}{{1,2}})(?=月)|(?P<cm2>{_CN_NUM}{{1,2}})(?=月{_CN_NUM}{{1,3}}日)"
    rf"|(?<=月)(?P<cd>{_CN_NUM}{{1,3}})(?=日)"
    r"|(?<=星期|礼拜)(?P<wk>[一二三四五六日天])|(?<=周)(?P<wk2>[一二三四五六日])(?![一二三四五六七八九十年次])"
    rf"|(?<!{_D})(?P<h>{_D}{{1,2}})(?=时)|(?<=上午|下午|晚上|凌晨|早上|中午|傍晚|清晨)(?P<h2>{_D}{{1,2}})(?=点)"
    rf"|(?<=[时点])(?P<mi>{_D}{{1,2}})(?=分)|(?<!{_D})(?P<hh>{_D}{{1,2}}):(?P<mm>{_D}{{2}})(?!{_D})"
)
# the event's date: a day or a weekday (a year alone is history, not the day of the event)
_EVENT_DATE = re.compile(rf"{_D}{{1,2}}日|月{_CN_NUM}{{1,3}}日|星期[一二三四五六日天]|{_D}{{4}}-{_D}{{1,2}}-{_D}{{1,2}}")
_WEEK = "一二三四五六日"


class DateShift:
    """Another event's calendar: every year, month, day, weekday, hour and minute moved by one offset each (so a
    date the text gives twice is one date)."""

    def __init__(self, r: random.Random) -> None:
        self.dy = r.choice((-3, -2, -1, 1, 2, 3))
        self.dm, self.dd, self.dw = r.randint(1, 11), r.randint(1, 27), r.randint(1, 6)
        self.dh, self.dmi = r.randint(1, 23), r.randint(5, 55)

    def month(self, m: int) -> int:
        return (m - 1 + self.dm) % 12 + 1

    def day(self, d: int) -> int:
        return (d - 1 + self.dd) % 28 + 1 if d <= 28 else d - self.dd

    def __call__(self, m: re.Match[str]) -> str:  # noqa: C901 (one branch per form)
        g = m.lastgroup
        s = m.group(g) if g else m.group()
        if m.group("iso"):
            y, mo, d = _int(m.group("iy")), _int(m.group("im")), _int(m.group("id"))
            sep = m.group("sep")
            return (_like(y + self.dy, m.group("iy")) + sep + _like(self.month(mo), m.group("im")) + sep
                    + _like(self.day(d), m.group("id")))
        if m.group("hh") is not None:
            hh, mm = m.group("hh"), m.group("mm")
            return f"{_like((_int(hh) + self.dh) % 24, hh).rjust(len(hh), hh[0])}:{_like((_int(mm) + self.dmi) % 60, mm)}"
        if g == "y":
            return _like(_int(s) + self.dy, s)
        if g == "m":
            return _like(self.month(_int(s)), s) if 1 <= _int(s) <= 12 else s
        if g == "d":
            return _like(self.day(_int(s)), s) if 1 <= _int(s) <= 31 else s
        if g == "cy":
            return "".join(_CN_DIGIT[int(c)] for c in str(_cn_value(s) + self.dy))
        if g in ("cm", "cm2"):
            return _cn_small(self.month(_cn_value(s)))
        if g == "cd":
            return _cn_small(self.day(_cn_value(s)))
        if g in ("wk", "wk2"):
            return _WEEK[(_WEEK.index("日" if s == "天" else s) + self.dw) % 7]
        if g in ("h", "h2"):
            return _like((_int(s) + self.dh) % 24, s)
        if g == "mi":
            return _like((_int(s) + self.dmi) % 60, s)
        return s


def _date_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _DATE.finditer(text)]


# -- figures ---------------------------------------------------------------------------------------------------------
_FIGURE = re.compile(rf"{_D}+(?:[.．·]{_D}+)?")


def figures(text: str) -> list[re.Match[str]]:
    """The numbers of ``text`` in digits (ASCII or full-width) that are not part of a date or a time."""
    spans = _date_spans(text)
    return [m for m in _FIGURE.finditer(text) if not any(a < m.end() and m.start() < b for a, b in spans)]


def _digits_like(s: str, make) -> str:
    """``s`` (digits, perhaps one decimal mark) with each run of digits replaced by ``make(run)``."""
    return re.sub(_D + "+", lambda m: make(m.group()), s)


def _another_figure(s: str, r: random.Random) -> str:
    """Another number of the same shape (as many digits, the same decimal mark)."""
    def run(d: str) -> str:
        n = len(d)
        low = 10 ** (n - 1) if n > 1 else 0
        new = r.randint(low, 10 ** n - 1)
        if new == _int(d):
            new = new - 1 if new > low else new + 1
        return _like(new, d)
    return _digits_like(s, run)


def _revised_figure(s: str, r: random.Random) -> str:
    """A later count or a corrected total: the number grown by 3-40% (now and then lowered by 3-15%), at least by
    one in its last digit."""
    sep = next((c for c in ".．·" if c in s), None)
    whole, _, frac = s.partition(sep) if sep else (s, "", "")
    value = float(whole.translate(_FW) + ("." + frac.translate(_FW) if frac else ""))
    factor = r.uniform(1.03, 1.4) if r.random() < 0.75 else r.uniform(0.85, 0.97)
    places = len(frac)
    new = round(value * factor, places)
    step = 10 ** -places
    if abs(new - value) < step / 2:
        new = value + step
    if new < 0:
        new = value + step
    text = f"{new:.{places}f}"
    w, _, f = text.partition(".")
    w = _like(int(w), whole)
    if sep:
        f = f.translate(_TO_FW) if frac[0] in "０１２３４５６７８９" else f
        return w + sep + f
    return w


# -- places ------------------------------------------------------------------------------------------------------------
_SUFFIXES = ("自治区", "省", "市", "县", "区", "镇", "乡")
# characters of foreign names transliterated (科威特市, 斯塔万格市, 纽卡斯尔市): no Chinese place here holds them
_FOREIGN = set("斯尔维萨奥特卡塔诺迪勒莫札幌阪霸渥堪培雅蒂艾赫库曼纳伊克瓦茨盖堡菲拉布加哈芬")


@lru_cache(maxsize=None)
def chinese_places() -> dict[str, tuple[str, ...]]:
    """Kind (a suffix, or "" for a province's or a big city's bare name) -> the Chinese places of that kind that
    People's Daily's annotators tagged in the articles."""
    tagged = corpora.peoples_daily_places()
    bare = [p for p in pages._PLACES if p in tagged]
    out: dict[str, list[str]] = {"": bare}
    for word in tagged:
        kind = next((s for s in _SUFFIXES if word.endswith(s)), None)
        stem = word[: -len(kind)] if kind else ""
        if kind is None or not (1 if kind == "县" else 2) <= len(stem) <= 4 or _FOREIGN & set(stem) \
                or not re.fullmatch(r"[\u4e00-\u9fff]+", word) or (kind == "省" and stem not in bare):
            continue
        out.setdefault(kind, []).append(word)
    return {k: tuple(sorted(v)) for k, v in out.items() if len(v) >= 5}


def _place_kind(word: str) -> str | None:
    for kind, words in chinese_places().items():
        if word in _place_set(kind):
            return kind
    return None


@lru_cache(maxsize=None)
def _place_set(kind: str) -> frozenset[str]:
    return frozenset(chinese_places()[kind])


def _words(text: str) -> list[str]:
    import jieba

    return jieba.lcut(text)


def places(text: str) -> list[str]:
    """The Chinese place names of ``text`` (jieba's words), in order."""
    return [w for w in _words(text) if _place_kind(w) is not None]


def _other_places(text: str, r: random.Random) -> str:
    """``text`` with each place jieba reads in it replaced by another of its kind, everywhere it occurs (inside a
    longer word too: 成都市 when 成都 is replaced), in one pass."""
    chosen: dict[str, str] = {}
    for w in _words(text):
        kind = _place_kind(w)
        if kind is not None and w not in chosen:
            taken = set(chosen.values()) | set(chosen)
            pool = [p for p in chinese_places()[kind] if p not in taken] or [p for p in chinese_places()[kind] if p != w]
            chosen[w] = r.choice(pool)
    if not chosen:
        return text
    names = re.compile("|".join(map(re.escape, sorted(chosen, key=len, reverse=True))))
    return names.sub(lambda m: chosen[m.group()], text)


# -- template reports of another event, updates ----------------------------------------------------------------------
def other_event(text: str, r: random.Random, dates: bool = True, place: bool = True, figure: bool = True) -> str:
    """The template's report of another event: its dates, weekdays and times (``dates``), its places (``place``) and its
    figures (``figure``) replaced; a date, a place or a figure that the text gives twice is replaced alike."""
    out = text
    if figure:
        spans = _date_spans(out)
        chosen: dict[str, str] = {}

        def fig(m: re.Match[str]) -> str:
            if any(a < m.end() and m.start() < b for a, b in spans):
                return m.group()
            return chosen.setdefault(m.group(), _another_figure(m.group(), r))
        out = _FIGURE.sub(fig, out)
    if dates:
        out = _DATE.sub(DateShift(r), out)
    if place:
        out = _other_places(out, r)
    return out


_UPDATE_LINES = ["截至记者发稿时，有关部门仍在对上述数字进行核实。", "据最新统计，有关数字已作更正。",
                 "本报将继续关注事态进展。", "（本报记者补充报道）", "以上数字为有关部门最新核定数。",
                 "记者从有关部门了解到，统计工作仍在进行中。"]


def update(text: str, r: random.Random) -> str:
    """The same event reported again: the same dates and places, 40-85% of its figures revised (at least one), and
    half the time one added sentence at the end of a paragraph."""
    figs = figures(text)
    n = max(1, round(r.uniform(0.40, 0.85) * len(figs)))
    change = {m.start() for m in r.sample(figs, min(n, len(figs)))}
    out, last = [], 0
    for m in figs:
        out.append(text[last : m.start()])
        out.append(_revised_figure(m.group(), r) if m.start() in change else m.group())
        last = m.end()
    out.append(text[last:])
    new = "".join(out)
    if r.random() < 0.5:
        paras = _paras(new)
        i = r.randrange(1, len(paras)) if len(paras) > 1 else 0
        paras[i] += r.choice(_UPDATE_LINES)
        new = "\n".join(paras)
    return new


# -- page dates ----------------------------------------------------------------------------------------------------------
_SITES = ["华夏资讯网", "东方快讯", "神州在线", "中原新闻网", "江南都市网", "北方网", "今日头条号", "环球快报"]
_AUTHORS = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆", "赵敏", "佚名"]
_HEADERS = ["发布时间：{iso} {hm}　来源：{site}", "来源：{site} {y}年{m}月{d}日 {hm}",
            "{iso} {hm}:{s:02d}　来源：{site}　作者：{author}", "{site}　{y}年{m}月{d}日　编辑：{author}",
            "时间：{iso} {hm}　来源：{site}　编辑：{author}　阅读：{n}", "{site} > 新闻 > 正文\n{y}-{m:02d}-{d:02d} {hm} 来源：{site}"]
_FOOTERS = ["（责任编辑：{author}）", "更新时间：{y}年{m:02d}月{d:02d}日 {hm}", "本文发布于{iso}，转载请注明出处。",
            "【纠错】 责任编辑：{author} {iso} {hm}", "编辑：{author}　{y}/{m:02d}/{d:02d}"]


def page_header(site: str, r: random.Random, footer: bool | None = None) -> tuple[str, str]:
    """A site's header (or byline) with the page's own date and time, and a footer (perhaps empty) with another."""
    def fill(form: str) -> str:
        y, m, d = r.randint(2015, 2024), r.randint(1, 12), r.randint(1, 28)
        h, mi = r.randint(0, 23), r.randint(0, 59)
        return form.format(site=site, y=y, m=m, d=d, iso=f"{y}-{m:02d}-{d:02d}", hm=f"{h:02d}:{mi:02d}",
                           s=r.randint(0, 59), author=r.choice(_AUTHORS), n=r.randint(100, 99999))
    footer = r.random() < 0.5 if footer is None else footer
    return fill(r.choice(_HEADERS)), fill(r.choice(_FOOTERS)) if footer else ""


def with_page_date(text: str, site: str, r: random.Random) -> str:
    head, foot = page_header(site, r)
    return "\n".join([head, text] + ([foot] if foot else []))


# -- ASCII punctuation ---------------------------------------------------------------------------------------------------
_ASCII = str.maketrans("，。！？；：", ",.!?;:")


def ascii_punct(text: str) -> str:
    """``，。！？；：`` written ``,.!?;:`` with no space after (a keyboard's punctuation inside Chinese text)."""
    return text.translate(_ASCII)


def headline(text: str, r: random.Random) -> str:
    """A new headline: a copy site's hook and the first clause of the article's first sentence, in place of its title."""
    paras = _paras(text)
    if len(paras) < 2:
        return text
    first = re.split(r"[，。！？；,.!?;]", paras[1], maxsplit=1)[0][:30]
    hook = r.choice(["刚刚！", "重磅：", "最新消息：", "关注｜", "【热点】", "突发！", "速看："])
    return "\n".join([hook + first] + paras[1:])


def pdf_spacing(text: str, r: random.Random) -> str:
    """Spaces between the characters of every line (text extracted from a PDF), all of them or about half."""
    share = r.choice((1.0, 0.5))
    return "\n".join(crawl.spaced(p, r, share=share) for p in _paras(text))


# -- comment sections ----------------------------------------------------------------------------------------------------
_NICK_A = ["快乐的", "孤独的", "安静的", "爱笑的", "不会飞的", "奔跑的", "深夜的", "清风", "老", "小"]
_NICK_B = ["小鱼", "猫咪", "行者", "大叔", "石头", "西瓜", "书生", "水手", "蜗牛", "星辰"]
_HEADS = ["热门评论", "网友评论", "热门评论（{n}条）", "最新评论", "全部评论 {n}"]


def _nickname(r: random.Random) -> str:
    form = r.random()
    if form < 0.5:
        return r.choice(_NICK_A) + r.choice(_NICK_B) + (str(r.randint(1, 9999)) if r.random() < 0.5 else "")
    if form < 0.8:
        return f"来自{r.choice(chinese_places()[''])}的网友"
    return f"网友{r.randint(10000000, 99999999)}"


def comment_section(length: int, r: random.Random, pool: list[str]) -> str:
    """A comment section of about ``length`` characters: a heading, comments (nickname, a short text of ``pool``, time,
    likes, a reply link) and a "more comments" link."""
    lines = [r.choice(_HEADS).format(n=r.randint(20, 9999))]
    size = len(lines[0])
    while size < length:
        c = f"{_nickname(r)}：{r.choice(pool)}"
        meta = f"{r.randint(1, 23)}小时前　赞({r.randint(0, 999)})　回复" if r.random() < 0.7 else f"{r.randint(1, 500)}赞"
        lines += [c, meta]
        size += len(c) + len(meta)
    lines.append(r.choice(["查看更多评论>>", "加载更多", "点击查看全部评论"]))
    return "\n".join(lines)


def with_comments(text: str, r: random.Random, pool: list[str], share: float | None = None) -> str:
    """``text`` with a comment section under it that is ``share`` (30-80% when not given) of the page."""
    share = r.uniform(0.3, 0.8) if share is None else share
    return text + "\n" + comment_section(int(len(text) * share / (1 - share)), r, pool)


# -- edits, one or several at once ----------------------------------------------------------------------------------------
# the order edits are made in: the article's words first, then its punctuation, then the page, then the delivery
EDITS3 = ["rewritten", "delete", "typo", "headline", "cut", "ascii", "fullwidth", "ads", "comments", "boilerplate",
          "pagedate", "spacing", "wrapped", "entities"]
SECOND_EDITS = ["headline", "cut", "boilerplate", "rewritten", "spacing", "wrapped"]


def apply_edits(edits: list[str], text: str, r: random.Random, titles: list[str], comments: list[str]) -> str:
    pool = [text]
    for edit in sorted(edits, key=EDITS3.index):
        if edit == "rewritten":
            text = pages.rewrite(text, r)
        elif edit in ("delete", "ads"):
            text, _ = data.edit_long(text, "zh", edit, 2, r, pool)
        elif edit == "typo":
            text = data.typos(text, "zh", 3, r)
        elif edit == "headline":
            text = headline(text, r)
        elif edit == "cut":
            text = pages.cut(text, r)
        elif edit == "ascii":
            text = ascii_punct(text)
        elif edit == "fullwidth":  # half-width commas and quotes, full-width digits and letters, doubled breaks
            text = data.punct(text, "zh", 2, r)
        elif edit == "comments":
            text = with_comments(text, r, comments)
        elif edit == "boilerplate":
            text = pages.boilerplate(text, r, None, r.sample(titles, min(len(titles), 12)))
        elif edit == "pagedate":
            text = with_page_date(text, r.choice(_SITES), r)
        elif edit == "spacing":
            text = pdf_spacing(text, r)
        elif edit == "wrapped":
            text = pages.hard_wrap(text, r)
        elif edit == "entities":
            text = pages.entities(text, r)
        else:
            raise ValueError(edit)
    return text


# -- the streams -----------------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _articles(split: str) -> tuple[str, ...]:
    """The split's People's Daily articles of 200-3000 characters (medium and long)."""
    return tuple(a for a in _deal(_pools()[("zh", "long")], split) + _deal(_pools()[("zh", "medium")], split)
                 if 200 <= len(a) <= 3000)


@lru_cache(maxsize=None)
def _long(split: str) -> tuple[str, ...]:
    return tuple(a for a in _deal(_pools()[("zh", "long")], split) if len(a) <= 3000)


def _eligible(text: str, need: str) -> bool:
    has_date = bool(_EVENT_DATE.search(text))
    if need == "dates":
        return has_date
    if need == "places":
        return bool(places(text))
    if need == "update":
        return has_date and len(figures(text)) >= 3
    return has_date and bool(places(text)) and len(figures(text)) >= 2  # other event


def _sample(split: str, seed: int, name: str, pool: list[str] | tuple[str, ...], n: int, need: str | None = None):
    """``(text, cluster id, rng)`` of ``n`` different articles of ``pool`` (those that have what ``need`` asks for)."""
    rng = _rng(seed, split, "events", name)
    order = list(range(len(pool)))
    rng.shuffle(order)
    seen: set[str] = set()
    picked = []
    for i in order:
        if len(picked) == n:
            break
        k = _key(pool[i])
        if k in seen or (need and not _eligible(pool[i], need)):
            continue
        seen.add(k)
        picked.append(i)
    for i in sorted(picked):
        cid = f"{split}-zh-{name.replace(' ', '-')}-{i:05d}"
        yield pool[i], cid, _rng(seed, cid)


def _reprint(text: str, r: random.Random) -> str:
    return data.edit_long(text, "zh", "wrap", r.choice((1, 2)), r, [text])[0]


def _event_stream(split: str, seed: int, g: tuple[str, str], n: int) -> list[Doc]:
    """Template reports: the article, 1-2 reports of other events from it, each report reprinted a third of the time."""
    opts = {OTHER_EVENT: dict(), OTHER_DATE: dict(place=False, figure=False), OTHER_PLACE: dict(dates=False, figure=False)}[g]
    need = {OTHER_EVENT: "event", OTHER_DATE: "dates", OTHER_PLACE: "places"}[g]
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, g[1], _articles(split), n, need):
        reports = [(cid, text, "original", "")]
        for e in range(r.choice((1, 1, 2))):
            other = other_event(text, r, **opts)
            if other != text:
                reports.append((f"{cid}-event{e}", other, "negative", g[1].replace(" ", "-")))
        for rid, t, kind, edit in reports:
            docs.append(Doc(rid, t, rid, "zh", g[1], kind, edit, site=cid))
            if r.random() < 1 / 3:
                docs.append(Doc(f"{rid}-reprint", _reprint(t, r), rid, "zh", g[1], "variant", "reprint", site=cid))
    return docs


def _update_stream(split: str, seed: int, n: int) -> list[Doc]:
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, "update", _articles(split), n, "update"):
        docs.append(Doc(cid, text, cid, "zh", "update", "original"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                docs.append(Doc(f"{cid}-v{v}", update(text, r), cid, "zh", "update", "variant", "update"))
    return docs


def _page_dates_stream(split: str, seed: int, n: int) -> list[Doc]:
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, "page dates", _long(split), n):
        site = ""
        first = text
        if r.random() < 0.3:  # an article only ever seen under a site's dated header
            site = r.choice(_SITES)
            first = with_page_date(text, site, r)
        docs.append(Doc(cid, first, cid, "zh", "page dates", "original", site=site))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                kind = r.choice(("same-site", "other-site")) if site else "other-site"
                vsite = site if kind == "same-site" else r.choice([s for s in _SITES if s != site])
                docs.append(Doc(f"{cid}-v{v}", with_page_date(text, vsite, r), cid, "zh", "page dates", "variant",
                                f"pagedate:{kind}", vsite))
    return docs


def _ascii_stream(split: str, seed: int, n: int, second: bool) -> list[Doc]:
    name = ASCII_EDIT[1] if second else ASCII[1]
    titles = [_paras(a)[0] for a in _long(split)[:400]]
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, name, _long(split), n):
        docs.append(Doc(cid, text, cid, "zh", name, "original"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                edits = ["ascii"] + ([r.choice(SECOND_EDITS)] if second else [])
                vt = apply_edits(edits, text, r, titles, [])
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", name, "variant", "+".join(edits)))
    return docs


def _comments_stream(split: str, seed: int, n: int) -> list[Doc]:
    titles = [_paras(a)[0] for a in _long(split)[:400]]
    said = _deal(_pools()[("zh", "short")], split)
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, "comments", _long(split), n):
        first = with_comments(text, r, said) if r.random() < 1 / 3 else text
        docs.append(Doc(cid, first, cid, "zh", "comments", "original"))
        if r.random() < 0.7:
            for v in range(r.choice((1, 1, 2))):
                edits = ["comments"] + ([r.choice([e for e in SECOND_EDITS if e != "boilerplate"] + ["ascii"])]
                                        if r.random() < 0.5 else [])
                vt = apply_edits(edits, text, r, titles, said)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "comments", "variant", "+".join(edits)))
    return docs


def _shared_comments_stream(split: str, seed: int, n: int) -> list[Doc]:
    """Pairs of different articles under one comment section (its share of each page 30-80%); each article also
    appears bare half the time (a duplicate of its page)."""
    said = _deal(_pools()[("zh", "short")], split)
    articles = list(_sample(split, seed, "shared comments", _long(split), 2 * n))
    docs: list[Doc] = []
    for (a, aid, r), (b, bid, _) in zip(articles[0::2], articles[1::2]):
        share = r.uniform(0.3, 0.8)
        section = comment_section(int((len(a) + len(b)) / 2 * share / (1 - share)), r, said)
        group = f"{aid}-shared"
        for text, cid in ((a, aid), (b, bid)):
            docs.append(Doc(f"{cid}-page", text + "\n" + section, cid, "zh", "shared comments", "negative",
                            "shared-comments", group))
            if r.random() < 0.5:
                docs.append(Doc(cid, text, cid, "zh", "shared comments", "original"))
    return docs


def _three_edits_stream(split: str, seed: int, n: int) -> list[Doc]:
    titles = [_paras(a)[0] for a in _long(split)[:400]]
    said = _deal(_pools()[("zh", "short")], split)
    docs: list[Doc] = []
    for text, cid, r in _sample(split, seed, "three edits", _long(split), n):
        docs.append(Doc(cid, text, cid, "zh", "three edits", "original"))
        if r.random() < 0.75:
            for v in range(r.choice((1, 1, 2))):
                edits = sorted(r.sample(EDITS3, 3), key=EDITS3.index)
                vt = apply_edits(edits, text, r, titles, said)
                docs.append(Doc(f"{cid}-v{v}", vt, cid, "zh", "three edits", "variant", "+".join(edits)))
    return docs


def build(split: str, seed: int = 1998, scale: float = 1.0) -> dict[tuple[str, str], list[Doc]]:
    """The streams of one split, each in a seeded random order (its "file order")."""
    if split not in ("dev", "test"):
        raise ValueError("split is 'dev' or 'test'")
    makers = {
        OTHER_EVENT: lambda k: _event_stream(split, seed, OTHER_EVENT, k),
        OTHER_DATE: lambda k: _event_stream(split, seed, OTHER_DATE, k),
        OTHER_PLACE: lambda k: _event_stream(split, seed, OTHER_PLACE, k),
        UPDATE: lambda k: _update_stream(split, seed, k),
        PAGE_DATES: lambda k: _page_dates_stream(split, seed, k),
        ASCII: lambda k: _ascii_stream(split, seed, k, False),
        ASCII_EDIT: lambda k: _ascii_stream(split, seed, k, True),
        COMMENTS: lambda k: _comments_stream(split, seed, k),
        SHARED_COMMENTS: lambda k: _shared_comments_stream(split, seed, k),
        THREE_EDITS: lambda k: _three_edits_stream(split, seed, k),
    }
    out = {}
    for g in STREAMS:
        docs = crawl._encode(makers[g](max(4, round(SIZES[g] * scale))))
        _rng(seed, split, *g, "order").shuffle(docs)
        out[g] = docs
    return out


def negatives_merged(docs: list[Doc], clusters: list[str]) -> tuple[int, int]:
    """Of the pairs of documents of one group (``Doc.site``: one template's reports, the pages under one comment
    section) that are different documents, how many a system put in one cluster: ``(merged, pairs)``. In the
    shared-comments stream only the pages carrying the section are counted."""
    kept = [(d, c) for d, c in zip(docs, clusters) if d.site]  # (the pages of one group share its site)
    return pages.template_news_merged([d for d, _ in kept], [c for _, c in kept])


if __name__ == "__main__":  # a look at the streams
    import collections

    for g, docs in build("dev", scale=0.2).items():
        kinds = collections.Counter(d.kind for d in docs)
        print(g, len(docs), dict(kinds))
        for d in [d for d in docs if d.kind != "original"][:2]:
            print("   ", d.kind, d.edit, repr(d.text[:200]))
