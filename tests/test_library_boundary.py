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
    """Every module of the library: all of the package but the command line (``cli/``) and ``__main__``."""
    return [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:-1]
            and p.name != "__main__.py"]


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
    """No module of es_simhash imports a private name (``_x``) of another (relative or absolute imports), nor a
    private module but the native core's one door (``es_simhash._native``)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if not (node.level or node.module == "es_simhash" or node.module.startswith("es_simhash.")):
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
                       and a.name != "_native"]
            private += [part for part in node.module.split(".") if part.startswith("_") and part != "_native"]
            if private:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.module} {private}")
    assert not found, "\n".join(found)


def test_retry_statuses_are_one_tuple_passed_everywhere():
    """Both engines' clients retry the statuses the backend's own retries take (one tuple)."""
    from es_simhash.index.elastic import ConnectionSettings
    from es_simhash.index.elastic.errors import RETRY_STATUSES

    settings = ConnectionSettings(url="http://127.0.0.1:9")
    assert tuple(settings.client().transport.retry_on_status) == RETRY_STATUSES
    assert tuple(settings.opensearch_client().raw.transport.retry_on_status) == RETRY_STATUSES


def test_a_connection_error_names_the_setting_and_the_cli_names_the_option():
    from es_simhash.cli.connection import elastic_message
    from es_simhash.index.elastic import ElasticError, connect, ConnectionSettings

    try:
        connect(ConnectionSettings(url="http://127.0.0.1:9"))
    except ElasticError as exc:
        assert exc.setting == "url" and "--" not in str(exc)
        assert str(exc).endswith("set its URL with ES_URL")
        assert elastic_message(exc).endswith("set its URL with ES_URL or --es-url")
    else:
        raise AssertionError("nothing listens on port 9")


def test_the_front_door_serves_a_whole_script_and_loads_nothing_heavy_until_asked(tmp_path):
    """``from es_simhash import ...`` gives what a script needs to fingerprint, dedup in memory and recheck, with
    the answers a user expects (a reprint joins its original's cluster); ``import es_simhash`` alone loads no numpy."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import sys\n"
        "import es_simhash\n"
        "assert 'numpy' not in sys.modules, 'import es_simhash loaded numpy'\n"
        "from es_simhash import DedupEngine, DefaultRule, Document, Fingerprinter, MemoryIndex, recheck\n"
        "a = '国家统计局今天发布数据，前三季度全国居民人均可支配收入同比增长百分之五点二，消费支出稳步回升。' * 3\n"
        "b = a.replace('今天', '今日')\n"
        "c = '天文台预计明天有大雨，市民出行请携带雨具，注意交通安全，远离低洼地带和山区河道。' * 3\n"
        "engine = DedupEngine(MemoryIndex(), Fingerprinter(), DefaultRule.rechecked())\n"
        "rs = {r.id: r for r in engine.process([Document('a', a), Document('b', b), Document('c', c)])}\n"
        "assert recheck(engine.index, engine.rule).changes == []\n"
        "print(rs['b'].duplicate, rs['b'].cluster, rs['c'].duplicate, rs['c'].cluster)\n",
        encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "a", "False", "c"]


def test_every_name_the_front_door_lists_is_there():
    missing = [n for n in es_simhash.__all__ if getattr(es_simhash, n, None) is None]
    assert not missing and {"DedupEngine", "ElasticIndex", "MemoryIndex", "Fingerprinter", "DefaultRule"} <= set(
        es_simhash.__all__)
