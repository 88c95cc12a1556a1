"""The library stands on its own and the CLI merely wraps it: library exceptions never name a command-line
option (the CLI adds those), the Elasticsearch backend's private names stay inside it, and the statuses worth
retrying are one tuple used by the client, the bulk helper and the backend's own retries."""

import ast
import re
from pathlib import Path

import es_simhash

PACKAGE = Path(es_simhash.__file__).parent
OPTION = re.compile(r"(?<![\w`-])--[a-z][a-z-]+")


def _library_modules():
    return [p for p in PACKAGE.rglob("*.py") if p.name not in ("cli.py", "__main__.py")]


def _text(node) -> str:
    """The literal text of a string or f-string expression (placeholders left out)."""
    parts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return "".join(parts)


def test_library_exceptions_name_no_command_line_option():
    found = []
    for path in _library_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", getattr(node.exc.func, "attr", ""))
                if name == "_Bad":  # a dead letter's reason (a line of the dead-letters file), not an exception
                    continue
                for arg in node.exc.args:
                    if OPTION.search(_text(arg)):
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {_text(arg)[:80]}")
    assert not found, "\n".join(found)


def test_no_module_imports_private_names_of_another():
    found = []
    for path in _library_modules() + [PACKAGE / "cli.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level:
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private and not (path.name == "elastic.py" and node.module == "fingerprint"):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.module} {private}")
    # elastic.py writes fingerprints with fingerprint._hex (one codec); nothing else reaches into a module
    assert not found, "\n".join(found)


def test_retry_statuses_are_one_tuple_passed_everywhere():
    from elasticsearch import helpers

    from es_simhash.index import elastic

    client = elastic.ConnectionSettings(url="http://127.0.0.1:9").client()
    assert tuple(client.transport.retry_on_status) == elastic._RETRY_STATUSES
    if "retry_on_status" in __import__("inspect").signature(helpers.streaming_bulk).parameters:
        assert elastic._bulk_retry_statuses() == {"retry_on_status": elastic._RETRY_STATUSES}
    else:  # clients before 8.16 retry 429 only, and take no argument
        assert elastic._bulk_retry_statuses() == {}


def test_a_connection_error_names_the_setting_and_the_cli_names_the_option():
    from es_simhash.cli import _elastic_message
    from es_simhash.index.elastic import ElasticError, connect, ConnectionSettings

    try:
        connect(ConnectionSettings(url="http://127.0.0.1:9"))
    except ElasticError as exc:
        assert exc.setting == "url" and "--" not in str(exc)
        assert str(exc).endswith("set its URL with ES_URL")
        assert _elastic_message(exc).endswith("set its URL with ES_URL or --es-url")
    else:
        raise AssertionError("nothing listens on port 9")
