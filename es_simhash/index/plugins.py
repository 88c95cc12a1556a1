"""Backends of one's own on the command line, chosen by the URL's scheme.

A package that provides a :class:`~es_simhash.index.base.FingerprintIndex` (docs/how-it-works.md, "A backend of
one's own") registers, in the entry-point group ``es_simhash.backends``, a function ``open(url, index)`` that returns
it, under the URL scheme it serves::

    [project.entry-points."es_simhash.backends"]
    redis = "my_package.backend:open_index"

``es-simhash index FILE --es-url redis://host/0`` (or ``ES_URL``, or the config file's ``url``) then runs on it, as
``check`` does; ``http://`` and ``https://`` are Elasticsearch's and OpenSearch's and are never a plug-in's. The
commands that read or rewrite an index by document (``repair``, ``delete``, ``search``, the report, ...) need
Elasticsearch or OpenSearch and say so. A URL's credentials are the plug-in's to read: no message shows more of a
plug-in's URL than its scheme."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable

from es_simhash.errors import InvalidSetting
from es_simhash.index.base import FingerprintIndex, MaintainedIndex

GROUP = "es_simhash.backends"
"""The entry-point group a backend of one's own registers in, under the URL scheme it serves."""
ENGINE_SCHEMES = frozenset({"http", "https"})
"""The schemes of Elasticsearch and OpenSearch (:mod:`es_simhash.index.elastic`): never a plug-in's."""
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*)://")


class UnknownBackend(InvalidSetting):
    """A URL whose scheme no installed backend serves, or whose backend gave no
    :class:`~es_simhash.index.base.FingerprintIndex`."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "url")


def plugin_scheme(url: Any) -> str | None:
    """The scheme of ``url`` when it is a plug-in's (any scheme but http and https), else ``None``."""
    m = _SCHEME.match(url) if isinstance(url, str) else None
    scheme = m.group(1).lower() if m else None
    return scheme if scheme is not None and scheme not in ENGINE_SCHEMES else None


def installed() -> dict[str, EntryPoint]:
    """The backends installed, by the scheme each serves."""
    return {ep.name.lower(): ep for ep in entry_points(group=GROUP)}


def served_scheme(url: Any, where: str = "ES_URL") -> str | None:
    """The scheme of ``url`` when an installed backend of one's own serves it; ``None`` for Elasticsearch's and
    OpenSearch's (http, https, or no scheme); :class:`UnknownBackend` (one line ending with ``where``, where the URL
    is set) for a scheme no installed backend serves."""
    scheme = plugin_scheme(url)
    if scheme is None:
        return None
    backends = installed()
    if scheme in backends:
        return scheme
    have = ", ".join(f"{s}://" for s in sorted(backends)) or "none"
    raise UnknownBackend(f"no installed backend serves {scheme}:// (Elasticsearch and OpenSearch: http://, https://; "
                         f"plug-ins: {have}): install its package, or set an Elasticsearch or OpenSearch URL with "
                         f"{where}")


def open_plugin_index(url: str, index: str, where: str = "ES_URL") -> FingerprintIndex:
    """The index ``index`` of the backend that serves ``url``'s scheme (:func:`served_scheme`), opened by its
    ``open(url, index)``; :class:`UnknownBackend` (one line ending with ``where``, where the URL is set) when no
    installed backend serves it, it cannot be loaded, or it gives no :class:`~es_simhash.index.base.FingerprintIndex`."""
    scheme = served_scheme(url, where)
    if scheme is None:
        raise UnknownBackend(f"{_shown(url)} is Elasticsearch's or OpenSearch's, not a plug-in's; set another with "
                             f"{where}")
    entry = installed()[scheme]
    try:
        opener: Callable[[str, str], Any] = entry.load()
    except Exception as exc:
        raise UnknownBackend(f"the backend of {scheme}:// ({entry.value}) cannot be loaded: {type(exc).__name__}: "
                             f"{exc}") from exc
    opened = opener(url, index)
    if not isinstance(opened, FingerprintIndex):
        raise UnknownBackend(f"the backend of {scheme}:// ({entry.value}) gave a {type(opened).__name__}, which is not "
                             f"a FingerprintIndex (docs/how-it-works.md, 'A backend of one's own')")
    return opened


def can_recheck(index: FingerprintIndex) -> bool:
    """Whether a run into ``index`` can take its decisions again at its end (``index`` and ``dedup``'s default):
    only a :class:`~es_simhash.index.base.MaintainedIndex` can rewrite what it stored."""
    return isinstance(index, MaintainedIndex)


def _shown(url: str) -> str:
    scheme = _SCHEME.match(url)
    return f"{scheme.group(1).lower()}://" if scheme else "the URL"
