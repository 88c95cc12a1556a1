"""Markup in crawl text: telling HTML from text, and the text of HTML, with a real HTML parser.

Crawl output often carries a page's markup (tags, ``style="..."`` attributes, ``&nbsp;`` entities) in what should
be its text; fingerprinted as it is, a page that is mostly markup looks like every other page of its site.
:func:`strip_html` keeps what a browser would show as text: tags and their attributes, comments, and the contents
of ``script``/``style``/``template``/``noscript`` are dropped, and so is ruby text (``<rt>``, ``<rp>``: the
pronunciation a page prints above or beside characters, ``<ruby>內<rp>(</rp><rt>nèi</rt><rp>)</rp></ruby>`` is
``內``), entities and character references decoded, and
block-level elements (paragraphs, line breaks, list items, table cells, headings) end a line, so sentence splitting
still sees their boundaries. It uses the standard library's HTML tokenizer (:class:`html.parser.HTMLParser`), not
regular expressions: broken markup, ``>`` inside attribute values and unclosed tags are handled as browsers do.
"""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["looks_like_html", "strip_html", "text_of", "HTML_MODES"]

HTML_MODES = ("auto", "strip", "keep")

_HIDDEN = frozenset({"script", "style", "template", "noscript", "head", "title", "iframe", "svg", "math"})
_BLOCK = frozenset({
    "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table", "thead", "tbody", "h1", "h2",
    "h3", "h4", "h5", "h6", "section", "article", "header", "footer", "aside", "nav", "blockquote", "pre", "hr",
    "form", "figure", "figcaption", "main", "address", "center",
})
_KNOWN = _BLOCK | _HIDDEN | frozenset({
    "a", "span", "b", "i", "u", "em", "strong", "font", "img", "small", "big", "sub", "sup", "html", "body", "meta",
    "link", "input", "button", "label", "select", "option", "textarea", "code", "abbr", "cite", "q", "s", "strike",
    "tt", "var", "wbr", "nobr", "source", "video", "audio", "picture", "caption", "col", "colgroup", "tfoot",
    "ruby", "rb", "rt", "rp", "rtc",
})
_RUBY_TEXT = frozenset({"rt", "rp", "rtc"})
"""Ruby annotations: hidden until their end tag, or (end tags are optional there) the next ruby element or the
end of the ruby."""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.ruby_text = False
        self.tags = 0  # known HTML elements met (start or end tags)

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _KNOWN:
            self.tags += 1
        if tag in ("ruby", "rb"):
            self.ruby_text = False
        elif tag in _RUBY_TEXT:
            self.ruby_text = True
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in _KNOWN:
            self.tags += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _KNOWN:
            self.tags += 1
        if tag in _RUBY_TEXT or tag == "ruby":
            self.ruby_text = False
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden and not self.ruby_text:
            self.parts.append(data)


def _parse(text: str) -> _Text:
    parser = _Text()
    parser.feed(text)
    parser.close()
    return parser


def _tidy(parts: list[str]) -> str:
    lines = ("".join(parts)).replace("\xa0", " ").split("\n")
    return "\n".join(line.strip() for line in lines if line.strip())


_MIN_TAGS = 2


def looks_like_html(text: str) -> bool:
    """Whether ``text`` carries HTML markup: at least two tags of known HTML elements (``a < b`` and ``<3`` are
    text; so is an e-mail address in angle brackets)."""
    return "<" in text and _parse(text).tags >= _MIN_TAGS


def strip_html(text: str) -> str:
    """The text a browser would show for ``text`` (see the module's documentation)."""
    return _tidy(_parse(text).parts)


def text_of(text: str, mode: str) -> tuple[str, bool]:
    """``(text to fingerprint, whether markup was stripped)`` for ``mode`` ``auto`` (strip when it looks like
    HTML), ``strip`` (always) or ``keep`` (never)."""
    if mode == "keep" or ("<" not in text and "&" not in text):
        return text, False
    parser = _parse(text)
    if mode == "auto" and parser.tags < _MIN_TAGS:
        return text, False
    return _tidy(parser.parts), True
