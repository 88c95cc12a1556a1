"""The fast text paths give exactly what the plain definitions give, on random Unicode text."""

import html
import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from es_simhash.fingerprint import fold
from es_simhash.fingerprint import text as T
from support import ref_full_stops

_WS = re.compile(r"\s+")
_LINE_BREAKS = set("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # str.splitlines' boundaries


_IDEOGRAPH = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"


def _reference_normalize(t: str) -> str:
    """HTML character references read (``html.unescape``, again while that changes the text, three times at
    most) and a hard wrap's line breaks joined (``text.join_hard_wraps``, which defines that step); NFKC; invisible
    characters dropped; casefold; a whitespace run with a line break becomes one newline, any other run one space;
    the script folded and romanisation after ideographs dropped (es_simhash.fingerprint.fold, which defines those
    steps); a space between two CJK ideographs goes; in a text with an ideograph, a full stop written "." is
    written "。" (support.ref_full_stops)."""
    for _ in range(3):
        t, was = html.unescape(t), t
        if t == was:
            break
    t = T.join_hard_wraps(t)
    t = unicodedata.normalize("NFKC", t)
    t = "".join(ch for ch in t if not fold.is_invisible(ord(ch)))
    t = _WS.sub(lambda m: "\n" if _LINE_BREAKS & set(m.group()) else " ", t.casefold()).strip()
    t = fold.strip_annotations(t.translate(fold.fold_table()))
    return ref_full_stops(re.sub(f"(?<={_IDEOGRAPH}) (?={_IDEOGRAPH})", "", t))


def _reference_keys(normalized: str, min_chars: int) -> tuple[str, list[str]]:
    keys = [T.sentence_key(s) for s in T.split_sentences(normalized) if not T.is_attribution(s)]
    return T.content_key(normalized), [k for k in keys if len(k) >= min_chars]


# Random code points, plus a bias towards the characters the fast paths special-case:
# lone surrogates, astral letters, full-width ASCII, U+3000, combining marks, sentence ends, dots and whitespace.
_SPECIAL = ("&amp;ldquo;&#x3002;&nbsp;&lt;&#12290&copy\ud800\udfff\U0001d400ＡＢｚ０９！？；，．　\u0301\u0308\u00a0\u2028\u3002…。.. \n\r\t_ßﬁ①㍿ＡＢ中文"
            "內容國發髮著乾象像(（)）nèi róng ǚ nv2 ㄋㄟˋ˙.中.a1.u.s.e.g.。\u200b\u200d\ufeff\u00ad\ufe0f\U000e0020"
            "--—―【】")
_chars = st.one_of(st.characters(codec=None), st.sampled_from(list(_SPECIAL)), st.characters(min_codepoint=0xFF00, max_codepoint=0xFF65))
_texts = st.text(_chars, max_size=60)


@settings(max_examples=3000, deadline=None)
@given(_texts)
def test_normalize_equals_nfkc_casefold_whitespace(t):
    assert T.normalize(t) == _reference_normalize(t)


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, max_size=8))
def test_normalize_many_equals_normalize(texts):
    assert T._normalize_many(texts) == [_reference_normalize(t) for t in texts]


@settings(max_examples=1000, deadline=None)
@given(st.lists(_texts, max_size=6), st.integers(1, 6))
def test_keys_many_equals_regex_keys(texts, min_chars):
    normalized = [_reference_normalize(t) for t in texts]
    assert T._keys_many(normalized, min_chars) == [_reference_keys(n, min_chars) for n in normalized]
    # also on raw (not normalised) text: the key functions take any string
    assert T._keys_many(texts, min_chars) == [_reference_keys(t, min_chars) for t in texts]
