"""Start-up: the native segmenter's dictionary is built on a background thread ahead of the first text
(``es_simhash_native.start_segmenter``, ``fingerprint.start_native_segmenter``), and that changes nothing.

Each check runs in a fresh interpreter: the dictionary is built once per process, so only a new process shows
the build racing the first texts (or a fork).
"""

from __future__ import annotations

import ast
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from es_simhash.fingerprint import native_core as N


@pytest.fixture(scope="module")
def native():
    module, reason = N.native_module()
    if module is None:
        pytest.skip(f"native fingerprint core unavailable: {reason}")
    if not hasattr(module, "start_segmenter"):
        pytest.skip("this native core predates start_segmenter (rebuild: pip install ./native)")
    return module


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "ES_SIMHASH_ENGINE"}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env=environ)


def _dedup_two_records(probe: str, tmp_path) -> subprocess.CompletedProcess:
    """``probe`` (Python code that runs the command) run as ``dedup`` of a two-record file, one a duplicate of the
    other, reported to ``tmp_path / "r.jsonl"``."""
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": "a", "text": "今天天气很好"}\n{"id": "b", "text": "今天天气很好！"}\n', encoding="utf-8")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(probe), "dedup", str(data), "--no-progress",
                           "--report", str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "ES_SIMHASH_ENGINE"})


TEXTS = repr([
    "人民日报评论员：坚持以人民为中心的发展思想，推动高质量发展取得新成效。",
    "来源：人民网\n人民日报评论员: 坚持以人民为中心的发展思想, 推动高质量发展取得新成效。\n（责任编辑：王敏）",
    "The quick brown fox jumps over the lazy dog, version 2.0 of the test.",
    "今天天气很好",
    "",
] * 40)  # (one line, pasted into the scripts below)


def test_background_build_gives_the_reference_fingerprints(native):
    """Fingerprints taken while the dictionary is still being built (the first batch races it) equal the
    pure-Python engine's, and the build starts once per process."""
    res = _run(f"""
        import es_simhash_native
        from es_simhash.fingerprint.fingerprinter import Fingerprinter, start_native_segmenter
        texts = {TEXTS}
        assert start_native_segmenter() is True
        assert start_native_segmenter() is False and es_simhash_native.start_segmenter() is False
        nat = Fingerprinter(engine="native")
        got = nat.fingerprint_many(texts)  # (at once: the build may well be under way)
        assert nat.engine == "native"
        assert got == Fingerprinter(engine="python").fingerprint_many(texts)
        print("ok")
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def test_fingerprinter_starts_the_build_and_python_engine_does_not(native):
    res = _run("""
        import es_simhash_native
        from es_simhash.fingerprint import Fingerprinter
        Fingerprinter(engine="python")
        first = es_simhash_native.start_segmenter()  # True: the Python engine did not start it
        Fingerprinter()
        print(first, es_simhash_native.start_segmenter())
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "False"]


def test_engine_python_in_the_environment_starts_nothing(native):
    res = _run("""
        import es_simhash_native
        from es_simhash.fingerprint.fingerprinter import Fingerprinter, start_native_segmenter
        Fingerprinter()
        print(start_native_segmenter(), es_simhash_native.start_segmenter())
    """, ES_SIMHASH_ENGINE="python")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_fork_during_the_build_does_not_hang_the_child(native):
    """A child forked right after the build started has a built dictionary (the fork waited for it), not a
    half-built one it would wait on forever."""
    res = _run(f"""
        import os
        import time
        from es_simhash.fingerprint.fingerprinter import Fingerprinter, start_native_segmenter
        texts = {TEXTS}
        assert start_native_segmenter()
        time.sleep(0.02)  # (the build is under way: without the wait at fork, the child would hang)
        pid = os.fork()
        if pid == 0:
            fps = Fingerprinter(engine="native").fingerprint_many(texts)
            os._exit(0 if fps == Fingerprinter(engine="python").fingerprint_many(texts) else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "0"


def test_cli_starts_the_build_for_commands_that_segment_only(native, tmp_path):
    """``es-simhash dedup`` starts the build before parsing its options; ``--help`` and ``version`` do not."""
    probe = """
        import sys
        import es_simhash_native
        from es_simhash.__main__ import main
        code = main(sys.argv[1:])
        print("started-before" if not es_simhash_native.start_segmenter() else "not-started", code)
    """
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": "a", "text": "今天天气很好"}\n', encoding="utf-8")
    for args, expected in (([ "dedup", str(data), "--no-progress"], "started-before"),
                           (["dedup", "--help"], "not-started"), (["version"], "not-started")):
        res = subprocess.run([sys.executable, "-c", textwrap.dedent(probe), *args], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path,
                             env={k: v for k, v in os.environ.items() if k != "ES_SIMHASH_ENGINE"})
        assert res.returncode == 0, res.stderr
        assert res.stdout.split()[-2:] == [expected, "0"], (args, res.stdout)


def test_the_command_starts_the_build_before_it_imports_numpy_or_the_engine(native, tmp_path):
    """``es-simhash dedup`` (the console script and ``python -m es_simhash``: ``es_simhash.__main__.main``) starts
    the dictionary before any heavy import, so the build overlaps them; the run gives the usual result."""
    probe = """
        import sys
        import es_simhash_native
        start = es_simhash_native.start_segmenter
        def probe():
            print("heavy modules at the start:", sorted(m for m in ("numpy", "click", "typer", "es_simhash.cli",
                                                                     "es_simhash.fingerprint.fingerprinter",
                                                                     "es_simhash.engine.dedup_engine") if m in sys.modules))
            return start()
        es_simhash_native.start_segmenter = probe
        from es_simhash.__main__ import main
        print("exit", main(sys.argv[1:]))
    """
    res = _dedup_two_records(probe, tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "heavy modules at the start: []", res.stdout
    assert lines[-1] == "exit 0"
    assert (tmp_path / "r.jsonl").read_text(encoding="utf-8").count('"duplicate": true') == 1


def test_a_table_read_from_the_cache_goes_to_the_native_core_without_its_dict(native, tmp_path, monkeypatch):
    """The IDF cache's words and values go to the native core as they are (its table is built on its own thread);
    the dict is made only when Python asks for it, equal to the parsed one, and the fingerprints are the
    reference's either way."""
    import pickle

    from es_simhash.fingerprint import Fingerprinter
    from es_simhash.fingerprint.idf import IDFTable

    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ES_SIMHASH_ENGINE", raising=False)
    src = tmp_path / "idf.txt"
    src.write_text("天气 5.5\n今天 2.25\n人民日报 9\n评论员 7.75\nＦＯＸ 3.0\nbrown 4.5\n", encoding="utf-8")
    parsed = IDFTable.load(src)  # (parsed, and cached)
    table = IDFTable.load(src)  # from the cache
    assert isinstance(table._native_idf(), tuple) and "_idf" not in table.__dict__
    assert table.checksum == parsed.checksum and table.default == parsed.default
    texts = ast.literal_eval(TEXTS)
    nat = Fingerprinter(table, engine="native")
    got = nat.fingerprint_many(texts)
    assert "_idf" not in table.__dict__  # the native core did not need the dict
    assert got == Fingerprinter(parsed, engine="python").fingerprint_many(texts)
    assert table._idf == parsed._idf == {"天气": 5.5, "今天": 2.25, "人民日报": 9.0, "评论员": 7.75, "fox": 3.0,
                                         "brown": 4.5}
    assert isinstance(table._native_idf(), dict)  # (the dict, once made, is what a new core reads)
    assert Fingerprinter(table, engine="native", sentences=4).fingerprint_many(texts) == \
        Fingerprinter(parsed, engine="python", sentences=4).fingerprint_many(texts)
    again = pickle.loads(pickle.dumps(IDFTable.load(src)))
    assert again._idf == parsed._idf and again.checksum == parsed.checksum


def test_the_native_core_refuses_words_and_values_that_do_not_pair(native):
    kw = dict(min_token_len=2, sentences=5, min_sentence_chars=8, short_chars=100, sketch=12, sketch_chars=300,
              sketch_shingle=(3, 5), line_sketch=8, tf="cap:5")
    one = struct.pack("<d", 1.5)
    native.NativeFingerprinter((b"a\nb", one * 2), 1.0, (), **kw)
    for bad in ((b"a\nb", one), (b"a", one + b"\0"), (b"\xff", one), ("a", one)):
        with pytest.raises((ValueError, TypeError)):
            native.NativeFingerprinter(bad, 1.0, (), **kw)


def test_dedup_without_a_bar_imports_neither_the_bar_nor_worker_processes(tmp_path):
    """``dedup --no-progress`` with the default workers needs no rich.progress and no multiprocessing."""
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": "a", "text": "今天天气很好"}\n{"id": "b", "text": "今天天气很好！"}\n', encoding="utf-8")
    probe = """
        import sys
        from es_simhash import cli
        code = cli.main(sys.argv[1:])
        print(code, *sorted(m for m in ("rich.progress", "multiprocessing", "concurrent.futures.process")
                            if m in sys.modules))
    """
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(probe), "dedup", str(data), "--no-progress",
                          "--report", str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["0"]
    assert (tmp_path / "r.jsonl").read_text(encoding="utf-8").count('"duplicate": true') == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_fork_while_the_core_builds_its_idf_table(native):
    """A fork right after a native core was made from the IDF cache (its table still being built on its own
    thread) waits for it: the child fingerprints as the parent does."""
    res = _run(f"""
        import os
        from es_simhash.fingerprint import Fingerprinter
        from es_simhash.fingerprint.idf import IDFTable
        texts = {TEXTS}
        IDFTable.jieba_default()  # (cached now, if it was not)
        from es_simhash.fingerprint import idf as I
        I._jieba_default.cache_clear()
        table = IDFTable.jieba_default()
        assert isinstance(table._native_idf(), tuple)
        fp = Fingerprinter(table, engine="native")
        assert fp.engine == "native"
        pid = os.fork()  # (at once: the table is most likely still being built)
        if pid == 0:
            got = fp.fingerprint_many(texts)
            os._exit(0 if got == Fingerprinter(table, engine="python").fingerprint_many(texts) else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), fp.fingerprint_many(texts[:3]) == Fingerprinter(
            table, engine="python").fingerprint_many(texts[:3]))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["0", "True"]


def test_the_default_idf_table_built_before_the_imports_gives_the_reference_fingerprints(native, tmp_path):
    """The command starts building jieba's IDF table from the IDF cache before its imports (``start_default_idf``);
    the core made afterwards takes that table: its fingerprints are the reference's, in the process and in a
    child forked while the table may still be building. With the table not cached yet nothing is started and the
    run parses and caches it as before."""
    if not hasattr(native, "start_idf_files"):
        pytest.skip("this native core predates start_idf_files (rebuild: pip install ./native)")
    cache = str(tmp_path / "cache")
    code = f"""
        import os
        from es_simhash.fingerprint import early_start
        started = early_start.start_default_idf()
        pid = os.fork()  # (at once: the table is most likely still being built)
        from es_simhash.fingerprint import Fingerprinter
        texts = {TEXTS}
        fp = Fingerprinter(engine="native")
        same = fp.fingerprint_many(texts) == Fingerprinter(engine="python").fingerprint_many(texts)
        if pid == 0:
            os._exit(0 if same and fp.engine == "native" else 3)
        _, status = os.waitpid(pid, 0)
        print(started, os.waitstatus_to_exitcode(status), same, fp.engine)
    """
    first = _run(code, ES_SIMHASH_CACHE=cache)  # (not cached yet: parsed, then cached)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["False", "0", "True", "native"]
    second = _run(code, ES_SIMHASH_CACHE=cache)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", "0", "True", "native"]


def test_the_command_keeps_numpy_from_starting_blas_threads_unless_told_otherwise(tmp_path):
    """No command does linear algebra, so the command sets ``OPENBLAS_NUM_THREADS=1`` (numpy's OpenBLAS would
    start a spinning thread per core at import); a value the user set is kept."""
    probe = """
        import os, sys
        from es_simhash.__main__ import main
        try:
            main(["--version"])
        except SystemExit:
            pass
        print(os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("MKL_NUM_THREADS"))
    """
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True, env=env,
                         timeout=60, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[-2:] == ["1", "1"]
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True,
                         env={**env, "OPENBLAS_NUM_THREADS": "3"}, timeout=60, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[-2:] == ["3", "1"]


def test_the_kept_dictionary_segments_as_the_built_one(native, tmp_path):
    """The command keeps the native core's built dictionary in the cache and reads it back at the next start: the
    fingerprints are the reference's either way, on a real corpus; a kept dictionary that is damaged or cut short
    is not used (the dictionary is built and kept again)."""
    import inspect

    if "cache_dir" not in inspect.signature(native.start_segmenter).parameters and \
            "cache_dir" not in (native.start_segmenter.__text_signature__ or ""):
        pytest.skip("this native core predates the kept dictionary (rebuild: pip install ./native)")
    cache = tmp_path / "cache"
    code = f"""
        import sys
        sys.path[:0] = [{str(os.path.dirname(__file__))!r}, {str(os.path.join(os.path.dirname(__file__), "..", "bench"))!r}]
        from es_simhash.fingerprint import early_start
        print(early_start.start_segmenter())
        from es_simhash.fingerprint import Fingerprinter
        from support import chinese_articles
        texts = {TEXTS} + [a[:1500] for a in chinese_articles()[:300]]
        got = Fingerprinter(engine="native").fingerprint_many(texts)
        print(got == Fingerprinter(engine="python").fingerprint_many(texts))
    """
    first = _run(code, ES_SIMHASH_CACHE=str(cache))  # built, then kept
    assert first.returncode == 0, first.stderr
    [kept] = (cache / "segmenter").glob("jieba-rs-0.11.0-*.snapshot")  # (named by the vendored crate's build)
    assert first.stdout.split() == ["True", "True"] and kept.stat().st_size > 10_000_000
    original = kept.read_bytes()
    second = _run(code, ES_SIMHASH_CACHE=str(cache))  # read back
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", "True"] and kept.read_bytes() == original
    flipped = original[:5_000_000] + bytes([original[5_000_000] ^ 1]) + original[5_000_001:]
    for damaged in (original[: len(original) // 2], flipped):
        kept.write_bytes(damaged)
        again = _run(code, ES_SIMHASH_CACHE=str(cache))
        assert again.returncode == 0, again.stderr
        assert again.stdout.split() == ["True", "True"]
        assert kept.read_bytes() == original  # (built and kept again)


def test_the_command_fingerprints_its_first_texts_before_it_imports_numpy(native, tmp_path):
    """``es-simhash dedup`` with the native core hands its first batch to the fingerprinting thread before numpy is
    imported (numpy is ~0.05 s of the start: the imports it needs for deciding run beside the first
    fingerprints); the run gives the usual result."""
    probe = """
        import sys
        from es_simhash.fingerprint import fingerprinter as fingerprint
        first = []
        many = fingerprint.Fingerprinter.fingerprint_many
        def probe(self, texts):
            if not first:
                first.append("numpy" in sys.modules)
            return many(self, texts)
        fingerprint.Fingerprinter.fingerprint_many = probe
        from es_simhash.__main__ import main
        code = main(sys.argv[1:])
        print("numpy at the first fingerprints:", first[0], "exit", code)
    """
    res = _dedup_two_records(probe, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("numpy at the first fingerprints: False exit 0"), res.stdout
    assert (tmp_path / "r.jsonl").read_text(encoding="utf-8").count('"duplicate": true') == 1


def test_fingerprinters_of_one_cached_table_share_one_native_core(native, tmp_path, monkeypatch):
    """Fingerprinters made from the same IDF table read from the cache, with the same settings, share one native
    core (its IDF table is built once and its token cache stays warm); other settings get a core of their own."""
    from es_simhash.fingerprint import Fingerprinter
    from es_simhash.fingerprint.idf import IDFTable

    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ES_SIMHASH_ENGINE", raising=False)
    src = tmp_path / "idf.txt"
    src.write_text("天气 5.5\n今天 2.25\n人民日报 9\n", encoding="utf-8")
    IDFTable.load(src)  # (parsed, and cached)
    table = IDFTable.load(src)  # from the cache
    a, b = Fingerprinter(table, engine="native"), Fingerprinter(table, engine="native")
    other = Fingerprinter(table, engine="native", sentences=4)
    texts = ["今天天气很好，人民日报评论员说。", "明天下雨"]
    assert a.fingerprint_many(texts) == b.fingerprint_many(texts)
    other.fingerprint_many(texts)
    assert a._native is b._native and other._native is not a._native
