"""The reference engine: fingerprints in Python with numpy, vectorised over a batch (one dict lookup per
token, then gathers and two ``bincount``'s). The native core reproduces it bit for bit.

A :class:`~es_simhash.fingerprint.fingerprinter.Fingerprinter` makes its :class:`ReferenceEngine` on first use
(this module imports numpy, which a run on the native core never needs). A subclass of :class:`ReferenceEngine`,
given as ``Fingerprinter(python_engine=...)``, changes the fingerprints (token weights, terms, the SimHash) and so
runs on Python alone."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, compress
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

import numpy as np

from es_simhash.fingerprint import text as _text
from es_simhash.fingerprint.events import event_bags
from es_simhash.fingerprint.hashes import bottom_k, content_hashes, least_and_sum, number_bag, sentence_hashes
from es_simhash.fingerprint.model import FINGERPRINT_VERSION, FUZZY_MARK, WEIGHT_SCALE, Fingerprint

_FUZZY_KEEP = (1 << 62) | ((1 << 30) - 1)
"""The bits of a sentence's least shingle hash that its fuzzy hash keeps (bit 62 and the low 30): the others are
:data:`~es_simhash.fingerprint.model.FUZZY_MARK`'s, set, and the top bit, clear."""
MIN_FUZZY_SENTENCES = 3
"""A text gets fuzzy hashes when it has at least this many distinct long sentences."""

if TYPE_CHECKING:
    from es_simhash.fingerprint.idf import IDFTable


class EngineSettings(Protocol):
    """What a :class:`ReferenceEngine` reads of the object that makes it (a
    :class:`~es_simhash.fingerprint.fingerprinter.Fingerprinter`), as they are at each batch: this module knows no
    fingerprinter (the fingerprinter imports it, not the other way)."""

    idf: IDFTable
    stopwords: frozenset[str]
    segmenter: str
    min_token_len: int
    n_sentences: int
    min_sentence_chars: int
    short_chars: int
    sketch: int
    sketch_chars: int
    sketch_shingle: tuple[int, int]
    line_sketch: int
    tf: str
    n_fuzzy: int


def _hash64_many(tokens: Sequence[str]) -> np.ndarray:
    """:func:`~es_simhash.fingerprint.model.hash64` of each string, as a uint64 array (the 8-byte little-endian
    digests read in one go)."""
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(t.encode("utf-8"), digest_size=8).digest() for t in tokens])
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


_WORD_CHAR = re.compile(r"[^\W_]")  # a letter, digit or ideograph


class TokenIds(dict):
    """token -> vocabulary id. Looking up a token not seen yet gives it the next id and queues it in ``new``, so
    one C-level pass of lookups (:meth:`Vocabulary.ids_of`) both finds the known tokens and numbers the new ones."""

    __slots__ = ("new",)

    def __init__(self) -> None:
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, token: str) -> int:
        i = self[token] = len(self)
        self.new.append(token)
        return i


@dataclass
class Vocabulary:
    """Per-token cache: id -> (64-bit hash, integer weight). Grows as new tokens are seen."""

    ids: TokenIds = field(default_factory=TokenIds)
    hashes: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.uint64))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.float64))
    words: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=bool))  # has a letter/digit/ideograph

    def ids_of(self, tokens: list[str], weights_of: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Ids of the tokens; the tokens not seen yet get the next ids, and their hashes and weights (``weights_of``
        maps a list of new tokens to their weights) are computed and stored in bulk."""
        ids = self.ids
        try:
            out = np.fromiter(map(ids.__getitem__, tokens), dtype=np.intp, count=len(tokens))
            if ids.new:
                start, stop = len(ids) - len(ids.new), len(ids)
                hashes, weights = _hash64_many(ids.new), weights_of(ids.new)
                if stop > len(self.hashes):
                    size = max(stop, 2 * len(self.hashes))
                    self.hashes = np.resize(self.hashes, size)
                    self.weights = np.resize(self.weights, size)
                    self.words = np.resize(self.words, size)
                self.hashes[start:stop] = hashes
                self.weights[start:stop] = weights
                self.words[start:stop] = np.fromiter(
                    (_WORD_CHAR.search(t) is not None for t in ids.new), dtype=bool, count=stop - start)
        except BaseException:
            for token in ids.new:  # numbered but not stored: forget them (they are the highest ids)
                del ids[token]
            raise
        finally:
            ids.new.clear()
        return out


def _tf_weights(weights: np.ndarray, tf: np.ndarray, mode: str) -> np.ndarray:
    """The weight of a token that occurs ``tf`` times in a document, from the weight of one occurrence: ``raw``
    ``w * tf``; ``sublinear`` ``round(w * (1 + ln tf))``; ``cap:N`` ``w * min(tf, N)``. Whole numbers, so the
    sums stay exact."""
    if mode == "sublinear":
        return np.rint(weights * (1.0 + np.log(tf)))
    if mode.startswith("cap:"):
        return weights * np.minimum(tf, int(mode[4:]))
    return weights * tf


# (16 x 4) float64 table: row v holds the bits of the nibble v, least significant first.
@lru_cache(maxsize=1)
def _nibble_bits() -> np.ndarray:
    return np.unpackbits(np.arange(16, dtype=np.uint8)[:, None], axis=1, bitorder="little")[:, :4].astype(np.float64)


class ReferenceEngine:
    """The pure-Python (numpy) fingerprint computation for ``owner``, the
    :class:`~es_simhash.fingerprint.fingerprinter.Fingerprinter` whose settings (:class:`EngineSettings`: ``idf``,
    ``stopwords``, ``segmenter``, ``min_token_len``, ``n_sentences``, ...) it reads as they are at each batch. It
    caches token hashes and weights (a :class:`Vocabulary`): one thread at a time (the owner holds a lock around it)."""

    MAX_VOCABULARY = 4_000_000
    _TOKENS_PER_CHUNK = 1 << 16
    _DOCS_PER_CHUNK = 4096

    def __init__(self, owner: EngineSettings) -> None:
        self.owner = owner
        self._vocab = Vocabulary()

    def token_weight(self, token: str) -> int:
        """Integer weight of one occurrence of ``token`` (0 for punctuation, spaces, stop words, short tokens)."""
        owner = self.owner
        if len(token) < owner.min_token_len or token in owner.stopwords or _text.content_key(token) != token:
            return 0
        return max(0, round(owner.idf.get(token) * WEIGHT_SCALE))

    def _token_weights(self, tokens: list[str]) -> np.ndarray:
        """:meth:`token_weight` of each token, as float64 (the same values, with a few C-level passes).

        ``content_key(t) == t`` exactly when ``t.isalnum()`` (for a non-empty ``t``: ``[\\W_]`` removes exactly
        the code points that are not ``isalnum()``, see ``text._tables``), and ``numpy.rint`` rounds half to even
        like ``round``, so every weight equals :meth:`token_weight`'s. A subclass that overrides
        :meth:`token_weight` gets it called per token.
        """
        n, owner = len(tokens), self.owner
        if type(self).token_weight is not ReferenceEngine.token_weight:
            return np.fromiter(map(self.token_weight, tokens), dtype=np.float64, count=n)
        ok = np.fromiter(map(str.isalnum, tokens), dtype=bool, count=n)
        if owner.min_token_len > 1:
            ok &= np.fromiter(map(len, tokens), dtype=np.intp, count=n) >= owner.min_token_len
        ok &= ~np.fromiter(map(owner.stopwords.__contains__, tokens), dtype=bool, count=n)
        weights = np.zeros(n, dtype=np.float64)
        at = np.flatnonzero(ok)
        if at.size:
            idf = np.fromiter(map(owner.idf.get, compress(tokens, ok.tolist())), dtype=np.float64, count=at.size)
            w = np.rint(idf * WEIGHT_SCALE)
            weights[at] = np.where(w > 0, w, 0.0)
        return weights

    def fingerprint_many(self, texts: Sequence[str]) -> list[Fingerprint]:
        """The fingerprints of a batch of texts: the reference the native core reproduces."""
        normalized = _text._normalize_many(texts)
        seg = self.owner.segmenter
        tokens = [_text.segment(n, seg) for n in normalized]
        simhashes, n_features = self._simhash_batch(tokens)
        keys = _text._keys_many(normalized, self.owner.min_sentence_chars)
        short_chars = self.owner.short_chars
        sketches = self._sketches(normalized, keys)
        signatures = self._signatures([sentence_keys for _, sentence_keys in keys])
        fuzzy = self._fuzzy(keys, sketches)
        return [
            Fingerprint(
                sim if nf else 0,  # simhash
                content_hash,
                signature,  # sentences
                nf,  # n_features
                len(key),  # n_chars
                len(key) < short_chars,  # short
                FINGERPRINT_VERSION,
                word_bag,
                sketch,  # the shingle sketch of a shorter text
                number_bag(n),
                fz[0],  # the fuzzy hashes of a longer text
                fz[1],  # and the digests of their sentences
                *event_bags(n),  # date_bag, place_bag
            )
            for n, (key, _), content_hash, sim, nf, signature, sketch, word_bag, fz in zip(
                normalized, keys, content_hashes([k for k, _ in keys]), simhashes.tolist(), n_features.tolist(),
                signatures, sketches, self._word_bags(tokens, sketches), fuzzy)
        ]

    def _fuzzy(self, keys: list[tuple[str, list[str]]], sketches: list[tuple[int, ...]]
               ) -> list[tuple[tuple[int, ...], int]]:
        """:attr:`Fingerprint.fuzzy` and :attr:`Fingerprint.fuzzy_digests` of each text without a sketch and with
        :data:`MIN_FUZZY_SENTENCES` distinct sentence keys or more. For each of its ``fuzzy`` longest distinct
        sentence keys (equal lengths in text order): the least hash of its character shingles (the sketch's
        shingles and hash: 3 characters in a key with an ideograph, 5 in others), marked
        (:data:`~es_simhash.fingerprint.model.FUZZY_MARK`, :data:`_FUZZY_KEEP`), each once, ascending; and the low 4
        bits of the sum of its shingles' hashes (a hash of the whole sentence) at the place of its fuzzy hash in the
        digests (the first 16)."""
        out: list[tuple[tuple[int, ...], int]] = [((), 0)] * len(keys)
        if not self.owner.n_fuzzy:
            return out
        chosen: dict[int, list[tuple[int, int, str]]] = {}  # shingle length -> (text, place, key)
        places: dict[int, list[str]] = {}
        for i, ((_, sentence_keys), sketch) in enumerate(zip(keys, sketches)):
            if sketch or len(set(sentence_keys)) < MIN_FUZZY_SENTENCES:
                continue
            longest = places[i] = self._longest(sentence_keys, self.owner.n_fuzzy)
            for j, k in enumerate(longest):
                n = self.owner.sketch_shingle[0] if _text.has_cjk(k) else self.owner.sketch_shingle[1]
                chosen.setdefault(n, []).append((i, j, k))
        found: dict[int, list[int]] = {i: [0] * len(ks) for i, ks in places.items()}
        digest: dict[int, list[int]] = {i: [0] * len(ks) for i, ks in places.items()}
        for n, items in chosen.items():
            for (i, j, _), (least, total) in zip(items, least_and_sum([k for _, _, k in items], n)):
                found[i][j] = FUZZY_MARK | (least & _FUZZY_KEEP)
                digest[i][j] = total & 0xF
        for i, hashes in found.items():
            fuzzy: dict[int, int] = {}
            for h, d in zip(hashes, digest[i]):
                fuzzy.setdefault(h, d)
            ordered = sorted(fuzzy.items())  # (ascending: as storage gives a set back)
            out[i] = (tuple(h for h, _ in ordered), sum(d << (4 * j) for j, (_, d) in enumerate(ordered[:16])))
        return out

    @staticmethod
    def _longest(keys: list[str], n: int) -> list[str]:
        """The ``n`` longest distinct keys (equal lengths in text order)."""
        seen: dict[str, None] = {}
        for k in sorted(keys, key=len, reverse=True):  # stable: equal lengths stay in text order
            seen.setdefault(k)
            if len(seen) == n:
                break
        return list(seen)

    def _word_bags(self, tokens: list[list[str]], sketches: list[tuple[int, ...]]) -> list[int]:
        """:attr:`Fingerprint.word_bag` of each text: for the texts with a sketch, the sum of the vocabulary hashes
        of their word tokens (every token is in the vocabulary once the SimHashes are computed), else 0."""
        out = [0] * len(tokens)
        with_sketch = [i for i, sk in enumerate(sketches) if sk]
        if not with_sketch:
            return out
        vocab = self._vocab
        lengths = np.fromiter((len(tokens[i]) for i in with_sketch), dtype=np.intp, count=len(with_sketch))
        ids = vocab.ids_of(list(chain.from_iterable(tokens[i] for i in with_sketch)), self._token_weights)
        values = np.where(vocab.words[ids], vocab.hashes[ids], np.uint64(0))
        starts = np.zeros(len(with_sketch), dtype=np.intp)
        np.cumsum(lengths[:-1], out=starts[1:])
        sums = np.add.reduceat(np.append(values, np.uint64(0)), starts)  # appended 0: a last text without tokens
        sums[lengths == 0] = 0
        for i, v in zip(with_sketch, sums.tolist()):
            out[i] = v
        return out

    def _sketches(self, normalized: Sequence[str], keys: list[tuple[str, list[str]]]) -> list[tuple[int, ...]]:
        """Bottom-``sketch`` shingle hashes of each shorter text's content key (``()`` for longer texts), with the
        bottom-``line_sketch`` hashes of each of its long enough lines when it has two or more (ascending)."""
        out: list[tuple[int, ...]] = [()] * len(keys)
        if not self.owner.sketch or not self.owner.sketch_chars:
            return out
        by_n: dict[int, list[int]] = {}
        for i, (key, _) in enumerate(keys):
            if 0 < len(key) < self.owner.sketch_chars:
                n = self.owner.sketch_shingle[0] if _text.has_cjk(key) else self.owner.sketch_shingle[1]
                by_n.setdefault(n, []).append(i)
        for n, docs in by_n.items():
            for i, sketch in zip(docs, bottom_k([keys[i][0] for i in docs], n, self.owner.sketch)):
                out[i] = sketch
            if self.owner.line_sketch:
                self._add_line_sketches(out, normalized, keys, docs, n)
        return out

    def _add_line_sketches(self, out: list[tuple[int, ...]], normalized: Sequence[str],
                           keys: list[tuple[str, list[str]]], docs: list[int], n: int) -> None:
        """The bottom-``line_sketch`` hashes of each line (of at least ``min_sentence_chars``
        letters/ideographs, twice that without Chinese) of the texts ``docs`` that have two such lines or more,
        merged into their sketches in ``out``."""
        min_chars = self.owner.min_sentence_chars
        doc_of_line: list[int] = []
        line_keys: list[str] = []
        for i in docs:
            least = min_chars if _text.has_cjk(keys[i][0]) else 2 * min_chars
            lines = [k for k in map(_text.content_key, normalized[i].split("\n")) if len(k) >= least]
            if len(lines) >= 2:
                doc_of_line += [i] * len(lines)
                line_keys += lines
        merged: dict[int, set[int]] = {}
        for i, sketch in zip(doc_of_line, bottom_k(line_keys, n, self.owner.line_sketch) if line_keys else ()):
            merged.setdefault(i, set(out[i])).update(sketch)
        for i, hashes in merged.items():
            out[i] = tuple(sorted(hashes))

    def _signature_keys(self, keys: list[str]) -> list[str]:
        """The ``sentences`` longest distinct sentence keys (of at least ``min_sentence_chars`` characters)."""
        n = self.owner.n_sentences
        return self._longest(keys, n) if n and keys else []

    def _signatures(self, sentence_keys: list[list[str]]) -> list[tuple[int, ...]]:
        """The signature of each text from its sentence keys (of at least ``min_sentence_chars`` characters, in
        text order): the hashes of its :meth:`_signature_keys`, all hashed in one batch."""
        chosen = [self._signature_keys(k) for k in sentence_keys]
        flat = sentence_hashes(list(chain.from_iterable(chosen)))
        signatures, pos = [], 0
        for c in chosen:
            signatures.append(tuple(dict.fromkeys(flat[pos : pos + len(c)])))
            pos += len(c)
        return signatures

    def _token_ids(self, flat: list[str]) -> np.ndarray:
        """Vocabulary ids of the tokens: one C-level pass of dict lookups; new tokens are added on a miss."""
        vocab = self._vocab
        if len(vocab.ids) > self.MAX_VOCABULARY:
            self._vocab = vocab = Vocabulary()
        return vocab.ids_of(flat, self._token_weights)

    def _simhash_batch(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        n_docs = len(token_lists)
        simhashes = np.zeros(n_docs, dtype=np.uint64)
        n_features = np.zeros(n_docs, dtype=np.int64)
        start = 0
        while start < n_docs:  # bound memory: a few arrays of (tokens x 8..16) and (docs x 256..2048) per chunk
            stop, total = start, 0
            while stop < n_docs and (
                stop == start
                or (total + len(token_lists[stop]) <= self._TOKENS_PER_CHUNK and stop - start < self._DOCS_PER_CHUNK)
            ):
                total += len(token_lists[stop])
                stop += 1
            self._simhash_chunk(token_lists[start:stop], simhashes[start:stop], n_features[start:stop])
            start = stop
        return simhashes, n_features

    def _simhash_chunk(self, token_lists: list[list[str]], out: np.ndarray, n_out: np.ndarray) -> None:
        """SimHash of each document of the chunk, by digit histograms instead of a (tokens x 64) bit matrix.

        Each 64-bit token hash is read as ``64 / r`` digits of ``r`` bits (r = 8: bytes, r = 4: nibbles). One
        ``bincount`` sums the token weights per (document, digit position, digit value); a product of that
        histogram with the (2^r x r) table of the bits of every digit value then gives, for every document and
        bit, the weight of the tokens whose hash has that bit set. Weights are whole numbers far below 2^53, so
        every float64 sum here is exact whatever its order: the bits are identical to the per-bit definition.
        Bytes need 8 histogram entries per token but 2,048 per document, nibbles 16 and 256: bytes win when
        documents average more than ~224 weighted tokens.
        """
        n_docs = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.intp, count=n_docs)
        ids = self._token_ids(list(chain.from_iterable(token_lists)))
        weights = self._vocab.weights[ids]
        keep = weights > 0
        doc_of = np.compress(keep, np.repeat(np.arange(n_docs), lengths))  # (np.compress: x[keep], faster)
        weights = np.compress(keep, weights)
        counts = np.bincount(doc_of, minlength=n_docs)
        n_out[:] = counts
        if doc_of.size == 0:
            return
        kept = np.compress(keep, ids)
        if self.owner.tf != "raw":  # one weight per (document, token), from the token's count in the document
            pair, first, tf = np.unique(doc_of.astype(np.int64) * len(self._vocab.weights) + kept,
                                        return_index=True, return_counts=True)
            doc_of, kept, weights = doc_of[first], kept[first], weights[first]
            weights = _tf_weights(weights, tf, self.owner.tf)
        hashes = self._vocab.hashes[kept]
        digit_bits = 8 if doc_of.size >= 224 * n_docs else 4
        n_digits, n_values = 64 // digit_bits, 1 << digit_bits
        digits = hashes.astype("<u8", copy=False).view(np.uint8).reshape(-1, 8)  # byte j = bits 8j..8j+7
        if digit_bits == 4:  # nibble 2j = low half of byte j (bits 8j..8j+3), 2j+1 = high half
            digits = np.stack((digits & 0xF, digits >> 4), axis=2).reshape(-1, 16)
        # histogram bin of (document, digit position k, digit value v) = (doc * n_digits + k) * n_values + v
        bins = (doc_of * (n_digits * n_values))[:, None] + (np.arange(n_digits) * n_values) + digits
        hist = np.bincount(
            bins.reshape(-1), weights=np.repeat(weights, n_digits), minlength=n_docs * n_digits * n_values
        ).reshape(n_docs * n_digits, n_values)
        if digit_bits == 8:
            # A byte is 16 * hi + lo: its bits 0..3 depend only on lo, bits 4..7 only on hi, so each 256-bin byte
            # histogram folds into two 16-bin nibble histograms (lo first: nibble 2j, then hi: nibble 2j+1).
            h = hist.reshape(-1, 16, 16)
            hist = np.stack((h.sum(axis=1), h.sum(axis=2)), axis=1)
        # weight behind each bit being 1. einsum (not matmul): the product is tiny and must not wake BLAS threads,
        # whose spinning costs far more than the product on a busy machine.
        ones = np.einsum("nv,vb->nb", hist.reshape(n_docs * 16, 16), _nibble_bits()).reshape(n_docs, 64)
        totals = np.bincount(doc_of, weights=weights, minlength=n_docs)
        set_bits = (2 * ones) > totals[:, None]  # documents without features: 0 > 0, no bits
        out[:] = np.packbits(set_bits, axis=1, bitorder="little").reshape(-1).view("<u8")
