"""Page furniture that is not the article: a comment section under it.

Sites show readers' comments under an article ("热门评论", "网友评论", "全部评论 128"): a heading, then each
comment (a nickname, its text) with its time, likes and a reply link, then a "more comments" link. A copy of the
article on another site carries other comments, or none; two different articles can carry one section ("hot
comments" shown under several pages). So the comments are furniture, like a site's header: the fingerprint is the
article's, from the text before the section (:func:`without_comments`), the step :func:`es_simhash.fingerprint.
text.prepare` takes for both fingerprint engines.

A section is told by its heading *and* by its comments' marks, so an article that says "网友评论" in a line of its
own is kept whole: the heading is a line of its own (spaces inside it left aside: text extracted from a PDF), and
at least :data:`MIN_MARKS` of the lines after it carry a comment's marks (a time ago, likes, a reply or report
link, a floor number). Only what follows the heading is dropped, and only when the text before it holds at least
:data:`MIN_ARTICLE_CHARS` characters: a page that is all comments is its comments.
"""

from __future__ import annotations

import re

__all__ = ["without_comments", "MIN_MARKS", "MIN_ARTICLE_CHARS"]

MIN_MARKS = 2
"""Lines after a heading that must carry a comment's marks (:data:`_MARK`) for the rest to be a comment section."""
MIN_ARTICLE_CHARS = 100
"""Characters the text before a comment section must hold (ASCII spaces left aside) for the section to be dropped."""

_KEYS = ("论", "論", "帖", "言", "句")
"""A character every heading (:data:`_HEADING`) holds: a text, or a line, without any of them is none (a fast test)."""
_LONGEST = 48
"""The longest line (spaces included: a PDF's spaced heading) that can be a heading."""

_HEADING = re.compile(
    r"(?:热门|熱門|网友|網友|最新|全部|精彩|最热|最熱|热点|熱點|读者|讀者|用户|用戶|相关|相關|已有|共有|共)?"
    r"(?:\d+条|\d+條)?"
    r"(?:评论|評論|跟帖|留言)(?:区|區|列表)?"
    r"|(?:我要|发表|發表|查看|查看全部)(?:评论|評論)|我来说两句|我來說兩句")
"""A comment section's heading, spaces removed; a count in brackets or after it is left aside (:func:`_is_heading`)."""

_COUNT = re.compile(r"[(（\[【]?(?:共)?\d*(?:条|條|人参与|人參與)?[)）\]】]?")

_MARK = re.compile(
    r"\d+(?:秒|分钟|分鐘|小时|小時|天|周|週|个月|個月|年)前|刚刚|剛剛"
    r"|[赞讚顶頂](?:[(（]\d+|\d+)|\d+(?:赞|讚|顶|頂)"
    r"|回复|回覆|举报|舉報|^\d+楼|^\d+樓")
"""A comment's marks: when it was written, its likes, its reply and report links, its floor."""

_SPACE = re.compile(r"\s+")
_FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９（）【】", "0123456789()[]")


def _bare(line: str) -> str:
    return _SPACE.sub("", line).translate(_FULLWIDTH_DIGITS)


def _is_heading(bare: str) -> bool:
    """Whether a line (spaces removed) is a comment section's heading: the heading, then at most a count."""
    m = _HEADING.match(bare)
    return m is not None and _COUNT.fullmatch(bare[m.end():]) is not None


def without_comments(text: str) -> str:
    """``text`` without the comment section under its article (see the module's text), or ``text`` as it is when it
    has none."""
    if not any(k in text for k in _KEYS):
        return text
    lines = text.split("\n")
    before = 0
    for i, line in enumerate(lines):
        if i and before >= MIN_ARTICLE_CHARS and len(line) <= _LONGEST and any(k in line for k in _KEYS):
            bare = _bare(line)
            if len(bare) <= 16 and _is_heading(bare):
                marks = 0
                for after in lines[i + 1:]:
                    if _MARK.search(_bare(after)):
                        marks += 1
                        if marks >= MIN_MARKS:
                            return "\n".join(lines[:i]).rstrip()
        before += len(line) - line.count(" ")
    return text
