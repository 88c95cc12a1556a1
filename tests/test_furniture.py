"""A comment section under an article is page furniture: the fingerprint is the article's.

Copies of one People's Daily article carry other readers' comments (sections written here in four sites' styles:
"热门评论" with times and likes, "网友跟帖" with floor numbers, "評論區" in Traditional script, a PDF's spaced
heading), and two different articles carry one section: the copies are their article, the two articles stay
apart, on both fingerprint engines. A text that only names "网友评论" in a line of its own is kept whole."""

from __future__ import annotations

import random

import pytest

from es_simhash.decide.default import DefaultRule
from es_simhash.fingerprint import Fingerprinter
from es_simhash.fingerprint.furniture import without_comments
from es_simhash.fingerprint.text import prepare

import corpora  # noqa: E402  bench/corpora.py


@pytest.fixture(scope="module")
def articles() -> list[str]:
    return [a for a in corpora.peoples_daily_articles(min_chars=600)][:40]


@pytest.fixture(scope="module")
def said() -> list[str]:
    return corpora.chinese_short_texts(max_chars=60)


def hot(r: random.Random, said: list[str], n: int) -> str:
    lines = [f"热门评论（{r.randint(20, 900)}）"]
    for _ in range(n):
        lines += [f"网友{r.randint(1000, 9999)}：{r.choice(said)}", f"{r.randint(1, 23)}小时前 赞({r.randint(0, 99)}) 回复"]
    return "\n".join(lines + ["查看更多评论"])


def floors(r: random.Random, said: list[str], n: int) -> str:
    lines = ["网友跟帖"]
    for i in range(n):
        lines += [f"{i + 1}楼 {r.choice('甲乙丙丁')}网友 {r.choice(said)}", f"{r.randint(2, 59)}分钟前 举报"]
    return "\n".join(lines)


def traditional(r: random.Random, said: list[str], n: int) -> str:
    lines = ["熱門評論 共" + str(r.randint(5, 99)) + "條"]
    for _ in range(n):
        lines += [f"路人{r.randint(1, 99)}：{r.choice(said)}", f"讚{r.randint(1, 50)}　回覆"]
    return "\n".join(lines)


def spaced(r: random.Random, said: list[str], n: int) -> str:
    lines = ["网 友 评 论"]
    for _ in range(n):
        lines += [" ".join(f"过客：{r.choice(said)}"), " ".join(f"{r.randint(1, 9)}天前 {r.randint(1, 99)}赞")]
    return "\n".join(lines)


STYLES = [hot, floors, traditional, spaced]


@pytest.mark.parametrize("style", STYLES, ids=lambda s: s.__name__)
def test_a_copy_carrying_comments_is_its_article(articles, said, style):
    """The article under a comment section of 30-80% of the page fingerprints as the article alone (the same content
    hash, so an exact copy), whichever engine computes it."""
    r = random.Random(style.__name__)
    for article in articles[:10]:
        page = article + "\n" + style(r, said, r.randint(4, 25))
        assert without_comments(page) == article.rstrip()
        for engine in ("native", "python"):
            fpr = Fingerprinter(engine=engine)
            a, b = fpr.fingerprint_many([article, page])
            assert a.content_hash == b.content_hash and a.simhash == b.simhash, engine


def test_two_articles_under_one_section_stay_apart(articles, said):
    """One hot-comments section under two different articles (as large as the articles): no duplicates; each page is
    a copy of its article."""
    rule, fpr = DefaultRule.rechecked(), Fingerprinter()
    r = random.Random(5)
    for a, b in zip(articles[10:30:2], articles[11:30:2]):
        section = hot(r, said, 30)
        pa, pb, fa = fpr.fingerprint_many([a + "\n" + section, b + "\n" + section, a])
        assert not rule.explain(pa, pb)["duplicate"], rule.explain(pa, pb)["why"]
        assert rule.explain(pa, fa)["duplicate"]


@pytest.mark.parametrize("text", [
    # the heading alone, with no comment after it
    "{article}\n网友评论\n本报将持续关注此事，欢迎读者来信来电反映情况。",
    # a line "评论" inside an article, its paragraphs going on (a commentary column's heading)
    "{article}\n评论\n{article}",
    # a page that is all comments: nothing of an article before the heading
    "热门评论\n网友1：好\n1小时前 赞(3) 回复\n网友2：不错\n2小时前 赞(1) 回复",
])
def test_text_that_is_no_comment_section_is_kept_whole(articles, text):
    text = text.format(article=articles[0][:300])
    assert without_comments(text) == text
    assert prepare(text).count("\n") >= text.count("\n") - 1  # (only a hard wrap's breaks may be joined)
