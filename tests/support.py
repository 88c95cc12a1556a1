"""Test helpers: real-text corpora and an independent, deliberately simple SimHash reference.

The reference below shares no code with ``es_simhash``: it re-reads the IDF and stop-word files itself, uses
``jieba.lcut`` (the reference segmenter) and walks every token and every bit in plain Python, exactly as the
classic SimHash description goes (Charikar 2002; Manku et al. 2007).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import corpora  # (bench/corpora.py: real text shipped inside packages; bench/ is on pytest's pythonpath)

ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def chinese_articles() -> list[str]:
    return corpora.peoples_daily_articles()


@lru_cache(maxsize=None)
def english_articles() -> list[str]:
    return corpora.bbc_news()


# -- the reference SimHash ---------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _ref_fold() -> dict[int, int]:
    """The script fold, read from its data file (es_simhash/data/fold.txt) by this module itself."""
    lines = (ROOT / "es_simhash" / "data" / "fold.txt").read_text(encoding="utf-8").splitlines()
    return {ord(line[0]): ord(line[2]) for line in lines if not line.startswith("#")}


def _ref_normalize(text: str) -> str:
    """NFKC; invisible characters (format characters, variation selectors) dropped; casefold; whitespace collapsed;
    the script folded; no space between ideographs; a full stop in Chinese text written "。" (:func:`ref_full_stops`).
    (Romanisation after ideographs is not dropped here: the
    corpora hold none; tests/test_fold.py tests that part.)"""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf" and not 0xFE00 <= ord(ch) <= 0xFE0F)
    text = text.casefold()
    text = "\n".join(filter(None, (" ".join(line.split()) for line in text.splitlines())))  # a line break stays
    text = text.translate(_ref_fold())
    ideograph = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
    text = re.sub(f"(?<={ideograph}) (?={ideograph})", "", text)  # spaces between ideographs are no boundary
    return ref_full_stops(text)


def ref_full_stops(text: str) -> str:
    """In a text with an ideograph, each "." written "。" but those a reader reads inside a word, a number or
    an ellipsis: an ASCII letter or digit on both sides ("3.5", "www.example.com"), a "." next to it ("..."), or an
    ASCII letter before it and a full stop before that (the end of "u.s.", "e.g.")."""
    if not any(0x3400 <= ord(c) <= 0x4DBF or 0x4E00 <= ord(c) <= 0x9FFF or 0xF900 <= ord(c) <= 0xFAFF for c in text):
        return text
    out = list(text)
    for i, c in enumerate(text):
        if c != ".":
            continue
        before = text[i - 1] if i >= 1 else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        two_before = text[i - 2] if i >= 2 else ""

        def word_char(x: str) -> bool:
            return x != "" and x.isascii() and x.isalnum()

        if before == "." or after == "." or (two_before != "" and two_before in ".。" and before.isascii()
                                               and before.isalpha()):
            continue
        if word_char(before) and word_char(after):
            continue
        out[i] = "。"
    return "".join(out)


@lru_cache(maxsize=1)
def _ref_idf() -> tuple[dict[str, float], float]:
    spec = importlib.util.find_spec("jieba")
    path = Path(list(spec.submodule_search_locations)[0]) / "analyse" / "idf.txt"
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, value = line.rsplit(" ", 1)
        word = _ref_normalize(word)
        table[word] = min(table.get(word, float("inf")), float(value))  # (spellings that fold alike: the lowest)
    values = sorted(table.values())
    return table, values[len(values) // 2]


@lru_cache(maxsize=1)
def _ref_stopwords() -> set[str]:
    words = set()
    for name in ("stopwords_zh.txt", "stopwords_en.txt"):
        for line in (ROOT / "es_simhash" / "data" / name).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                words.add(_ref_normalize(line))
    return words


def _is_word(token: str) -> bool:
    return all(ch.isalnum() for ch in token)  # letters, digits, ideographs; no punctuation, space or "_"


def reference_tokens(text: str) -> list[str]:
    norm = _ref_normalize(text)
    if re.search(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", norm):
        import jieba

        return jieba.lcut(norm)
    return re.findall(r"[^\W_]+(?:'[^\W_]+)*", norm)


def reference_simhash(text: str, min_token_len: int = 2) -> int:
    """Classic weighted SimHash: v[i] += w if bit i of hash(token) else -w; bit i = v[i] > 0. A token's weight is
    its IDF (x 1024, rounded) times its count in the text, counted up to 5: so a term repeated all over a text
    cannot outweigh the rest."""
    idf, default = _ref_idf()
    stop = _ref_stopwords()
    tf: dict[str, int] = {}
    for tok in reference_tokens(text):
        if len(tok) >= min_token_len and tok not in stop and _is_word(tok):
            tf[tok] = tf.get(tok, 0) + 1
    v = [0] * 64
    for tok, count in tf.items():
        weight = round(idf.get(tok, default) * 1024) * min(count, 5)
        h = int.from_bytes(hashlib.blake2b(tok.encode("utf-8"), digest_size=8).digest(), "little")
        for i in range(64):
            if (h >> i) & 1:
                v[i] += weight
            else:
                v[i] -= weight
    fingerprint = 0
    for i in range(64):
        if v[i] > 0:
            fingerprint |= 1 << i
    return fingerprint


def popcount_reference(x: int) -> int:
    return bin(x).count("1")


def flip_bits(value: int, positions) -> int:
    for p in positions:
        value ^= 1 << p
    return value


# -- the command line, in process ---------------------------------------------------------------------------
def run_cli(*args, stdin: bytes | str | None = b"", env: dict | None = None, cwd=None, es_url: str | None = None):
    """Run ``es-simhash ARGS`` in this process, as the console script does (``es_simhash.cli.main``: the same
    one-line errors and exit codes), with stdin, stdout and stderr captured by ``typer.testing.CliRunner``.
    ``env`` (variables to set; ``None`` values unset) and ``cwd`` apply for the run only. Returns a
    ``subprocess.CompletedProcess`` (``returncode``, ``stdout`` and ``stderr`` as bytes), like the subprocess
    helpers it replaces; tests of signals, kills and a fresh interpreter keep a real subprocess."""
    import os
    import subprocess

    import typer._click.formatting as formatting  # (Typer's copy of click: the width the help is wrapped at)
    from typer.testing import CliRunner

    from es_simhash.cli import main

    env = dict(env or {})
    if es_url is not None:
        env["ES_URL"] = es_url
    argv = [str(a) for a in args]
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        runner = CliRunner()
        with runner.isolation(input=stdin, env=env) as streams:
            # help as wide as in a real process (the terminal's width, 80 columns without one), not the runner's
            # fixed 80 (it restores its setting on the way out)
            formatting.FORCED_WIDTH = None
            code = main(argv)
            stdout, stderr = streams[0].getvalue(), streams[1].getvalue()
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["es-simhash", *argv], code, stdout, stderr)


# -- a crawl of templated short texts ----------------------------------------------------------------------
TEMPLATE_HEADS = ("来源：人民网", "本文转载自新华网", "【环球网综合报道】")
TEMPLATE_FOOTS = ("（责任编辑：李明）", "点击关注我们的公众号，获取更多精彩内容", "版权声明：转载请注明出处")


def templated_crawl(seed: int, n: int = 800) -> list[dict]:
    """``n`` records of real People's Daily text, half of them reprints wrapped in a site's header and footer
    line (three of each: every such line is held by far more documents than ``max_sentence_df``), in a seeded
    random order. Many texts are a few characters long (a photo caption, a byline), so the wrapper is most of
    the reprint: what makes decisions hang on which template lines count as boilerplate when."""
    import random

    rng = random.Random(seed)
    paragraphs = [p for _, p in corpora._pfr_paragraphs()]
    texts = rng.sample(paragraphs, n // 2)
    records = [{"id": f"o{i}", "content": t} for i, t in enumerate(texts)]
    for i, t in enumerate(texts):
        records.append({"id": f"r{i}", "content": f"{rng.choice(TEMPLATE_HEADS)}\n{t}\n{rng.choice(TEMPLATE_FOOTS)}"})
    rng.shuffle(records)
    return records
