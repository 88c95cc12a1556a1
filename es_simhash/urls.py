"""The one parser of the URLs a user gives (Elasticsearch's, Kibana's): it never raises anything but :class:`BadURL`,
whose reason holds no byte of the URL's user information, whatever bytes the password holds.

The user information (``user:password@``) runs from the scheme to the **last** ``@`` of the URL, so a password may
hold ``/ ? # @ : [ ]``, spaces and any other character written as they are, or percent-encoded (``%2F``); the user
and password are percent-decoded (a ``%`` that starts no escape stays as it is, so write a ``%`` as ``%25`` when two
hex digits follow it). The host ends at the first ``/``, ``?`` or ``#`` after that ``@``. Standard library only, at
the bottom of the house (:mod:`es_simhash.redact` masks what this module parses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

__all__ = ["BadURL", "ServiceURL", "credentials", "parse", "userinfo_span", "without_userinfo"]

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HOST = re.compile("[A-Za-z0-9._~\\-\u0080-\U0010ffff]+")
"""What a host name holds: ASCII letters, digits, ``. _ ~ -``, and any non-ASCII character (an international name)."""
_PORTS = {"http": 80, "https": 443}


class BadURL(ValueError):
    """A URL that names no ``http(s)://host[:port]``; the message says why and holds nothing of its user
    information."""


@dataclass(frozen=True)
class ServiceURL:
    """A parsed ``http(s)://[user[:password]@]host[:port][/path]``. ``str()`` and ``repr()`` show no credential."""

    scheme: str
    host: str
    """As written: a name, an IPv4 address, or an IPv6 address in brackets (``[::1]``)."""
    port: int | None
    """As written; ``None`` when the URL gives none (:attr:`base` then uses the scheme's: 80 or 443)."""
    path: str = ""
    query: str = ""
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @property
    def base(self) -> str:
        """``scheme://host:port/path`` without credentials, query or fragment, the port always written: what a
        client connects to."""
        return f"{self.scheme}://{self.host}:{self.port or _PORTS[self.scheme]}{self.path.rstrip('/')}"

    @property
    def shown(self) -> str:
        """The URL for messages: as written, without credentials, query or fragment."""
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{self.host}{port}{self.path.rstrip('/')}"

    @property
    def has_credentials(self) -> bool:
        return self.username is not None

    def __str__(self) -> str:
        return self.shown


def userinfo_span(url: str) -> tuple[int, int] | None:
    """Where the user information of ``url`` starts and ends (the ``@`` excluded), or ``None``: from after the
    scheme (which may be missing) to the last ``@``."""
    m = SCHEME.match(url)
    start = m.end() if m else (2 if url.startswith("//") else 0)
    at = url.rfind("@", start)
    return (start, at) if at >= 0 else None


def without_userinfo(url: str) -> str:
    """``url`` without its user information (and its ``@``), whatever its shape."""
    span = userinfo_span(url)
    return url if span is None else url[:span[0]] + url[span[1] + 1:]


def credentials(url: str) -> tuple[str | None, str | None]:
    """The user and password written in ``url`` (percent-decoded), whatever its shape: ``(None, None)`` without
    user information, ``(user, None)`` with a user alone."""
    span = userinfo_span(url)
    if span is None:
        return None, None
    user, sep, secret = url[span[0]:span[1]].partition(":")
    return unquote(user), (unquote(secret) if sep else None)


def parse(url: str) -> ServiceURL:
    """``url`` parsed; :class:`BadURL` with a reason (no credential in it) when it names no http(s) host."""
    if not isinstance(url, str):
        raise BadURL(f"a URL is text, not {type(url).__name__}")
    url = url.strip()
    m = SCHEME.match(url)
    if not m:
        raise BadURL("it needs the scheme, http:// or https://")
    scheme = url[:m.end() - 3].lower()
    if scheme not in _PORTS:
        raise BadURL(f"the scheme {scheme!r} is not http or https")
    span = userinfo_span(url)
    rest = url[span[1] + 1:] if span else url[m.end():]
    username, password = credentials(url)
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    host, port = _host_port(authority)
    path, _, query = tail.split("#", 1)[0].partition("?")
    return ServiceURL(scheme, host, port, path, query, username, password)


def _host_port(authority: str) -> tuple[str, int | None]:
    if not authority:
        raise BadURL("it names no host")
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise BadURL("an IPv6 address needs its closing ']'")
        host, after = authority[:end + 1], authority[end + 1:]
        if not re.fullmatch(r"\[[0-9A-Fa-f:.]+(%[\w.-]+)?\]", host):
            raise BadURL(f"{host!r} is not an IPv6 address")
        if after and not after.startswith(":"):
            raise BadURL("after an IPv6 address comes ':port' or nothing")
        port_text = after[1:] if after else None
    else:
        host, sep, port_text_ = authority.partition(":")
        port_text = port_text_ if sep else None
        if not host:
            raise BadURL("it names no host")
        if not _HOST.fullmatch(host):
            bad = next(c for c in host if not _HOST.fullmatch(c))
            raise BadURL(f"the host {host!r} holds {_char(bad)}, which no host name holds")
    if port_text is None:
        return host, None
    if not port_text.isascii() or not port_text.isdigit():
        raise BadURL("the port is not a number" if port_text else "':' with no port after it")
    port = int(port_text)
    if not 0 < port < 65536:
        raise BadURL(f"the port {port} is not between 1 and 65535")
    return host, port


def _char(c: str) -> str:
    return "a space" if c == " " else f"{c!r}"
