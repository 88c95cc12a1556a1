"""Every exit code README's "Exit codes" section documents, run for every command it applies to, with the one
stderr line an error is. The codes come from the README itself (:func:`documented_codes`): a code added there and
never run here, or run here and not documented there, fails :func:`test_every_documented_code_is_run_for_every_command`.

The runs are in process (``support.run_cli``: the console script's ``main``, real exit codes), against the real
node for the commands that need one; Ctrl-C is a real SIGINT to a real subprocess. The slow runs that already prove
a code elsewhere are referenced by name (:data:`ELSEWHERE`), not run twice.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from support import ROOT, chinese_articles, run_cli

UNREACHABLE = "http://127.0.0.1:1"
NO_SCHEME = "127.0.0.1:9200"


def documented_codes() -> dict[int, str]:
    """README's "## Exit codes" section: each `CODE` and what it says of it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return {int(code): " ".join(what.split()) for code, what in re.findall(r"`(\d+)`\s([^·]+)", section)}


# (command, code, arguments, a fragment of the one stderr line). {crawl}, {empty}, {missing}, {out}, {index} (an
# es-simhash index holding {crawl}), {empty_index} (one holding nothing) and {new} (a fresh name) are filled in.
CASES = [
    # 0: done
    ("fingerprint", 0, ["人民日报评论员文章"], None),
    ("dedup", 0, ["{crawl}", "--report", "{out}/r.jsonl"], None),
    ("fit-idf", 0, ["{crawl}", "-o", "{out}/idf.txt"], None),
    ("init", 0, ["--index", "{index}"], None),
    ("index", 0, ["{crawl}", "--index", "{index}", "--checkpoint", "{out}/c.json"], None),
    ("check", 0, ["{text}", "--index", "{index}"], None),
    ("search", 0, ["人民", "--index", "{index}"], None),
    ("clusters", 0, ["--index", "{index}"], None),
    ("report", 0, ["--index", "{index}", "-o", "{out}/r.html"], None),
    ("explain", 0, ["一段文字", "另一段文字", "--text"], None),
    ("evaluate", 0, ["{labels}", "--no-sweep"], None),
    ("delete", 0, ["no-such-id", "--index", "{index}"], None),
    ("repair", 0, ["--index", "{index}", "--dry-run"], None),
    ("migrate", 0, ["--from", "{index}", "--to", "{new}", "--checkpoint", "{out}/m.json"], None),
    ("version", 0, [], None),
    ("kibana export", 0, ["-o", "{out}/k.ndjson"], None),
    # 1: an error about the world
    ("fingerprint", 1, ["--file", "{missing}"], "file not found"),
    ("dedup", 1, ["{missing}"], "input not found"),
    ("fit-idf", 1, ["{missing}", "-o", "{out}/idf.txt"], "input not found"),
    ("init", 1, ["--idf", "{missing}"], "IDF table not found"),
    ("index", 1, ["{missing}"], "input not found"),
    ("check", 1, ["--file", "{missing}"], "file not found"),
    ("search", 1, ["words", "--es-url", NO_SCHEME], "URL"),
    ("clusters", 1, ["--es-url", NO_SCHEME], "URL"),
    ("report", 1, ["--from-dedup", "{missing}"], "not found"),
    ("explain", 1, ["{missing}", "other"], "no such file"),
    ("evaluate", 1, ["{missing}"], "not found"),
    ("delete", 1, ["--ids", "{missing}"], "not found"),
    ("drop-partition", 1, ["x-000001", "--es-url", NO_SCHEME], "URL"),
    ("repair", 1, ["--es-url", NO_SCHEME], "URL"),
    ("migrate", 1, ["--from", "a", "--to", "b", "--idf", "{missing}"], "IDF table not found"),
    ("kibana import", 1, ["--kibana-url", "localhost:5601"], "Kibana URL"),
    ("kibana export", 1, ["-o", "{out}/no-such-folder/k.ndjson"], "does not exist"),
    # 2: usage errors: an unknown option (every command) ...
    *((command, 2, ["--bogus"], "no such option: --bogus")
      for command in ("fingerprint", "dedup", "fit-idf", "init", "index", "check", "search", "clusters", "report",
                      "explain", "evaluate", "delete", "drop-partition", "repair", "migrate", "version",
                      "kibana import",
                      "kibana export")),
    ("", 2, ["dedupe"], "no such command 'dedupe'; did you mean 'dedup'?"),
    ("kibana", 2, ["imprt"], "no such command 'imprt'"),
    # ... a missing argument or text ...
    ("fingerprint", 2, [], "no text to fingerprint"),
    ("dedup", 2, [], "missing argument 'INPUTS...' (es-simhash dedup --help)"),
    ("fit-idf", 2, ["{crawl}"], "missing option --output/-o (es-simhash fit-idf --help)"),
    ("index", 2, [], "missing argument 'INPUTS...'"),
    ("check", 2, [], "no text to check"),
    ("search", 2, [], "missing argument 'query'"),
    ("search", 2, [""], "no query"),
    ("explain", 2, ["-", "-"], "both -"),
    ("evaluate", 2, [], "missing argument 'LABELS'"),
    ("delete", 2, [], "no ids given"),
    ("drop-partition", 2, [], "missing argument 'partition'"),
    ("migrate", 2, ["--to", "b"], "missing option --from"),
    ("migrate", 2, ["--from", "a", "--to", "a"], "the same index"),
    # ... and a value an option does not take
    ("dedup", 2, ["{crawl}", "-k", "99"], "invalid value for -k/--max-distance: 99 is not a whole number from 0 to 16"),
    ("dedup", 2, ["{crawl}", "--encoding", "bogus"],
     "invalid value for --encoding: 'bogus' is not a codec name; use utf-8, auto, gb18030, big5 or another Python "
     "codec"),
    ("dedup", 2, ["{crawl}", "--html", "bogus"], "invalid value for --html: 'bogus' is not a markup mode"),
    ("dedup", 2, ["{crawl}", "--lookup", "bogus"], "invalid value for --lookup: 'bogus' is not a lookup-key spec"),
    ("dedup", 2, ["{crawl}", "--workers", "many"], "invalid value for --workers: 'many' is not a whole number"),
    ("fit-idf", 2, ["{crawl}", "-o", "{out}/idf.txt", "--min-df", "0"], "invalid value for --min-df"),
    ("fit-idf", 2, ["{crawl}", "-o", "{out}/idf.txt", "--encoding", "bogus"], "invalid value for --encoding"),
    ("init", 2, ["--lookup", "tables:3:0"], "invalid value for --lookup: 'tables:3:0'"),
    ("init", 2, ["--index", "UPPER"], "invalid value for --index: 'UPPER' is not a valid index name"),
    ("index", 2, ["{crawl}", "--batch-size", "0"], "invalid value for --batch-size: 0 is not a whole number of 1"),
    ("index", 2, ["{crawl}", "--retry-for", "-1"], "invalid value for --retry-for"),
    ("index", 2, ["{crawl}", "--rollover-age", "30x"], "invalid value for --rollover-age: '30x' is no age"),
    ("index", 2, ["{crawl}", "--window", "0"], "invalid value for --window: '0' is neither a number of partitions"),
    ("index", 2, ["{crawl}", "--window", "30x"], "invalid value for --window: '30x' is neither a number of partitions"),
    ("check", 2, ["text", "-n", "0"], "invalid value for -n/--limit"),
    ("clusters", 2, ["-n", "x"], "invalid value for -n/--limit: 'x' is not a whole number from 1 to 10000"),
    ("report", 2, ["-k", "17"], "invalid value for -k/--max-distance"),
    ("explain", 2, ["a", "b", "-k", "-1"], "invalid value for -k/--max-distance"),
    ("evaluate", 2, ["{labels}", "-k", "x"], "invalid value for -k/--max-distance"),
    ("delete", 2, ["x", "-k", "99"], "invalid value for -k/--max-distance"),
    ("drop-partition", 2, ["x-000001", "-k", "99"], "invalid value for -k/--max-distance"),
    ("repair", 2, ["-k", "99"], "invalid value for -k/--max-distance"),
    ("migrate", 2, ["--from", "A", "--to", "b"], "invalid value for --from"),
    ("migrate", 2, ["--from", "a", "--to", "b", "--lookup", "bogus"], "invalid value for --lookup"),
    # 3: Elasticsearch or Kibana out of reach
    ("init", 3, ["--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("index", 3, ["{crawl}", "--index", "{new}", "--es-url", UNREACHABLE, "--retry-for", "0"],
     "cannot reach Elasticsearch"),
    ("check", 3, ["text", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("search", 3, ["words", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("clusters", 3, ["--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("report", 3, ["-o", "{out}/r.html", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("explain", 3, ["a", "b", "--index", "x", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("delete", 3, ["x", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("drop-partition", 3, ["x-000001", "--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("drop-partition", 3, ["{index}-000001", "--index", "{index}"], "not an alias over partitions"),
    ("repair", 3, ["--es-url", UNREACHABLE], "cannot reach Elasticsearch"),
    ("migrate", 3, ["--from", "a", "--to", "b", "--checkpoint", "{out}/m3.json", "--es-url", UNREACHABLE],
     "cannot reach Elasticsearch"),
    ("kibana import", 3, ["--kibana-url", UNREACHABLE], "cannot reach Kibana"),
    ("index", 3, ["{crawl}", "--index", "{foreign}", "--checkpoint", "{out}/f.json"], "not created by es-simhash"),
    # 5: nothing decided
    ("dedup", 5, ["{empty}", "--report", "{out}/r5.jsonl"], "holds no records"),
    ("index", 5, ["{empty}", "--index", "{new}", "--checkpoint", "{out}/c5.json"], "holds no records"),
    ("migrate", 5, ["--from", "{empty_index}", "--to", "{new}", "--checkpoint", "{out}/m5.json"], "nothing"),
]

INTERRUPTED = [  # (command, arguments): waits on stdin when the SIGINT comes
    ("fingerprint", ["-"]),
    ("dedup", ["-", "--no-progress"]),
    ("check", ["-"]),
]

ELSEWHERE = {  # (command, code): the test that runs it (file, function)
    ("index", 4): ("test_faults.py", "test_gives_up_with_a_checkpoint_and_resume_finishes"),
    ("index", 130): ("test_first_hour.py",
                     "test_ctrl_c_during_index_says_what_was_saved_and_resume_reports_its_own_counts"),
    ("dedup", 130): ("test_outputs.py", "test_an_interrupted_dedup_leaves_earlier_outputs_as_they_were"),
    ("drop-partition", 0): ("test_partitions.py",
                            "test_dropping_the_oldest_partition_keeps_the_clusters_of_the_others_whole"),
}

NEEDS_ES = ("init", "index", "check", "search", "clusters", "report", "delete", "drop-partition", "repair", "migrate")

APPLIES = {  # the codes each command can end with (4: the commands that retry; 5: the commands that decide a run)
    "fingerprint": {0, 1, 2, 130}, "dedup": {0, 1, 2, 5, 130}, "fit-idf": {0, 1, 2}, "init": {0, 1, 2, 3},
    "index": {0, 1, 2, 3, 4, 5, 130}, "check": {0, 1, 2, 3, 130}, "search": {0, 1, 2, 3}, "clusters": {0, 1, 2, 3},
    "report": {0, 1, 2, 3}, "explain": {0, 1, 2, 3}, "evaluate": {0, 1, 2}, "delete": {0, 1, 2, 3},
    "drop-partition": {0, 1, 2, 3},
    "repair": {0, 1, 2, 3}, "migrate": {0, 1, 2, 3, 5}, "version": {0, 2},
    "kibana import": {1, 2, 3},  # (0 needs a Kibana: tests/test_kibana_objects.py imports into one when it can)
    "kibana export": {0, 1, 2},
}


def _commands() -> set[str]:
    import typer.main

    from es_simhash.cli import app

    root = typer.main.get_command(app)
    names = set()
    for name, command in root.commands.items():
        subcommands = getattr(command, "commands", None)
        names |= {f"{name} {sub}" for sub in subcommands} if subcommands else {name}
    return names


def test_every_documented_code_is_run_for_every_command():
    documented = documented_codes()
    assert {0, 1, 2, 3, 4, 5, 130} <= set(documented), documented  # (the section still reads as a list of codes)
    assert set(APPLIES) == _commands()  # (a new command gets its row)
    ran = {(command, code) for command, code, _, _ in CASES} | {(c, 130) for c, _ in INTERRUPTED} | set(ELSEWHERE)
    for command, codes in APPLIES.items():
        assert codes <= set(documented), (command, codes - set(documented))
        assert {2} <= codes and not codes - {code for c, code in ran if c == command}, \
            (command, codes - {code for c, code in ran if c == command})
    assert {code for _, code in ran} == set(documented)
    for (_, _), (file, function) in ELSEWHERE.items():
        assert f"\ndef {function}(" in (ROOT / "tests" / file).read_text(encoding="utf-8"), (file, function)


# -- the world the cases run in ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("exit-codes")
    texts = [t for t in chinese_articles() if len(t) > 300][:3]
    crawl = root / "crawl.jsonl"
    crawl.write_text("".join(json.dumps({"id": f"d{i}", "content": t}, ensure_ascii=False) + "\n"
                             for i, t in enumerate([*texts, texts[0]])), encoding="utf-8")
    (root / "empty.jsonl").write_text("")
    labels = root / "labels.jsonl"
    labels.write_text("".join(json.dumps({"a": a, "b": b, "duplicate": d}, ensure_ascii=False) + "\n"
                              for a, b, d in ((texts[0], texts[0], True), (texts[0], texts[1], False))),
                      encoding="utf-8")
    return {"crawl": str(crawl), "empty": str(root / "empty.jsonl"), "missing": str(root / "missing.jsonl"),
            "labels": str(labels), "text": texts[0][:200]}


@pytest.fixture(scope="module")
def indexes(es_url, files, tmp_path_factory):
    from es_simhash.index.elastic import ConnectionSettings, connect

    run = uuid.uuid4().hex[:8]
    names = {"index": f"test-exit-{run}", "empty_index": f"test-exit-empty-{run}", "foreign": f"test-exit-foreign-{run}"}
    work = tmp_path_factory.mktemp("exit-codes-es")
    made = run_cli("index", files["crawl"], "--index", names["index"], "--no-progress", cwd=work, es_url=es_url)
    assert made.returncode == 0, made.stderr.decode()
    assert run_cli("init", "--index", names["empty_index"], es_url=es_url).returncode == 0
    client = connect(ConnectionSettings(url=es_url))
    client.index(index=names["foreign"], document={"title": "not ours"}, refresh=True)
    made_here: list[str] = [*names.values()]
    yield names, made_here
    for name in made_here:
        client.options(ignore_status=404).indices.delete(index=name)
        client.options(ignore_status=404).indices.delete_index_template(name=f"es-simhash-{name}")


def _needs_node(command: str, code: int, args: list[str]) -> bool:
    """Whether a case runs against an index on the node (marked ``es``: the 8.x and OpenSearch passes run it)."""
    return any("index}" in a or "{foreign}" in a for a in args) or (command in NEEDS_ES and code in (0, 5))


@pytest.mark.parametrize("command,code,args,says", [
    pytest.param(c, code, a, says, marks=[pytest.mark.es] if _needs_node(c, code, a) else [],
                 id=f"{c or 'es-simhash'}-{code}-{' '.join(a)[:40]}") for c, code, a, says in CASES])
def test_exit_code(command, code, args, says, files, tmp_path, request):
    values = {**files, "out": str(tmp_path), "new": f"test-exit-new-{uuid.uuid4().hex[:8]}"}
    env = {"ES_URL": None}
    if _needs_node(command, code, args):
        names, made = request.getfixturevalue("indexes")
        values.update(names)
        made.append(values["new"])
        env = {"ES_URL": request.getfixturevalue("es_url")}
    argv = [*command.split(), *(a.format(**values) for a in args)]
    res = run_cli(*argv, cwd=tmp_path, env={**env, "ES_SIMHASH_INDEX": None, "KIBANA_URL": None})
    err = res.stderr.decode()
    assert res.returncode == code, (argv, err)
    if code == 0:
        return
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("es-simhash: error: "), err
    assert says in lines[0], (says, err)
    assert "Traceback" not in err and "Usage:" not in err and not res.stdout


@pytest.mark.skipif(not os.path.exists("/proc/self/wchan"), reason="needs Linux's /proc/PID/wchan")
@pytest.mark.parametrize("command,args", INTERRUPTED)
def test_ctrl_c_is_exit_130_and_one_line(command, args, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "ES_URL": UNREACHABLE}
    proc = subprocess.Popen([sys.executable, "-m", "es_simhash", *command.split(), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env)
    deadline = time.monotonic() + 60
    while "pipe_read" not in Path(f"/proc/{proc.pid}/wchan").read_text():  # (waiting for stdin)
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("es-simhash: ") and "interrupted" in lines[0], err.decode()
