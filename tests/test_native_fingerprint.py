"""The native fingerprint core (``native/``, module ``es_simhash_native``) gives bit-identical fingerprints.

The pure-Python ``Fingerprinter(engine="python")`` is the reference; ``engine="native"`` must return equal
``Fingerprint`` objects on every corpus the tests use (People's Daily, BBC News, fortunes-zh), under every
``tf`` mode, other parameters and custom IDF tables, and on generated Unicode. A difference is a bug in one of
them. Under ``CI=true`` the native module must be installed (``scripts/test.sh`` builds it): these tests then
fail instead of skipping. The fallback path (no native module) is tested whatever is installed.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import threading
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from es_simhash.fingerprint import native_core as N
from es_simhash.fingerprint import text as T
from es_simhash.fingerprint import Fingerprinter
from es_simhash.fingerprint.idf import IDFTable
from es_simhash.fingerprint.reference import ReferenceEngine


import corpora  # noqa: E402  bench/corpora.py

ROOT = Path(__file__).resolve().parents[1]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _unavailable(what: str, reason: str):
    if _in_ci():
        pytest.fail(f"{what} unavailable (CI=true, so this fails): {reason}", pytrace=False)
    pytest.skip(f"{what} unavailable: {reason}")


@pytest.fixture(scope="session")
def native():
    module, reason = N.native_module()
    if module is None:
        _unavailable("native fingerprint core (pip install ./native)", reason)
    return module


def _pair(**kwargs) -> tuple[Fingerprinter, Fingerprinter]:
    nat = Fingerprinter(engine="native", **kwargs)
    assert nat.engine == "native"
    py = Fingerprinter(engine="python", **kwargs)
    assert py.engine == "python"
    return nat, py


def _outcome(fp: Fingerprinter, texts: list[str]):
    try:
        return fp.fingerprint_many(texts)
    except UnicodeError as e:  # the reference's own answer to a lone surrogate in Chinese text (rjieba refuses it)
        return type(e)


def _assert_identical(nat: Fingerprinter, py: Fingerprinter, texts: list[str]) -> None:
    got, want = _outcome(nat, texts), _outcome(py, texts)
    if isinstance(want, type) or isinstance(got, type):
        assert got is want
        return
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    assert len(got) == len(want)
    assert not bad, f"{len(bad)} of {len(texts)} differ; first: {texts[bad[0]][:200]!r}\n{got[bad[0]]}\n{want[bad[0]]}"


# -- corpora -----------------------------------------------------------------------------------------------
def _corpus(name: str) -> list[str]:
    try:
        if name == "peoples_daily":
            return corpora.peoples_daily_articles()
        if name == "peoples_daily_sentences":
            return corpora.peoples_daily_sentences()
        if name == "bbc":
            return corpora.bbc_news()
        if name == "fortunes":  # all records: short sayings, poems, and ASCII art / command listings
            return corpora.chinese_short_texts(max_chars=100_000, min_cjk=0.0)
    except RuntimeError as e:
        _unavailable(f"corpus {name}", str(e))
    raise ValueError(name)


CORPORA = ["peoples_daily", "peoples_daily_sentences", "bbc", "fortunes"]
TF_MODES = ["cap:5", "raw", "sublinear", "cap:1", "cap:2"]


@pytest.mark.parametrize("tf", TF_MODES)
@pytest.mark.parametrize("corpus", CORPORA)
def test_identical_on_corpora(native, corpus, tf):
    texts = _corpus(corpus)
    assert texts
    _assert_identical(*_pair(tf=tf), texts)


@pytest.mark.parametrize("corpus", CORPORA)
def test_identical_with_other_parameters(native, corpus):
    # long texts get a sketch and a word bag too; single characters carry weight; other shingles and bounds
    texts = _corpus(corpus)
    _assert_identical(*_pair(min_token_len=1, sentences=3, min_sentence_chars=3, short_chars=400, sketch=7,
                             sketch_chars=5000, sketch_shingle=(2, 4), line_sketch=3, tf="sublinear"), texts)
    _assert_identical(*_pair(min_token_len=3, sentences=0, sketch=0, short_chars=0), texts)
    _assert_identical(*_pair(line_sketch=0), texts)
    _assert_identical(*_pair(sentences=50, min_sentence_chars=1, sketch=100, sketch_chars=100_000,
                             sketch_shingle=(1, 1)), texts[:300])


@pytest.fixture(scope="module")
def fitted_idf() -> IDFTable:
    try:
        texts = corpora.peoples_daily_articles()[:800] + corpora.bbc_news()[:400]
    except RuntimeError as e:
        _unavailable("corpora", str(e))
    return IDFTable.fit(texts, min_df=2)


@pytest.mark.parametrize("tf", ["cap:5", "sublinear", "raw"])
def test_identical_with_custom_idf_tables(native, fitted_idf, tf):
    texts = _corpus("peoples_daily")[800:1600] + _corpus("bbc")[400:800] + _corpus("fortunes")[:300]
    _assert_identical(*_pair(idf=fitted_idf, tf=tf), texts)
    # hand-made: weights landing on .5 (round half to even), negative IDF (clamped to 0), a tiny default
    words = [w for t in texts[:50] for w in T.segment(T.normalize(t))][:400]
    table = {w: ((i % 7) - 2 + 0.5) / 1024 + (i % 3) * 1.5 for i, w in enumerate(words)}
    table.update({"中国": 0.5 / 1024, "经济": 1.5 / 1024, "发展": 2.5 / 1024, "the": -3.0, "government": 7.25})
    custom = IDFTable(table, default=0.25 / 1024)
    _assert_identical(*_pair(idf=custom, tf=tf, stopwords=frozenset({"发展", "said", "的"})), texts)


# -- generated Unicode -------------------------------------------------------------------------------------
# Characters where Python's casefold/isalnum/isspace/NFKC differ from Rust's char methods or need care:
# ß ﬁ İ ς (casefold), Cherokee (casefolds to upper case), Deseret (astral case), ǅ (title case), ² Ⅻ ٣ ① (numeric),
# U+0345 (casefolds to ι), Hangul, combining marks, lone surrogates, unassigned code points (U+0378, U+1FAF9,
# U+E01F0), full-width forms, the ideographic space, sentence ends, dots, every kind of whitespace; the dashes that
# open an attribution and the brackets of a label.
_SPECIAL = ("\ud800\udfff\U0001d400ＡＢｚ０９！？；，．　\u0301\u0308\u00a0\u2028\u2029\u3002…。.. \n\r\t\v\f\x1c\x1f\x85"
            "_ßﬁİıςΣꭰᏸ\U00010400\U00010428ǅ²Ⅻ٣①㍿\u0345가각\u1100\u1161\u11a8ÅΩ\u0378\U0001faf9\U000e01f0\U00020000"
            "'-+#&%c中文的是了国家经济发展转发微博一二三龘\uf900\ufa6e")
_WORDS = ["c#", "c++", "1.3nm", "www.example.com", "50%", "3.5", "u.s.a", "don't", "a-b", "a_b", "x.1.2", "1.5.3",
          "中国", "人民日报", "经济发展", "the", "government", "said", "news", "C#", "Ｃ＃", "e-mail", "9.9%",
          "转 发 微 博", "中 a 文", "中\u3000文", "。", "！", "...", "\n", " ", "  \n ", "中.", ".中", "%.", "”.",
          "u.s.", "e.g.", "a.中", "1.中", "中.1", "。.", "..中", "中. ", " .中",
          "说.好.我", "--", " -- ", "。--", "——", "\n—", " ―", "- -", "【", "】", "【每日一句】", "-- 作者《书》"]
_chars = st.one_of(st.characters(codec=None), st.sampled_from(list(_SPECIAL)),
                   st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
                   st.characters(min_codepoint=0xFF00, max_codepoint=0xFF65),
                   st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF))
_pieces = st.one_of(st.text(_chars, max_size=12), st.sampled_from(_WORDS),
                    st.builds(lambda c, n: c * n, st.sampled_from(["a", "中", "ab1", "中文", "x.", "ß"]),
                              st.integers(1, 3000)))
_texts = st.lists(_pieces, max_size=25).map("".join)
_spaced_cjk = st.lists(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=40).flatmap(
    lambda cs: st.sampled_from([" ", "  ", "\u3000", " \n "]).map(lambda sep: sep.join(cs)))


@pytest.fixture(scope="module")
def engines(native):
    return {tf: _pair(tf=tf, sketch_chars=1000) for tf in ("cap:5", "raw", "sublinear")}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.one_of(_texts, _spaced_cjk), min_size=1, max_size=6))
def test_identical_on_generated_unicode(engines, texts):
    for nat, py in engines.values():
        _assert_identical(nat, py, texts)


# Lines around the line sketch's bounds (8 letters/ideographs with Chinese, 16 without), every kind of line break
_line = st.one_of(_texts, st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=5, max_size=12),
                  st.text(st.sampled_from(list("abcdefghij xyz.,_-ß")), min_size=12, max_size=24),
                  st.integers(14, 18).map(lambda n: " ".join("Abcdefgh1jklmnopqr"[i:min(i + 4, n)]
                                                            for i in range(0, n, 4))),  # 14..18 letters/digits
                  st.integers(6, 9).map(lambda n: "中文的是了国家经济发展"[:n] + "，"))
_multiline = st.lists(_line, min_size=1, max_size=6).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", " \n ", "\n\n", "\u2028", "\x85", "\r"]).map(lambda br: br.join(lines)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_multiline, min_size=1, max_size=5), st.integers(0, 9))
def test_identical_on_generated_lines(native, texts, line_sketch):
    _assert_identical(*_pair(line_sketch=line_sketch), texts)


# ASCII runs with symbols inside Chinese text: the re-split rule (jieba's ``re_skip``) and its gate
_symbolic = st.text(st.sampled_from(list("abcxyzABC0129.+#&_%-' \n") + ["中", "文", "Ａ", "．", "。", "…", "　"]),
                    max_size=30).map(lambda t: "中文" + t)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_symbolic, min_size=1, max_size=5))
def test_identical_on_symbol_runs_in_chinese_text(engines, native, texts):
    nat, py = engines["cap:5"]
    _assert_identical(nat, py, texts)
    normalized = T._normalize_many(texts, prepared=True)
    assert native.segment_many(normalized) == [T.segment(n) for n in normalized]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_texts, min_size=1, max_size=4), st.integers(1, 9))
def test_each_step_identical_on_generated_unicode(native, texts, min_chars):
    valid = [t for t in texts if not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]
    got = native.normalize_many(texts)
    want = T._normalize_many(texts, prepared=True)
    for t, g, w in zip(texts, got, want):
        if g is None:  # left to Python: a lone surrogate or a code point unassigned in Python's Unicode
            assert t not in valid or any(unicodedata.category(c) == "Cn" for c in t)
        else:
            assert g == w
    normalized = T._normalize_many(valid)
    assert native.segment_many(normalized) == [T.segment(n) for n in normalized]
    assert [tuple(k) for k in native.keys_many(normalized, min_chars)] == T._keys_many(normalized, min_chars)


def test_labels_and_attributions_make_the_same_sentence_keys_in_both_engines(native):
    """What the long-sentence signature is made of, written out (every sentence key, ``min_chars`` 1): a label
    opening a sentence is a sentence of its own; a sentence opening with a dash (``--``, ``—``, ``―``) is none."""
    cases = [("好句子在这里。--作者名字", ["好句子在这里"]), ("好句子在这里。 —— 作者名字", ["好句子在这里"]),
             ("好句子在这里。―作者名字", ["好句子在这里"]), ("好句子。\n——记优秀共产党员", ["好句子"]),
             ("好句子在这里 ―作者名字", ["好句子在这里作者名字"]),  # (no sentence ends before the dash)
             ("好句子。x- -作者名字", ["好句子", "x作者名字"]), ("a - b. -- c", ["ab"]), ("a. - - c", ["a", "c"]),
             ("【每日一句】好句子在这里", ["每日一句", "好句子在这里"]), ("【新华社】【快讯】好句子", ["新华社", "快讯", "好句子"]),
             ("据【新华社】报道今天下雨", ["据新华社报道今天下雨"]), ("【没有收尾的标签", ["没有收尾的标签"]),
             ("【标签】-- 作者名字", ["标签"])]
    texts, want = [t for t, _ in cases], [w for _, w in cases]
    normalized = [T.normalize(t) for t in texts]
    assert [k[1] for k in T._keys_many(normalized, 1)] == want
    assert [list(k[1]) for k in native.keys_many(normalized, 1)] == want
    assert T._keys_many(normalized[:1], 1)[0][0] == "好句子在这里作者名字"  # an attribution stays in the content
    nat, py = _pair(min_sentence_chars=1)
    assert [f.sentences for f in nat.fingerprint_many(texts)] == [f.sentences for f in py.fingerprint_many(texts)]


def test_every_code_point_normalises_and_keys_like_python(native):
    """Each code point alone, between letters, and before a combining mark (composition)."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for template in ("{}", "a{}b", "{}\u0301", "中{} 文"):
        texts = [template.format(chr(c)) for c in cps]
        got = native.normalize_many(texts)
        want = T._normalize_many(texts, prepared=True)
        left = [t for t, g in zip(texts, got) if g is None]
        assert all(any(unicodedata.category(ch) == "Cn" for ch in t) for t in left)
        bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g is not None and g != w]
        assert not bad, bad[:5]
    texts = [chr(c) + "x" + chr(c) for c in cps]
    assert [tuple(k) for k in native.keys_many(texts, 1)] == T._keys_many(texts, 1)
    texts = [f"ab{chr(c)}cd'{chr(c)}" for c in cps]
    assert native.segment_many(texts) == [T.segment(t) for t in texts]


def test_left_to_python_texts_still_come_out_identical(native):
    texts = ["中文\ud800文本", "a\udfffb", "\u0378中国", "中国\U0001faf9人民", "ok"]
    assert native.normalize_many(texts)[:4] == [None] * 4
    nat, py = _pair()
    assert nat.fingerprint_many(texts[1:]) == py.fingerprint_many(texts[1:])
    # a lone surrogate in Chinese text: the reference raises (rjieba takes UTF-8 only), and so does native
    for fp in (nat, py):
        with pytest.raises(UnicodeEncodeError):
            fp.fingerprint_many(texts)


def test_tables_are_current(native):
    """native/src/tables.rs is what native/gen_tables.py writes with this Python (same Unicode version)."""
    sys.path.insert(0, str(ROOT / "native"))
    try:
        import gen_tables
    finally:
        sys.path.remove(str(ROOT / "native"))
    assert native.UNIDATA_VERSION == unicodedata.unidata_version
    assert (ROOT / "native" / "src" / "tables.rs").read_text(encoding="utf-8").split("\n", 2)[2] == \
        gen_tables.render().split("\n", 2)[2]  # (line 2 names the Python patch version)


def test_sublinear_logarithms_are_numpys():
    """The ln table handed to the native core (``_ln_table()``) equals np.log of counts as the Python engine computes
    them (``np.log`` over the counts of one text: other array lengths, alignments and SIMD tails)."""
    table = N.ln_table()
    assert len(table) == N.LN_TABLE_SIZE
    for n in (1, 2, 3, 7, 8, 9, 15, 16, 17, 100):
        for start in (1, 2, 5, 1000, N.LN_TABLE_SIZE - n + 1):
            counts = np.arange(start, start + n, dtype=np.int64)
            assert np.log(counts).tolist() == table[start - 1 : start - 1 + n]


def test_threads_share_one_native_fingerprinter(native):
    nat, py = _pair()
    texts = _corpus("peoples_daily")[:400]
    want = py.fingerprint_many(texts)
    results: list = [None] * 4

    def run(i: int) -> None:
        results[i] = nat.fingerprint_many(texts if i % 2 == 0 else texts[::-1])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(results):
        assert r == (want if i % 2 == 0 else want[::-1])


def test_a_setting_changed_after_first_use_is_followed(native):
    nat = Fingerprinter(engine="native")
    texts = _corpus("peoples_daily")[:30]
    nat.fingerprint_many(texts)
    nat.stopwords = frozenset(nat.stopwords | {"中国", "人民"})
    nat.n_sentences = 2
    py = Fingerprinter(engine="python", sentences=2, stopwords=nat.stopwords)
    assert nat.fingerprint_many(texts) == py.fingerprint_many(texts)
    assert nat.engine == "native"


def test_pickled_fingerprinter_remakes_its_native_core(native):
    nat, py = _pair()
    texts = _corpus("peoples_daily")[:50]
    nat.fingerprint_many(texts)
    clone = pickle.loads(pickle.dumps(nat))
    assert clone.engine == "native"
    assert clone.fingerprint_many(texts) == py.fingerprint_many(texts)


# -- choosing the engine, and the fallback -----------------------------------------------------------------
class _Weighted(ReferenceEngine):
    """A custom Python engine (``Fingerprinter(python_engine=_Weighted)``): every word weighs the same."""

    def token_weight(self, token: str) -> int:
        return 7 if len(token) > 1 else 0


def test_configurations_the_native_core_does_not_cover_stay_on_python(native):
    weighted = Fingerprinter(python_engine=_Weighted)
    assert weighted.engine == "python"
    assert weighted.token_weight("中国") == 7 and isinstance(weighted.python, _Weighted)
    assert Fingerprinter(segmenter="jieba").engine == "python"
    assert Fingerprinter(IDFTable({"a": float("inf")}, default=1.0)).engine == "python"
    assert Fingerprinter(IDFTable({"a": "x"}, default=1.0)).engine == "python"
    assert Fingerprinter(IDFTable({("a",): 1.0}, default=1.0)).engine == "python"
    assert Fingerprinter(stopwords=frozenset({"的", 3})).engine == "python"
    with pytest.raises(RuntimeError, match=r"custom Python engine \(_Weighted\)"):
        Fingerprinter(python_engine=_Weighted, engine="native")
    fp = Fingerprinter(python_engine=lambda owner: _Weighted(owner))  # any maker of a custom engine counts too
    assert fp.engine == "python"
    assert Fingerprinter(python_engine=ReferenceEngine).engine == "native"  # (the reference, named)
    assert Fingerprinter().engine == "native"


def test_environment_forces_python(native, monkeypatch):
    monkeypatch.setenv("ES_SIMHASH_ENGINE", "python")
    assert Fingerprinter().engine == "python"
    assert Fingerprinter(engine="native").engine == "native"


def test_engine_python_never_touches_the_native_module(monkeypatch):
    def boom():
        raise AssertionError("the native module was looked up")

    monkeypatch.setattr(N, "native_module", boom)
    fp = Fingerprinter(engine="python")
    assert fp.engine == "python"
    assert fp.fingerprint("中文文本的指纹").n_features > 0


def test_without_the_native_module_python_is_used_with_one_notice(monkeypatch, caplog):
    """No es_simhash_native (a user without Rust): same fingerprints from Python, one notice per process."""
    monkeypatch.setitem(sys.modules, "es_simhash_native", None)  # import fails as if not installed
    N.native_module.cache_clear()
    monkeypatch.setattr(N, "NOTICED", [])
    try:
        with caplog.at_level(logging.WARNING, logger="es_simhash.fingerprint"):
            a, b = Fingerprinter(), Fingerprinter()
            texts = ["中华人民共和国成立了。", "The quick brown fox jumps over the lazy dog."]
            assert a.fingerprint_many(texts) == Fingerprinter(engine="python").fingerprint_many(texts)
            b.fingerprint_many(texts)
            assert a.engine == b.engine == "python"
        notices = [r for r in caplog.records if "native fingerprint core unavailable" in r.getMessage()]
        assert len(notices) == 1 and "\n" not in notices[0].getMessage()
        assert "pip install ./native" in notices[0].getMessage()
        with pytest.raises(RuntimeError, match="not available"):
            Fingerprinter(engine="native")
    finally:
        N.native_module.cache_clear()


def test_a_text_that_is_not_a_string_fails_as_in_python(native):
    nat, py = _pair()
    for bad in (["ok", None], ["ok", b"bytes"], ["ok", 3]):
        with pytest.raises(Exception) as want:
            py.fingerprint_many(bad)
        with pytest.raises(want.type):
            nat.fingerprint_many(bad)


def test_engine_argument_is_checked():
    with pytest.raises(ValueError, match="engine"):
        Fingerprinter(engine="rust")


def test_another_rjieba_version_keeps_the_native_core_out(native, monkeypatch, tmp_path):
    """The native core segments as rjieba 0.2.2 does: with another rjieba installed, the Python engine (which uses
    it) and the native one would differ, so the native core is refused with the reason. The version comes from the
    ``rjieba-VERSION.dist-info`` folder beside the package (as ``importlib.metadata`` reads it, without its imports)."""
    from importlib.metadata import version

    assert N.installed_version("rjieba") == version("rjieba")
    assert N.installed_version("numpy") == version("numpy")
    assert N.installed_version("no-such-distribution-here") is None
    site = tmp_path / "site"
    (site / "rjieba").mkdir(parents=True)
    (site / "rjieba" / "__init__.py").write_text("raise ImportError('never imported: only found')\n")
    (site / "rjieba-0.3.0.dist-info").mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "rjieba", raising=False)
    N.native_module.cache_clear()
    try:
        assert N.installed_version("rjieba") == "0.3.0"
        module, reason = N.native_module()
        assert module is None and "rjieba 0.3.0 is installed" in reason
    finally:
        N.native_module.cache_clear()


# -- the fold (es_simhash.fingerprint.fold): script, invisible characters, romanisation -------------------------------
def test_fold_tables_are_current(native):
    """native/src/fold_tables.rs is what native/gen_tables.py writes from es_simhash/fold.py."""
    sys.path.insert(0, str(ROOT / "native"))
    try:
        import gen_tables
    finally:
        sys.path.remove(str(ROOT / "native"))
    assert (ROOT / "native" / "src" / "fold_tables.rs").read_text(encoding="utf-8") == gen_tables.render_fold()


def test_every_fold_table_entry_folds_alike_on_both_engines(native):
    """Each character the script fold changes, alone, between ideographs, after a bracket and spaced out: the
    native core writes what Python writes, and that is the character's fold."""
    from es_simhash.fingerprint import fold

    table = fold.fold_table()
    for template in ("{}", "中{}文", "(x{})", "转 {} 发"):
        texts = [template.format(chr(c)) for c in table]
        got, want = native.normalize_many(texts), T._normalize_many(texts, prepared=True)
        assert got == want
    assert T._normalize_many([chr(c) for c in table]) == [chr(t) for t in table.values()]
    texts = ["".join(chr(c) for c in list(table)[i:i + 50]) for i in range(0, len(table), 50)]
    nat, py = _pair()
    assert nat.fingerprint_many(texts) == py.fingerprint_many(texts)


def test_identical_on_converted_and_annotated_articles(native):
    """People's Daily articles through OpenCC's four conversions, with romanisation after a third of their
    characters (pinyin with tone marks, with tone digits, zhuyin): both engines give every fingerprint alike."""
    import random

    import opencc
    from pypinyin import Style, pinyin

    articles = corpora.peoples_daily_articles()[:60]
    texts = []
    for i, a in enumerate(articles):
        converted = opencc.OpenCC(f"{('s2t', 's2tw', 's2hk', 's2twp')[i % 4]}.json").convert(a)
        style = (Style.TONE, Style.TONE3, Style.BOPOMOFO)[i % 3]
        rng = random.Random(i)
        texts.append(converted)
        texts.append("".join(c + (f"({pinyin(c, style=style)[0][0]})" if "\u4e00" <= c <= "\u9fff" and
                                  rng.random() < 0.3 else "") for c in converted))
        texts.append("".join(c + (pinyin(c, style=Style.TONE)[0][0] if "\u4e00" <= c <= "\u9fff" and
                                  rng.random() < 0.2 else "") for c in a))
    nat, py = _pair()
    assert nat.fingerprint_many(texts) == py.fingerprint_many(texts)
    assert native.normalize_many(texts) == T._normalize_many(texts, prepared=True)


_ANNOTATIONS = ["(nèi)", "(nei4)", "(ㄋㄟˋ)", "(ㄇㄣ˙)", "(˙ㄇㄣ)", "(2019)", "(cpu)", "(ai)", "nèi", "róng", "café",
                "(a b)", "(ü)", "(lǘ)", "(", ")", "（ㄋㄟˋ）", "ǎ", "\u200b", "\ufe0f", "\u00ad"]
_annotated = st.lists(st.one_of(st.sampled_from(_ANNOTATIONS), st.sampled_from(list("內容国發中 \n。ab1")),
                                st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)), max_size=30).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_annotated, min_size=1, max_size=4), st.integers(1, 9))
def test_romanisation_and_invisible_characters_identical_on_generated_text(native, texts, min_chars):
    assert native.normalize_many(texts) == T._normalize_many(texts, prepared=True)
    normalized = T._normalize_many(texts, prepared=True)
    assert [tuple(k) for k in native.keys_many(normalized, min_chars)] == T._keys_many(normalized, min_chars)
    nat, py = _pair()
    assert nat.fingerprint_many(texts) == py.fingerprint_many(texts)


def test_identical_on_pages_as_scrapers_deliver_them(native):
    """Articles as crawls deliver them (fingerprint version 7): HTML entities, hard-wrapped lines, a site's lines
    around them, a byline, a part cut, words replaced, numbers changed: both engines give every fingerprint (fuzzy
    hashes, their digests and the number bag included) alike, and keep the same text from the same page."""
    import html
    import random

    articles = corpora.peoples_daily_articles()[:80] + corpora.bbc_news()[:40]
    texts = []
    for i, a in enumerate(articles):
        rng = random.Random(i)
        lines = a.split("\n")
        texts.append(html.escape(a) if i % 3 else a.replace("，", "&#65292;").replace(" ", "&nbsp;"))
        flat = " ".join(lines)
        width = rng.choice((24, 36, 70))
        texts.append("\n".join(flat[j:j + width] for j in range(0, len(flat), width)))
        texts.append("本站首页 > 新闻中心\n" + "\n".join(lines[: max(1, len(lines) * rng.randint(3, 9) // 10)])
                     + "\n（记者 张三）\n版权所有，未经授权不得转载。")
        texts.append("".join(ch if not ch.isdigit() else str((int(ch) + i) % 10) for ch in a))
        texts.append("".join(rng.choice("的国人在") if rng.random() < 0.05 else ch for ch in a))
    nat, py = _pair()
    got, want = nat.fingerprint_many(texts), py.fingerprint_many(texts)
    assert got == want
    assert sum(1 for fp in want if fp.fuzzy) > len(texts) // 2 and sum(1 for fp in want if fp.number_bag) > len(texts) // 3


_sentence = st.sampled_from(["今天天气很好我们去公园散步吧", "经济发展取得了新的成就和进步", "他说这件事情需要认真研究",
                             "The committee met again on Tuesday morning", "Prices rose by 3.5 per cent in 1998",
                             "这是一个很长很长的句子，里面有逗号、顿号和数字１２３", "短句", "中国人民", "abc def ghi jkl"])
_article = st.lists(_sentence, min_size=1, max_size=24).flatmap(
    lambda ss: st.lists(st.sampled_from(["。", "！", ". ", "\n", "。\n", "；", ".", "!", ";"]), min_size=len(ss),
                        max_size=len(ss))
    .map(lambda ends: "".join(s + e for s, e in zip(ss, ends))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_article, min_size=1, max_size=4), st.integers(0, 16))
def test_fuzzy_hashes_identical_on_generated_articles(native, texts, fuzzy):
    """Repeated sentences, sentences of equal length, fewer and more than ``fuzzy`` of them, around the minimum a
    text needs for fuzzy hashes: both engines choose the same sentences and give the same hashes and digests."""
    _assert_identical(*_pair(fuzzy=fuzzy), texts)


# Dates and places as sentences give them (the event bags), with the characters around them that decide a match:
# digit runs of every length before 年/月/日, Chinese numerals, weekdays, English months and weekdays as words,
# place names and their short forms run together, sentence ends and header lines
_event_piece = st.one_of(
    st.text(st.sampled_from(list("0123456789年月日号-/. ,")), min_size=1, max_size=8),
    st.text(st.sampled_from(list("〇零一二三四五六七八九十年月日星期礼拜周天")), min_size=1, max_size=6),
    st.sampled_from(["沈阳", "沈阳市", "辽宁省", "哈尔滨", "北京市朝阳区", "和平", "新华社", "美国", "纽约", "香港特别行政区",
                     "january", "may", "march 3", "5 december", "december 31, 2023", "monday", "sundays", "_monday",
                     "。", "!", "?", "\n", "。\n", "(记者 张三)", "发布时间:", " ", "a", "中"]))
_event_line = st.tuples(st.lists(_event_piece, min_size=1, max_size=8).map("".join),
                        st.sampled_from(["。", ".", "!", "", "。)", "(记者 张三)"])).map("".join)
_event_texts = st.lists(_event_line, min_size=1, max_size=6).map("\n".join)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event_texts, min_size=1, max_size=4))
def test_dates_and_places_identical_on_generated_text(engines, texts):
    nat, py = engines["cap:5"]
    _assert_identical(nat, py, texts)


_ASCII_PUNCTUATION = str.maketrans({"，": ",", "。": ".", "；": ";", "：": ":", "！": "!", "？": "?", "“": '"', "”": '"'})


def test_identical_on_articles_with_ascii_punctuation(native):
    """People's Daily articles whose Chinese punctuation became ASCII (no space after it) or half-width: both
    engines read their full stops alike (fingerprint version 8), and the copies are their originals again."""
    articles = corpora.peoples_daily_articles()[:400]
    texts = [a.translate(_ASCII_PUNCTUATION) for a in articles] + [a.replace("。", "｡") for a in articles[:100]]
    nat, py = _pair()
    assert nat.fingerprint_many(texts) == py.fingerprint_many(texts)
    assert native.normalize_many(texts) == T._normalize_many(texts, prepared=True)
    assert sum(a == b for a, b in zip(nat.fingerprint_many(texts), nat.fingerprint_many(articles))) >= 390


# Chinese text with ASCII full stops next to ideographs, digits, letters, quotes, brackets, romanisation, other
# full stops and spaces
_DOTTED = ["中", "文", "國", ".", ".", ".", "。", ",", "!", ";", ":", '"', "”", "《", "(", ")", "%", "1", "2", "a", "s", " ",
           "\n", "(nèi)", "róng", "u.s.", "e.g.", "3.5", "...", "……", "．", "｡", "www.example.com"]
_dotted = st.lists(st.sampled_from(_DOTTED), max_size=40).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_dotted, min_size=1, max_size=5), st.integers(1, 9))
def test_full_stops_of_chinese_text_identical_on_generated_text(engines, native, texts, min_chars):
    assert native.normalize_many(texts) == T._normalize_many(texts, prepared=True)
    normalized = T._normalize_many(texts, prepared=True)
    assert [tuple(k) for k in native.keys_many(normalized, min_chars)] == T._keys_many(normalized, min_chars)
    nat, py = engines["cap:5"]
    _assert_identical(nat, py, texts)


def test_every_place_of_the_list_is_read_alike_by_both_engines(native):
    """The native core reads the list of places itself (``places.txt``, its names normalised as texts are) where the
    Python engine reads :func:`events.places`: every name of the list, three to a sentence, gives both engines the
    same place bag, and one that names a place (so a name the native core lacked or keyed otherwise would show)."""
    from es_simhash.fingerprint import events

    names = sorted(events.places()[0])
    texts = ["，".join(names[i:i + 3]) + "。" for i in range(0, len(names), 3)]
    nat, py = _pair()
    got, want = nat.fingerprint_many(texts), py.fingerprint_many(texts)
    assert [f.place_bag for f in got] == [f.place_bag for f in want]
    assert all(f.place_bag & events.NAMED_PLACES for f in got)


def test_a_list_of_places_the_native_core_cannot_read_is_refused_naming_its_line(native):
    with pytest.raises(ValueError, match="line 2"):
        native.NativeFingerprinter({}, 1.0, [], min_token_len=1, sentences=4, min_sentence_chars=8, short_chars=300,
                                   sketch=16, sketch_chars=300, sketch_shingle=(3, 2), line_sketch=0, tf="raw",
                                   place_list="北京市\t北京\t12\n上海市\t上海\n")
