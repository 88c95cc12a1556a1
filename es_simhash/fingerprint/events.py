"""What names the event a text reports: the dates and the places its sentences give (:func:`date_bag`,
:func:`place_bag`), kept apart from its figures (:func:`~es_simhash.fingerprint.hashes.number_bag`).

Two reports written from one template (two years' first snow, two days' earthquake bulletins, two months'
statistics) share their wording and differ in their dates, places and figures; an update of one report keeps its
dates and places and revises figures. So the decision rule reads another date or another place as another event,
and the same dates and places with figures revised as one event (:mod:`es_simhash.decide.match`).

Only the lines that end a sentence count (:func:`~es_simhash.fingerprint.text.ends_sentence`), and for places also a
line wholly in brackets (who wrote the text and where from: ``（贵州玉屏县委办公室伍洪伦）``) and the lines before the
first sentence (a headline, a caption) that name no medium: a page's own dates (a
site header, a byline time, "发布时间") and its navigation are lines without a sentence's end, so a reprint with its
own page date names the same event as its original. A news report's dateline (``新华社北京1月25日电``,
``本报无锡1月23日讯``: a place, a date or none, then 电 or 讯, at the head of a line) names where it was filed: the
place bag carries the datelines' places apart from the others (:func:`dateline_key`). Both bags are 64-bit integers (a bitmap of
dates; the 9-bit slots of every place the text names when they are six or fewer, else a bit for each in 45 bits,
and 10 bits for the datelines' places: one place's slot, or the set of several); the native core computes the same
values (``native/src/core.rs``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Iterator

from es_simhash.fingerprint import text as _text

__all__ = ["date_bag", "place_bag", "event_bags", "dateline_key", "datelines", "dateline_places",
           "other_datelines", "place_slot", "place_bit", "place_key", "place_keys", "places",
           "DAYS", "MONTHS", "WEEKDAYS", "YEARS", "DATE_FIELDS", "PLACES_KEPT", "NAMED_PLACES"]

PLACES_KEPT = 6
"""The most places a place bag holds by their slots (:func:`place_slot`); a text naming more has a bit for each
(:func:`place_bit`)."""
PLACE_KEY_BITS = 10
"""The bits of a place's key (:func:`place_key`)."""
PLACE_SLOT_BITS = 9
"""The bits of each of the :data:`PLACES_KEPT` places in a place bag: the top 9 of its key, the six in the bag's
lowest 54 bits."""
DATELINE_SHIFT = PLACES_KEPT * PLACE_SLOT_BITS
"""Where the datelines' places sit in a place bag (:func:`dateline_key`): its top 10 bits."""
NAMED_PLACES = (1 << DATELINE_SHIFT) - 1
"""The bits of a place bag that hold the places its text's sentences name (the rest: the datelines' places)."""
SEVERAL_DATELINES = 1 << PLACE_SLOT_BITS
"""The top bit of a dateline code (:func:`dateline_key`): set, the datelines name several places, a set in its
low :data:`DATELINE_SET_BITS` bits; clear, one place's slot (or 0: none)."""
DATELINE_SET_BITS = 9
"""The bits of a dateline code that hold the set of several datelines' places (:func:`dateline_places`)."""
DATELINE_HEAD = 48
"""How far into a line a dateline's place may begin (after an agency's or a paper's name: ``据新华社``, ``本报``)."""
_DATELINE_TAIL = re.compile("(?:[0-9]{1,2}月[0-9]{1,2}日|[一二三四五六七八九十]{1,3}月[一二三四五六七八九十]{1,3}日)?[电讯]")

DAYS = (1 << 31) - 1
"""Bits 0-30 of a date bag: the days of the month (day ``d`` is bit ``d - 1``)."""
MONTHS = ((1 << 12) - 1) << 31
"""Bits 31-42: the months (month ``m`` is bit ``30 + m``)."""
WEEKDAYS = ((1 << 7) - 1) << 43
"""Bits 43-49: the days of the week (Monday is bit 43, Sunday bit 49)."""
YEARS = ((1 << 14) - 1) << 50
"""Bits 50-63: the years (year ``y`` is bit ``50 + y % 14``: two years less than 14 apart never share a bit)."""
DATE_FIELDS = (("days", DAYS), ("months", MONTHS), ("weekdays", WEEKDAYS), ("years", YEARS))
"""The fields of a date bag, each compared on its own (:mod:`es_simhash.decide.match`)."""

_CN_DIGITS = "〇零一二三四五六七八九"
_CN_VALUE = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}
_CN_UNITS = "一二三四五六七八九"
_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december")
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_NAMES = "|".join(_EN_MONTHS)
_EN_MONTH_DAY = re.compile(r"\b(" + _MONTH_NAMES + r") ([0-9]{1,2})(?![0-9])(?:, ([0-9]{4})(?![0-9]))?")
_EN_DAY_MONTH = re.compile(r"(?<![0-9])([0-9]{1,2}) (" + _MONTH_NAMES + r")\b")
_EN_WEEKDAY = re.compile(r"\b(" + "|".join(_EN_WEEKDAYS) + r")\b")
_LATIN = re.compile("[a-z]")
_CN_WEEKDAY = {c: i for i, c in enumerate("一二三四五六", 1)} | {"日": 7, "天": 7}


def _cn_number(s: str) -> int:
    """A day or month in Chinese numerals: ``五``, ``十``, ``十二``, ``二十``, ``二十一``, ``三十``, ``三十一`` (1 to 31); 0
    for anything else."""
    if len(s) == 1:
        return 10 if s == "十" else _unit(s)
    if len(s) == 2 and s[0] == "十":
        return 10 + _unit(s[1]) if _unit(s[1]) else 0
    if len(s) in (2, 3) and s[0] in "二三" and s[1] == "十":
        n = 20 if s[0] == "二" else 30
        if len(s) == 2:
            return n
        return n + _unit(s[2]) if _unit(s[2]) and (n == 20 or s[2] == "一") else 0
    return 0


def _unit(c: str) -> int:
    """``一`` to ``九`` as 1 to 9; 0 for any other character."""
    return _CN_UNITS.find(c) + 1


def _day(d: int) -> int:
    return 1 << (d - 1) if 1 <= d <= 31 else 0


def _month(m: int) -> int:
    return 1 << (30 + m) if 1 <= m <= 12 else 0


def _year(y: int) -> int:
    return 1 << (50 + y % 14)


def _run_before(text: str, k: int, chars: str) -> str:
    """The longest run of ``chars`` that ends just before ``text[k]``."""
    j = k
    while j > 0 and text[j - 1] in chars:
        j -= 1
    return text[j:k]


def _dates(text: str) -> int:
    """The date bag of sentence lines (``text``: joined by line breaks). Each of these is a date, whatever is
    around it: a run of exactly 4 digits (or Chinese numerals ``〇一...九``) before ``年``: a year; of 1 or 2 digits
    before ``月`` or ``日``: a month or a day; ``十二月``, ``五月`` (a run of Chinese numerals with ``十`` that
    reads 1 to 12) before ``月``: a month, and a run that reads 1 to 31 between that ``月`` and a ``日``: a day;
    ``星期``/``礼拜`` and ``一``..``六``/``日``/``天``, ``周`` and ``一``..``六``/``日``: a weekday; in Latin text a month's
    name with a day (``december 5``, ``december 5, 2023``, ``5 december``) and a weekday's name (``monday``), as
    whole words. A month's name alone is no date ("may", "march"); neither is ``5号`` (a building, a line)."""
    return _years(text) | _months(text) | _days(text) | _weekdays(text) | (_latin(text) if _LATIN.search(text) else 0)


_DIGITS = "0123456789"


def _at(text: str, sub: str) -> Iterator[int]:
    """Each index at which ``sub`` occurs in ``text``."""
    k = text.find(sub)
    while k != -1:
        yield k
        k = text.find(sub, k + 1)


def _years(text: str) -> int:
    bag = 0
    for k in _at(text, "年"):
        run = _run_before(text, k, _DIGITS)
        if len(run) == 4:
            bag |= _year(int(run))
        else:
            run = _run_before(text, k, _CN_DIGITS)
            if len(run) == 4:
                bag |= _year(int("".join(str(_CN_VALUE[c]) for c in run)))
    return bag


def _months(text: str) -> int:
    """The months before ``月``, and the days in Chinese numerals after it."""
    bag = 0
    for k in _at(text, "月"):
        run = _run_before(text, k, _DIGITS)
        if 1 <= len(run) <= 2:
            bag |= _month(int(run))
        elif not run:
            n = _cn_number(_run_before(text, k, _CN_DIGITS + "十"))
            bag |= _month(n) if n <= 12 else 0
        j = k + 1
        while j < len(text) and text[j] in _CN_UNITS + "十":
            j += 1
        if j > k + 1 and j < len(text) and text[j] == "日":
            bag |= _day(_cn_number(text[k + 1:j]))
    return bag


def _days(text: str) -> int:
    bag = 0
    for k in _at(text, "日"):
        run = _run_before(text, k, _DIGITS)
        if 1 <= len(run) <= 2:
            bag |= _day(int(run))
    return bag


def _weekdays(text: str) -> int:
    bag = 0
    for lead in ("星期", "礼拜", "周"):
        for k in _at(text, lead):
            w = _CN_WEEKDAY.get(text[k + len(lead):k + len(lead) + 1], 0)
            if w and not (lead == "周" and w == 7 and text[k + 1] == "天"):
                bag |= 1 << (42 + w)
    return bag


def _latin(text: str) -> int:
    bag = 0
    for month, day, year in _EN_MONTH_DAY.findall(text):
        bag |= _month(_EN_MONTHS.index(month) + 1) | _day(int(day)) | (_year(int(year)) if year else 0)
    for day, month in _EN_DAY_MONTH.findall(text):
        bag |= _month(_EN_MONTHS.index(month) + 1) | _day(int(day))
    for weekday in _EN_WEEKDAY.findall(text):
        bag |= 1 << (43 + _EN_WEEKDAYS.index(weekday))
    return bag


def _sentence_lines(normalized: str) -> Iterable[str]:
    """The lines of a normalised text that end a sentence: the text's own, not its page's."""
    return (line for line in normalized.split("\n") if line and _text.ends_sentence(line))


def date_bag(normalized: str) -> int:
    """:attr:`Fingerprint.date_bag` of a normalised text: the dates its sentence lines give, a 64-bit bitmap of
    days, months, weekdays and years (:data:`DATE_FIELDS`); 0 for a text that gives none."""
    return _dates(_sentences_of(normalized))


def event_bags(normalized: str) -> tuple[int, int]:
    """:func:`date_bag` and :func:`place_bag` of a normalised text."""
    return _dates(_sentences_of(normalized)), _place_bag_of(_place_lines(normalized), normalized)


MEDIA = ("报", "网", "台", "来源", "编辑", "记者", "频道", "客户端")
"""Words of a line that names a medium (a masthead, ``沈阳晚报``; a source, ``来源：东北新闻网``; a byline): a line of a
text's head holding one names no place of the event (:func:`_place_lines`). As normalised (folded) text."""


def _place_lines(normalized: str) -> str:
    """The lines whose places name the event, joined by line breaks: the sentence lines (:func:`_sentence_lines`);
    the lines before the first of them, the text's head (a headline, a caption: a page may give its only place
    there), but those naming a medium (:data:`MEDIA`: a masthead, a site's header); and the lines that are wholly
    the part in brackets of 1 to 60 characters that :func:`~es_simhash.fingerprint.text.ends_sentence` reads after a
    sentence's end (``。（孔繁文）``): who wrote the text and where from (a reader's unit and place,
    ``（贵州玉屏县委办公室伍洪伦）``; a reporter's, ``（本报记者 张三 北京报道）``)."""
    out: list[str] = []
    body = False
    for line in normalized.split("\n"):
        if not line:
            continue
        ends = _text.ends_sentence(line)
        if ends or (not body and not any(w in line for w in MEDIA)) or _text._BYLINE.fullmatch(line):
            out.append(line)
        body = body or ends
    return "\n".join(out)


def _sentences_of(normalized: str) -> str:
    """The lines of ``normalized`` that end a sentence (:func:`_sentence_lines`), joined by line breaks."""
    return "\n".join(_sentence_lines(normalized))


@lru_cache(maxsize=None)
def places() -> tuple[dict[str, int], dict[str, int]]:
    """The place names the fingerprint reads (``es_simhash/data/places.txt``: China's administrative divisions with
    their short forms, its towns and townships, and the world's countries and largest cities), normalised as texts
    are (so folded as a text is), each with the key of the place it names (:func:`place_key` of the name the list gives as canonical, kept in
    the list's third column; a name and its short form name one place: ``沈阳市``, ``沈阳``);
    and the names' first two characters, each with the length of the longest name they begin."""
    lines = place_list().splitlines()
    rows = [line.split("\t") for line in lines if line]
    bits = {n: int(key) for n, (_, _, key) in zip(_normalized([row[0] for row in rows]), rows) if len(n) >= 2}
    longest: dict[str, int] = {}
    for n in bits:
        longest[n[:2]] = max(longest.get(n[:2], 0), len(n))
    return bits, longest


def _normalized(names: list[str]) -> list[str]:
    """``names`` normalised as texts are. A name whose every character a text's normalisation keeps as it is (most
    Chinese place names) is kept as it is; the others are normalised whole (``tests/test_events.py`` holds every name
    of the list to the whole normalisation)."""
    unique = sorted(set(names))
    chars = sorted(set("".join(unique)))
    plain = {c for c, f in zip(chars, _normalized_whole(chars)) if f == c}
    hard = [n for n in unique if not plain.issuperset(n)]
    done = dict(zip(hard, _normalized_whole(hard)))
    return [done.get(n, n) for n in names]


def _normalized_whole(names: list[str]) -> list[str]:
    """``names`` normalised as texts are, a few thousand characters at a time (so without numpy: a command
    fingerprints its first texts before it imports numpy)."""
    out: list[str] = []
    start = size = 0
    for i, name in enumerate(names):
        if size + len(name) >= 4000:
            out += _text._normalize_many(names[start:i])
            start, size = i, 0
        size += len(name)
    return out + _text._normalize_many(names[start:])


def place_list() -> str:
    """The text of the list of places :func:`places` reads (``es_simhash/data/places.txt``), for the native core,
    which reads and normalises its names itself (:func:`places` takes ~0.1 s of a command's start to do so)."""
    from importlib.resources import files
    return files("es_simhash").joinpath("data").joinpath("places.txt").read_text(encoding="utf-8")


def place_bag(normalized: str) -> int:
    """:attr:`Fingerprint.place_bag` of a normalised text: of every place its sentence lines and its lines wholly in
    brackets name (:func:`_place_lines`: an author's unit and place) (read left to
    right, the longest name at each point: :func:`places`): :data:`PLACES_KEPT` or fewer, ascending in the bag's
    9-bit slots from the lowest (the top 9 bits of each key: :func:`place_slot`); more, a bit for each
    (:func:`place_bit`) with the lowest slot empty; 0 for a text that names none. Either way the bag holds every
    place its text names, so two bags compare as the two texts' places would (:func:`place_keys`,
    :meth:`MatchTests._other_places <es_simhash.decide.match.MatchTests._other_places>`), up to two places of a
    text of more than six sharing a bit; above them, the datelines' places (:func:`dateline_key`)."""
    return _place_bag_of(_place_lines(normalized), normalized)


def _place_bag_of(lines: str, normalized: str) -> int:
    """:func:`place_bag` of a normalised text, given its lines that name places (:func:`_place_lines`)."""
    return _places_in(lines) | dateline_key(normalized) << DATELINE_SHIFT


def _names(text: str, starts_before: int | None = None) -> Iterator[tuple[int, int]]:
    """``(key, end)`` of each place name ``text`` reads, left to right, the longest name at each point
    (:func:`places`); with ``starts_before``, only the names that begin before that index."""
    keys, prefixes = places()
    n, at = len(text), 0
    scan = n - 1 if starts_before is None else min(n, starts_before) - 1
    for i in [i for i in range(scan) if text[i:i + 2] in prefixes]:  # (where a name can begin)
        if i < at:
            continue
        for j in range(min(n, i + prefixes[text[i:i + 2]]), i + 1, -1):
            key = keys.get(text[i:j])
            if key:
                yield key, j
                at = j
                break


def _places_in(text: str) -> int:
    """The places of a place bag (below its dateline), of sentence lines joined by line breaks: their slots
    (:func:`place_slot`) ascending from the lowest, when they are :data:`PLACES_KEPT` or fewer; else a bit for each
    (:func:`place_bit`), the lowest slot left empty."""
    found = sorted({place_slot(key) for key, _ in _names(text)})
    if len(found) <= PLACES_KEPT:
        return sum(k << (PLACE_SLOT_BITS * i) for i, k in enumerate(found))
    return sum(1 << bit for bit in {place_bit(k) for k in found})  # (a set: two places may share a bit)


def place_bit(slot: int) -> int:
    """The bit of a place's slot (:func:`place_slot`) in a place bag of more than :data:`PLACES_KEPT` places: one of
    the 45 above the lowest slot (two places share one with odds 1 in 45)."""
    return PLACE_SLOT_BITS + slot % (DATELINE_SHIFT - PLACE_SLOT_BITS)


def dateline_key(normalized: str) -> int:
    """The places a normalised text's datelines name, as a 10-bit code. A dateline is a place name (the longest at each
    point, as :func:`place_bag` reads them) that begins within :data:`DATELINE_HEAD` characters of a line's start and
    is followed by a date (``1月25日``, ``一月二十五日``) or none, then ``电`` or ``讯`` (``新华社北京1月25日电``,
    ``本报无锡1月23日讯``, ``新华社北京电``). Every line is read, whether it ends a sentence or not. One place: its
    slot (:func:`place_slot`); several (a page of several reports, whose copies may give them in another order or
    keep a part of them): :data:`SEVERAL_DATELINES` and a bit for each place (:func:`dateline_places`); 0 when no line
    carries a dateline."""
    seen = {place_slot(key) for line in normalized.split("\n") for key, end in _names(line, DATELINE_HEAD)
            if _DATELINE_TAIL.match(line, end)}
    if len(seen) <= 1:
        return next(iter(seen), 0)
    return SEVERAL_DATELINES | sum({dateline_places(slot) for slot in seen})  # (distinct bits: the sum is their union)


def place_slot(key: int) -> int:
    """The 9-bit slot of a place's key (:func:`place_key`) in a place bag and a dateline code: its top 9 bits (never
    0, an empty slot; the least keys stay the least)."""
    return (key >> (PLACE_KEY_BITS - PLACE_SLOT_BITS)) or 1


def dateline_places(code: int) -> int:
    """The places a dateline code (:func:`dateline_key`) names, as a set of :data:`DATELINE_SET_BITS` bits: a
    place's bit is its slot modulo 9 (two places share one with odds 1 in 9)."""
    if code & SEVERAL_DATELINES:
        return code & ~SEVERAL_DATELINES
    return 1 << (code % DATELINE_SET_BITS) if code else 0


def other_datelines(a: int, b: int) -> bool:
    """Whether two dateline codes (:func:`dateline_key`, 0: none) name other places: one place each, two places; or,
    where a page gives several reports, each names a dateline place the other never names (a copy that keeps one of
    its reports, or gives them in another order, names none the page does not)."""
    if not a or not b:
        return False
    if not (a | b) & SEVERAL_DATELINES:
        return a != b
    here, there = dateline_places(a), dateline_places(b)
    return bool(here & ~there) and bool(there & ~here)


def place_key(name: str) -> int:
    """The key of the place ``name`` in a place bag: the top 10 bits of its hash (never 0, an empty slot)."""
    return (_utf8_hash(name) >> (64 - PLACE_KEY_BITS)) or 1


def place_keys(a: int, b: int) -> tuple[frozenset[int], frozenset[int]]:
    """The places of two place bags (:func:`place_bag`), to compare: their slots, where each holds
    :data:`PLACES_KEPT` places or fewer; else the bits of their places (:func:`place_bit`: a bag of slots turned
    into the bits of its places), two places sharing a bit with odds 1 in 45. The datelines' places are not among
    them (:func:`datelines`)."""
    if a & _LOWEST_SLOT and b & _LOWEST_SLOT:  # (both bags of slots: every place of each)
        return _slots(a), _slots(b)
    return _bits(a), _bits(b)


_LOWEST_SLOT = (1 << PLACE_SLOT_BITS) - 1
"""The lowest slot of a place bag: empty in a bag of bits (:func:`place_bit`), never in a bag of slots."""


def _slots(bag: int) -> frozenset[int]:
    """The slots of a place bag of slots (:func:`place_slot`)."""
    return frozenset(k for k in ((bag >> (PLACE_SLOT_BITS * i)) & _LOWEST_SLOT for i in range(PLACES_KEPT)) if k)


def _bits(bag: int) -> frozenset[int]:
    """The bits of the places of a place bag (:func:`place_bit`), whichever form it has."""
    if bag & _LOWEST_SLOT:
        return frozenset(place_bit(k) for k in _slots(bag))
    return frozenset(i for i in range(PLACE_SLOT_BITS, DATELINE_SHIFT) if bag >> i & 1)


def datelines(a: int, b: int) -> tuple[int, int]:
    """The dateline codes of two place bags (:func:`dateline_key`; 0: none)."""
    return a >> DATELINE_SHIFT, b >> DATELINE_SHIFT


def _utf8_hash(s: str) -> int:
    """A stable 64-bit hash of a string's UTF-8 bytes (the number hash of :mod:`es_simhash.fingerprint.hashes`)."""
    from es_simhash.fingerprint.hashes import bytes_hash
    return bytes_hash(s.encode("utf-8"))
