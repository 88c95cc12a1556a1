"""Credentials never leave the process: :func:`redact` is the one function every message, log line, exception text
and help line goes through before it is shown (the command line passes its whole stderr through it, and its
stdout through :func:`forget_known`).

Two things are masked: the password of a URL of any shape (``https://user:PASSWORD@host``, with no scheme
``user:PASSWORD@host:9200``, a broken IPv6 host ``http://user:PASSWORD@[::1:9200``, a bad port), and every secret
the process was given (:func:`remember`: a password, an API key, a URL's password, from an option, the environment
or the config file), wherever it appears. Where a URL's user information ends is :mod:`es_simhash.urls`'s
rule, the one its parser follows. Standard library only, near the bottom of the house.
"""

from __future__ import annotations

import base64
import re
import threading
from urllib.parse import unquote

from es_simhash.urls import userinfo_span

__all__ = ["MASK", "remember", "url_password", "mask_url", "redact", "forget_known"]

MASK = "***"
MIN_SECRET = 3
"""Secrets shorter than this are not searched for in free text (every "ab" in a message would go); a URL's password
is masked whatever its length."""

_known: set[str] = set()
_lock = threading.Lock()
_TOKEN = re.compile(r"\S+")  # (a word of a message: quotes and brackets around a URL stay in it, and so does a
# quote inside a password)


def remember(*secrets: str | None) -> None:
    """Mask these values wherever they appear in what the process shows from now on (a password, an API key; an
    API key's decoded ``id:key`` and key too). Empty values and ``None`` are ignored."""
    values: set[str] = set()
    for s in secrets:
        if not s:
            continue
        values.update((s, unquote(s)))
        decoded = _api_key_parts(s)
        values.update(decoded)
    with _lock:
        _known.update(v for v in values if len(v) >= MIN_SECRET)


def _api_key_parts(value: str) -> tuple[str, ...]:
    """An API key given as base64 ``id:key``: its decoded form and its key (a message could show either)."""
    if len(value) < 8 or not re.fullmatch(r"[A-Za-z0-9+/=_-]+", value):
        return ()
    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=False).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return ()
    if ":" not in text or not text.isprintable():
        return ()
    return text, text.split(":", 1)[1]


def url_password(url: str) -> str | None:
    """The password written in ``url`` (any shape; see :func:`mask_url`), or ``None``."""
    span = userinfo_span(url)
    if span is None:
        return None
    info = url[span[0]:span[1]]
    return info.split(":", 1)[1] if ":" in info else None


def mask_url(url: str) -> str:
    """``url`` with the password of its user information replaced by ``***`` (the user name kept), whatever its
    shape: with or without a scheme, with a broken host or port. A URL without a password is returned as it is."""
    span = userinfo_span(url)
    if span is None:
        return url
    start, at = span
    info = url[start:at]
    if ":" not in info:
        return url
    return f"{url[:start]}{info.split(':', 1)[0]}:{MASK}{url[at:]}"


def forget_known(text: str) -> str:
    """``text`` with every remembered secret replaced by ``***`` (what the command line does to its stdout: data,
    where a URL-shaped string is left as it is)."""
    if not _known:
        return text
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for s in known:
        if s in text:
            text = text.replace(s, MASK)
    return text


def _mask_word(m: re.Match[str]) -> str:
    word = m.group()
    if ":" not in word:
        return word
    url = word.lstrip("'\"(<")  # (a URL quoted in a message: its scheme follows the quote)
    return word[:len(word) - len(url)] + mask_url(url)


def redact(text: str) -> str:
    """``text`` with every URL's password masked (:func:`mask_url`, on each word that holds ``:`` and then ``@``)
    and every remembered secret replaced by ``***``: what may be shown of any message."""
    if "@" in text:
        text = _TOKEN.sub(_mask_word, text)
    return forget_known(text)
