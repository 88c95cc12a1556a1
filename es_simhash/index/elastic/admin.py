"""Index administration: names, creating an index with the template, checking it was made by es-simhash with the same
fingerprint settings, aliases, the lookup keys it records, and an alias over partitions rolled over by es-simhash
(:func:`roll_over`) or by the cluster (a lifecycle policy), each new partition shaped by the alias's partition
template (:func:`ensure_partitioned`, :func:`install_partition_template`)."""

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
_ROLLED_NAME = re.compile(r"-\d+$")


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
    was made with (:class:`ElasticIndex` reads them from there). An alias over partitions is checked, extended and
    given its partition template instead (:func:`install_partition_template`). Returns True when the index was
    created. Raises :class:`ElasticError` when the index exists but was built with a different fingerprint
    configuration (its fingerprints would not be comparable).
    """
    validate_index_name(index)
    if client.indices.exists_alias(name=index):  # an alias (over partitions: ensure_partitioned made it)
        _check_and_extend(client, index, fingerprint_config)
        if all(is_partition_of(index, name) for name in client.indices.get_alias(name=index)):
            install_partition_template(client, index)
        return False
    template = _recording(fingerprint_config, replicas, lookup_keys)
    template["index_patterns"] = [index]
    client.indices.put_index_template(name=f"es-simhash-{index}", **template)
    if client.indices.exists(index=index):
        _check_and_extend(client, index, fingerprint_config)
        return False
    return _create_once(client, index)


def _recording(fingerprint_config: dict[str, Any], replicas: int | None, lookup_keys: LookupKeys) -> dict[str, Any]:
    """The shipped index template (:func:`index_template`), its mapping's ``_meta`` recording ``fingerprint_config``
    and ``lookup_keys``, and ``replicas`` (else ``auto_expand_replicas`` 0-1: green on one node, a replica once
    there are two)."""
    template = index_template()
    template["template"]["mappings"]["_meta"]["fingerprint"] = fingerprint_config
    template["template"]["mappings"]["_meta"]["lookup"] = lookup_keys.to_meta()
    if replicas is not None:
        template["template"]["settings"]["index"]["number_of_replicas"] = replicas
        template["template"]["settings"]["index"]["auto_expand_replicas"] = "false"
    return template


def _create_once(client, index: str, **body: Any) -> bool:
    """Create ``index`` (``body``: its settings, mappings, aliases) and wait for it to be yellow: True; False when
    it exists already (another process created it first)."""
    try:
        client.indices.create(index=index, **body)
    except Exception as exc:
        if api_status(exc) != 400 or "resource_already_exists_exception" not in str(exc):
            raise
        return False
    client.cluster.health(index=index, wait_for_status="yellow", timeout="60s")
    return True


def _check_and_extend(client, index: str, fingerprint_config: dict[str, Any]) -> None:
    """Check an existing index (or every partition of an alias) was made with ``fingerprint_config``, and add the
    fields added by later releases to its mapping (an index keeps its mapping; adding a field is allowed)."""
    check_index_config(client, index, fingerprint_config)
    props = index_template()["template"]["mappings"]["properties"]
    client.indices.put_mapping(index=index, properties={k: props[k] for k in ADDED_FIELDS})


def partition_name(alias: str, n: int) -> str:
    """The ``n``-th partition of ``alias`` as Elasticsearch's rollover names it (``crawl-000001``)."""
    return f"{alias}-{n:06d}"


def ensure_partitioned(client, alias: str, fingerprint_config: dict[str, Any], replicas: int | None = None,
                       lookup_keys: LookupKeys = DEFAULT_KEYS) -> bool:
    """Make ``alias`` an alias over partitions, creating its first partition ``alias-000001`` (the alias's write
    index) with the shipped template's settings and mapping, the mapping's ``_meta`` recording
    ``fingerprint_config`` and ``lookup_keys``, and install its partition template
    (:func:`install_partition_template`: a partition made by any rollover, es-simhash's :func:`roll_over` or a
    lifecycle policy's, gets that mapping and those settings) (idempotent). Returns True when the first partition
    was created. An existing alias is checked (every partition: the same fingerprint settings,
    :func:`check_index_config`), the fields of later releases are added to its mapping and its partition template
    is installed again from its write index; an existing index named ``alias`` is an :class:`ElasticError` (an
    index is not turned into partitions)."""
    validate_index_name(alias)
    made = is_alias_name(client, alias)
    if made is False:
        raise ElasticError(f"{alias!r} is an index, not an alias over partitions: partitions rolled over need a new "
                           "index name (or an alias es-simhash made over partitions)")
    if made:
        _check_and_extend(client, alias, fingerprint_config)
        current = write_index(client, alias)
        if not _ROLLED_NAME.search(current):  # (the rollover API names the next index after this one's number)
            raise ElasticError(f"alias {alias!r} writes into {current!r}, whose name does not end in -NUMBER: "
                               "it cannot be rolled over; write into it without rollover")
        if is_partition_of(alias, current):
            install_partition_template(client, alias)
        return False
    body = _recording(fingerprint_config, replicas, lookup_keys)["template"]
    created = _create_once(client, partition_name(alias, 1), settings=body["settings"], mappings=body["mappings"],
                           aliases={alias: {"is_write_index": True}})
    install_partition_template(client, alias)
    return created


PARTITION_PRIORITY = 100
"""A partition template's priority is this plus the length of its alias's name (:func:`install_partition_template`),
below the per-index templates' 500 (``templates/index-template.json``)."""


def partition_template_name(alias: str) -> str:
    """The name of ``alias``'s partition template, ``es-simhash-ALIAS:partitions`` (an index name never holds a
    ``:``, so no index's own template ``es-simhash-INDEX`` is named so)."""
    return f"es-simhash-{alias}:partitions"


def install_partition_template(client, alias: str) -> None:
    """Install (or replace) the composable index template that shapes every next partition of ``alias``, made by
    whichever rollover: es-simhash's (:func:`roll_over`) or the cluster's (a lifecycle policy, or anyone's bare
    ``POST ALIAS/_rollover``, which carries no mapping). It holds the write index's mapping (its ``_meta``:
    fingerprint settings and lookup keys; the fields added since it was made) and the settings a partition
    carries (:func:`partition_settings`: shards, replicas, merges, and the lifecycle policy attached to the write
    index).

    Its pattern is ``ALIAS-0*``: the names rollover gives (``crawl-000002``; six digits, so up to the 99,999th
    partition), not ``ALIAS-*`` (that would also shape an index named ``crawl-test``). Its priority is
    :data:`PARTITION_PRIORITY` plus the length of the alias's name: below the 500 of an es-simhash index's own
    template (named after the index alone, so an es-simhash index named ``crawl-0a`` keeps its own template,
    though ``crawl-0*`` matches it too), and different for two aliases whose patterns overlap (``crawl-0*`` and
    ``crawl-0-0*``: Elasticsearch refuses two templates of one priority matching one name), the longer name's
    higher (its partitions get their own alias's template). A template of the user's matching the partitions
    with a higher priority replaces this one (templates do not merge): the partitions then lack es-simhash's
    mapping; one with the same priority is an :class:`ElasticError` naming it."""
    mapping, settings = partition_settings(client, write_index(client, alias))
    name, priority = partition_template_name(alias), PARTITION_PRIORITY + len(alias)
    known = recorded_partitions(client, alias)
    meta = {} if known is None else {"meta": {"partitions": known}}  # (kept: see record_partitions)
    try:
        client.indices.put_index_template(name=name, index_patterns=[f"{alias}-0*"], priority=priority,
                                          template={"settings": settings, "mappings": mapping}, **meta)
    except Exception as exc:
        found = _SAME_PRIORITY.search(str(exc))
        if api_status(exc) != 400 or not found:
            raise
        raise ElasticError(f"index template {found.group(1)!r} has priority {priority} and matches partitions of "
                           f"{alias!r} ({alias}-0*), as es-simhash's template {name!r} does: give it another "
                           "priority") from exc


def recorded_partitions(client, alias: str) -> list[str] | None:
    """The partitions of ``alias`` as :func:`record_partitions` last recorded them (in its partition template's
    ``_meta``); ``None`` when none are recorded (no template, or one installed before partitions were recorded)."""
    resp = client.options(ignore_status=404).indices.get_index_template(name=partition_template_name(alias))
    found = resp.get("index_templates") or []
    parts = (found[0]["index_template"].get("_meta") or {}).get("partitions") if found else None
    return [str(p) for p in parts] if isinstance(parts, list) else None


def record_partitions(client, alias: str, partitions: list[str]) -> None:
    """Record ``partitions`` as those of ``alias`` now (its partition template's ``_meta.partitions``; the template
    is installed first when it is missing): a partition recorded and no longer there later was deleted by
    someone else than es-simhash (:meth:`~es_simhash.index.elastic.ElasticIndex.vanished_partitions`)."""
    name = partition_template_name(alias)
    resp = client.options(ignore_status=404).indices.get_index_template(name=name)
    found = resp.get("index_templates") or []
    if not found:
        install_partition_template(client, alias)
        found = client.indices.get_index_template(name=name)["index_templates"]
    body = found[0]["index_template"]
    if (body.get("_meta") or {}).get("partitions") == sorted(partitions):
        return
    client.indices.put_index_template(
        name=name, index_patterns=body["index_patterns"], priority=body["priority"],
        template=body.get("template", {}), meta={**(body.get("_meta") or {}), "partitions": sorted(partitions)})


_SAME_PRIORITY = re.compile(r"matching patterns from existing templates \[([^\]]+)\]")


_CARRIED_SETTINGS = ("index.number_of_shards", "index.number_of_replicas", "index.auto_expand_replicas",
                     "index.refresh_interval", "index.max_terms_count", "index.mapping.total_fields.limit",
                     "index.lifecycle.name", "index.lifecycle.rollover_alias",
                     "index.plugins.index_state_management.rollover_alias")
_CARRIED_PREFIXES = ("index.merge.",)


def partition_settings(client, index: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(mapping, settings)`` a next partition takes from the partition ``index``: its whole mapping, and its
    shard, replica, refresh, merge and field-limit settings and the lifecycle policy attached to it
    (Elasticsearch's ``index.lifecycle.name`` and ``index.lifecycle.rollover_alias``, OpenSearch's
    ``plugins.index_state_management.rollover_alias``), as flat settings."""
    mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    got = client.indices.get_settings(index=index, flat_settings=True)[index]["settings"]
    settings = {k: v for k, v in got.items() if k in _CARRIED_SETTINGS or k.startswith(_CARRIED_PREFIXES)}
    return mapping, settings


def is_partition_of(alias: str, name: str) -> bool:
    """Whether ``name`` is named as a partition of ``alias`` (``ALIAS-`` and a number, as rollover names them)."""
    return name.startswith(f"{alias}-") and name[len(alias) + 1:].isdigit()


def partitions(client, alias: str) -> list[str]:
    """The concrete indexes behind ``alias``, sorted."""
    return sorted(client.indices.get_alias(name=alias))


def detach(client, alias: str, partition: str) -> bool:
    """Take ``partition`` out of ``alias`` (one alias request); True when it was behind it. The write index is
    refused (:class:`ElasticError`: roll over first)."""
    behind = client.indices.get_alias(name=alias)
    if partition not in behind:
        return False
    if partition == _write_index_of(behind, alias):
        raise ElasticError(f"{partition!r} is the partition {alias!r} writes into: it cannot be dropped (roll the "
                           "alias over first)")
    client.indices.update_aliases(actions=[{"remove": {"index": partition, "alias": alias}}])
    return True


def write_index(client, alias: str) -> str:
    """The write index of ``alias`` (the one its ``is_write_index`` names, else its only index)."""
    return _write_index_of(client.indices.get_alias(name=alias), alias)


def _write_index_of(found: dict[str, Any], alias: str) -> str:
    """:func:`write_index` of ``found``, the answer of the get-alias request for ``alias``."""
    for name, body in found.items():
        if body.get("aliases", {}).get(alias, {}).get("is_write_index"):
            return name
    if len(found) == 1:
        return next(iter(found))
    raise ElasticError(f"alias {alias!r} has no write index: point it at one with is_write_index")


ROLLOVER_AGE = re.compile(r"[1-9][0-9]*(d|h|m|s)")
"""A rollover age as the rollover API's ``max_age`` takes it, in days, hours, minutes or seconds (``30d``)."""


_SECONDS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


def age_seconds(age: str) -> int:
    """The seconds of an age written as :data:`ROLLOVER_AGE` reads it (``30d``: 2,592,000); a ``ValueError`` for
    anything else."""
    if not ROLLOVER_AGE.fullmatch(age):
        raise ValueError(f"{age!r} is no age: give days, hours, minutes or seconds (30d, 12h, 90m, 45s)")
    return int(age[:-1]) * _SECONDS[age[-1]]


def creation_times(client, alias: str) -> dict[str, float]:
    """When each partition behind ``alias`` was created (``index.creation_date``), in seconds since the epoch."""
    got = client.indices.get_settings(index=alias, name="index.creation_date", flat_settings=True)
    return {name: int(body["settings"]["index.creation_date"]) / 1000 for name, body in got.items()}


def roll_over(client, alias: str, max_docs: int | None = None, max_age: str | None = None) -> str | None:
    """Roll ``alias`` over when its write index holds ``max_docs`` documents or more, or was created ``max_age``
    ago or longer (:data:`ROLLOVER_AGE`): one rollover request (the API's ``conditions``, either met) that creates
    the next partition (``crawl-000002`` after ``crawl-000001``) as the new write index, with the current write
    index's mapping (its ``_meta``: fingerprint settings, lookup keys) and settings (:func:`partition_settings`;
    the same the partition template gives a partition made by a rollover without them). Returns the new
    partition's name, ``None`` when no condition is met or another writer's rollover overtook this one (the next
    batch reads the conditions again)."""
    conditions: dict[str, Any] = {}
    if max_docs is not None:
        conditions["max_docs"] = max_docs
    if max_age is not None:
        conditions["max_age"] = max_age
    if not conditions:
        raise ValueError("roll_over: give max_docs or max_age")
    mapping, settings = partition_settings(client, write_index(client, alias))
    try:
        resp = client.indices.rollover(alias=alias, conditions=conditions, mappings=mapping, settings=settings)
    except Exception as exc:
        if _ROLLED_BY_ANOTHER.search(str(exc)):
            return None  # (another writer rolled the alias over at the same moment: the next batch checks again)
        raise
    if not resp.get("rolled_over"):
        return None
    new = str(resp["new_index"])
    client.cluster.health(index=new, wait_for_status="yellow", timeout="60s")
    return new


_ROLLED_BY_ANOTHER = re.compile(r"Concurrent modification of alias|resource_already_exists_exception")
"""How a rollover that another writer's rollover overtook is refused (OpenSearch: a 500 naming the concurrent
modification of the alias; either engine: the next partition exists already)."""


def is_alias_name(client, name: str) -> bool | None:
    """Whether ``name`` is an alias (True) or an index (False); ``None`` when it is neither yet. Asked in this
    order, so an alias that another writer makes meanwhile is never taken for an index: the exists API answers True
    for an alias as for an index, and an index never becomes an alias."""
    if not client.indices.exists(index=name):
        return None
    return bool(client.indices.exists_alias(name=name))


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
        if is_alias_name(client, alias) is False:
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
    for name, body in sorted(mapping.items()):  # (an alias: each of its partitions)
        meta = body["mappings"].get("_meta", {})
        which = repr(index) if name == index else f"{name!r} (behind {index!r})"
        if meta.get("managed_by") != "es-simhash":
            raise ElasticError(f"index {which} exists but was not created by es-simhash: pick another index name")
        stored = meta.get("fingerprint") or {}
        diff = settings_difference(stored, fingerprint_config)
        if diff:
            how = (f"migrate {index!r} into a new index (`es-simhash migrate`) to fingerprint it again"
                   if stored.get("fingerprint_version") != fingerprint_config.get("fingerprint_version")
                   else "use the same IDF table (--idf) and options, or a new index")
            raise ElasticError(f"index {which} holds fingerprints made with other settings: {diff}: {how}")


def read_lookup_keys(client, index: str, url: str = "") -> LookupKeys:
    """The lookup keys recorded in an index's mapping (``_meta.lookup``): the four segments when none are recorded,
    the default keys when the index does not exist yet."""
    with elastic_errors(url):
        meta = _mapping_meta(client, index)
    return DEFAULT_KEYS if meta is None else LookupKeys.from_meta(meta.get("lookup"))


def _mapping_meta(client, index: str) -> dict[str, Any] | None:
    """The ``_meta`` of ``index``'s mapping (``{}`` when it has none); ``None`` when the index does not exist. For an
    alias over several indexes: the first partition's, or ``{}`` when any of them was not made by es-simhash (so
    :func:`require_index` refuses an alias over indexes that are not all es-simhash's)."""
    try:
        mapping = client.indices.get_mapping(index=index)
    except Exception as exc:
        if api_status(exc) != 404:
            raise
        return None
    metas = [body["mappings"].get("_meta", {}) for _, body in sorted(mapping.items())]
    return next((m for m in metas if m.get("managed_by") != "es-simhash"), metas[0] if metas else {})
