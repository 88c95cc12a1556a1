"""Index administration: names, creating an index with the template, checking it was made by es-simhash with the same
fingerprint settings, aliases, the lookup keys it records."""

from __future__ import annotations

import re
from typing import Any

from es_simhash.errors import ElasticError, IndexNotManaged, InvalidValue
from es_simhash.fingerprint.config import settings_difference
from es_simhash.index.elastic.errors import api_status, elastic_errors
from es_simhash.index.elastic.schema import ADDED_FIELDS, index_template
from es_simhash.lookup.keys import DEFAULT as DEFAULT_KEYS
from es_simhash.lookup.keys import LookupKeys

_INVALID_INDEX_CHARS = re.compile(r'[\\/*?"<>| ,#:A-Z]')


def validate_index_name(name: str) -> str:
    """Raise :class:`~es_simhash.errors.InvalidValue` (a ``ValueError``, setting ``"index"``) unless ``name`` is a
    valid, non-hidden Elasticsearch index name."""
    problem = None
    if not name:
        problem = "it is empty"
    elif _INVALID_INDEX_CHARS.search(name):
        problem = 'use lowercase letters, digits, "-", "_" or "." (no spaces, uppercase or \\/*?"<>|,#:)'
    elif name[0] in "-_+.":
        problem = "it may not start with -, _, + or ."
    elif len(name.encode("utf-8")) > 255:
        problem = "it is longer than 255 bytes"
    if problem:
        raise InvalidValue(f"{name!r} is not a valid index name: {problem}", "index")
    return name


def ensure_index(client, index: str, fingerprint_config: dict[str, Any], replicas: int | None = None,
                 lookup_keys: LookupKeys = DEFAULT_KEYS) -> bool:
    """Install the index template for ``index`` and create the index if missing (idempotent).

    A new index records ``lookup_keys`` in its mapping (``_meta.lookup``); an existing index keeps the keys it
    was made with (:class:`ElasticIndex` reads them from there). Returns True when the index was created. Raises
    :class:`ElasticError` when the index exists but was built with a different fingerprint configuration (its
    fingerprints would not be comparable).
    """
    validate_index_name(index)
    template = index_template()
    template["index_patterns"] = [index]
    template["template"]["mappings"]["_meta"]["fingerprint"] = fingerprint_config
    template["template"]["mappings"]["_meta"]["lookup"] = lookup_keys.to_meta()
    if replicas is not None:  # (else auto_expand_replicas 0-1: green on one node, a replica once there are two)
        template["template"]["settings"]["index"]["number_of_replicas"] = replicas
        template["template"]["settings"]["index"]["auto_expand_replicas"] = "false"
    client.indices.put_index_template(name=f"es-simhash-{index}", **template)
    if client.indices.exists(index=index):
        check_index_config(client, index, fingerprint_config)
        # fields added by later releases (an index keeps its mapping): adding a field to a mapping is allowed
        props = template["template"]["mappings"]["properties"]
        client.indices.put_mapping(index=index, properties={k: props[k] for k in ADDED_FIELDS})
        return False
    try:
        client.indices.create(index=index)
    except Exception as exc:
        if api_status(exc) != 400 or "resource_already_exists_exception" not in str(exc):
            raise
        return False
    client.cluster.health(index=index, wait_for_status="yellow", timeout="60s")
    return True


def index_exists(client, index: str, url: str = "") -> bool:
    """Whether ``index`` exists (an index or an alias)."""
    with elastic_errors(url):
        return bool(client.indices.exists(index=index))


def require_index(client, index: str, url: str = "") -> dict[str, Any]:
    """The mapping ``_meta`` of an index es-simhash made; :class:`IndexNotManaged` (one line, what to do) when the
    index does not exist or was not made by es-simhash (its documents have none of the fields es-simhash reads, so
    searches, clusters and near-duplicate checks on it would be meaningless)."""
    validate_index_name(index)
    where = f" at {url}" if url else ""
    with elastic_errors(url):
        meta = _mapping_meta(client, index)
    if meta is None:
        raise IndexNotManaged(f"index {index!r} does not exist{where}: check the index name")
    if meta.get("managed_by") != "es-simhash":
        raise IndexNotManaged(f"index {index!r}{where} was not made by es-simhash: pick an index "
                              "`es-simhash index` wrote")
    return meta


def switch_alias(client, alias: str, index: str, url: str = "") -> list[str]:
    """Point ``alias`` at ``index`` alone, in one atomic request (readers never see it missing); returns the
    indexes it pointed at before."""
    validate_index_name(alias)
    with elastic_errors(url):
        if client.indices.exists(index=alias) and not client.indices.exists_alias(name=alias):
            raise ElasticError(f"{alias!r} is an index, not an alias: pick another alias name")
        try:
            before = sorted(client.indices.get_alias(name=alias))
        except Exception as exc:
            if api_status(exc) != 404:
                raise
            before = []
        actions: list[dict[str, Any]] = [{"remove": {"index": i, "alias": alias}} for i in before if i != index]
        actions.append({"add": {"index": index, "alias": alias}})
        client.indices.update_aliases(actions=actions)
    return before


def check_index_config(client, index: str, fingerprint_config: dict[str, Any]) -> None:
    """Raise :class:`ElasticError` unless ``index`` was made by es-simhash with the fingerprint settings
    ``fingerprint_config`` (:func:`~es_simhash.fingerprint.config.settings_difference` names the ones that
    differ)."""
    mapping = client.indices.get_mapping(index=index)
    meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
    if meta.get("managed_by") != "es-simhash":
        raise ElasticError(f"index {index!r} exists but was not created by es-simhash: pick another index name")
    stored = meta.get("fingerprint") or {}
    diff = settings_difference(stored, fingerprint_config)
    if diff:
        how = (f"migrate {index!r} into a new index (`es-simhash migrate`) to fingerprint it again"
               if stored.get("fingerprint_version") != fingerprint_config.get("fingerprint_version")
               else "use the same IDF table (--idf) and options, or a new index")
        raise ElasticError(f"index {index!r} holds fingerprints made with other settings: {diff}: {how}")


def read_lookup_keys(client, index: str, url: str = "") -> LookupKeys:
    """The lookup keys recorded in an index's mapping (``_meta.lookup``): the four segments when none are recorded,
    the default keys when the index does not exist yet."""
    with elastic_errors(url):
        meta = _mapping_meta(client, index)
    return DEFAULT_KEYS if meta is None else LookupKeys.from_meta(meta.get("lookup"))


def _mapping_meta(client, index: str) -> dict[str, Any] | None:
    """The ``_meta`` of ``index``'s mapping (``{}`` when it has none); ``None`` when the index does not exist."""
    try:
        mapping = client.indices.get_mapping(index=index)
    except Exception as exc:
        if api_status(exc) != 404:
            raise
        return None
    return next(iter(mapping.values()))["mappings"].get("_meta", {})
