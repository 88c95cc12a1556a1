"""The parsed-IDF cache: a table read back from the cache is the table parsed from its file."""

from __future__ import annotations

from es_simhash.idf import IDFTable, jieba_idf_path


def test_a_cached_table_equals_the_parsed_one_and_a_broken_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("ES_SIMHASH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "idf.txt"
    src.write_text("北京 5.5\n上海 6.25\nＡＢＣ 7\n# a comment\nnew york 3.0\n", encoding="utf-8")
    first = IDFTable.load(src)
    assert dict(first._idf) == {"北京": 5.5, "上海": 6.25, "abc": 7.0, "new york": 3.0}  # NFKC + casefold
    files = sorted(p.suffix for p in (tmp_path / "cache" / "idf").iterdir())
    assert files == [".json", ".npy", ".words"]
    second = IDFTable.load(src)  # from the cache
    assert second._idf == first._idf and second.default == first.default
    assert second.checksum == IDFTable(dict(first._idf), first.default).checksum
    # a changed file is another table (the key is the file's content)
    src.write_text("北京 1.0\n", encoding="utf-8")
    assert IDFTable.load(src)._idf == {"北京": 1.0}
    # a cache file cut short is not used
    for p in (tmp_path / "cache" / "idf").glob("*.words"):
        p.write_text("北京", encoding="utf-8")
    src.write_text("北京 5.5\n上海 6.25\nＡＢＣ 7\n# a comment\nnew york 3.0\n", encoding="utf-8")
    assert IDFTable.load(src)._idf == first._idf


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("ES_SIMHASH_CACHE", str(blocker))  # a file where the cache folder should be
    table = IDFTable.load(jieba_idf_path())
    assert len(table) > 250_000 and table.get("北京") > 0
