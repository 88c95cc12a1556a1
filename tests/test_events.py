"""Event identity: dates and places name the event a text reports, figures describe it.

Two reports written from one template with another date or another place are other events, on every channel a
match can take (SimHash, long sentences, fuzzy sentence hashes, the shingle sketch); the same report with figures
revised is an update of one event; a reprint carrying its own page date (a header, a byline time) is a copy of its
original. The texts are news as crawlers deliver it: a People's Daily article and reports written here in the
newsroom style of the corpora (a weather report, an earthquake bulletin, a short post)."""

from __future__ import annotations

import re

import pytest

from es_simhash.decide.default import DefaultRule
from es_simhash.fingerprint import Fingerprinter
from es_simhash.fingerprint.events import date_bag, dateline_key, place_bag, place_keys
from es_simhash.fingerprint import text as T

import corpora  # noqa: E402  bench/corpora.py

SNOW = """新华社沈阳12月5日电 5日,沈阳市迎来今冬第一场降雪,全市平均降雪量达到3.5毫米,最低气温降至零下12度。沈阳市气象台表示,这场降雪将持续到6日上午,市民出行请注意安全。
据了解,今年的初雪比往年晚了8天。降雪期间全市出动环卫工人2000余名、机械设备150台,确保主要道路畅通。交通部门提醒广大驾驶员减速慢行,保持车距,遇到路面结冰时不要急刹车。
气象专家介绍,受冷空气影响,未来三天全省气温将持续走低,各地要做好防寒保暖工作,农业部门要及时加固大棚,防止积雪压塌设施。"""
"""A weather report (dates, a city and a province, figures)."""

QUAKE = """中国地震台网正式测定:3月14日9时42分在云南省大理州漾濞县发生4.8级地震,震源深度10千米。震中距漾濞县城约12公里,距大理市约35公里。
地震发生后,云南省地震局立即启动三级应急响应,派出工作组赶赴震区开展现场工作。截至目前,当地未收到人员伤亡报告,部分老旧房屋出现轻微裂缝。
据当地群众反映,震感较为明显,不少居民跑出屋外避险。当地政府组织人员对辖区内学校、医院等重点场所进行排查,确保群众生命财产安全。"""
"""An earthquake bulletin."""

POST = "上海3月8日讯 今天最高气温22度,大家出门记得带伞,晚上有小雨,明天转晴,气温回升,适合外出踏青,各大公园的樱花已经陆续开放。"
"""A short post (under ``short_chars``: compared by the shingle sketch)."""


def _other_event(text: str, swaps: list[tuple[str, str]]) -> str:
    for a, b in swaps:
        text = text.replace(a, b)
    return text


SNOW_OTHER_DAY = _other_event(SNOW, [("12月5日", "11月28日"), ("5日", "28日"), ("6日", "29日"), ("3.5", "2.6"),
                                     ("12度", "9度"), ("8天", "3天"), ("2000", "1800"), ("150", "120")])
"""The same report on another day, in the same city: another event (another snowfall)."""
SNOW_OTHER_CITY = _other_event(SNOW, [("沈阳", "长春"), ("3.5", "2.6"), ("12度", "9度"), ("8天", "3天"),
                                      ("2000", "1800"), ("150", "120"), ("全省", "吉林全省")])
"""The same report on the same day in another city: another event."""
QUAKE_OTHER = _other_event(QUAKE, [("3月14日9时42分", "5月21日21时48分"), ("云南省大理州漾濞县", "四川省甘孜州泸定县"),
                                   ("漾濞县", "泸定县"), ("大理市", "康定市"), ("云南省", "四川省"), ("4.8", "5.1"),
                                   ("12公里", "18公里"), ("35公里", "41公里")])
"""The same bulletin for another earthquake."""
POST_OTHER = _other_event(POST, [("3月8日", "4月2日"), ("上海", "杭州")])


@pytest.fixture(scope="module")
def fingerprinter() -> Fingerprinter:
    return Fingerprinter()


@pytest.fixture(scope="module")
def fingerprint_engines() -> list[Fingerprinter]:
    """The Python reference and the native core (which CI installs): what one engine reads, the other must."""
    return [Fingerprinter(engine="python"), Fingerprinter(engine="native")]


@pytest.fixture(scope="module")
def rule() -> DefaultRule:
    return DefaultRule.rechecked()


def _explain(fingerprinter: Fingerprinter, rule: DefaultRule, a: str, b: str) -> dict:
    fa, fb = fingerprinter.fingerprint_many([a, b])
    return rule.explain(fa, fb)


@pytest.mark.parametrize("original, other, channel", [
    (SNOW, SNOW_OTHER_DAY, "sentences"),
    (SNOW, SNOW_OTHER_CITY, "sentences"),
    (QUAKE, QUAKE_OTHER, "sentences"),
    (POST, POST_OTHER, "simhash"),
])
def test_a_template_report_of_another_event_is_kept_apart(fingerprinter, rule, original, other, channel):
    """The pair matches on its channel when events are not told apart, and not when they are: ``explain`` names
    what differs."""
    blind = _explain(fingerprinter, DefaultRule.rechecked(event_guard=False, number_guard=0), original, other)
    assert blind["duplicate"] and blind["reason"] == channel, blind["why"]
    told = _explain(fingerprinter, rule, original, other)
    assert not told["duplicate"], told["why"]
    assert told["why"][-1].startswith("another event"), told["why"]


def test_each_channel_is_asked(fingerprinter):
    """Every channel that can match the template pair passes through the event test: with the channel alone on
    (the others' bounds set out of reach), the pair still is no duplicate."""
    only_simhash = DefaultRule.rechecked(k=64, sentence_k=-1, sentence_near_k=-1, far_sentence_k=0,
                                         min_contained_sentences=0, fuzzy_k=-1, fuzzy_verbatim=0)
    only_fuzzy = DefaultRule.rechecked(k=-1, sentence_k=-1, sentence_near_k=-1, far_sentence_k=0,
                                       min_contained_sentences=0, fuzzy_k=64, fuzzy_verbatim=0.01, fuzzy_far=0)
    only_sentences = DefaultRule.rechecked(k=-1, fuzzy_k=-1, fuzzy_verbatim=0, sentence_near_k=64)
    a, b = fingerprinter.fingerprint_many([QUAKE, QUAKE_OTHER])
    for name, r in (("simhash", only_simhash), ("fuzzy", only_fuzzy), ("sentences", only_sentences)):
        blind = replace_rule(r, event_guard=False, number_guard=0).explain(a, b)
        assert blind["duplicate"], (name, blind["why"])
        assert any(s.split(":")[0] in ("both long", "both short") or name in s or "shared" in s
                   for s in blind["why"]), (name, blind["why"])
        assert not r.explain(a, b)["duplicate"], (name, r.explain(a, b)["why"])


def replace_rule(rule: DefaultRule, **changes) -> DefaultRule:
    from dataclasses import replace
    return replace(rule, **changes)


NATIONAL = SNOW + "\n据中央气象台介绍,北京、天津等地本周也将迎来降温,请各地做好准备。"
"""A city's report that names other cities further on."""


def test_a_report_from_another_city_is_kept_apart_though_it_names_the_same_cities_further_on(fingerprinter, rule):
    """The city swapped, the cities named further on kept (most of the places shared): another event, by the
    dateline. So is the same report with its first city kept and a city named further on swapped: each names a
    place the other never names."""
    for swaps, why in (([("沈阳", "长春"), ("全省", "吉林全省")], "another event: their datelines name other places"),
                       ([("天津", "石家庄")], "another event: each text names places the other never names")):
        told = _explain(fingerprinter, rule, NATIONAL, _other_event(NATIONAL, swaps))
        assert not told["duplicate"], (swaps, told["why"])
        assert told["why"][-1].startswith(why), told["why"]


def test_a_report_filed_from_another_city_is_another_event_though_its_body_names_the_same_places(fingerprint_engines,
                                                                                                  rule):
    """Only the dateline's city differs, and the body names both cities (a report from Beijing that mentions
    Shenyang, and the template's report from Shenyang that mentions Beijing): the places named are the same, the
    dateline names where each report was filed. Both engines read it alike."""
    from_beijing = NATIONAL.replace("新华社沈阳12月5日电", "新华社北京12月5日电")
    for fingerprinter in fingerprint_engines:
        a, b = fingerprinter.fingerprint_many([NATIONAL, from_beijing])
        assert place_keys(a.place_bag, b.place_bag)[0] == place_keys(a.place_bag, b.place_bag)[1]  # (same places)
        told = rule.explain(a, b)
        assert not told["duplicate"], told["why"]
        assert told["why"][-1].startswith("another event: their datelines name other places"), told["why"]


def test_copies_that_drop_or_reorder_their_datelines_are_the_same_event(fingerprint_engines, rule):
    """A copy whose site dropped the dateline has none to compare: its original's copy still. A page of two
    reports (two datelines, two places) names no one dateline: its copy with the reports the other way round, or
    with only one of them kept, is its copy."""
    second = ("新华社上海12月5日电 记者从上海市气象局获悉,受强冷空气影响,上海今天最高气温只有6度,"
              "明后两天将有小雨夹雪。气象部门提醒市民注意添衣保暖,出行注意交通安全。\n"
              "据介绍,这次冷空气过程是今年入冬以来最强的一次,沿江沿海地区风力较大,渔船要及时回港避风。")
    page = SNOW + "\n" + second
    pairs = [(SNOW, SNOW.replace("新华社沈阳12月5日电 ", "")), (page, second + "\n" + SNOW), (page, SNOW)]
    for fingerprinter in fingerprint_engines:
        for original, copy in pairs:
            told = rule.explain(*fingerprinter.fingerprint_many([original, copy]))
            assert told["duplicate"], told["why"]


def test_a_page_of_reports_filed_from_other_cities_is_another_event(fingerprint_engines, rule):
    """A page of two reports and the template's page whose first report was filed from another city (the bodies'
    places kept): each names a dateline place the other never names. So does a report filed from a third city
    against the page. Both engines read it alike."""
    second = ("新华社上海12月5日电 记者从上海市气象局获悉,受强冷空气影响,上海今天最高气温只有6度,"
              "明后两天将有小雨夹雪。气象部门提醒市民注意添衣保暖,出行注意交通安全。")
    page = SNOW + "\n" + second
    pairs = [(page, page.replace("新华社沈阳12月5日电", "新华社长春12月5日电")),
             (page, SNOW.replace("新华社沈阳12月5日电", "新华社南京12月5日电"))]
    for fingerprinter in fingerprint_engines:
        for a, b in pairs:
            told = rule.explain(*fingerprinter.fingerprint_many([a, b]))
            assert not told["duplicate"], told["why"]
            assert told["why"][-1].startswith("another event: their datelines name other places"), told["why"]


@pytest.mark.parametrize("text, named", [
    ("新华社北京1月25日电据此间收到的消息", ["北京"]),
    ("英一航母抵海湾\n新华社北京1月25日电 据此间收到的消息", ["北京"]),
    ("本报无锡1月23日讯 记者赵志文报道:据海关统计", ["无锡"]),
    ("据新华社南京1月14日电(记者周志方)近日,南京军区前线话剧团演出", ["南京"]),
    ("新华社北京电 今天上午", ["北京"]),
    ("本报北京一月二十五日电 记者", ["北京"]),
    ("北京晚报讯 记者张三报道", []),
    ("本报讯 今天上午,北京举行", []),
    ("新华社北京1月25日电 甲\n新华社上海1月25日电 乙", ["北京", "上海"]),
    ("新华社北京1月25日电 甲\n新华社北京1月26日电 乙", ["北京"]),
])
def test_a_dateline_names_the_place_a_report_was_filed_from(fingerprint_engines, text, named):
    """One place: the top 9 bits of its key; several (a page of several reports): the top bit and a bit for each
    place, its slot modulo 9; none: 0."""
    from es_simhash.fingerprint.events import place_key

    slots = [place_key(p) >> 1 for p in named]
    want = (slots[0] if len(slots) == 1 else
            (1 << 9) | sum(1 << (s % 9) for s in set(slots)) if slots else 0)
    assert dateline_key(_norm(text)) == want
    for fingerprinter in fingerprint_engines:
        assert fingerprinter.fingerprint(text).place_bag >> 54 == want, fingerprinter


def test_a_copy_that_names_fewer_places_is_the_same_event(fingerprinter, rule):
    """A copy cut short names a part of its original's places and none of its own: the same event; so is a copy
    that lost one of many places and gained another by an edit (a name replaced by a synonym that is a place's)."""
    cut = NATIONAL.replace("北京、天津等地", "各地")
    told = _explain(fingerprinter, rule, NATIONAL, cut)
    assert told["duplicate"] and told["why"][-1].startswith("the same event"), told["why"]
    # a copy that lost one of many places and gained another (a place named in an edited sentence) names a place
    # the other never names: another event, unless place_guard allows one such place among those they share
    many = ("新华社北京3月2日电 国家气象中心发布寒潮预警,哈尔滨、长春、沈阳、大连、呼和浩特、太原、石家庄、天津、济南、郑州等地"
            "气温将下降8至10度,各地要做好防寒准备,交通部门提醒驾驶员注意路面结冰。\n" + SNOW)
    slip = many.replace("郑州等地", "等地").replace("市民出行请注意安全", "洛阳市民出行请注意安全")
    assert not _explain(fingerprinter, rule, many, slip)["duplicate"]
    told = _explain(fingerprinter, replace_rule(rule, place_guard=0.25), many, slip)
    assert told["duplicate"] and told["why"][-1].startswith("the same event"), told["why"]


def test_an_update_with_figures_revised_on_the_same_date_is_one_event(fingerprinter, rule):
    """Most figures revised (the number guard alone would call it another event), same dates and places: one."""
    update = _other_event(SNOW, [("3.5", "5.2"), ("12度", "15度"), ("2000", "3100"), ("150", "260"),
                                 ("8天", "9天")])
    figures_only = _explain(fingerprinter, DefaultRule.rechecked(event_guard=False), SNOW, update)
    assert not figures_only["duplicate"], figures_only["why"]
    told = _explain(fingerprinter, rule, SNOW, update)
    assert told["duplicate"], told["why"]
    assert told["why"][-1].startswith("the same event"), told["why"]


@pytest.mark.parametrize("header, footer", [
    ("发布时间:2024-03-02 10:21 来源:东北新闻网", "责任编辑:王五"),
    ("来源:人民网 2021年7月19日 08:30\n【字号 大 中 小】", "(编辑:李四)\n2021年7月19日"),
    ("首页 > 新闻中心 > 国内\n2019-11-30 星期六", ""),
])
def test_a_reprint_with_its_own_page_date_joins_its_original(fingerprinter, rule, header, footer):
    reprint = header + "\n" + SNOW + ("\n" + footer if footer else "")
    told = _explain(fingerprinter, rule, SNOW, reprint)
    assert told["duplicate"], told["why"]


def _another_day(text: str) -> str:
    """``text`` with every month and day of the month moved on by one, in digits and in Chinese numerals."""
    text = re.sub(r"(?<!\d)(\d{1,2})月", lambda m: f"{int(m.group(1)) % 12 + 1}月", text)
    text = re.sub(r"(?<!\d)(\d{1,2})日", lambda m: f"{int(m.group(1)) % 28 + 1}日", text)
    return text.replace("十二月三十一日", "十一月三十日").replace("三十一日", "三十日")


@pytest.mark.parametrize("nth", [0, 1, 2])
def test_peoples_daily_articles_on_another_day_and_reprinted(nth):
    """Real articles that give dates: the same article on another day is another event; the article reprinted
    under a page header with the reprint's own date is the same one."""
    articles = [a for a in corpora.peoples_daily_articles() if len(a) > 500 and re.search(r"\d月\d+日", a)]
    article = articles[nth * 7]
    fpr, rule = Fingerprinter(), DefaultRule.rechecked()
    a, b, c = fpr.fingerprint_many([article, _another_day(article), "2024年3月2日 星期六 人民网\n" + article])
    assert b.date_bag != a.date_bag
    assert not rule.decide(b, [_stored(a)]), rule.explain(b, a)["why"]
    assert rule.decide(c, [_stored(a)]), rule.explain(c, a)["why"]


def _stored(fp):
    from es_simhash.records import StoredDoc
    return StoredDoc("a", fp, cluster="a")


def _norm(text: str) -> str:
    return T._normalize_many([text])[0]


@pytest.mark.parametrize("a, b", [
    ("2023年12月5日,大雪。", "二〇二三年十二月五日,大雪。"),
    ("12月5日,星期二,大雪。", "十二月五日,周二,大雪。"),
    ("it snowed on tuesday, december 5, 2023.", "it snowed on tuesday, 5 december 2023 in 2023年."),
])
def test_one_date_written_two_ways(a, b):
    assert date_bag(_norm(a)) == date_bag(_norm(b)) != 0


def test_date_bits():
    """Day d is bit d - 1, month m bit 30 + m, Monday bit 43, year y bit 50 + y % 14."""
    assert date_bag(_norm("12月5日大雪。")) == (1 << 4) | (1 << 42)
    assert date_bag(_norm("星期一大雪。")) == 1 << 43
    assert date_bag(_norm("2023年大雪。")) == 1 << (50 + 2023 % 14)


@pytest.mark.parametrize("line", [
    "12月3日下午,车队才驶过那段便道。(重庆市长寿县望江路石油采气五队况世明)",  # a reader's letter, signed
    "新华社北京1月25日电 司法机关已经依法对其立案侦查。(长篇通讯《“烟草大王”的人生悲剧》全文见第三版)",  # a note after the lead
    "12月3日,大雪。(孔繁文)",
])
def test_a_paragraph_ending_in_a_note_in_brackets_gives_its_dates(line):
    assert date_bag(_norm(line)) != 0


def test_a_report_whose_days_moved_on_is_another_event_though_one_day_coincides(fingerprinter, rule):
    """Days 22, 23, 26 and 3 moved on by four: 26, 27, 30 and 7 (26 in both): one day of four shared."""
    days = ["22日", "23日", "26日", "3日"]
    text = ("经过官兵们的昼夜奋战,{0}下午,灾区的道路全部抢通,受灾群众得到初步安置。\n"
            "{1},天气转晴,部队继续帮助群众修复房屋,清理淤泥,抢收庄稼,运送救灾物资。\n"
            "{2},兴建临时学校的工作全面展开,战士们把温暖留给了群众,把寒冷和危险留给了自己。\n"
            "{3},投入抢险救灾的兵力已达5680多人,各类车辆300多台,舟艇40多艘。")
    moved = ["26日", "27日", "30日", "7日"]
    told = _explain(fingerprinter, rule, text.format(*days), text.format(*moved))
    assert not told["duplicate"] and told["why"][-1].startswith("another event"), told["why"]
    cut = _explain(fingerprinter, rule, text.format(*days), "\n".join(text.format(*days).split("\n")[:3]))
    assert cut["duplicate"], cut["why"]  # (a copy cut short gives some of the days: the same event)


@pytest.mark.parametrize("text", [
    "发布时间:2024-03-02 10:21",  # a page's header: no sentence end
    "3号楼、5号线今天开通。",  # numbers that are not dates
    "may is a month. march on.",  # month names without a day
    "这一日三餐很简单。十分满意。",  # Chinese numerals that are not a date
])
def test_no_date(text):
    assert date_bag(_norm(text)) == 0


def test_places_are_read_from_sentences_by_their_longest_name():
    both = place_bag(_norm("沈阳市迎来初雪。"))
    assert both == place_bag(_norm("沈阳迎来初雪。")) != 0  # (a name and its short form: one place)
    assert place_bag(_norm("哈尔滨迎来初雪。")) not in (0, both)
    assert place_bag(_norm("沈阳晚报\n今天下雪了。")) == 0  # (a masthead: no sentence)
    assert place_bag(_norm("和平与发展是时代主题。")) == 0  # (a district's name that is a common word)


def test_a_version_7_index_is_refused_and_migrate_keeps_other_events_apart(fingerprinter, es_url, client,
                                                                          es_index_name, tmp_path, cli):
    """An index of version 7 (no dates or places in its fingerprints) holds two days' weather reports of one
    template in one cluster: indexing into it is refused in one line naming `migrate`; `migrate` fingerprints every
    document again, and the two are other events in the new index, while the update stays a duplicate."""
    import json
    from dataclasses import replace

    from es_simhash.fingerprint import FINGERPRINT_VERSION
    from es_simhash.index.elastic import ElasticIndex, ensure_index
    from es_simhash.records import StoredDoc

    old, new = f"{es_index_name}-v7", f"{es_index_name}-v{FINGERPRINT_VERSION}"
    update = _other_event(SNOW, [("3.5", "5.2"), ("2000", "3100")])
    texts = (("snow", SNOW), ("snow-next-day", SNOW_OTHER_DAY), ("snow-update", update))
    try:
        ensure_index(client, old, {**fingerprinter.config, "fingerprint_version": 7})
        v7 = [StoredDoc(i, replace(fingerprinter.fingerprint(t), version=7, date_bag=0, place_bag=0),
                        "snow", duplicate_of=None if i == "snow" else "snow", distance=None if i == "snow" else 1,
                        reason="canonical" if i == "snow" else "sentences", text=t, arrival=n + 1)
              for n, (i, t) in enumerate(texts)]
        ElasticIndex(client, old).add(v7)
        path = tmp_path / "in.jsonl"
        path.write_text(json.dumps({"id": "x", "content": QUAKE}, ensure_ascii=False) + "\n", encoding="utf-8")
        refused = cli("index", path, "--index", old, "--no-progress", es_url=es_url, cwd=tmp_path)
        err = refused.stderr.decode()
        assert refused.returncode == 3 and len(err.strip().splitlines()) == 1, err
        assert f"fingerprint version 7 (this run: {FINGERPRINT_VERSION})" in err and "es-simhash migrate" in err, err
        res = cli("migrate", "--from", old, "--to", new, "--no-progress", es_url=es_url, cwd=tmp_path)
        assert res.returncode == 0, res.stderr.decode()
        client.indices.refresh(index=new)
        moved = {h["_id"]: h["_source"] for h in client.search(index=new, size=10)["hits"]["hits"]}
        assert moved["snow-update"]["dup_cluster"] == moved["snow"]["dup_cluster"], moved
        assert moved["snow-next-day"]["dup_cluster"] == "snow-next-day", moved["snow-next-day"]
        assert all(s.get("date_bag") and s.get("place_bag") for s in moved.values())
    finally:
        for name in (old, new):
            client.indices.delete(index=name, ignore_unavailable=True)
            client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def test_a_place_bag_holds_every_place_its_sentences_name(fingerprint_engines):
    """Every place counts, the eighth as the first. Six places or fewer: a bag holds each (its slot), so a report
    that swaps any one of them for another place shows it. More: a bit for each place, so a swap shows unless a
    place of the other text shares the swapped place's bit (odds about 1 in 45 per place), most of the time with
    eight. A copy that names a part of its original's places compares as a part of them (nothing of its own),
    whichever form each bag has. A region's short name is its full name's place (内蒙古, 西藏)."""
    cities = ["沈阳", "大连", "鞍山", "抚顺", "本溪", "丹东", "锦州", "营口"]
    others = ["葫芦岛", "朝阳", "铁岭", "阜新", "盘锦", "辽阳", "长春", "吉林"]

    def bag(names: list[str]) -> int:
        return place_bag(_norm("、".join(names) + "都下了雪。"))

    def swaps_shown(names: list[str]) -> int:
        shown = 0
        for i, other in enumerate(others[:len(names)]):
            mine, theirs = place_keys(bag(names[:i] + [other] + names[i + 1:]), bag(names))
            shown += bool(mine - theirs and theirs - mine)
        return shown

    few, many = bag(cities[:6]), bag(cities)
    assert len(place_keys(few, few)[0]) == 6
    assert swaps_shown(cities[:6]) == 6 and swaps_shown(cities[:3]) == 3
    for whole in (few, many):
        for part in (cities[:4], cities[4:], cities[::2], cities[:7]):
            mine, theirs = place_keys(bag(part), whole)
            if set(part) <= set(cities[:6]) or whole == many:
                assert mine and mine <= theirs, part
    assert swaps_shown(cities) >= 5  # (a swap hidden by a shared bit: about 1 in 4 with eight places)
    for names in (cities, cities[:6], cities[:7], cities + others):  # (both engines give these bags)
        text = "、".join(names) + "都下了雪。"
        assert [f.fingerprint_many([text])[0].place_bag for f in fingerprint_engines] == [bag(names)] * 2, names
    assert place_bag(_norm("内蒙古迎来初雪。")) == place_bag(_norm("内蒙古自治区迎来初雪。")) != 0
    assert place_bag(_norm("西藏迎来初雪。")) == place_bag(_norm("西藏自治区迎来初雪。")) != 0


def test_every_place_name_is_read_as_a_text_normalises_it():
    """The place list is normalised as texts are, with a shortcut for names whose characters normalisation keeps:
    every name of the list comes out as normalising it whole does (so a name in a text is found as listed)."""
    from importlib.resources import files

    from es_simhash.fingerprint.events import _normalized, _normalized_whole
    lines = files("es_simhash").joinpath("data").joinpath("places.txt").read_text(encoding="utf-8").splitlines()
    names = [n for line in lines if line for n in line.split("\t")[:2]]
    assert len(names) > 40_000
    assert _normalized(names) == _normalized_whole(names)


def test_a_report_from_another_township_is_another_event(fingerprinter, rule):
    """Towns and townships (镇, 乡) name an event as cities do: the same report from another township is another
    event."""
    report = ("本报讯 12月5日,大河乡迎来今冬第一场降雪,全乡平均降雪量达到3.5毫米。大河乡政府组织干部群众清扫积雪,确保道路畅通。"
              "乡卫生院提醒老人和儿童注意防寒保暖,学校按时上课。\n据了解,今年的初雪比往年晚了8天,农户要及时加固大棚,防止积雪压塌设施。")
    told = _explain(fingerprinter, rule, report, report.replace("大河乡", "沙河镇"))
    assert not told["duplicate"], told["why"]
    assert told["why"][-1].startswith("another event"), told["why"]


def test_a_dateline_alone_names_no_place_the_figures_can_be_read_against(fingerprint_engines, rule):
    """Two statistics reports under one dateline (the same city) whose body names no place and no date: the
    dateline is no place both sentences name, so the figures decide, and nearly all of them differ: another
    event. (A bag holding only a dateline once counted as places named, 0 shared: "the same event".)"""
    a = ("本报北京电\n今年全市粮食总产量达到350万吨，比上年增长12%，其中小麦产量为120万吨，玉米产量为180万吨，稻谷产量为50万吨。"
         "全市农业部门表示，粮食生产连续多年保持稳定增长，农民收入也随之提高，农村面貌发生了很大变化。")
    b = a.replace("350", "410").replace("12%", "7%").replace("120", "95").replace("180", "240").replace("50万", "75万")
    for fingerprinter in fingerprint_engines:
        fa, fb = fingerprinter.fingerprint_many([a, b])
        assert fa.place_bag and fa.place_bag >> 54 == fb.place_bag >> 54  # (one dateline, no other place)
        told = rule.explain(fa, fb)
        assert not told["duplicate"] and told["why"][-1].startswith("numbers:"), told["why"]


LETTER = ("驾驶证不能随意买卖\n"
          "前不久,我市城区一家信息服务处公开亮出招牌:为外市某主管部门代办汽车驾驶证业务,只要交上一笔钱,不用考试就能领到驾驶证。"
          "笔者以为,倒卖驾驶证的危害很大。第一,它助长了执法机关内部的腐败和不正之风;第二,它给交通安全留下了隐患。\n"
          "呼吁有关部门对违法兜售汽车驾驶证的单位进行严肃查处。\n"
          "(辽宁瓦房店市公安交通警察大队吕启超)")


def test_a_letter_signed_from_another_place_is_another_event(fingerprint_engines, rule):
    """A reader's letter whose body names no place and whose signature line, wholly in brackets, gives the writer's
    unit and place: the same letter signed from another province is another letter (both engines); a copy that
    dropped the signature, or carries it at the end of its last sentence, is the letter."""
    other = LETTER.replace("辽宁", "湖北")
    unsigned = LETTER.rsplit("\n", 1)[0]
    inline = unsigned + "(辽宁瓦房店市公安交通警察大队吕启超)"
    for fingerprinter in fingerprint_engines:
        a, b, c, d = fingerprinter.fingerprint_many([LETTER, other, unsigned, inline])
        told = rule.explain(a, b)
        assert not told["duplicate"], (fingerprinter, told["why"])
        assert told["why"][-1].startswith("another event: each text names places the other never names"), told["why"]
        for copy in (c, d):
            told = rule.explain(a, copy)
            assert told["duplicate"], (fingerprinter, told["why"])


@pytest.mark.parametrize("name, short", [
    ("白银市", None),  # (a prefecture whose short form, 白银 "silver", is a common word: its full name still names it)
    ("中卫市", None),
    ("台北市", "台北"),
    ("高雄县", None),
    ("花莲县", None),
])
def test_prefectures_with_common_word_short_forms_and_taiwans_counties_are_places(name, short):
    """Names the list once lacked: a prefecture's full name whose short form is a common word, and Taiwan's cities
    and counties (the source list holds Taiwan only as a province)."""
    bag = place_bag(_norm(f"{name}迎来初雪。"))
    assert bag != 0
    if short:
        assert place_bag(_norm(f"{short}迎来初雪。")) == bag  # (a name and its short form: one place)
    assert place_bag(_norm("白银价格今天上涨。")) == 0  # (the common word alone is no place)


@pytest.mark.parametrize("title, place, others", [
    ("盗窃：“家鼠”“田鼠”两祸害", "重庆", ("厦门", "辽宁")),  # (the place in one sentence)
    ("李宁牌———中国体育用品第一品牌", "北京", ("湖北", "陕西")),
    ("我国铁路营业里程亚洲第一", "北京", ("湖北", "陕西")),  # (the place in the dateline)
])
def test_a_reprint_of_a_template_report_joins_its_report_though_other_events_share_the_template(title, place, others):
    """Three reports written from one template (a People's Daily article and the same with its place replaced) share
    every sentence but those naming the place; each reprinted inside a site's header. The reports of other events
    hold the template's sentences too, but they are other events: they do not make those sentences boilerplate for
    a reprint of its own report, which joins it; the three reports stay apart."""
    from es_simhash import DedupEngine, Document, MemoryIndex
    from es_simhash.pipeline import dedup_documents

    article = next(a for a in corpora.peoples_daily_articles() if a.startswith(title))
    header = "首页 > 新闻中心 > 国内新闻\n新浪新闻客户端，随时随地看新闻\n"
    reports = {"a": article, "b": article.replace(place, others[0]), "c": article.replace(place, others[1])}
    docs = [Document(i, t) for i, t in reports.items()] + [Document(i + "-reprint", header + t)
                                                           for i, t in reports.items()]
    engine = DedupEngine.for_run(MemoryIndex(), Fingerprinter(), DefaultRule.for_run(recheck=True), recheck=True)
    clusters = dedup_documents(docs, engine, recheck=True)
    assert [clusters[i] == clusters[i + "-reprint"] for i in reports] == [True, True, True], clusters
    assert len({clusters[i] for i in reports}) == 3, clusters


@pytest.mark.parametrize("a, b, other", [
    (0, 0, False), (0, 37, False),  # (no dateline on a side: nothing to compare)
    (37, 37, False), (37, 38, True),  # (one place each: the same slot, another)
    (0b10_0000_0011, 0b10_0000_0011, False),  # (a page of two reports and its copy)
    (10, 0b10_0000_0110, False),  # (one of the page's reports: slot 10 is bit 1)
    (12, 0b10_0000_0110, True),  # (a report from a third place: slot 12 is bit 3)
    (0b10_0000_0011, 0b10_0000_0111, False),  # (a copy that keeps two of three reports)
    (0b10_0000_0011, 0b10_0000_0110, True),  # (two pages that each name a place of filing the other lacks)
])
def test_dateline_codes_compare_as_sets_of_places(a, b, other):
    from es_simhash.fingerprint.events import other_datelines

    assert other_datelines(a, b) is other and other_datelines(b, a) is other


BOOKS = ("《中国书院辞典》浙江教育出版社出版(图片)\n"
         "封面题字启功 装帧设计陈子劲\n"
         "《中国现代文学百家》三十部推出\n"
         "由中国现代文学馆编选、华夏出版社出版的《中国现代文学百家》首批三十部已于1997年出版。《中国现代文学百家》首批"
         "三十部包括鲁迅、茅盾、郭沫若、老舍、巴金、曹禺、冰心、叶圣陶、丁玲、艾青、郁达夫、闻一多、王统照、许地山、何其芳、"
         "萧红、张天翼、沙汀、林徽因、朱自清。")
"""A page of book news whose only place is in a caption's headline (the publisher's province); its sentences name
none."""
FAIR = ("杭州举办2024年春季人才招聘会\n"
        "本次招聘会共有120家企业参加,提供就业岗位3000余个,涉及制造、物流、电商、餐饮等多个行业。"
        "现场设立政策咨询台和简历指导区,为求职者免费提供职业规划服务。主办方表示,招聘会将持续两天,"
        "求职者可携带身份证和个人简历入场,不需要提前报名。")
"""A notice whose place is only in its headline."""


@pytest.mark.parametrize("original, place, other", [(BOOKS, "浙江", "江西"), (FAIR, "杭州", "成都")])
def test_a_report_whose_place_is_only_in_its_headline_is_another_event_with_another_place_there(
        fingerprint_engines, rule, original, place, other):
    """The lines before a text's first sentence (its headline, a caption) name its event's places too: the same
    page with another place there is another event (both engines). A copy under a new headline that names no
    place, one without its headline and one inside a site's dated header are the same event."""
    title, body = original.split("\n", 1)
    copies = ["今天,这条消息刷屏了!\n" + body, body, "发布时间:2024-03-02 10:21 来源:华夏资讯网\n" + original]
    for fingerprinter in fingerprint_engines:
        a, b, *cs = fingerprinter.fingerprint_many([original, original.replace(place, other)] + copies)
        told = rule.explain(a, b)
        assert not told["duplicate"], (fingerprinter, told["why"])
        assert told["why"][-1].startswith("another event: each text names places the other never names"), told["why"]
        for copy in cs:
            told = rule.explain(a, copy)
            assert told["duplicate"], (fingerprinter, told["why"])
    # a masthead (a medium named in the head) names no place: the body under two cities' papers is one report
    for fingerprinter in fingerprint_engines:
        a, b = fingerprinter.fingerprint_many(["成都晚报\n" + body, "沈阳日报\n" + body])
        told = rule.explain(a, b)
        assert told["duplicate"], (fingerprinter, told["why"])
