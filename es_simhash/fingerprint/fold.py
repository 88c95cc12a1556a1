"""What a reader does not see, or does not read as different: folded before anything is hashed (fingerprint v6).

Chinese news travels between scripts: a mainland article is reprinted in Traditional characters (often by a
converter, such as OpenCC's ``s2t``, ``s2tw``, ``s2hk``), and converter sites leave residue: romanisation in
brackets after characters (``內(nèi)容(róng)``). To a reader these are the same text; to a hash they are unrelated.
:func:`~es_simhash.fingerprint.text.normalize` therefore, after NFKC and case folding:

* drops **invisible characters** (:data:`INVISIBLE`): format characters (zero-width spaces and joiners, direction
  marks, the byte-order mark, the soft hyphen, interlinear annotation marks) and variation selectors;
* **folds the script**: every Traditional character (and every Taiwan or Hong Kong variant) to its Simplified
  form, one code point to one code point (:func:`fold_table`), so a text in either script is the same text: a
  Traditional copy of a text is an exact duplicate of it, as a full-width copy is;
* drops **romanisation directly after an ideograph**: a pinyin syllable (tone marks or a tone digit allowed) or a
  zhuyin one in round brackets (``內(nèi)`` -> ``內``), and a pinyin syllable with a tone mark written straight after
  it (``内nèi容róng``) (:func:`strip_annotations`).

The conversion data is OpenCC's (https://github.com/BYVoid/OpenCC, release ver.1.4.1, commit 81223ed8;
Apache-2.0, its licence and authors in ``es_simhash/data/opencc/``): ``STCharacters.txt``, ``TSCharacters.txt``
(Simplified to Traditional characters and back) and the Taiwan and Hong Kong variant tables (``TWVariants.txt``,
``HKVariants.txt``), see :func:`fold_table`. The fold is by character, not by phrase: regional vocabulary (``軟體`` for ``软件``) stays as it is (measured in
docs/accuracy.md). The native core folds with the same table, generated from this module
(``native/gen_tables.py``); ``tests/test_native_fingerprint.py`` checks every entry on both engines.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

__all__ = ["fold_table", "fold_text", "strip_annotations", "is_invisible", "invisible_pattern", "INVISIBLE",
           "OPENCC_RELEASE", "PINYIN_SYLLABLES", "TONED"]

OPENCC_RELEASE = "ver.1.4.1"
"""The OpenCC release the shipped dictionaries come from."""


@lru_cache(maxsize=None)
def fold_table() -> dict[int, int]:
    """Code point -> code point of the script fold (only the code points that change), from
    ``es_simhash/data/fold.txt``: classes of characters that one of OpenCC's character conversions can turn into each
    other (its Simplified-to-Traditional and Traditional-to-Simplified character tables, every candidate, and its
    Taiwan and Hong Kong variant tables), each folded to its most used member in the main ideograph block
    (``scripts/gen_fold.py`` says how; it writes the file). Folding twice is folding once, and a text and any of
    its character-level conversions fold alike."""
    text = resources.files("es_simhash").joinpath("data").joinpath("fold.txt").read_text(encoding="utf-8")
    return {ord(a): ord(b) for a, b in (line.split("\t") for line in text.splitlines() if not line.startswith("#"))}


def fold_text(text: str) -> str:
    """``text`` in one script, as a search indexes and queries it: invisible characters dropped and every character
    folded (:func:`fold_table`); nothing else changes (case, width, spaces and punctuation are the analyzer's).
    es-simhash indexes ``title_folded`` and ``content_folded`` so; fold a query of your own with it and search those
    fields to find a text in either script."""
    if text.isascii():
        return text
    text = text.translate(fold_table())
    invisible = invisible_pattern()
    return invisible.sub("", text) if invisible.search(text) else text


@lru_cache(maxsize=None)
def invisible_pattern() -> re.Pattern[str]:
    """A character class of the :data:`INVISIBLE` code points (runs of them)."""
    return re.compile("[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
                                    for a, b in INVISIBLE) + "]+")


INVISIBLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
    (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F), (0xE0100, 0xE01EF),
)
"""The code points a reader does not see, as ranges: the format characters of Unicode 14.0 (category ``Cf``:
the soft hyphen, zero-width spaces and joiners, direction marks and isolates, the word joiner, the byte-order
mark, interlinear annotation marks, tags) and the variation selectors. Fixed here, so every Python and the native
core drop the same ones (``tests/test_fold.py`` checks them against ``unicodedata`` of Unicode 14.0)."""


def is_invisible(cp: int) -> bool:
    """Whether a code point is in :data:`INVISIBLE`."""
    return any(a <= cp <= b for a, b in INVISIBLE)


# -- romanisation ------------------------------------------------------------------------------------------
_INITIALS = ("", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h", "j", "q", "x", "zh", "ch", "sh", "r", "z", "c",
             "s", "y", "w")
_FINALS = ("a", "o", "e", "ai", "ei", "ao", "ou", "an", "en", "ang", "eng", "ong", "er", "i", "ia", "ie", "iao", "iu",
           "ian", "in", "iang", "ing", "iong", "u", "ua", "uo", "uai", "ui", "uan", "un", "uang", "ueng", "ü", "üe",
           "üan", "ün", "v", "ve", "ue")
PINYIN_SYLLABLES: frozenset[str] = frozenset(
    {i + f for i in _INITIALS for f in _FINALS if i or f[0] in "aoe"} | {"m", "n", "ng", "hm", "hng", "ê"})
"""Hanyu Pinyin syllables without tone (initial + final; a slightly larger set than the one in use, which is all
that is needed to tell a romanisation from an English word or a number in brackets)."""

TONED = {  # a vowel with a tone mark -> the vowel
    **dict.fromkeys("āáǎà", "a"), **dict.fromkeys("ēéěè", "e"), **dict.fromkeys("īíǐì", "i"),
    **dict.fromkeys("ōóǒò", "o"), **dict.fromkeys("ūúǔù", "u"), **dict.fromkeys("ǖǘǚǜ", "ü"),
    **dict.fromkeys("ńňǹ", "n"), "ḿ": "m", "ế": "ê", "ề": "ê",
}
_ZHUYIN = re.compile(r"[\u3105-\u312f\u31a0-\u31bf]{1,4}(?:[\u02c7\u02c9\u02ca\u02cb]| \u0307)?"
                     r"| ?\u0307[\u3105-\u312f\u31a0-\u31bf]{1,4}")
"""A zhuyin syllable as NFKC leaves it: one to four letters, a tone mark after them (the neutral tone's dot, U+02D9,
is a space and U+0307 after NFKC), or the neutral tone's dot before them."""
_IDEOGRAPH = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_BRACKETED = re.compile(rf"(?<=[{_IDEOGRAPH}])\(([^()\n]{{1,8}})\)")
_PINYIN_LETTERS = "a-zü" + "".join(TONED) + "ê"
_BARE = re.compile(rf"(?<=[{_IDEOGRAPH}])([{_PINYIN_LETTERS}]{{1,7}})(?![{_PINYIN_LETTERS}0-9])")


def _syllable(s: str, bare: bool = False) -> bool:
    """Whether ``s`` is one pinyin syllable (tone marks, or a final tone digit 1-5), or a zhuyin one; ``bare``: a
    pinyin syllable that carries a tone mark (one written without brackets: an English word never has one)."""
    if not bare and _ZHUYIN.fullmatch(s):
        return True
    toned = any(ch in TONED for ch in s)
    if bare and not toned:
        return False
    if not bare and s[-1] in "12345":
        s = s[:-1]
    return "".join(TONED.get(ch, ch) for ch in s) in PINYIN_SYLLABLES


def strip_annotations(normalized: str) -> str:
    """``normalized`` without the romanisation written directly after its ideographs: a pinyin or zhuyin syllable
    in round brackets, one to eight characters (``內(nèi)容(róng)`` -> ``內容``), and a pinyin syllable with a tone mark written straight
    after one (``内nèi容róng`` -> ``内容``). Brackets that hold anything else (``(2019)``, ``(ai)`` is pinyin,
    ``(cpu)`` is not) stay."""
    if "(" in normalized:
        normalized = _BRACKETED.sub(lambda m: "" if _syllable(m.group(1)) else m.group(0), normalized)
    if not normalized.isascii() and any(ch in TONED for ch in normalized):
        normalized = _BARE.sub(lambda m: "" if _syllable(m.group(1), bare=True) else m.group(0), normalized)
    return normalized
