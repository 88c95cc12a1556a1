"""The parsed-IDF cache: a table read back from the cache is the table parsed from its file."""

from __future__ import annotations

from es_simhash.fingerprint.idf import IDFTable, jieba_idf_path


def test_a_cached_table_equals_the_parsed_one_and_a_broken_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "idf.txt"
    src.write_text("北京 5.5\n上海 6.25\nＡＢＣ 7\n# a comment\nnew york 3.0\n", encoding="utf-8")
    first = IDFTable.load(src)
    assert dict(first._idf) == {"北京": 5.5, "上海": 6.25, "abc": 7.0, "new york": 3.0}  # NFKC + casefold
    folder = tmp_path / "cache" / "idf"
    assert sorted(p.suffix for p in folder.iterdir()) == [".f64", ".json", ".words"]
    second = IDFTable.load(src)  # from the cache
    assert "_cache_entry" in second.__dict__ and "_idf" not in second.__dict__  # (its dict made on first use)
    assert second._idf == first._idf and second.default == first.default
    assert second.checksum == IDFTable(dict(first._idf), first.default).checksum
    assert second.extremes() == first.extremes() == (3.0, 7.0)
    # a cache entry whose files were cut short or grew is not used (the table is parsed again)
    for suffix, damage in ((".words", "北京"), (".f64", "x" * 40)):
        path = next(folder.glob(f"*{suffix}"))
        kept = path.read_bytes()
        path.write_text(damage, encoding="utf-8")
        again = IDFTable.load(src)
        assert "_cache_entry" not in again.__dict__ and again._idf == first._idf
        path.write_bytes(kept)


def test_a_changed_table_file_is_another_table(tmp_path, monkeypatch):
    """The cache is keyed by what ``os.stat`` says of the file: any change, even one that keeps its size and
    sets its modification time back, reads the new table."""
    import os
    import time

    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "idf.txt"
    src.write_text("北京 5.5\n上海 6.25\n", encoding="utf-8")
    assert IDFTable.load(src)._idf == {"北京": 5.5, "上海": 6.25}
    assert IDFTable.load(src)._idf == {"北京": 5.5, "上海": 6.25}  # (from the cache)
    st = os.stat(src)
    time.sleep(0.05)  # (a later change time than the first write's, on a file system with coarse times)
    src.write_text("北京 1.5\n上海 6.25\n", encoding="utf-8")  # the same size
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same modification time
    assert IDFTable.load(src)._idf == {"北京": 1.5, "上海": 6.25}
    other = tmp_path / "other.txt"  # another file with the same content is read for itself
    other.write_text("北京 1.5\n上海 6.25\n", encoding="utf-8")
    assert IDFTable.load(other)._idf == {"北京": 1.5, "上海": 6.25}


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("ES_SIMHASH_CACHE", str(blocker))  # a file where the cache folder should be
    table = IDFTable.load(jieba_idf_path())
    assert len(table) > 250_000 and table.get("北京") > 0


def test_an_entry_damaged_or_deleted_after_it_was_read_is_parsed_again_and_rewritten(tmp_path, monkeypatch):
    """A table read from the cache is read lazily: when its files turn out unusable at that point (damaged with
    the sizes unchanged, or the cache deleted while in use), the table is parsed again from its file, fingerprints
    are the reference's (native core and Python), and the entry is written again."""
    import shutil

    from es_simhash.fingerprint.fingerprinter import Fingerprinter
    from es_simhash.fingerprint.native_core import native_module

    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ES_SIMHASH_ENGINE", raising=False)
    src = tmp_path / "idf.txt"
    src.write_text("天气 5.5\n今天 2.25\n人民日报 9\n评论员 7.75\nbrown 4.5\n", encoding="utf-8")
    parsed = IDFTable.load(src)
    texts = ["人民日报评论员：今天天气很好。", "the quick brown fox", "今天天气"]
    reference = Fingerprinter(parsed, engine="python").fingerprint_many(texts)
    folder = tmp_path / "cache" / "idf"
    engines = ["python"] + (["native"] if native_module()[0] is not None else [])
    for engine in engines:
        for damage in ("bytes", "deleted"):
            table = IDFTable.load(src)
            assert "_cache_entry" in table.__dict__
            if damage == "bytes":
                words = next(folder.glob("*.words"))
                words.write_bytes(b"\xff" * words.stat().st_size)  # (same size: not UTF-8)
            else:
                shutil.rmtree(folder)
            assert Fingerprinter(table, engine=engine).fingerprint_many(texts) == reference, (engine, damage)
            assert table._idf == parsed._idf and table.checksum == parsed.checksum
            again = IDFTable.load(src)  # the entry was written again
            assert "_cache_entry" in again.__dict__ and again._idf == parsed._idf, (engine, damage)
