"""The hashes of a fingerprint besides the SimHash: content and sentence hashes (with the character-multiset
"bag" that tells a reordering or a negation apart, :func:`contradicts`), and the shingle sketch's bottom-k hashes
(:func:`bottom_k`)."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

from es_simhash.fingerprint import text as _text
from es_simhash.fingerprint.model import SKETCH_BIT, Fingerprint, hash64

if TYPE_CHECKING:
    import numpy as np

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
"""A number of a normalised text (NFKC has made full-width digits ASCII): digits, and a decimal part."""
MIN_NUMBERS = 3
"""A text that gives fewer distinct numbers has no number bag (0): too few to tell one event from another."""


def number_bag(normalized: str) -> int:
    """:attr:`Fingerprint.number_bag` of a normalised text: the set of numbers its body gives (:data:`_NUMBER`,
    leading zeros kept, in the lines of its body: :func:`_body_line`) as a 64-bit bitmap (bit ``hash >> 58`` of
    each), 0 for a text of fewer than :data:`MIN_NUMBERS` distinct numbers (:func:`numbers_contained` compares
    two)."""
    numbers = {n for line in normalized.split("\n") if _body_line(line) for n in _NUMBER.findall(line)}
    if len(numbers) < MIN_NUMBERS:
        return 0
    bag = 0
    for n in numbers:
        bag |= 1 << (_number_hash(n) >> 58)
    return bag


def _count(bag: int) -> float:
    """How many numbers a bitmap holds, estimated from its empty bits (linear counting); infinite when full."""
    empty = 64 - bag.bit_count()
    return -64 * math.log(empty / 64) if empty else math.inf


def numbers_contained(a: int, b: int) -> float:
    """The share of the numbers of the text that gives fewer (of two with number bags ``a`` and ``b``) that the
    other gives too, estimated from the bitmaps: ``|A| + |B| - |A | B|`` over the smaller count (1 when the union
    fills the 64 bits: too many numbers to tell)."""
    union = _count(a | b)
    if union == math.inf:
        return 1.0
    na, nb = _count(a), _count(b)
    return min(1.0, max(0.0, na + nb - union) / min(na, nb))


def numbers_alike_in_count(a: int, b: int) -> bool:
    """Whether two number bags count about as many numbers (within a factor of 2): what a template's report of
    another event gives (its numbers replaced one for one), where a copy with a part left out gives fewer."""
    na, nb = _count(a), _count(b)
    return max(na, nb) <= 2 * min(na, nb)


def _number_hash(number: str) -> int:
    """A stable 64-bit hash of a number's digits (:func:`bytes_hash` of them)."""
    return bytes_hash(number.encode("ascii"))


def bytes_hash(data: bytes) -> int:
    """A stable 64-bit hash of a few bytes: a polynomial over them (from their count), then the splitmix64
    finaliser."""
    h = len(data)
    for b in data:
        h = (h * _SHINGLE_MUL + b + 1) & _U64_MASK
    return _mix64(h)


def _body_line(line: str) -> bool:
    """A line of the text's body, whose numbers are the event's: one that ends a sentence, or a row of figures (more
    digits than other letters: a table). A site's lines around the text, its date, telephone number, copyright and
    related headlines, are neither."""
    if _text.ends_sentence(line):
        return True
    digits = sum(1 for c in line if "0" <= c <= "9")
    return digits > 0 and 2 * digits > sum(1 for c in line if c.isalnum())


def _mix64(z: int) -> int:
    """The splitmix64 finaliser of one 64-bit integer (:func:`splitmix64` without numpy)."""
    z = ((z ^ (z >> 30)) * _M1) & _U64_MASK
    z = ((z ^ (z >> 27)) * _M2) & _U64_MASK
    return z ^ (z >> 31)


_M1, _M2, _GOLDEN = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x9E3779B97F4A7C15  # (splitmix64)
_SHINGLE_MUL = 0x100000001B3
_U64_MASK = (1 << 64) - 1


def splitmix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of ``z + golden ratio`` (uint64 arrays): a stable, well-mixed 64-bit hash."""
    import numpy as np
    z = z + np.uint64(_GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


def _shingle_hashes(keys: Sequence[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The hash of each ``n``-character shingle of each string (a string shorter than ``n`` is one shingle), in
    string then text order, and the string it comes from: a polynomial over the code points, then the splitmix64
    finaliser, the top bit set."""
    import numpy as np
    lengths = np.fromiter(map(len, keys), dtype=np.intp, count=len(keys))
    n_sh = np.maximum(lengths - n + 1, 1)  # shingles per string
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    cps = np.concatenate((_text._code_points("".join(keys)).astype(np.uint64), np.zeros(n, dtype=np.uint64)))
    doc = np.repeat(np.arange(len(keys)), n_sh)
    starts = offsets[:-1][doc] + (np.arange(doc.size) - np.repeat(np.cumsum(n_sh) - n_sh, n_sh))
    width = np.minimum(lengths, n)[doc]
    h = np.full(doc.size, np.uint64(n))
    for j in range(n):
        use = width > j
        h = np.where(use, h * np.uint64(_SHINGLE_MUL) + cps[starts + j] + np.uint64(1), h)
    return doc, splitmix64(h) | np.uint64(SKETCH_BIT)


def least_and_sum(keys: Sequence[str], n: int) -> list[tuple[int, int]]:
    """For each (non-empty) string: the least hash of its ``n``-character shingles (:func:`bottom_k`'s first) and
    the sum mod 2^64 of all of them (equal for equal strings, and for two strings that differ almost never)."""
    import numpy as np
    doc, z = _shingle_hashes(keys, n)
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    with np.errstate(over="ignore"):
        sums = np.add.reduceat(z, starts)
    return list(zip(np.minimum.reduceat(z, starts).tolist(), sums.tolist()))


def bottom_k(keys: Sequence[str], n: int, k: int) -> list[tuple[int, ...]]:
    """For each string: the ``k`` smallest distinct hashes of its ``n``-character shingles, ascending (a string
    shorter than ``n`` is one shingle). Stable 64-bit hashes (a polynomial over the code points, then the
    splitmix64 finaliser), computed for the whole batch with numpy; the results never collide in practice with
    sentence hashes (BLAKE2b), and a collision would only add a candidate."""
    import numpy as np
    doc, z = _shingle_hashes(keys, n)
    order = np.lexsort((z, doc))
    doc, z = doc[order], z[order]
    fresh = np.ones(doc.size, dtype=bool)
    fresh[1:] = (doc[1:] != doc[:-1]) | (z[1:] != z[:-1])
    doc, z = doc[fresh], z[fresh]
    first = np.searchsorted(doc, doc, side="left")
    keep = (np.arange(doc.size) - first) < k
    out: list[list[int]] = [[] for _ in keys]
    for d, v in zip(doc[keep].tolist(), z[keep].tolist()):
        out[d].append(v)
    return [tuple(x) for x in out]


# -- sentence hashes ---------------------------------------------------------------------------------------
# A sentence hash (top bit clear) is laid out as
#   bit 62       : the sentence has a CJK ideograph
#   bits 30..61  : "bag": the sum, mod 2^32, of a 32-bit hash of each character of the sentence key (a hash of
#                  the key's character multiset: the same for any reordering of the characters)
#   bits 0..29   : the low 30 bits of BLAKE2b of the key
# Equal keys give equal hashes, and different keys collide with probability ~2^-62; but two hashes
# can also be compared for *how* their sentences differ, without the text: equal bags and different keys mean
# the same characters in another order (two words swapped), and bags that differ by the bag of a negation word
# mean the negation was inserted or removed (see :func:`contradicts`).
CJK_SENTENCE_BIT = 1 << 62
_BAG_SHIFT, _BAG_MASK, _KEY_MASK = 30, (1 << 32) - 1, (1 << 30) - 1


def _char_hashes(cps: np.ndarray) -> np.ndarray:
    """32-bit hashes of code points (splitmix64 finaliser, high half): stable across runs and machines."""
    import numpy as np
    return splitmix64(cps.astype(np.uint64)) >> np.uint64(32)


@lru_cache(maxsize=1)
def _bmp_char_hashes() -> np.ndarray:
    import numpy as np
    return _char_hashes(np.arange(0x10000, dtype=np.uint64))


def _bags(keys: Sequence[str]) -> list[int]:
    """The character-multiset hash (sum of character hashes mod 2^32) of each non-empty key."""
    import numpy as np
    if not keys:
        return []
    lengths = np.fromiter(map(len, keys), dtype=np.intp, count=len(keys))
    starts = np.zeros(len(keys), dtype=np.intp)
    np.cumsum(lengths[:-1], out=starts[1:])
    cps = _text._code_points("".join(keys))
    if cps.size and cps.max() > 0xFFFF:
        hashes = _char_hashes(cps)
    else:
        hashes = _bmp_char_hashes()[cps]
    sums = np.add.reduceat(hashes, starts)
    return (sums & np.uint64(_BAG_MASK)).tolist()


def content_hashes(keys: Sequence[str]) -> list[int]:
    """The content hash of each content key (0 for an empty key): bit 63 set when the text has a CJK
    ideograph, bits 32..62 the low 31 bits of the key's bag, bits 0..31 the low 32 bits of BLAKE2b of the key.
    Equal keys give equal hashes; different keys collide with probability ~2^-63."""
    nonempty = [k for k in keys if k]
    bags = iter(_bags(nonempty))
    out = []
    for key in keys:
        if not key:
            out.append(0)
            continue
        cjk = 1 << 63 if _text.has_cjk(key) else 0
        out.append(cjk | ((next(bags) & _TEXT_BAG_MASK) << 32) | (hash64(key) & 0xFFFFFFFF))
    return out


def sentence_hashes(keys: Sequence[str]) -> list[int]:
    """The sentence hash of each (non-empty) sentence key: see the layout above."""
    out = []
    for key, bag in zip(keys, _bags(keys)):
        cjk = CJK_SENTENCE_BIT if _text.has_cjk(key) else 0
        out.append(cjk | (bag << _BAG_SHIFT) | (hash64(key) & _KEY_MASK))
    return out


# Negation words: inserting or removing one of these turns a sentence into its opposite. Their bags, and the
# negated bags, mod 2^32. English keys have no spaces or apostrophes, so "isn't" is "is" + "nt".
NEGATIONS = ("不", "没", "没有", "未", "非", "无", "别", "勿", "莫", "否", "并不", "从不", "绝不", "决不",
             "not", "no", "never", "nt", "nor")


def _bag_of(key: str) -> int:
    """:func:`_bags` of one key in plain Python (the same splitmix64 arithmetic, modulo 2^64): for the constants
    below, computed at import without numpy."""
    bag = 0
    for ch in key:
        z = (ord(ch) + _GOLDEN) & _U64_MASK
        z = ((z ^ (z >> 30)) * _M1) & _U64_MASK
        z = ((z ^ (z >> 27)) * _M2) & _U64_MASK
        bag += (z ^ (z >> 31)) >> 32
    return bag & _BAG_MASK


_NEGATION_DELTAS = frozenset(b for bag in map(_bag_of, NEGATIONS) for b in (bag, (-bag) & _BAG_MASK))
_TEXT_BAG_MASK = (1 << 31) - 1
_TEXT_NEGATION_DELTAS = frozenset(b & _TEXT_BAG_MASK for b in _NEGATION_DELTAS)


def text_contradicts(a: "Fingerprint", b: "Fingerprint") -> bool:
    """Whether two texts say opposite things: different content, and either the same characters (texts with CJK
    ideographs, by the content hashes) or the same words (by :attr:`Fingerprint.word_bag`) in another order with
    different sentences (not just the same sentences reordered), or one is the other with a negation word
    inserted."""
    if a.content_hash == b.content_hash or not a.content_hash or not b.content_hash:
        return False
    delta = ((a.content_hash >> 32) - (b.content_hash >> 32)) & _TEXT_BAG_MASK
    same_words = a.word_bag != 0 and a.word_bag == b.word_bag
    if (delta == 0 and a.content_hash & b.content_hash & (1 << 63)) or same_words:
        # the same characters (Chinese) or words (any language) in another order; unless the sentences are the
        # same ones, reordered, words moved inside a sentence or across sentences
        return set(a.sentences) != set(b.sentences)
    return delta in _TEXT_NEGATION_DELTAS


def contradicts(a: int, b: int) -> bool:
    """Whether sentence hashes ``a`` and ``b`` are of different sentences that say opposite things: one is the
    other with a negation word inserted (any language), or with its characters reordered (two words swapped:
    only for sentences with CJK ideographs, where a character is a word or part of one; an English letter swap
    is a typo). Sketch hashes never contradict."""
    return contradicting_pair((a,), (b,))


def contradicting_pair(a: Iterable[int], b: Iterable[int]) -> bool:
    """Whether a sentence hash of ``a`` and one of ``b`` :func:`contradict <contradicts>` each other (the meaning
    guard compares every pair of two texts' signature sentences: one pass, no call per pair)."""
    theirs = [y for y in b if y < SKETCH_BIT]
    if not theirs:
        return False
    negations, cjk = _NEGATION_DELTAS, CJK_SENTENCE_BIT
    for x in a:
        if x >= SKETCH_BIT:
            continue
        bag = x >> _BAG_SHIFT
        for y in theirs:
            delta = (bag - (y >> _BAG_SHIFT)) & _BAG_MASK
            if delta == 0:  # the same characters: reordered (CJK only), unless the same sentence
                if x & y & cjk and (x ^ y) & _KEY_MASK:
                    return True
            elif delta in negations:
                return True
    return False
