"""Fingerprints: agreement with an independent per-bit reference, segments, flags, normalisation."""

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from es_simhash import Fingerprint, Fingerprinter
from es_simhash.fingerprint import is_sketch
from support import chinese_articles, english_articles, flip_bits, reference_simhash


@pytest.fixture(scope="module")
def jieba_fingerprinter():
    return Fingerprinter(segmenter="jieba")


def test_matches_reference_bit_for_bit_on_chinese_news(jieba_fingerprinter, fingerprinter):
    texts = chinese_articles()[:300]
    expected = [reference_simhash(t) for t in texts]
    got_reference_segmenter = [fp.simhash for fp in jieba_fingerprinter.fingerprint_many(texts)]
    got_default = [fp.simhash for fp in fingerprinter.fingerprint_many(texts)]
    assert got_reference_segmenter == expected
    assert got_default == expected  # the fast segmenter changes nothing


def test_matches_reference_on_english_news(fingerprinter):
    texts = english_articles()[:200]
    assert [fp.simhash for fp in fingerprinter.fingerprint_many(texts)] == [reference_simhash(t) for t in texts]


def test_batched_equals_one_at_a_time(fingerprinter):
    texts = chinese_articles()[300:340] + english_articles()[200:220] + ["", "。。", "短"]
    assert fingerprinter.fingerprint_many(texts) == [fingerprinter.fingerprint(t) for t in texts]


@settings(max_examples=500, deadline=None)
@given(st.integers(0, 2**64 - 1), st.sets(st.integers(0, 63), max_size=3))
def test_within_distance_3_share_a_segment(value, flips):
    a = Fingerprint(value, 1, (), 5, 200, False)
    b = Fingerprint(flip_bits(value, flips), 2, (), 5, 200, False)
    assert a.distance(b) == len(flips)
    assert any(x == y for x, y in zip(a.segments, b.segments))


def test_segments_reassemble_the_simhash():
    rng = random.Random(7)
    for _ in range(1000):
        v = rng.getrandbits(64)
        fp = Fingerprint(v, 1, (), 3, 200, False)
        assert sum(seg << (16 * i) for i, seg in enumerate(fp.segments)) == v
        assert [int(k, 16) for k in fp.segment_keys()] == list(fp.segments)


@pytest.mark.parametrize("text", ["", "   ", "。，！？……", "!!!---???", "的 了 是", "a an the of"])
def test_texts_without_features_are_flagged_and_have_no_segments(fingerprinter, text):
    fp = fingerprinter.fingerprint(text)
    assert fp.empty
    assert fp.segments == ()
    assert fp.to_dict()["segments"] == []


def test_width_case_and_spacing_do_not_change_the_fingerprint(fingerprinter):
    half = "Elasticsearch 9 在 2026 年发布，支持 SimHash 去重。新华社北京电：记者报道了这一消息！"
    full = "ＥＬＡＳＴＩＣＳＥＡＲＣＨ　９　在　２０２６　年发布，支持　ＳｉｍＨａｓｈ　去重。新华社北京电：记者报道了这一消息！"
    a, b = fingerprinter.fingerprint(half), fingerprinter.fingerprint(full)
    assert a.simhash == b.simhash
    assert a.content_hash == b.content_hash
    assert a.sentences == b.sentences


def test_punctuation_changes_keep_the_content_hash(fingerprinter):
    a = fingerprinter.fingerprint("今天天气很好，我们去公园散步。然后去吃饭！")
    b = fingerprinter.fingerprint("今天天气很好 我们去公园散步 然后去吃饭")
    assert a.content_hash == b.content_hash


def test_small_edit_moves_few_bits_and_unrelated_texts_are_far(fingerprinter):
    texts = [t for t in chinese_articles() if 800 <= len(t) <= 3000][:50]
    assert len(texts) == 50
    near = [fingerprinter.fingerprint(t).distance(fingerprinter.fingerprint(t.replace("，", "；", 2) + "（完）"))
            for t in texts]
    assert sum(d <= 3 for d in near) >= 45
    fps = fingerprinter.fingerprint_many(texts)
    far = [fps[i].distance(fps[j]) for i in range(50) for j in range(i + 1, 50)]
    assert sum(d <= 3 for d in far) == 0
    assert 20 < sum(far) / len(far) < 44  # unrelated news: about 32 bits apart


def test_short_flag_and_sentence_signature(fingerprinter):
    short = fingerprinter.fingerprint("转发微博：国务院今天召开常务会议，部署进一步做好稳就业工作。")
    long_ = fingerprinter.fingerprint(chinese_articles()[5] * 3)
    assert short.short and not long_.short
    assert 1 <= len(short.sentences) <= 3 and not any(map(is_sketch, short.sentences))
    assert len(short.sketch) == fingerprinter.sketch and all(map(is_sketch, short.sketch))  # a short text's sketch
    assert len(long_.sentences) == fingerprinter.n_sentences and not any(map(is_sketch, long_.sentences))
    # a prefix before the colon is part of the first sentence, so the sentence hash changes; most of the
    # shingle sketch survives it
    other = fingerprinter.fingerprint("国务院今天召开常务会议，部署进一步做好稳就业工作。")
    shared = set(short.sketch) & set(other.sketch)
    assert len(shared) >= fingerprinter.sketch // 2


def test_dict_round_trip(fingerprinter):
    fp = fingerprinter.fingerprint(chinese_articles()[0])
    assert Fingerprint.from_dict(fp.to_dict()) == fp


def test_sentence_hashes_tell_a_negation_or_a_swap_from_a_typo():
    from es_simhash.fingerprint import contradicts, sentence_hashes
    from es_simhash.fingerprint.text import normalize, sentence_key

    def h(s):
        return sentence_hashes([sentence_key(normalize(s))])[0]

    base = h("我们支持这项改革方案")
    assert contradicts(base, h("我们不支持这项改革方案"))       # negation inserted
    assert contradicts(h("我们不支持这项改革方案"), base)       # ... or removed
    assert contradicts(h("北京队战胜了上海队"), h("上海队战胜了北京队"))  # words swapped
    assert not contradicts(base, h("我们支持这项改革计划"))     # a word replaced
    assert not contradicts(base, h("我们支持这项改革方案！"))   # punctuation only: the same sentence
    assert contradicts(h("Rates will rise"), h("Rates will not rise"))
    assert contradicts(h("It is over"), h("It isn't over"))
    assert not contradicts(h("the market rose sharply"), h("the makret rose sharply"))  # English letter swap: a typo
    # equal keys give equal hashes; different keys different ones
    assert h("Rates will rise") == h("rates  will RISE!")
    assert h("Rates will rise") != h("Rates will fall")


def test_two_texts_contradict_when_any_pair_of_their_sentences_does():
    """``contradicting_pair`` (the meaning guard's test of two texts' signatures) is true exactly when some pair of
    long-sentence hashes contradicts; sketch hashes never count, and neither does a sentence both texts hold."""
    from es_simhash.fingerprint import SKETCH_BIT, contradicting_pair, contradicts, sentence_hashes
    from es_simhash.fingerprint.text import normalize, sentence_key

    def h(s):
        return sentence_hashes([sentence_key(normalize(s))])[0]

    plain = [h("我们支持这项改革方案"), h("北京队战胜了上海队"), h("Rates will rise"), h("今天的天气很好")]
    opposite = {h("我们不支持这项改革方案"): 0, h("上海队战胜了北京队"): 1, h("Rates will not rise"): 2}
    unrelated = [h("明天下午开会讨论预算"), h("The market rose sharply"), SKETCH_BIT | plain[0], SKETCH_BIT | 12345]
    assert not contradicting_pair(plain, plain + unrelated)  # the same sentences, other sentences, sketch hashes
    assert not contradicting_pair(plain, [])
    for o, i in opposite.items():
        assert contradicting_pair(plain, unrelated + [o]) and contradicting_pair([o] + unrelated, plain)
        assert contradicts(plain[i], o) and contradicts(o, plain[i])
        assert not contradicting_pair([p for j, p in enumerate(plain) if j != i], [o] + unrelated)
        assert not contradicting_pair([SKETCH_BIT | plain[i]], [o])  # (a sketch hash of the same bits)


def test_a_line_break_ends_a_sentence(fingerprinter):
    body = "Music and film fans will be able to control their digital media players by speaking to them."
    titled = fingerprinter.fingerprint("Speak easy plan for media players\n" + body)
    alone = fingerprinter.fingerprint(body)
    sentence_only = [h for h in alone.sentences if h < (1 << 63)]
    assert sentence_only and set(sentence_only) <= set(titled.sentences)
    # a space is not a line break: the title would be part of the sentence
    inline = fingerprinter.fingerprint("Speak easy plan for media players " + body)
    assert not set(sentence_only) & set(inline.sentences)


_TOKEN_CHARS = st.sampled_from(list("aZ09_-.'% 　，。！") + ["中", "文", "的", "²", "Ⅻ", "٣", "０", "\u0301", "\U00020000"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_TOKEN_CHARS, max_size=5), max_size=40), st.integers(1, 3))
def test_bulk_token_weights_equal_token_weight(tokens, min_token_len):
    from es_simhash.fingerprint.idf import IDFTable

    # IDF values that land on .5 at the weight scale exercise round-half-to-even; negative ones the clamp to 0
    idf = IDFTable({"ab": 0.5 / 1024, "cd": 1.5 / 1024, "ef": 2.5 / 1024, "中文": -3.0, "09": 7.25}, default=11.7)
    fp = Fingerprinter(idf, min_token_len=min_token_len, stopwords=frozenset({"的", "ab"}))
    tokens = tokens + ["ab", "cd", "ef", "中文", "09", "的", "a_b", ""]
    assert fp.python._token_weights(tokens).tolist() == [float(fp.token_weight(t)) for t in tokens]


def test_bulk_token_weights_equal_token_weight_on_real_tokens(fingerprinter):
    from es_simhash.fingerprint import text

    tokens = list(dict.fromkeys(t for a in chinese_articles()[:200] + english_articles()[:100]
                                for t in text.segment(text.normalize(a))))
    tokens += sorted(fingerprinter.stopwords)
    weights = fingerprinter.python._token_weights(tokens)
    assert weights.tolist() == [float(fingerprinter.token_weight(t)) for t in tokens]


def test_new_tokens_are_forgotten_when_storing_them_fails():
    fp = Fingerprinter(engine="python")
    text = "全新的词语出现了，比如量子计算机和区块链技术"
    known = len(fp.python._vocab.ids)
    fp.python._token_weights = lambda tokens: 1 / 0  # instance attribute: the vocabulary calls this one
    with pytest.raises(ZeroDivisionError):
        fp.fingerprint(text)
    assert len(fp.python._vocab.ids) == known and not fp.python._vocab.ids.new
    del fp.python._token_weights
    assert fp.fingerprint(text) == Fingerprinter().fingerprint(text)


# Chinese punctuation as a copy writes it in ASCII (no space after) or in its half-width forms
_ASCII_PUNCTUATION = str.maketrans({"，": ",", "。": ".", "；": ";", "：": ":", "！": "!", "？": "?", "“": '"', "”": '"'})
_HALF_WIDTH = str.maketrans({"。": "｡", "、": "､", "「": "｢", "」": "｣"})


@pytest.mark.parametrize("engine", ["python", "native"])
def test_chinese_text_with_ascii_punctuation_has_the_fingerprint_of_the_original(engine):
    from es_simhash.fingerprint import native_core

    if engine == "native" and native_core.native_module()[0] is None:
        pytest.skip("native fingerprint core not installed")
    fingerprinter = Fingerprinter(engine=engine)
    # every 10th People's Daily article of three sentences or more, but the two whose "。" stands between two
    # ASCII letters or digits ("1∶2。80年代": there a reader cannot tell a full stop from a decimal point either)
    articles = [a for a in chinese_articles()[::10] if a.count("。") >= 3
                and not re.search(r"[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]。[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]", a)]
    assert len(articles) >= 250
    originals = fingerprinter.fingerprint_many(articles)
    for copies in ([a.translate(_ASCII_PUNCTUATION) for a in articles], [a.translate(_HALF_WIDTH) for a in articles]):
        assert copies != articles
        got = fingerprinter.fingerprint_many(copies)
        for field in ("sentences", "fuzzy", "number_bag", "sketch", "simhash"):
            same = sum(getattr(a, field) == getattr(b, field) for a, b in zip(originals, got))
            assert same == len(articles), field
        assert sum(bool(fp.fuzzy) for fp in got) >= len(articles) // 2


@pytest.mark.parametrize("text, dots_removed", [
    ("据U.S.政府统计数据显示今年经济增长3.5%左右，比去年同期提高了1,200万元", "据US政府统计数据显示今年经济增长35%左右，比去年同期提高了1,200万元"),
    ("详见www.example.com网站上公布的全部统计数据和e.g.中国的例子", "详见wwwexamplecom网站上公布的全部统计数据和eg中国的例子"),
    ("圆周率约等于3.14这是小学生都知道的数学常识他说……然后离开了", "圆周率约等于314这是小学生都知道的数学常识他说然后离开了"),
])
def test_dots_inside_words_and_numbers_of_chinese_text_end_no_sentence(fingerprinter, text, dots_removed):
    # a decimal point, an address, an abbreviation or an ellipsis is read inside its sentence: the sentence is the
    # one written without those dots
    assert fingerprinter.fingerprint(text).sentences == fingerprinter.fingerprint(dots_removed).sentences


def test_a_full_stop_written_in_ascii_ends_a_sentence_of_chinese_text(fingerprinter):
    first, second = "国务院今天召开常务会议部署稳就业工作", "会议要求各地区各部门切实抓好落实"
    assert fingerprinter.fingerprint(f"{first}.{second}.").sentences == \
        fingerprinter.fingerprint(f"{first}。{second}。").sentences == \
        fingerprinter.fingerprint(f"{first}\n{second}").sentences
    assert fingerprinter.fingerprint(f"{first}。{second}。").sentences != \
        fingerprinter.fingerprint(f"{first}{second}").sentences
