"""Reading dirty crawl output: every non-blank line is a record or a dead letter with its line number."""

import bz2
import gzip
import io
import json
import lzma
import sys

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from es_simhash.errors import InputError, InvalidValue
from es_simhash.files.sources import DeadLetter, RecordReader, check_inputs
from es_simhash.records import Document


def read(tmp_path, data: bytes, name="in.jsonl", **kw):
    p = tmp_path / name
    p.write_bytes(data)
    return list(RecordReader(**kw).read([str(p)]))


def line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def test_good_records_and_default_fields(tmp_path):
    out = read(tmp_path, line({"url": "http://a", "content": "正文"}) + line({"id": 7, "text": "hello"}) +
               line({"body": "b"}))
    assert [(r.id, r.text) for r in out] == [("http://a", "正文"), ("7", "hello"), ("in.jsonl:3", "b")]
    assert [r.line for r in out] == [1, 2, 3]


def test_each_kind_of_bad_line_is_a_dead_letter_with_its_line_number(tmp_path):
    data = b"".join([
        line({"id": "ok1", "content": "fine"}),
        b'{"id": "x", "content": "unterminated\n',
        line({"id": "n", "content": 42}),
        line({"id": "m"}),
        "{\"id\": \"g\", \"content\": \"中文\"}\n".encode("gbk"),
        b'{"id": "z", "content": "a\x00b"}\n',
        b"[1, 2, 3]\n",
        b"[" * 100_000 + b"]" * 100_000 + b"\n",
        b"\n   \n",
        line({"id": "ok2", "content": "also fine"}),
    ])
    out = read(tmp_path, data)
    records = [o for o in out if isinstance(o, Document)]
    dead = {o.line: o.reason for o in out if isinstance(o, DeadLetter)}
    assert [r.id for r in records] == ["ok1", "ok2"]
    assert set(dead) == {2, 3, 4, 5, 6, 7, 8}
    assert "malformed JSON" in dead[2]
    assert "not a string" in dead[3]
    assert "no text field" in dead[4]
    assert "not UTF-8" in dead[5]
    assert "NUL" in dead[6]
    assert "JSON object" in dead[7]
    assert "nested too deeply" in dead[8] or "JSON object" in dead[8]
    assert records[1].line == 11  # blank lines still count as lines


def test_overlong_lines_are_dead_letters_and_reading_goes_on(tmp_path):
    data = line({"id": "a", "content": "x"}) + b"y" * 50_000 + b"\n" + line({"id": "b", "content": "z"})
    out = read(tmp_path, data, max_record_bytes=10_000)
    assert [type(o) for o in out] == [Document, DeadLetter, Document]
    assert out[1].line == 2 and "longer than 10000 bytes" in out[1].reason
    assert out[2].id == "b" and out[2].line == 3


def test_a_huge_line_without_newline_is_not_held_in_memory(tmp_path):
    data = line({"id": "a", "content": "x"}) + b"z" * 3_000_000
    out = read(tmp_path, data, max_record_bytes=100_000)
    assert [type(o) for o in out] == [Document, DeadLetter]
    assert len(out[1].excerpt) <= 200


def test_a_10mb_record_is_read_by_default(tmp_path):
    big = "大" * (10 * 1024 * 1024 // 3)
    out = read(tmp_path, line({"id": "big", "content": big}) + line({"id": "small", "content": "s"}))
    assert [type(o) for o in out] == [Document, Document] and out[0].text == big


def test_gzip_by_magic_bytes_and_truncated_gzip(tmp_path):
    payload = b"".join(line({"id": i, "content": f"text {i}"}) for i in range(2000))
    out = read(tmp_path, gzip.compress(payload), name="crawl.data")
    assert [o.id for o in out] == [str(i) for i in range(2000)]
    truncated = gzip.compress(payload)[:-200]
    out = read(tmp_path, truncated, name="broken.jsonl.gz")
    assert isinstance(out[-1], DeadLetter) and "stopped reading" in out[-1].reason
    assert all(isinstance(o, Document) for o in out[:-1]) and len(out) > 1


@pytest.mark.parametrize("compress", [lambda data: bz2.compress(data, 1), lzma.compress], ids=["bzip2", "xz"])
def test_bzip2_and_xz_by_magic_bytes_and_truncated(tmp_path, compress):
    n = 20_000  # (more than one bzip2 block of 100 kB: a truncated file still has whole blocks)
    payload = b"".join(line({"id": i, "content": f"text {i}"}) for i in range(n))
    out = read(tmp_path, compress(payload), name="crawl.data")
    assert [(o.id, o.text, o.line) for o in out] == [(str(i), f"text {i}", i + 1) for i in range(n)]
    out = read(tmp_path, compress(payload)[:-200], name="broken.jsonl")
    assert isinstance(out[-1], DeadLetter) and "stopped reading" in out[-1].reason, out[-1]
    assert all(isinstance(o, Document) for o in out[:-1]) and len(out) > 1


def test_a_zstd_input_is_refused_with_how_to_decompress_it(tmp_path):
    p = tmp_path / "crawl.jsonl.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(40))  # (zstd's magic bytes; the standard library cannot read it)
    for check in (lambda: check_inputs([str(p)]), lambda: list(RecordReader().read([str(p)]))):
        with pytest.raises(InputError, match=r"crawl.jsonl.zst is zstd-compressed: decompress it first \(zstd -d"):
            check()


def test_a_misspelt_text_field_names_the_fields_the_record_has(tmp_path):
    out = read(tmp_path, line({"id": "a", "content": "x", "title": "t"}), text_field="contnet")
    assert out[0].reason == ("no text field (looked for 'contnet'; the record has 'id', 'content', 'title'; use "
                             "--text-field)")


def test_empty_and_binary_files(tmp_path):
    assert read(tmp_path, b"") == []
    out = read(tmp_path, bytes(range(256)) * 40, name="bin.jsonl")
    assert out and all(isinstance(o, DeadLetter) for o in out)


def test_utf8_bom_and_crlf(tmp_path):
    out = read(tmp_path, b"\xef\xbb\xbf" + line({"id": "a", "content": "x"}).rstrip(b"\n") + b"\r\n")
    assert [(o.id, o.text) for o in out] == [("a", "x")]


def test_explicit_fields_and_long_ids(tmp_path):
    out = read(tmp_path, line({"k": "u" * 600, "t": "x"}) + line({"t": "y"}), text_field="t", id_field="k")
    assert out[0].id.startswith("sha256:") and len(out[0].id) < 512
    assert isinstance(out[1], DeadLetter) and "'k'" in out[1].reason


def test_an_id_that_is_not_a_string_or_whole_number_is_a_dead_letter_never_file_line(tmp_path):
    records = [{"id": ["a"]}, {"id": {"k": 1}}, {"id": True}, {"id": 1.5}, {"id": None}, {"id": ""}, {"id": "  "},
               {"id": 0}, {"id": None, "url": "http://u"}, {"id": ["a"], "url": "http://u"}]
    out = read(tmp_path, b"".join(line({**r, "content": "text"}) for r in records))
    got = [(o.line, o.reason) if isinstance(o, DeadLetter) else (o.line, o.id) for o in out]
    assert got == [
        (1, "id field 'id' is an array, not a string or whole number"),
        (2, "id field 'id' is an object, not a string or whole number"),
        (3, "id field 'id' is a boolean, not a string or whole number"),
        (4, "id field 'id' is a number with a decimal point, not a string or whole number"),
        (5, "in.jsonl:5"), (6, "in.jsonl:6"), (7, "in.jsonl:7"),  # (null or empty: no id)
        (8, "0"), (9, "http://u"),
        (10, "id field 'id' is an array, not a string or whole number"),
    ]
    explicit = read(tmp_path, b"".join(line({**r, "content": "text"}) for r in records[:6]), id_field="id")
    assert [o.reason for o in explicit[4:]] == ["no id in field 'id': missing, null or empty (the --id-field)"] * 2
    assert [o.reason for o in explicit[:4]] == [g[1] for g in got[:4]]


def test_lone_surrogates_are_dead_letters(tmp_path):
    out = read(tmp_path, b'{"id": "s", "content": "bad \\ud800 text"}\n'
                         b'{"id": "t", "content": "\\u4e2d\\u6587 \\ud83d\\ude00 \\uDFFF"}\n'
                         b'{"id": "u", "content": "\\u4e2d\\u6587 \\ud83d\\ude00 ok"}\n')
    assert isinstance(out[0], DeadLetter) and "surrogate" in out[0].reason
    assert isinstance(out[1], DeadLetter) and "surrogate" in out[1].reason  # (after a good pair)
    assert not isinstance(out[2], DeadLetter) and out[2].text == "中文 \U0001f600 ok"
    # a codec that makes a lone surrogate without any \u escape (utf-7)
    bad = RecordReader(encoding="utf-7").parse("x", 1, b'{"id": "v", "content": "a+2AA-b"}')
    assert isinstance(bad, DeadLetter) and "surrogate" in bad.reason


def test_stdin(monkeypatch):
    data = line({"id": "a", "content": "x"}) + b"oops\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = list(RecordReader().read(["-"]))
    assert isinstance(out[0], Document) and isinstance(out[1], DeadLetter) and out[1].source == "stdin"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.binary(max_size=200),
    st.builds(lambda o: json.dumps(o).encode(), st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(["id", "content", "text", "x"]), c,
                                                            max_size=4), max_leaves=10)),
), max_size=20))
def test_fuzz_any_bytes_give_records_or_dead_letters(tmp_path_factory, chunks):

    data = b"\n".join(chunks)
    p = tmp_path_factory.mktemp("fuzz") / "f.jsonl"
    p.write_bytes(data)
    if data.startswith(b"\x28\xb5\x2f\xfd"):  # (zstd's magic bytes: refused, whatever follows)
        with pytest.raises(InputError, match="zstd-compressed"):
            list(RecordReader(max_record_bytes=1000).read([str(p)]))
        return
    out = list(RecordReader(max_record_bytes=1000).read([str(p)]))
    non_blank = [i for i, ln in enumerate(data.split(b"\n"), 1) if ln.strip()]
    if data.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")):  # (gzip's, bzip2's, xz's magic bytes: read so)
        assert len(out) <= len(non_blank) + 1
    else:  # every non-blank line is one record or one dead letter, none dropped, in line order
        assert [o.line for o in out] == non_blank
    fpr = _fp()
    for o in out:
        assert isinstance(o, (Document, DeadLetter))
        if isinstance(o, Document):
            fpr.fingerprint(o.text)  # any text a record carries can be fingerprinted


_FP = []


def _fp():
    if not _FP:
        from es_simhash import Fingerprinter

        _FP.append(Fingerprinter())
    return _FP[0]


def test_non_utf8_bytes_in_a_record_are_dead_letters_and_reading_goes_on(tmp_path):
    bad = [b'{"id": "latin1", "content": "caf\xe9"}\n',  # Latin-1
           b'{"id": "cont", "content": "a\x80b"}\n',  # a stray continuation byte
           b'{"id": "surr", "content": "\xed\xa0\x80"}\n',  # an encoded surrogate (invalid in UTF-8)
           b'{"id": "cut", "content": "\xe4\xb8"}\n']  # a multi-byte character cut short
    out = read(tmp_path, b"".join(bad) + line({"id": "ok", "content": "fine"}))
    assert [type(o) for o in out] == [DeadLetter] * 4 + [Document]
    assert all("not UTF-8" in o.reason for o in out[:4]) and [o.line for o in out] == [1, 2, 3, 4, 5]


def test_deeply_nested_objects_are_dead_letters_and_reading_goes_on(tmp_path):
    deep = b'{"id": "deep", "content": "x", "meta": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_000 + b"}\n"
    nested = b'{"id": "nested", "content": "y", "meta": ' + b'{"a": ' * 50 + b"1" + b"}" * 50 + b"}\n"
    out = read(tmp_path, deep + nested + line({"id": "ok", "content": "fine"}))
    assert [type(o) for o in out] == [DeadLetter, Document, Document]
    assert "nested too deeply" in out[0].reason and out[0].line == 1
    assert [(o.id, o.text) for o in out[1:]] == [("nested", "y"), ("ok", "fine")]


def test_encoding_auto_reads_gbk_lines_and_says_so(tmp_path):
    """A crawl file with GBK/GB18030 lines among UTF-8 ones: --encoding auto reads both (the record says which
    encoding it was read with); a line that decodes under neither is still a dead letter; utf-8 (the default)
    makes the GBK line a dead letter that names the option."""
    gbk = "{\"id\": \"g\", \"content\": \"中文新闻：今天天气很好。\"}\n".encode("gbk")
    big5_only = "{\"id\": \"b\", \"content\": \"繁體\"}\n".encode("big5")
    data = line({"id": "u", "content": "统一码"}) + gbk + b'{"id": "x", "content": "a\x80b"}\n'
    out = read(tmp_path, data, encoding="auto")
    assert [(o.id, o.text, o.encoding) for o in out if isinstance(o, Document)] == [
        ("u", "统一码", "utf-8"), ("g", "中文新闻：今天天气很好。", "gb18030")]
    [letter] = [o for o in out if isinstance(o, DeadLetter)]
    assert letter.line == 3 and "neither UTF-8 nor gb18030" in letter.reason
    strict = read(tmp_path, data)
    assert [o.line for o in strict if isinstance(o, DeadLetter)] == [2, 3]
    assert "try --encoding auto" in strict[1].reason
    assert [(o.id, o.text) for o in read(tmp_path, big5_only, encoding="big5")] == [("b", "繁體")]
    with pytest.raises(InvalidValue, match="'klingon' is not a codec name") as refused:
        RecordReader(encoding="klingon")
    assert refused.value.setting == "encoding"
