"""The partition template of an alias over partitions, without a node: what it takes from the write index (the
whole mapping; shard, replica, refresh, merge and field-limit settings and the lifecycle policy attached to it, never
what a lifecycle sets on one partition or what names it), its pattern and its priority."""

from __future__ import annotations

from typing import Any

from es_simhash.index.elastic.admin import (PARTITION_PRIORITY, install_partition_template, partition_settings,
                                            partition_template_name)
from es_simhash.index.elastic.schema import index_template

WRITE_SETTINGS = {
    "index.number_of_shards": "1",
    "index.number_of_replicas": "0",
    "index.auto_expand_replicas": "0-1",
    "index.refresh_interval": "1s",
    "index.merge.policy.segments_per_tier": "4",
    "index.mapping.total_fields.limit": "200",
    "index.lifecycle.name": "es-simhash-crawl",
    "index.lifecycle.rollover_alias": "crawl",
    "index.plugins.index_state_management.rollover_alias": "crawl",
    "index.lifecycle.indexing_complete": "true",
    "index.blocks.write": "true",
    "index.creation_date": "1764490000000",
    "index.uuid": "abc",
    "index.provided_name": "crawl-000002",
    "index.version.created": "9000000",
}
MAPPING = {"dynamic": "false", "_meta": {"managed_by": "es-simhash", "fingerprint": {"fingerprint_version": 11}},
           "properties": {"seg0": {"type": "keyword"}, "later_field": {"type": "keyword"}}}


class _Indices:
    def __init__(self) -> None:
        self.templates: dict[str, dict[str, Any]] = {}

    def get_alias(self, name: str) -> dict[str, Any]:
        return {"crawl-000001": {"aliases": {name: {"is_write_index": False}}},
                "crawl-000002": {"aliases": {name: {"is_write_index": True}}}}

    def get_mapping(self, index: str) -> dict[str, Any]:
        return {index: {"mappings": MAPPING}}

    def get_settings(self, index: str, flat_settings: bool) -> dict[str, Any]:
        assert flat_settings
        return {index: {"settings": WRITE_SETTINGS}}

    def put_index_template(self, name: str, **template: Any) -> None:
        self.templates[name] = template

    def get_index_template(self, name: str) -> dict[str, Any]:
        """As the API answers (a missing template: the 404's body, under ``options(ignore_status=404)``)."""
        if name not in self.templates:
            return {"error": {"type": "resource_not_found_exception"}, "status": 404}
        t = dict(self.templates[name])
        meta = t.pop("meta", None)
        return {"index_templates": [{"name": name, "index_template": {**t, **({"_meta": meta} if meta else {})}}]}


class _Client:
    def __init__(self) -> None:
        self.indices = _Indices()

    def options(self, **kw: Any) -> "_Client":
        return self


def test_a_partition_takes_the_write_index_mapping_and_its_lasting_settings_only():
    mapping, settings = partition_settings(_Client(), "crawl-000002")
    assert mapping == MAPPING
    assert settings == {k: v for k, v in WRITE_SETTINGS.items() if k in (
        "index.number_of_shards", "index.number_of_replicas", "index.auto_expand_replicas", "index.refresh_interval",
        "index.merge.policy.segments_per_tier", "index.mapping.total_fields.limit", "index.lifecycle.name",
        "index.lifecycle.rollover_alias", "index.plugins.index_state_management.rollover_alias")}


def test_the_template_matches_rollover_names_only_below_an_index_template_and_apart_from_longer_aliases():
    client = _Client()
    install_partition_template(client, "crawl")
    assert list(client.indices.templates) == ["es-simhash-crawl:partitions"] == [partition_template_name("crawl")]
    template = client.indices.templates["es-simhash-crawl:partitions"]
    assert template["index_patterns"] == ["crawl-0*"]
    assert template["template"]["mappings"] == MAPPING
    assert template["template"]["settings"]["index.lifecycle.name"] == "es-simhash-crawl"
    assert "index.lifecycle.indexing_complete" not in template["template"]["settings"]
    assert template["priority"] == PARTITION_PRIORITY + len("crawl")
    assert PARTITION_PRIORITY + 255 < index_template()["priority"]  # (below an es-simhash index's own, any alias)
    assert PARTITION_PRIORITY + len("crawl-0") != template["priority"]  # (crawl-0-0* overlaps crawl-0*)
