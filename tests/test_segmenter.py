"""The fast native segmenter must give jieba's tokens, or the code must fall back to jieba."""

import jieba
import pytest

from es_simhash.fingerprint import text
from support import chinese_articles


def test_default_segmenter_tokens_equal_jieba_lcut_on_real_chinese_news():
    articles = [text.normalize(a) for a in chinese_articles()[:600]]
    assert sum(map(len, articles)) > 200_000
    if text.segmenter_name() == "jieba":
        pytest.skip("rjieba not installed: the code already uses jieba itself")
    mismatches = [a[:40] for a in articles if text.segment(a) != jieba.lcut(a)]
    assert mismatches == []


def test_forced_jieba_segmenter_is_jieba(monkeypatch):
    monkeypatch.setenv("ES_SIMHASH_SEGMENTER", "jieba")
    text.segmenter_name.cache_clear()
    try:
        assert text.segmenter_name() == "jieba"
        assert text.segment("我来到北京清华大学") == jieba.lcut("我来到北京清华大学")
    finally:
        text.segmenter_name.cache_clear()


def test_sentence_split_handles_chinese_and_english_punctuation():
    s = text.normalize("第一句。第二句！Third one? Fourth; 3.5 stays whole. 最后一句")
    assert text.split_sentences(s) == ["第一句", "第二句", "third one", "fourth", "3.5 stays whole", "最后一句"]


def test_a_full_stop_of_chinese_text_written_in_ascii_ends_a_sentence():
    s = text.normalize("第一句.第二句,还是第二句!第三句.U.S.政府说增长3.5%.见www.example.com.他说.好.最后")
    assert text.split_sentences(s) == ["第一句", "第二句,还是第二句", "第三句", "u.s.政府说增长3.5%",
                                       "见www.example.com", "他说", "好", "最后"]


def test_english_text_is_split_into_words():
    assert text.segment(text.normalize("Don't stop: U.S. growth, 3.5% in 2026!")) == [
        "don't", "stop", "u", "s", "growth", "3", "5", "in", "2026"]
