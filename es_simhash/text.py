"""Text handling: normalisation, sentence splitting, segmentation, stop words.

Everything here is deterministic and pure: the same text always gives the same tokens, so fingerprints
computed today match fingerprints computed next year (the fingerprint records a version; see
``fingerprint.FINGERPRINT_VERSION``).

Segmentation is jieba-compatible. The native ``rjieba`` (jieba-rs) is used when installed because it is much
faster and, with the same dictionary and HMM, returns the same tokens as ``jieba.lcut`` (a test checks this on a
real Chinese corpus); ``jieba`` itself is the reference and the fallback.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Callable, Iterable

__all__ = [
    "normalize",
    "content_key",
    "split_sentences",
    "sentence_key",
    "segment",
    "segmenter_name",
    "has_cjk",
    "stopwords",
]

_WHITESPACE = re.compile(r"\s+")
# Anything that is not a letter, digit or CJK ideograph: punctuation, symbols, spaces, underscores.
_NON_WORD = re.compile(r"[\W_]+")
# Sentence ends: Chinese and Western terminal punctuation, line breaks, and a full stop followed by space/end
# (so "3.5" and "U.S.A" do not split). After NFKC the full-width ！？；： are already ASCII.
_SENTENCE_END = re.compile(r"[。！？!?;；…\r\n]+|\.(?=\s|$)")
# CJK Unified Ideographs (+ extension A) — enough to decide whether a text needs the Chinese segmenter.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Word tokens for texts without CJK characters: runs of letters/digits, apostrophes inside words kept.
_LATIN_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def normalize(text: str) -> str:
    """Unicode-normalise ``text`` for fingerprinting.

    NFKC folds full-width/half-width forms and compatibility characters (``ＡＢＣ１２３！`` -> ``ABC123!``),
    ``casefold`` removes case, and runs of whitespace become one space.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return _WHITESPACE.sub(" ", text).strip()


def content_key(normalized: str) -> str:
    """The letters, digits and ideographs of a normalised text, nothing else.

    Two texts with the same content key differ only in punctuation, spacing, width or case: they are exact
    duplicates for our purposes.
    """
    return _NON_WORD.sub("", normalized)


def split_sentences(normalized: str) -> list[str]:
    """Split a normalised text on Chinese and Western sentence punctuation and line breaks."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(normalized)) if s]


def sentence_key(sentence: str) -> str:
    """A sentence reduced to its letters, digits and ideographs (punctuation/space edits do not change it)."""
    return _NON_WORD.sub("", sentence)


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def _latin_tokens(text: str) -> list[str]:
    return _LATIN_WORD.findall(text)


# jieba splits a run like "1.3nm" or "www.example.com" into "1.3", "nm" / "www", ".", "example", ...
# (``jieba.finalseg.re_skip``); jieba-rs keeps such runs whole. Re-splitting those tokens with jieba's own
# pattern makes the two agree token for token (checked on the People's Daily corpus by the test suite).
_JIEBA_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")
_ASCII_RUN_WITH_SYMBOLS = re.compile(r"[a-z0-9][.+#&_%\-]+[a-z0-9]")


def _jieba_compatible(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        if len(tok) > 1 and tok.isascii() and not tok.isalnum() and not tok.isspace():
            out.extend(x for x in _JIEBA_SKIP.split(tok) if x)
        else:
            out.append(tok)
    return out


def _rjieba_cut(normalized: str) -> list[str]:
    import rjieba  # type: ignore[import-not-found]

    tokens = rjieba.cut(normalized)
    if _ASCII_RUN_WITH_SYMBOLS.search(normalized):
        tokens = _jieba_compatible(tokens)
    return tokens


@lru_cache(maxsize=None)
def _chinese_segmenter(name: str) -> Callable[[str], list[str]]:
    if name == "rjieba":
        import rjieba  # noqa: F401  # type: ignore[import-not-found]

        return _rjieba_cut
    if name == "jieba":
        import logging

        import jieba  # type: ignore[import-not-found]

        jieba.setLogLevel(logging.WARNING)
        return jieba.lcut
    raise ValueError(f"unknown segmenter {name!r}: use 'rjieba' or 'jieba'")


@lru_cache(maxsize=None)
def segmenter_name(preferred: str = "auto") -> str:
    """The segmenter actually used: ``rjieba`` when importable (or requested), else ``jieba``.

    ``ES_SIMHASH_SEGMENTER=jieba`` in the environment forces the pure-Python reference.
    """
    preferred = os.environ.get("ES_SIMHASH_SEGMENTER", preferred) if preferred == "auto" else preferred
    if preferred in ("auto", "rjieba"):
        try:
            import rjieba  # noqa: F401  # type: ignore[import-not-found]

            return "rjieba"
        except ImportError:
            if preferred == "rjieba":
                raise
    return "jieba"


def segment(normalized: str, segmenter: str = "auto") -> list[str]:
    """Tokens of a normalised text: jieba-compatible words for Chinese (and mixed) text, words otherwise.

    Punctuation and spaces come back as tokens from the Chinese segmenter; the fingerprint gives them weight 0.
    """
    if has_cjk(normalized):
        return _chinese_segmenter(segmenter_name(segmenter))(normalized)
    return _latin_tokens(normalized)


def _read_word_list(name: str) -> Iterable[str]:
    data = resources.files("es_simhash").joinpath("data", name).read_text(encoding="utf-8")
    for line in data.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield normalize(line)


@lru_cache(maxsize=None)
def stopwords() -> frozenset[str]:
    """The shipped Chinese and English stop words (normalised)."""
    return frozenset(_read_word_list("stopwords_zh.txt")) | frozenset(_read_word_list("stopwords_en.txt"))
