"""Text handling: normalisation, sentence splitting, segmentation, stop words.

Everything here is deterministic and pure: the same text always gives the same tokens, so fingerprints
computed today match fingerprints computed next year (the fingerprint records a version; see
``fingerprint.FINGERPRINT_VERSION``).

Segmentation is jieba-compatible. The native ``rjieba`` (jieba-rs) is used when installed because it is much
faster and, with the same dictionary and HMM, returns the same tokens as ``jieba.lcut`` (a test checks this on a
real Chinese corpus); ``jieba`` itself is the reference and the fallback.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from itertools import compress, count
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from es_simhash.fingerprint.furniture import without_comments

if TYPE_CHECKING:
    import numpy as np

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

# Anything that is not a letter, digit or CJK ideograph: punctuation, symbols, spaces, underscores.
_NON_WORD = re.compile(r"[\W_]+")
# Sentence ends: Chinese and Western terminal punctuation, line breaks, and a full stop followed by space/end (so
# "3.5" and "U.S.A" do not split). After NFKC the full-width ！？；： are already ASCII, and :func:`normalize` writes a
# full stop of Chinese text "。" (:data:`_FULL_STOP`). A label that opens a sentence ("【每日一句】", "【新华社北京电】")
# is a sentence of its own: the first "】" of a sentence that opens with "【" ends it (:func:`split_sentences`).
_SENTENCE_END = re.compile(r"[。！？!?;；…\r\n]+|\.(?=\s|$)")
_LABEL_OPEN, _LABEL_CLOSE = "\u3010", "\u3011"
# An attribution: a sentence that opens with a dash ("-- 作者《书名》", "—— 鲁迅", "——转自微信公众号"): the source of a
# quote or a subtitle, not what the text says. Two quotes of one book share it.
_ATTRIBUTION_DASHES = ("--", "\u2014", "\u2015")
# CJK Unified Ideographs (+ extension A) — enough to decide whether a text needs the Chinese segmenter.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A space between two of those ideographs: Chinese puts no spaces between words, so such a space is layout or a
# way around filters ("转 发 微 博"), never a word boundary.
_IDEOGRAPH_SPACE = re.compile(r"(?<=[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]) (?=[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
# A full stop written "." in a text with Chinese, read as a reader reads it (:func:`normalize` writes it "。", so that
# it ends a sentence, and a text whose "。" became "." is the text again): every "." but those inside a word or
# a number (an ASCII letter or digit on both sides: "3.5", "u.s.a", "www.example.com"), those of "..." and "..",
# and the one that ends an abbreviation written with full stops (an ASCII letter before it and a full stop before
# that: "u.s.", "e.g."; "他说.好.我们" has two full stops).
_FULL_STOP = re.compile(r"(?<!\.)(?<![.\u3002][A-Za-z])\.(?!\.)(?:(?<![0-9A-Za-z]\.)|(?![0-9A-Za-z]))")
# Word tokens for texts without CJK characters: runs of letters/digits, apostrophes inside words kept.
_LATIN_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def normalize(text: str) -> str:
    """Unicode-normalise ``text`` for fingerprinting.

    First the text a reader sees (:func:`prepare`): HTML character references read wherever they are (``&ldquo;``,
    ``&#x3002;``, ``&nbsp;``; a text escaped twice, ``&amp;ldquo;``, is read as once), and the line breaks of a hard
    wrap joined (print and PDF extraction). Then NFKC folds full-width/half-width forms and compatibility characters
    (``ＡＢＣ１２３！`` -> ``ABC123!``); invisible characters (format characters and variation selectors,
    :func:`es_simhash.fingerprint.fold.is_invisible`) are dropped; ``casefold`` removes case; a run of whitespace
    that holds a line break (a line boundary of ``str.splitlines``) becomes one ``"\\n"`` (a line break ends a
    sentence: a title or a heading is its own sentence) and any other run of whitespace one space, with none left at
    either end; Traditional characters are folded to Simplified ones
    (:func:`es_simhash.fingerprint.fold.fold_table`) and romanisation written directly after an ideograph is dropped
    (:func:`es_simhash.fingerprint.fold.strip_annotations`); then a space between two CJK ideographs is removed
    (``"转 发 微 博"`` -> ``"转发微博"``: Chinese has no spaces between words); last, in a text with an ideograph,
    a ``.`` is written ``。`` where a reader reads a full stop (``"中国.今年"`` -> ``"中国。今年"``: a copy whose
    punctuation was made ASCII is the text written with Chinese punctuation), not inside a word or a number
    (``3.5``, ``www.example.com``), an ellipsis (``...``) or after an abbreviation (``u.s.``, ``e.g.``). See
    :func:`_normalize_many` for how it gets there quickly (``tests/test_normalize_fast.py`` checks it against that
    definition written with regular expressions).
    """
    return _normalize_many([text])[0]


MAX_UNESCAPE = 3
"""How many times :func:`decode_entities` reads a text's character references again (a text escaped twice, or
thrice, is read as once)."""


def decode_entities(text: str) -> str:
    """``text`` with its HTML character references replaced by the characters they stand for, as a browser reads
    them (``html.unescape``: the HTML 5 rules and names, also references without their ``;`` that browsers accept),
    again while that changes the text, at most :data:`MAX_UNESCAPE` times (``&amp;ldquo;`` is ``“``)."""
    for _ in range(MAX_UNESCAPE):
        if "&" not in text:
            break
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return text


MIN_WRAP_WIDTH, MAX_WRAP_WIDTH = 20, 120
"""A hard wrap is at least this wide, and at most (a poem, a list or a table has shorter lines; paragraphs that
were never wrapped, longer ones)."""
MIN_WRAPPED_LINES = 5


def prepare(text: str) -> str:
    """The text a reader sees, before normalisation (both fingerprint engines start from it): HTML
    character references read (:func:`decode_entities`), a comment section under the article left out
    (:func:`~es_simhash.fingerprint.furniture.without_comments`: page furniture) and the line breaks of a hard
    wrap joined (:func:`join_hard_wraps`)."""
    if "&" in text:
        text = decode_entities(text)
    text = without_comments(text)
    if len(text) >= MIN_WRAPPED_LINES * MIN_WRAP_WIDTH:
        text = join_hard_wraps(text)
    return text


def join_hard_wraps(text: str) -> str:
    """``text`` with the line breaks of a hard wrap joined. A text was hard-wrapped (broken into lines of one width
    ``w``, as print and PDF extraction leave it) when at least :data:`MIN_WRAPPED_LINES` of its lines are *full*,
    within ``w // 8`` characters of ``w`` (the upper quartile of the lengths, surrounding whitespace left out, of its
    lines of :data:`MIN_WRAP_WIDTH` characters or more, at most :data:`MAX_WRAP_WIDTH`), and at least half of them
    end inside a sentence (:func:`ends_sentence`: the paragraphs of a text that was never wrapped end theirs; a
    site's short lines around the text, a title, a paragraph's last line are not full). Each full line is then
    joined to the line after it, unless that line is blank (a paragraph's end). The join adds nothing in a text
    with Chinese (no spaces between words: a word or a number cut by the wrap is whole again), a space in other
    text; a text that was not hard-wrapped is returned as it is."""
    raw = text.splitlines()
    lengths = [n for n in map(len, map(str.strip, raw)) if n >= MIN_WRAP_WIDTH]
    if len(lengths) < MIN_WRAPPED_LINES:
        return text
    lengths.sort()
    width = lengths[(3 * len(lengths)) // 4]
    if width > MAX_WRAP_WIDTH:
        return text
    lines = [line.strip() for line in raw]
    full = [len(x) >= MIN_WRAP_WIDTH and abs(len(x) - width) <= width // 8 for x in lines]
    n_full = sum(full)
    open_ = sum(1 for x, f in zip(lines, full) if f and not ends_sentence(x))
    if n_full < MIN_WRAPPED_LINES or 2 * open_ < n_full:
        return text
    sep = "" if has_cjk(text) else " "
    out: list[str] = []
    join_next = False
    for x, is_full in zip(lines, full):
        if join_next and x:
            out[-1] = out[-1] + sep + x
        else:
            out.append(x)
        join_next = is_full
    return "\n".join(out)


_TERMINAL = tuple("。！？!?….．｡")
_CLOSING = "”’\"'」』)）》]］〕＂＇"


_BYLINE = re.compile(r"[(（][^()（）]{1,60}[)）]$")


def ends_sentence(line: str) -> bool:
    """Whether a line ends with a sentence's end (closing quotes and brackets after it left aside, and a part of at
    most 60 characters in brackets after it: a reporter's name, ``。(孔繁文)``, a reader's address, a note,
    ``。(长篇通讯全文见第三版)``); full-width marks count as their ASCII forms."""
    return _BYLINE.sub("", line).rstrip(_CLOSING).endswith(_TERMINAL)


# Full-width ASCII (U+FF01..U+FF5E) and the ideographic space U+3000: the only characters NFKC changes in
# typical Chinese text (，：；（）！？ and the full-width space).
_FULLWIDTH_FIRST, _FULLWIDTH_LAST, _FULLWIDTH_SHIFT = 0xFF01, 0xFF5E, 0xFEE0
_IDEOGRAPHIC_SPACE = 0x3000


_FULLWIDTH_FOLD = {c: c - _FULLWIDTH_SHIFT for c in range(_FULLWIDTH_FIRST, _FULLWIDTH_LAST + 1)} | {
    _IDEOGRAPHIC_SPACE: ord(" ")}
"""The fold as a ``str.translate`` table, for a few characters (:data:`_FOLD_WITH_NUMPY`)."""
_FOLD_WITH_NUMPY = 4096
"""Characters from which :func:`_fold_fullwidth_many` folds with numpy (one pass) rather than ``str.translate``."""


def _code_points(text: str) -> np.ndarray:
    """The code points of ``text`` as a uint32 array (lone surrogates pass through)."""
    import numpy as np
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _fold_fullwidth_many(texts: Sequence[str]) -> list[str]:
    """Map U+FF01..U+FF5E to ASCII and U+3000 to a space, in one numpy pass over all non-ASCII texts.

    These are exactly the NFKC images of those characters, and every one of them is its own full
    decomposition with combining class 0, so ``NFKC(text) == NFKC(fold(text))`` for every text: folding first
    never changes the final result, it only makes the common case cheap (see :func:`_normalize_many`).
    Folding is one code point to one code point, so lengths do not change.
    """
    out = list(texts)
    wide = [i for i, t in enumerate(out) if not t.isascii()]  # isascii() is O(1) on CPython strings
    if not wide:
        return out
    if sum(len(out[i]) for i in wide) < _FOLD_WITH_NUMPY:  # (few characters: no numpy, e.g. at start-up)
        for i in wide:
            out[i] = out[i].translate(_FULLWIDTH_FOLD)
        return out
    import numpy as np

    cps = _code_points("".join(out[i] for i in wide)).copy()
    fullwidth = (cps - np.uint32(_FULLWIDTH_FIRST)) <= np.uint32(_FULLWIDTH_LAST - _FULLWIDTH_FIRST)  # wraps below
    space = cps == _IDEOGRAPHIC_SPACE
    if not (fullwidth.any() or space.any()):
        return out
    cps[fullwidth] -= np.uint32(_FULLWIDTH_SHIFT)
    cps[space] = ord(" ")
    folded = cps.tobytes().decode("utf-32-le", "surrogatepass")
    pos = 0
    for i in wide:
        n = len(out[i])
        out[i] = folded[pos : pos + n]
        pos += n
    return out


def _normalize_many(texts: Sequence[str], prepared: bool = False) -> list[str]:
    """:func:`normalize` of each text; same output, fast path for text that only needs the full-width fold.
    ``prepared``: the texts are :func:`prepare`'s already (what the native core normalises: both engines start
    from the prepared text).

    0. :func:`prepare` (HTML character references read, the line breaks of a hard wrap joined);
    1. fold full-width ASCII and U+3000 (:func:`_fold_fullwidth_many`; NFKC would do the same), and replace the
       ellipsis U+2026 (common in Chinese text as ``……``) by its NFKC image ``...``: NFKC decomposes each
       character on its own and ``.`` is its own decomposition, so NFKC of the text is unchanged;
    2. if the folded text is already NFKC (``unicodedata.is_normalized`` is exact, and quick when the answer
       is yes) NFKC is the identity on it; otherwise run the full NFKC on it (which equals NFKC of the input);
    3. drop invisible characters (only a text with a non-ASCII character can hold one);
    4. casefold, then ``" ".join(line.split())`` for each of ``str.splitlines()``, dropping blank lines and
       joining with ``"\\n"``: ``str.split()`` uses the same whitespace definition as ``re``'s ``\\s`` for str
       patterns (``Py_UNICODE_ISSPACE``) and every line boundary of ``splitlines`` is such whitespace, so this
       is the definition in :func:`normalize`;
    5. fold the script and drop romanisation after ideographs (texts with a non-ASCII character only);
    6. remove each space between two ideographs (only texts with a space and a non-ASCII character can have one);
    7. write a full stop of Chinese text ``。`` (:data:`_FULL_STOP`; texts with a ``.`` and an ideograph only).
    """
    from es_simhash.fingerprint.fold import fold_table, invisible_pattern, strip_annotations

    out = []
    is_normalized, nfkc = unicodedata.is_normalized, unicodedata.normalize
    invisible = invisible_pattern()
    table = fold_table()
    for t in _fold_fullwidth_many(texts if prepared else [prepare(t) for t in texts]):
        if "\u2026" in t:
            t = t.replace("\u2026", "...")
        if not is_normalized("NFKC", t):
            t = nfkc("NFKC", t)
        if not t.isascii() and invisible.search(t):
            t = invisible.sub("", t)
        lines = t.casefold().splitlines()
        if len(lines) == 1:
            n = " ".join(lines[0].split())
        else:
            n = "\n".join(filter(None, (" ".join(line.split()) for line in lines)))
        if not n.isascii():
            n = strip_annotations(n.translate(table))
            if " " in n:
                n = _IDEOGRAPH_SPACE.sub("", n)
            if "." in n and _CJK.search(n):
                n = _FULL_STOP.sub("\u3002", n)
        out.append(n)
    return out


def content_key(normalized: str) -> str:
    """The letters, digits and ideographs of a normalised text, nothing else.

    Two texts with the same content key differ only in punctuation, spacing, width or case: they are exact
    duplicates for our purposes.
    """
    return _NON_WORD.sub("", normalized)


def split_sentences(normalized: str) -> list[str]:
    """Split a normalised text on Chinese and Western sentence punctuation and line breaks (a ``.`` ends a
    sentence before whitespace or the end; in Chinese text :func:`normalize` has written a full stop ``。``), and
    after the label that opens a sentence (the first ``】`` of a sentence that opens with ``【``; the separators
    are dropped, the label keeps its brackets but the closing one)."""
    out = []
    for p in _SENTENCE_END.split(normalized):
        s = p.strip()
        while s.startswith(_LABEL_OPEN) and _LABEL_CLOSE in s:
            label, _, s = s.partition(_LABEL_CLOSE)
            out.append(label)
            s = s.strip()
        if s:
            out.append(s)
    return out


def is_attribution(sentence: str) -> bool:
    """Whether a sentence of :func:`split_sentences` is an attribution (it opens with ``--``, ``—`` or ``―``):
    it counts in the text's content and SimHash but is no sentence key (:func:`_keys_many`)."""
    return sentence.startswith(_ATTRIBUTION_DASHES)


def sentence_key(sentence: str) -> str:
    """A sentence reduced to its letters, digits and ideographs (punctuation/space edits do not change it)."""
    return _NON_WORD.sub("", sentence)


# Per-code-point tables for the BMP, built once on first use (astral code points are looked up one by one).
# ``re``'s ``\\w`` on str patterns is ``str.isalnum() or "_"``, so ``[\\W_]`` removes exactly the code points
# that are not ``isalnum()``; ``\\s`` is ``str.isspace()`` (no astral code point is a space).
_SENTENCE_END_CHARS = "。！？!?;；…\r\n"


@lru_cache(maxsize=None)
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np
    bmp = [chr(c) for c in range(0x10000)]
    word = np.fromiter((c.isalnum() for c in bmp), dtype=bool, count=0x10000)
    space = np.fromiter((c.isspace() for c in bmp), dtype=bool, count=0x10000)
    end = np.zeros(0x10000, dtype=bool)
    end[[ord(c) for c in _SENTENCE_END_CHARS]] = True
    return word, space, end


def _keys_many(normalized: Sequence[str], min_sentence_chars: int) -> list[tuple[str, list[str]]]:
    """For each text: its :func:`content_key` and, in text order, the :func:`sentence_key` of each of its
    :func:`split_sentences` that has at least ``min_sentence_chars`` characters and is no :func:`attribution
    <is_attribution>`.

    Same results as those regex functions (a test checks it on random text), computed for a whole batch with
    a few numpy passes over the code points instead of one regex call per sentence:

    * a code point is kept in a key when it is a letter/digit/ideograph (``isalnum``);
    * a sentence ends at every sentence-end character, and at a ``.`` followed by whitespace or the end of the
      text (``\\.(?=\\s|$)``; a ``$`` before a final newline is covered by the newline being whitespace);
    * numbering the sentences with a running count of sentence ends (and text starts) gives every kept code
      point its sentence; runs of separators only make empty sentences, which the length filter drops;
    * a sentence whose first code point that is neither whitespace nor a sentence end is a dash (``—``, ``―``,
      or ``-`` followed by ``-``) is an attribution: its run is dropped.
    """
    import numpy as np
    if not normalized:
        return []
    word_t, space_t, end_t = _tables()
    lengths = np.fromiter(map(len, normalized), dtype=np.intp, count=len(normalized))
    offsets = np.zeros(len(normalized) + 1, dtype=np.intp)
    np.cumsum(lengths, out=offsets[1:])
    cps = _code_points("".join(normalized))
    if cps.size and cps.max() > 0xFFFF:  # astral code points: clip for the tables, fix their word flag below
        bmp = np.minimum(cps, 0xFFFF)
        word = word_t[bmp]
        end = end_t[bmp]
        astral = np.flatnonzero(cps > 0xFFFF)
        word[astral] = [chr(c).isalnum() for c in cps[astral].tolist()]
        end[astral] = False
    else:
        word = word_t[cps]
        end = end_t[cps]
    dots = np.flatnonzero(cps == ord("."))
    if dots.size:
        nxt = dots + 1
        last = np.zeros(cps.size + 1, dtype=bool)
        last[offsets[1:]] = True  # position just past the end of each text
        at_end = last[nxt]
        follow = cps[np.minimum(nxt, cps.size - 1)]
        end[dots[at_end | (space_t[np.minimum(follow, 0xFFFF)] & (follow <= 0xFFFF))]] = True
    starts = offsets[:-1][lengths > 0]
    ends_at_starts = end[starts]  # (the sentence ends proper, for the labels and attributions)
    end[starts] = True  # a new text starts a new sentence (harmless on separators: they are never kept)
    # (np.compress and int32 running counts: the same values as boolean indexing and int64 sums, several times
    # faster on masks as irregular as these; a count never exceeds the number of code points)
    count_t = np.int32 if cps.size < 2**31 - 1 else np.intp
    numbers = np.cumsum(end, dtype=count_t)  # sentence number of each code point
    first = _Openings(cps, end, numbers, starts, ends_at_starts)
    numbers = first.end_labels()
    sentence = np.compress(word, numbers)  # of each kept code point
    attributions = first.attributions()
    kept = np.compress(word, cps).tobytes().decode("utf-32-le")  # letters/digits/ideographs never include surrogates
    kept_before = np.concatenate(([0], np.cumsum(word, dtype=count_t)))[offsets]  # where each text starts in kept
    # runs of equal sentence numbers in ``kept`` are the non-empty sentence keys
    bounds = np.flatnonzero(np.diff(sentence)) + 1
    run_start = np.concatenate(([0], bounds))
    run_end = np.concatenate((bounds, [sentence.size]))
    long_enough = (run_end - run_start) >= max(1, min_sentence_chars)
    if attributions.size and sentence.size:
        long_enough &= ~np.isin(sentence[run_start], attributions)
    run_start, run_end = run_start[long_enough], run_end[long_enough]
    run_text = np.searchsorted(kept_before, run_start, side="right") - 1
    bounds_py = kept_before.tolist()
    out: list[tuple[str, list[str]]] = [(kept[bounds_py[i] : bounds_py[i + 1]], []) for i in range(len(normalized))]
    for i, a, b in zip(run_text.tolist(), run_start.tolist(), run_end.tolist()):
        out[i][1].append(kept[a:b])
    return out


_DASHES = (0x2014, 0x2015)


class _Openings:
    """How the sentences of a batch open (:func:`_keys_many`'s sentence numbers): each sentence's first code point
    that is neither whitespace nor a sentence end (``end`` marks the texts' first code points too;
    ``ends_at_starts``: whether those are sentence ends proper)."""

    def __init__(self, cps: np.ndarray, end: np.ndarray, numbers: np.ndarray, starts: np.ndarray,
                 ends_at_starts: np.ndarray) -> None:
        self.cps, self.end, self.numbers = cps, end, numbers
        self.starts, self.ends_at_starts = starts, ends_at_starts
        self._space: np.ndarray | None = None

    def first(self) -> np.ndarray:
        """The position of each sentence's first solid code point."""
        import numpy as np
        if self._space is None:
            self._space = _tables()[1][np.minimum(self.cps, 0xFFFF)]  # (no astral code point is a space)
        separator = self.end.copy()
        separator[self.starts] = self.ends_at_starts
        at = np.flatnonzero(~separator & ~self._space)
        return at[np.concatenate(([True], self.numbers[at[1:]] != self.numbers[at[:-1]]))]

    def end_labels(self) -> np.ndarray:
        """The sentence numbers once the first ``】`` of each sentence opening with ``【`` ends it (again on what
        follows: a sentence may open with several labels). ``end`` is updated."""
        import numpy as np
        cps = self.cps
        closes = np.flatnonzero(cps == ord(_LABEL_CLOSE))
        while closes.size:
            first = self.first()
            first = first[cps[first] == ord(_LABEL_OPEN)]
            i = np.searchsorted(closes, first)
            inside = i < closes.size
            first, close = first[inside], closes[i[inside]]
            close = close[self.numbers[close] == self.numbers[first]]
            if not close.size:
                break
            self.end[close] = True
            self.numbers = np.cumsum(self.end, dtype=self.numbers.dtype)
        return self.numbers

    def attributions(self) -> np.ndarray:
        """The numbers of the sentences that are attributions: the first solid code point is ``—`` or ``―``, or a
        ``-`` followed at once by another ``-``."""
        import numpy as np
        cps, numbers = self.cps, self.numbers
        dashes = (cps == _DASHES[0]) | (cps == _DASHES[1]) | (cps == ord("-"))
        if not dashes.any():
            return np.zeros(0, dtype=numbers.dtype)
        first = self.first()
        first = first[dashes[first]]
        hyphen = cps[first] == ord("-")
        nxt = np.minimum(first + 1, cps.size - 1)
        double = (first + 1 < cps.size) & (cps[nxt] == ord("-")) & (numbers[nxt] == numbers[first])
        return numbers[first[~hyphen | double]]


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
    # Only multi-character ASCII tokens that are neither alphanumeric nor whitespace are re-split. Most tokens of
    # Chinese text are not ASCII: ``compress`` skips them at C speed, Python only looks at the ASCII ones.
    ascii_at = compress(count(), map(str.isascii, tokens))
    split_at = [i for i in ascii_at if len(tokens[i]) > 1 and not tokens[i].isalnum() and not tokens[i].isspace()]
    if not split_at:
        return tokens
    out: list[str] = []
    prev = 0
    for i in split_at:
        out.extend(tokens[prev:i])
        out.extend(x for x in _JIEBA_SKIP.split(tokens[i]) if x)
        prev = i + 1
    out.extend(tokens[prev:])
    return out


def _rjieba_cut(normalized: str) -> list[str]:
    import rjieba  # type: ignore[import-not-found]

    tokens = rjieba.cut(normalized)
    # Most texts hold none of the symbols the pattern needs; a few substring tests are cheaper than its scan.
    if any(c in normalized for c in ".+#&_%-") and _ASCII_RUN_WITH_SYMBOLS.search(normalized):
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
    from es_simhash import settings

    preferred = settings.segmenter(preferred)
    if preferred == "rjieba":
        import rjieba  # noqa: F401  # type: ignore[import-not-found]

        return "rjieba"
    if preferred == "auto":
        # found, not imported: importing rjieba builds its dictionary (~0.1 s), which a run whose native
        # fingerprint core segments never needs
        import importlib.util

        return "rjieba" if importlib.util.find_spec("rjieba") is not None else "jieba"
    return "jieba"


def segment(normalized: str, segmenter: str = "auto") -> list[str]:
    """Tokens of a normalised text: jieba-compatible words for Chinese (and mixed) text, words otherwise.

    Punctuation and spaces come back as tokens from the Chinese segmenter; the fingerprint gives them weight 0.
    """
    if has_cjk(normalized):
        return _chinese_segmenter(segmenter_name(segmenter))(normalized)
    return _latin_tokens(normalized)


def _read_word_list(name: str) -> Iterable[str]:
    data = resources.files("es_simhash").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    words = [line for line in map(str.strip, data.splitlines()) if line and not line.startswith("#")]
    return _normalize_many(words)  # (:func:`normalize` of each, in one call)


@lru_cache(maxsize=None)
def stopwords() -> frozenset[str]:
    """The shipped Chinese and English stop words (normalised)."""
    return frozenset(_read_word_list("stopwords_zh.txt")) | frozenset(_read_word_list("stopwords_en.txt"))
