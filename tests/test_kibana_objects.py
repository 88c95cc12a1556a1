"""Kibana saved objects: valid for Kibana 9 import, internally consistent, and every field they name exists in the
index template (a renamed field fails here, not on a dashboard). The import command against a local HTTP
endpoint that records the request (no Kibana can run here), and the docker-compose one-shot."""

import base64
import http.server
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from es_simhash.results import kibana
from es_simhash.index.elastic import index_template
from support import run_cli

ROOT = Path(__file__).resolve().parents[1]
NDJSON = ROOT / "templates" / "kibana" / kibana.NDJSON_NAME
TYPES = {"index-pattern", "search", "visualization", "lens", "dashboard"}
# attributes Kibana stores as JSON *strings* (per type)
JSON_STRINGS = {
    "index-pattern": ["fields", "fieldAttrs", "fieldFormatMap", "runtimeFieldMap", "typeMeta", "sourceFilters"],
    "visualization": ["visState", "uiStateJSON"],
    "dashboard": ["panelsJSON", "optionsJSON"],
}
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
KQL_FIELD = re.compile(r"(?:^|\s|\()(?:not\s+)?([A-Za-z_][\w.]*)\s*:")


@pytest.fixture(scope="module")
def objects():
    return [json.loads(line) for line in NDJSON.read_text(encoding="utf-8").splitlines()]


def mapping_fields(template=None) -> dict[str, str]:
    """field path -> type, multi-fields included (title.keyword)."""
    props = (template or index_template())["template"]["mappings"]["properties"]
    out = {}
    for name, spec in props.items():
        out[name] = spec["type"]
        for sub, subspec in spec.get("fields", {}).items():
            out[f"{name}.{sub}"] = subspec["type"]
    return out


def referenced_fields(objects) -> list[tuple[str, str, str]]:
    """(object, field, how it is used) for every field name the saved objects reference."""
    refs = []

    def kql(where, query):
        refs.extend((where, f, "query") for f in KQL_FIELD.findall(query or ""))

    def lens(where, attrs):
        state = attrs["state"]
        kql(where, state["query"]["query"])
        for layer in state["datasourceStates"]["formBased"]["layers"].values():
            for col in layer["columns"].values():
                if col.get("sourceField") not in (None, "___records___"):
                    refs.append((where, col["sourceField"], col["operationType"]))
                if col.get("params", {}).get("sortField"):
                    refs.append((where, col["params"]["sortField"], "sort"))
                if col.get("filter"):
                    kql(where, col["filter"]["query"])
                formula = col.get("params", {}).get("formula")
                if formula:
                    for q in re.findall(r"kql='([^']*)'", formula):
                        kql(where, q)

    def vega_body_fields(node, where):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "field" and isinstance(v, str):
                    refs.append((where, v, "aggregation"))
                else:
                    vega_body_fields(v, where)
        elif isinstance(node, list):
            for v in node:
                vega_body_fields(v, where)

    for o in objects:
        a, where = o["attributes"], f"{o['type']}:{o['id']}"
        if o["type"] == "index-pattern":
            refs.append((where, a["timeFieldName"], "date_histogram"))
        if "kibanaSavedObjectMeta" in a:
            kql(where, json.loads(a["kibanaSavedObjectMeta"]["searchSourceJSON"])["query"]["query"])
        if o["type"] == "search":
            refs += [(where, c, "column") for c in a["columns"]]
            refs += [(where, f, "sort") for f, _ in a["sort"]]
        if o["type"] == "lens":
            lens(where, a)
        if o["type"] == "visualization":
            vis = json.loads(a["visState"])
            if vis["type"] == "vega":
                spec = json.loads(vis["params"]["spec"])
                refs.append((where, spec["data"]["url"]["%timefield%"], "date_histogram"))
                vega_body_fields(spec["data"]["url"]["body"], where)
        if o["type"] == "dashboard":
            for p in json.loads(a["panelsJSON"]):
                if p["type"] == "lens" and "attributes" in p["embeddableConfig"]:
                    lens(f"{where}/{p['panelIndex']}", p["embeddableConfig"]["attributes"])
    return refs


AGGREGATABLE = {"keyword", "integer", "long", "boolean", "date"}


def field_problems(objects, fields: dict[str, str]) -> list[str]:
    problems = []
    for where, field, use in referenced_fields(objects):
        if field not in fields:
            problems.append(f"{where}: {field!r} ({use}) is not in the index template")
        elif use in ("terms", "last_value", "aggregation", "sort", "date_histogram") and fields[field] not in AGGREGATABLE:
            problems.append(f"{where}: {field!r} is {fields[field]}, not aggregatable/sortable ({use})")
        elif use == "date_histogram" and fields[field] != "date":
            problems.append(f"{where}: {field!r} is {fields[field]}, not a date")
    return problems


def test_shipped_ndjson_is_what_the_generator_makes(objects):
    assert NDJSON.read_text(encoding="utf-8") == kibana.ndjson(kibana.saved_objects()), \
        "regenerate with: python -m es_simhash.results.kibana"
    assert {o["type"] for o in objects} == {"index-pattern", "search", "visualization", "dashboard"}


def test_every_object_has_the_import_format_of_kibana_9(objects):
    ids = set()
    for o in objects:
        assert set(o) >= {"id", "type", "attributes", "references", "coreMigrationVersion", "typeMigrationVersion"}
        assert o["type"] in TYPES and (o["type"], o["id"]) not in ids
        ids.add((o["type"], o["id"]))
        assert SEMVER.match(o["coreMigrationVersion"]) and SEMVER.match(o["typeMigrationVersion"])
        assert o["attributes"]["title"]
        for name in JSON_STRINGS.get(o["type"], []):
            assert isinstance(o["attributes"][name], str)
            json.loads(o["attributes"][name])
        if "kibanaSavedObjectMeta" in o["attributes"]:
            src = json.loads(o["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
            assert src["query"]["language"] == "kuery" and src["filter"] == []
            if "indexRefName" in src:  # the data view is a reference, never an id inside the JSON
                assert "index" not in src
                assert any(r["name"] == src["indexRefName"] and r["type"] == "index-pattern"
                           for r in o["references"])
    by_type = {o["type"]: o for o in objects}
    dv = by_type["index-pattern"]["attributes"]
    assert dv["title"] == "es-simhash*" and dv["timeFieldName"] == "crawl_time"
    for o in objects:
        for r in o["references"]:
            assert (r["type"], r["id"]) in ids, f"{o['id']} references a missing {r}"


def test_saved_searches(objects):
    searches = {o["id"]: o["attributes"] for o in objects if o["type"] == "search"}
    near = searches[kibana.NEAR_DUPLICATES_ID]
    assert near["title"] == "es-simhash: near-duplicates"
    assert json.loads(near["kibanaSavedObjectMeta"]["searchSourceJSON"])["query"]["query"] == "is_canonical : false"
    assert {"title", "url", "dup_cluster", "dup_distance", "dup_reason"} <= set(near["columns"])
    browser = searches[kibana.CLUSTER_BROWSER_ID]
    assert browser["sort"][0] == ["dup_cluster", "asc"]


def test_dashboard_panels_and_references_are_consistent(objects):
    dash = next(o for o in objects if o["type"] == "dashboard")
    panels = json.loads(dash["attributes"]["panelsJSON"])
    refs = {r["name"]: r for r in dash["references"]}
    assert len(refs) == len(dash["references"])
    indexes = [p["panelIndex"] for p in panels]
    assert len(set(indexes)) == len(indexes)
    cells = set()
    for p in panels:
        g = p["gridData"]
        assert g["i"] == p["panelIndex"] and g["x"] >= 0 and g["x"] + g["w"] <= 48 and g["h"] > 0
        cell = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & cell, f"panel {p['panelIndex']} overlaps another"
        cells |= cell
        if "panelRefName" in p:  # by reference
            ref = refs[f"{p['panelIndex']}:{p['panelRefName']}"]
            assert ref["type"] == p["type"]
        else:  # by-value Lens: every layer has its data view reference, inside and on the dashboard
            attrs = p["embeddableConfig"]["attributes"]
            assert p["type"] == "lens" and attrs["type"] == "lens"
            state = attrs["state"]
            for layer_id, layer in state["datasourceStates"]["formBased"]["layers"].items():
                name = f"indexpattern-datasource-layer-{layer_id}"
                assert any(r["name"] == name and r["id"] == kibana.DATA_VIEW_ID for r in attrs["references"])
                assert refs[f"{p['panelIndex']}:{name}"]["id"] == kibana.DATA_VIEW_ID
                assert layer["columnOrder"] and set(layer["columnOrder"]) == set(layer["columns"])
                for col in layer["columns"].values():  # formula/math columns point at columns of the layer
                    assert set(col.get("references", [])) <= set(layer["columns"])
                    if col["operationType"] == "terms" and col["params"]["orderBy"]["type"] == "column":
                        assert col["params"]["orderBy"]["columnId"] in layer["columns"]
            vis = state["visualization"]
            accessors = set()
            for lyr in vis.get("layers", []):
                accessors |= {lyr["xAccessor"], *lyr["accessors"], lyr.get("splitAccessor")} - {None}
            accessors |= {c["columnId"] for c in vis.get("columns", [])}
            assert accessors <= set(next(iter(state["datasourceStates"]["formBased"]["layers"].values()))["columns"])
    titles = {p.get("title") or p["panelRefName"] for p in panels}
    for want in ("Top clusters", "Duplicate rate over crawl time", "Hamming distance histogram (duplicates)",
                 "Reasons", "Documents by reason over crawl time", "panel_cluster-sizes", "panel_near-duplicates"):
        assert want in titles


def test_every_referenced_field_exists_in_the_index_template(objects):
    refs = referenced_fields(objects)
    used = {f for _, f, _ in refs}
    # the check sees the fields that matter (so it is not vacuous)
    assert {"crawl_time", "dup_cluster", "dup_reason", "dup_distance", "is_canonical", "title", "title.keyword",
            "url", "dup_of", "doc_id", "indexed_at"} <= used
    assert field_problems(objects, mapping_fields()) == []


@pytest.mark.parametrize("renamed", ["dup_reason", "dup_cluster", "crawl_time", "is_canonical", "dup_distance"])
def test_a_renamed_field_breaks_this_test_not_a_dashboard(objects, renamed):
    template = index_template()
    props = template["template"]["mappings"]["properties"]
    props[renamed + "_v2"] = props.pop(renamed)
    problems = field_problems(objects, mapping_fields(template))
    assert problems and all(renamed in p for p in problems)


def test_a_text_field_in_an_aggregation_is_caught(objects):
    fields = mapping_fields()
    fields["dup_cluster"] = "text"
    assert any("not aggregatable" in p for p in field_problems(objects, fields))


def test_cluster_size_vega_spec_counts_clusters_by_size(objects):
    vis = json.loads(next(o for o in objects if o["id"] == kibana.CLUSTER_SIZES_ID)["attributes"]["visState"])
    assert vis["type"] == "vega" and vis["aggs"] == []
    spec = json.loads(vis["params"]["spec"])
    assert spec["data"]["url"]["%context%"] is True and spec["data"]["url"]["index"] == "es-simhash*"
    terms = spec["data"]["url"]["body"]["aggs"]["clusters"]["terms"]
    assert terms["field"] == "dup_cluster" and terms["min_doc_count"] == 2
    assert "script" not in json.dumps(spec)


def test_import_pattern_rewrites_the_data_view_and_the_vega_query():
    objs = kibana.load_saved_objects("crawl")
    assert objs[0]["attributes"]["title"] == "crawl"
    vis = json.loads(next(o for o in objs if o["type"] == "visualization")["attributes"]["visState"])
    assert json.loads(vis["params"]["spec"])["data"]["url"]["index"] == "crawl"
    assert kibana.load_saved_objects()[0]["attributes"]["title"] == "es-simhash*"  # the shipped file untouched


def test_each_exported_data_view_is_named_after_its_pattern(tmp_path):
    """`kibana export --index PATTERN` for two patterns: two data views, each named (in Kibana's data view picker)
    and titled after its own pattern, with ids of their own, so both files import side by side."""
    exported = {}
    for pattern in ("crawl-2026-*", "news"):
        res = run_cli("kibana", "export", "--index", pattern, "-o", tmp_path / f"{pattern[:4]}.ndjson")
        assert res.returncode == 0, res.stderr.decode()
        exported[pattern] = [json.loads(x) for x in (tmp_path / f"{pattern[:4]}.ndjson").read_text().splitlines()]
    views = {p: next(o for o in objs if o["type"] == "index-pattern") for p, objs in exported.items()}
    assert {p: (v["attributes"]["name"], v["attributes"]["title"]) for p, v in views.items()} == {
        "crawl-2026-*": ("crawl-2026-*", "crawl-2026-*"), "news": ("news", "news")}
    assert not {o["id"] for o in exported["crawl-2026-*"]} & {o["id"] for o in exported["news"]}
    shipped = next(o for o in kibana.load_saved_objects() if o["type"] == "index-pattern")
    assert shipped["attributes"]["name"] == shipped["attributes"]["title"] == "es-simhash*"


def test_objects_for_two_patterns_do_not_replace_each_other():
    """Importing for a second index pattern adds a second set of objects (Kibana keys them by id), each naming
    only its own: its data view, and references to its own objects."""
    shipped, a, b = kibana.load_saved_objects(), kibana.load_saved_objects("crawl-a*"), kibana.load_saved_objects("b")
    ids = [{o["id"] for o in objs} for objs in (shipped, a, b)]
    assert len(ids[0] | ids[1] | ids[2]) == 3 * len(shipped)
    assert [o["id"] for o in kibana.load_saved_objects("crawl-a*")] == [o["id"] for o in a]  # (the same each time)
    for objs, pattern in ((a, "crawl-a*"), (b, "b")):
        own = {o["id"] for o in objs}
        text = json.dumps(objs)
        # (no reference to the default set: an id is followed by its quote, escaped or not, or by a suffix)
        assert not re.search("|".join(re.escape(o["id"]) + r'\\*"' for o in shipped), text), pattern
        dashboard = next(o for o in objs if o["type"] == "dashboard")
        assert {r["id"] for r in dashboard["references"]} <= own and pattern in dashboard["attributes"]["title"]


# -- the import command ----------------------------------------------------------------------------------
class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list = []
    status = 200
    answer: dict = {}

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        raw = json.dumps(self.answer).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *a):
        pass


@pytest.fixture
def fake_kibana():
    _Recorder.requests = []
    _Recorder.status, _Recorder.answer = 200, {"success": True, "successCount": 5}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder
    server.shutdown()


def _multipart_file(headers, body):
    boundary = re.search(r"boundary=(\S+)", headers["content-type"]).group(1).encode()
    part = body.split(b"--" + boundary)[1]
    head, content = part.split(b"\r\n\r\n", 1)
    assert b'name="file"' in head and b'filename="es-simhash.ndjson"' in head
    return [json.loads(line) for line in content.rstrip(b"\r\n").decode().splitlines()]


def test_cli_kibana_import_posts_the_ndjson_with_xsrf_and_credentials(fake_kibana, tmp_path):
    url, rec = fake_kibana
    env = {"PATH": "/usr/bin:/bin", "ES_API_KEY": "a2V5OnNlY3JldA=="}
    res = subprocess.run([sys.executable, "-m", "es_simhash", "kibana", "import", "--kibana-url", url,
                          "--index", "crawl*", "--space", "team-a"], capture_output=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr.decode()
    assert "imported 5 saved objects" in res.stderr.decode() and "a2V5" not in res.stderr.decode()
    path, headers, body = rec.requests[0]
    assert path == "/s/team-a/api/saved_objects/_import?overwrite=true"
    assert headers["kbn-xsrf"] and headers["authorization"] == "ApiKey a2V5OnNlY3JldA=="
    sent = _multipart_file(headers, body)
    assert [o["id"] for o in sent] == [o["id"] for o in kibana.load_saved_objects("crawl*")]
    assert [o["type"] for o in sent] == [o["type"] for o in kibana.saved_objects()]
    assert sent[0]["attributes"]["title"] == "crawl*"
    dashboard = next(o for o in sent if o["type"] == "dashboard")
    assert f"/app/dashboards#/view/{dashboard['id']}" in res.stderr.decode()


def test_import_basic_auth_and_one_line_errors(fake_kibana):
    url, rec = fake_kibana
    kibana.import_saved_objects(url, username="elastic", password="pw")
    assert rec.requests[-1][1]["authorization"] == "Basic ZWxhc3RpYzpwdw=="
    rec.status, rec.answer = 401, {"statusCode": 401, "message": "unauthorized"}
    with pytest.raises(kibana.KibanaError, match=r"rejected the credentials \(401\)"):
        kibana.import_saved_objects(url, username="elastic", password="wrong")
    rec.status, rec.answer = 200, {"success": False, "successCount": 4, "errors": [
        {"id": "es-simhash-dashboard", "type": "dashboard", "error": {"type": "missing_references"}}]}
    with pytest.raises(kibana.KibanaError, match="1 failed: dashboard es-simhash-dashboard: missing_references"):
        kibana.import_saved_objects(url)


def test_cli_kibana_unreachable_is_one_line_and_exit_3():
    res = subprocess.run([sys.executable, "-m", "es_simhash", "kibana", "import", "--kibana-url",
                          "http://user:secret@127.0.0.1:9"], capture_output=True, timeout=120)
    err = res.stderr.decode().strip()
    assert res.returncode == 3 and err.count("\n") == 0
    assert "cannot reach Kibana at http://127.0.0.1:9" in err and "secret" not in err


def test_docker_compose_imports_the_objects_after_kibana_is_healthy():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    setup = compose["services"]["kibana-setup"]
    assert setup["depends_on"]["kibana"]["condition"] == "service_healthy"
    assert setup["image"] == compose["services"]["kibana"]["image"]
    mount = next(v for v in setup["volumes"] if v.startswith("./templates/kibana:"))
    target = mount.split(":")[1]
    script = setup["command"][0]
    assert f"file=@{target}/{kibana.NDJSON_NAME}" in script
    assert "/api/saved_objects/_import?overwrite=true" in script and "kbn-xsrf" in script
    assert (ROOT / "templates/kibana" / kibana.NDJSON_NAME).exists()


def test_import_takes_credentials_from_the_es_simhash_config_file(fake_kibana, tmp_path, monkeypatch):
    """Kibana's import reads the same connection settings as the Elasticsearch commands (config file, then
    environment, then arguments), not the environment alone."""
    url, rec = fake_kibana
    config = tmp_path / "config.toml"
    config.write_text('[elasticsearch]\nurl = "http://127.0.0.1:9"\nusername = "kib"\npassword = "from-file"\n')
    config.chmod(0o600)  # (a file holding a password: others may not read it)
    for name in ("ES_API_KEY", "ES_USERNAME", "ES_PASSWORD", "ES_CA_CERTS", "KIBANA_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ES_SIMHASH_CONFIG", str(config))
    monkeypatch.setenv("ES_URL", "not a url")  # Kibana's import does not need (or check) the Elasticsearch URL
    kibana.import_saved_objects(url)
    assert rec.requests[-1][1]["authorization"] == "Basic " + base64.b64encode(b"kib:from-file").decode()
    monkeypatch.setenv("ES_PASSWORD", "from-env")  # the environment wins over the file, arguments over both
    kibana.import_saved_objects(url)
    assert rec.requests[-1][1]["authorization"] == "Basic " + base64.b64encode(b"kib:from-env").decode()
    kibana.import_saved_objects(url, api_key="YXJn")
    assert rec.requests[-1][1]["authorization"] == "ApiKey YXJn"
    env = {"PATH": "/usr/bin:/bin", "ES_SIMHASH_CONFIG": str(config)}
    res = subprocess.run([sys.executable, "-m", "es_simhash", "kibana", "import", "--kibana-url", url],
                         capture_output=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr.decode()
    assert rec.requests[-1][1]["authorization"] == "Basic " + base64.b64encode(b"kib:from-file").decode()
    config.write_text("[elasticsearch]\nnope = 1\n")
    res = subprocess.run([sys.executable, "-m", "es_simhash", "kibana", "import", "--kibana-url", url],
                         capture_output=True, env=env, timeout=120)
    assert res.returncode == 1 and "unknown [elasticsearch] keys" in res.stderr.decode()
