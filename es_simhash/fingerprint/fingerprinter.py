"""Fingerprints: TF-IDF weighted 64-bit SimHash, its four 16-bit segments, and the long-sentence signature.

How a text becomes a :class:`Fingerprint` (``FINGERPRINT_VERSION`` 6):

1. ``text.normalize``: NFKC (full/half width), casefold, collapsed whitespace (a run with a line break becomes
   one line break: since version 3 a title or heading line is a sentence of its own); since version 4 a space
   between two CJK ideographs is removed (a repost spaced out character by character reads as the original);
   since version 6 the text a reader sees (:mod:`es_simhash.fold`): invisible characters dropped, Traditional
   characters folded to Simplified ones, and romanisation written after ideographs dropped, so a reprint in
   either script, or a converter's annotated copy, is the same text.
2. ``text.segment``: jieba-compatible words for Chinese, words for other text.
3. Each token gets the weight ``w * min(tf, 5)`` with ``w = round(idf * 1024)`` and ``tf`` its count in the text
   (capped TF, version 4: one term repeated all over a text, such as an anonymised name, cannot outweigh the rest;
   ``tf="raw"`` gives version 3's ``w * tf``); punctuation, whitespace, stop words and tokens shorter than
   ``min_token_len`` get 0. Weights are whole numbers held in float64, so every sum is exact and the result does
   not depend on summation order.
4. Each token is hashed to 64 bits with BLAKE2b (stable across runs, machines and Python versions, well mixed).
   Bit ``i`` of the SimHash is 1 when the weights of the tokens whose hash has bit ``i`` set outweigh the rest
   (a tie gives 0).
5. The SimHash splits into four 16-bit segments (segment ``i`` = bits ``16i .. 16i+15``): by the pigeonhole
   principle two fingerprints within Hamming distance 3 agree on at least one segment.
6. The long-sentence signature: BLAKE2b hashes of the ``sentences`` longest sentences of at least
   ``min_sentence_chars`` letters/ideographs, each sentence reduced to its letters, digits and ideographs. A few
   longest sentences identify a reprinted article even when wrappers and edits move its SimHash. Sentence hashes
   have the top bit cleared. Since version 3 a sentence hash (and the content hash) carries a hash of the
   key's character multiset next to the hash of the key (:func:`sentence_hashes`), so two hashes tell whether
   their sentences differ by a negation word or by reordered words (:func:`contradicts`), with no text.
7. The shingle sketch (version 2), for texts of fewer than ``sketch_chars`` (300) letters/ideographs only: the
   ``sketch`` (12) smallest hashes of the content key's character shingles (3 characters for text with Chinese,
   5 otherwise), top bit set, appended to the sentence hashes. Sharing half of the sketch estimates a shingle
   Jaccard similarity of about one half: what survives a prefix, a typo or a cut tail of a short text.
   Since version 5 the sketch is stratified by line: when such a text has at least two lines of at least
   ``min_sentence_chars`` letters/ideographs (twice that without Chinese), each of them adds the
   ``line_sketch`` (8) smallest hashes of its own shingles (same shingles, same hash), so a short body between a
   site's header and a long disclaimer is in the sketch too, not drowned by the template's shingles; once the
   template's lines are boilerplate, the body's hashes decide.

The hot path (:meth:`Fingerprinter.fingerprint_many`) is vectorised with numpy over a whole batch of documents:
one dict lookup per token, then gathers and two ``bincount``s (see :meth:`Fingerprinter._simhash_chunk`); the
content key and sentence keys come from a few numpy passes over the batch's code points
(``text._keys_many``); no per-bit or per-sentence regex work in Python loops.

When the native core is installed (``native/``, module ``es_simhash_native``), ``fingerprint_many`` hands the batch to
it (``Fingerprinter(engine=...)``): the same fingerprints bit for bit, computed in Rust with the GIL released. This
module stays the reference.
"""

from __future__ import annotations

import hashlib
import threading
import logging
import math
import os
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from es_simhash.fingerprint import early_start
from es_simhash.fingerprint import text as _text
from es_simhash.fingerprint.idf import IDFTable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "hash64", "is_sketch", "WEIGHT_SCALE", "SKETCH_BIT",
           "sentence_hashes", "content_hashes", "contradicts", "contradicting_pair", "text_contradicts", "NEGATIONS",
           "hex64"]

FINGERPRINT_VERSION = 6
WEIGHT_SCALE = 1024
N_SEGMENTS = 4
SEGMENT_BITS = 16
_MASK64 = 0xFFFFFFFFFFFFFFFF


def hash64(s: str) -> int:
    """Stable, well-mixed unsigned 64-bit hash of a string (BLAKE2b, 8-byte digest, little-endian)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


SKETCH_BIT = 1 << 63  # set in shingle-sketch hashes, clear in sentence hashes: the two kinds share one field


def is_sketch(h: int) -> bool:
    """Whether a hash of ``Fingerprint.sentences`` is a shingle-sketch hash (else a sentence hash)."""
    return h >= SKETCH_BIT


def hex64(value: int) -> str:
    """A 64-bit hash as 16 hex digits (how fingerprints are written to Elasticsearch and JSON)."""
    return f"{value:016x}"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What es-simhash stores and compares for one document.

    ``simhash``, ``content_hash`` and the ``sentences`` hashes are unsigned 64-bit integers. A fingerprint with
    no usable features (``empty``) has no segments, so it can never be found through the segment buckets.
    ``word_bag`` (version 3, texts with a shingle sketch only, else 0): the sum mod 2^64 of the hashes of the
    text's words, whatever their order: equal for two texts with the same words in another order.
    """

    simhash: int
    content_hash: int
    sentences: tuple[int, ...]
    n_features: int
    n_chars: int
    short: bool
    version: int = FINGERPRINT_VERSION
    word_bag: int = 0

    @property
    def empty(self) -> bool:
        """No usable features: empty, all punctuation, or only stop words."""
        return self.n_features == 0

    @property
    def segments(self) -> tuple[int, ...]:
        """The four 16-bit segments (``()`` for an empty fingerprint)."""
        if self.empty:
            return ()
        return tuple((self.simhash >> (SEGMENT_BITS * i)) & 0xFFFF for i in range(N_SEGMENTS))

    def segment_keys(self) -> tuple[str, ...]:
        """Segments as the 4-hex-digit strings stored in the ``seg0``..``seg3`` keyword fields."""
        return tuple(f"{s:04x}" for s in self.segments)

    def distance(self, other: "Fingerprint") -> int:
        return (self.simhash ^ other.simhash).bit_count()

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (hex strings for the 64-bit values)."""
        return {
            "fingerprint_version": self.version,
            "simhash": hex64(self.simhash),
            "segments": list(self.segment_keys()),
            "sentences": [hex64(h) for h in self.sentences],
            "content_hash": hex64(self.content_hash),
            "n_features": self.n_features,
            "n_chars": self.n_chars,
            "short": self.short,
            "empty": self.empty,
            "word_bag": hex64(self.word_bag),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Fingerprint":
        return cls(
            simhash=int(d["simhash"], 16),
            content_hash=int(d["content_hash"], 16),
            sentences=tuple(int(h, 16) for h in d.get("sentences", ())),
            n_features=int(d["n_features"]),
            n_chars=int(d["n_chars"]),
            short=bool(d["short"]),
            version=int(d.get("fingerprint_version", FINGERPRINT_VERSION)),
            word_bag=int(d.get("word_bag") or "0", 16),
        )


def _hash64_many(tokens: Sequence[str]) -> np.ndarray:
    """:func:`hash64` of each string, as a uint64 array (the 8-byte little-endian digests read in one go)."""
    import numpy as np
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(t.encode("utf-8"), digest_size=8).digest() for t in tokens])
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


_WORD_CHAR = re.compile(r"[^\W_]")  # a letter, digit or ideograph


class _Ids(dict):
    """token -> vocabulary id. Looking up a token not seen yet gives it the next id and queues it in ``new``, so
    one C-level pass of lookups (:meth:`_Vocabulary.ids_of`) both finds the known tokens and numbers the new ones."""

    __slots__ = ("new",)

    def __init__(self) -> None:
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, token: str) -> int:
        i = self[token] = len(self)
        self.new.append(token)
        return i


@dataclass
class _Vocabulary:
    """Per-token cache: id -> (64-bit hash, integer weight). Grows as new tokens are seen."""

    ids: _Ids = field(default_factory=_Ids)
    # (numpy arrays, made by the first ids_of: a fingerprinter that never uses the Python engine imports no numpy)
    hashes: np.ndarray = None  # type: ignore[assignment]
    weights: np.ndarray = None  # type: ignore[assignment]
    words: np.ndarray = None  # type: ignore[assignment]  # has a letter/digit/ideograph

    def ids_of(self, tokens: list[str], weights_of: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Ids of the tokens; the tokens not seen yet get the next ids, and their hashes and weights (``weights_of``
        maps a list of new tokens to their weights) are computed and stored in bulk."""
        import numpy as np

        if self.hashes is None:
            self.hashes = np.zeros(1024, dtype=np.uint64)
            self.weights = np.zeros(1024, dtype=np.float64)
            self.words = np.zeros(1024, dtype=bool)
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


_LN_TABLE_SIZE = 1 << 16  # tf="sublinear": numpy's ln(1..65536) handed to the native core (more: Python)
_log = logging.getLogger(__name__)
_NOTICED: list[str] = []


@lru_cache(maxsize=1)
def _native_module() -> tuple[Any, str | None]:
    """``(es_simhash_native, None)`` when the native core is installed and usable here, else ``(None, reason)``."""
    from es_simhash import _native

    es_simhash_native = _native.installed()
    if es_simhash_native is None:
        return None, f"es_simhash_native is not installed ({_native.import_error()})"
    native_version = getattr(es_simhash_native, "FINGERPRINT_VERSION", 4)
    if native_version != FINGERPRINT_VERSION:
        return None, (f"es_simhash_native computes fingerprint version {native_version}, this es-simhash "
                      f"{FINGERPRINT_VERSION} (reinstall it: pip install ./native)")
    if es_simhash_native.UNIDATA_VERSION != unicodedata.unidata_version:
        return None, (f"es_simhash_native has the character tables of Unicode {es_simhash_native.UNIDATA_VERSION}, "
                      f"this Python {unicodedata.unidata_version} (rebuild it with this Python)")
    rjieba = _installed_version("rjieba")
    if rjieba is not None and rjieba != _RJIEBA_VERSION:
        return None, (f"rjieba {rjieba} is installed; the native core segments as rjieba {_RJIEBA_VERSION} "
                      f"(jieba-rs {es_simhash_native.JIEBA_RS_VERSION})")
    return es_simhash_native, None


def _installed_version(name: str) -> str | None:
    """The installed version of the distribution ``name`` (None when it is not installed). From the name of its
    ``NAME-VERSION.dist-info`` folder beside the package when there is one (``importlib.metadata`` costs ~15 ms of
    imports, on every command that fingerprints), else from ``importlib.metadata``."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)  # (finds it without importing it)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return None
    if spec.origin and os.path.isabs(spec.origin):  # (not "built-in" or "frozen")
        found = list(Path(spec.origin).parent.parent.glob(f"{name}-[0-9]*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(name) + 1:-len(".dist-info")]
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001  (no metadata: as if not installed, the segmenter check decides)
        return None


_NATIVE_CORES: dict[tuple, tuple[Any, Any, Any]] = {}  # see Fingerprinter._make_native


def _wait_for_native_cores() -> None:
    """Before a fork: every native core is built (one whose IDF table is still being built on its own thread would
    wait for a thread the child does not have). A core leaves ``_NATIVE_CORES`` built, so these are all."""
    for _, _, native in list(_NATIVE_CORES.values()):
        native.wait()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_wait_for_native_cores)  # (nothing to wait for while no core was made)

_RJIEBA_VERSION = "0.2.2"  # its jieba-rs is the native core's (native/Cargo.toml)


def start_native_segmenter() -> bool:
    """Start building the native core's segmenter (jieba-rs's dictionary: ~0.2 s of CPU that the first text would
    otherwise wait for) on a background thread, so it overlaps what the caller does next: reading the IDF table
    and the input, on another core. ``True`` when this call started it; ``False`` when it had been started, when
    the native core is not installed or not usable here, or when ``ES_SIMHASH_ENGINE=python`` forces the reference.
    Fingerprints do not change: the same dictionary, built earlier. A fork waits for the build first
    (:func:`es_simhash.early_start.start_segmenter`, which the command line calls before its imports)."""
    if early_start.python_engine_forced() or _native_module()[0] is None:
        return False
    return early_start.start_segmenter()


def _notice_once(reason: str) -> None:
    """One line, once per process: the native core is missing, the pure-Python engine is used."""
    if not _NOTICED:
        _NOTICED.append(reason)
        _log.warning("es-simhash: native fingerprint core unavailable (%s); using the pure-Python engine: same "
                     "fingerprints, slower (pip install ./native to build it)", reason)


class Fingerprinter:
    """Turns texts into :class:`Fingerprint` objects. Reuse one instance: it caches token hashes and weights.

    Parameters
    ----------
    idf:
        an :class:`~es_simhash.idf.IDFTable`, a path to a jieba-format IDF file, or ``None`` for jieba's table.
    min_token_len:
        tokens shorter than this (in characters) carry no weight (default 2: single characters are mostly
        function words in Chinese and noise in English).
    sentences:
        how many longest sentences make the sentence signature (default 5, chosen on the dev split of
        ``bench/accuracy.py``: see ``docs/accuracy.md``).
    min_sentence_chars:
        a sentence needs at least this many letters/ideographs to enter the signature.
    short_chars:
        texts with fewer letters/ideographs than this are ``short``: SimHash is weak on them and the sentence
        signature decides.
    sketch:
        for texts of fewer than ``sketch_chars`` letters/ideographs, how many character-shingle hashes (the
        smallest of all the text's shingle hashes: a bottom-k MinHash sketch) are added to the sentence
        signature (default 12; 0: none). A prefix, a typo, a dropped clause or a cut tail changes the only
        sentence or two of a short text, but only a few of its shingles. Sketch hashes have the top bit set
        (:data:`SKETCH_BIT`), sentence hashes have it clear, so a rule can tell them apart in one field.
    sketch_chars:
        texts with fewer letters/ideographs than this get the sketch (default 300: short texts and the shorter
        medium ones; longer texts have enough long sentences. 600 was measured: see docs/accuracy.md).
    sketch_shingle:
        shingle length in characters of the content key for the sketch: ``(cjk, other)``, default ``(3, 5)``:
        3 characters for texts with Chinese characters, 5 letters/digits for the rest (spaces removed).
    line_sketch:
        in a text with a sketch and at least two lines of at least ``min_sentence_chars`` letters/ideographs
        (twice that for text without Chinese: a Latin letter carries about half an ideograph's meaning), each such
        line adds its ``line_sketch`` smallest shingle hashes to the sketch (default 8; 0: the whole text's only,
        as version 4). A templated post (a header line, a short body, a long disclaimer) keeps its body's
        shingles in the sketch (``docs/accuracy.md``).
    tf:
        how a token's count in the text scales its weight: ``"cap:N"`` (``min(tf, N)``; default ``"cap:5"``),
        ``"sublinear"`` (``1 + ln tf``) or ``"raw"`` (``tf``: version 3). On the dev split of
        ``bench/accuracy.py`` all score F1 0.967-0.969 (cap:5 0.969, as raw); raw lets one repeated term take over
        the fingerprint, and sublinear moves a reprint's SimHash further than the cap does
        (``docs/accuracy.md``).
    segmenter:
        ``"auto"`` (rjieba when installed, else jieba), ``"rjieba"`` or ``"jieba"``.
    engine:
        ``"auto"`` (default): the native core (the ``es_simhash_native`` module, built from ``native/``) when it is
        installed and supports this configuration, else this pure-Python code; ``"native"``: the native core or an
        error; ``"python"``: this code, the reference. Both give identical fingerprints
        (``tests/test_native_fingerprint.py``). ``ES_SIMHASH_ENGINE=python`` in the environment forces the
        reference under ``"auto"``. See :func:`native_unavailable_reason`.
    """

    MAX_VOCABULARY = 4_000_000
    _TOKENS_PER_CHUNK = 1 << 16
    _DOCS_PER_CHUNK = 4096

    def __init__(
        self,
        idf: IDFTable | str | None = None,
        *,
        min_token_len: int = 2,
        sentences: int = 5,
        min_sentence_chars: int = 8,
        short_chars: int = 100,
        sketch: int = 12,
        sketch_chars: int = 300,
        sketch_shingle: tuple[int, int] = (3, 5),
        line_sketch: int = 8,
        segmenter: str = "auto",
        stopwords: frozenset[str] | None = None,
        tf: str = "cap:5",
        engine: str = "auto",
    ) -> None:
        if engine != "python" and segmenter in ("auto", "rjieba"):
            start_native_segmenter()  # (in the background while the IDF table is read)
        if isinstance(idf, IDFTable):
            self.idf = idf
        elif idf is None:
            self.idf = IDFTable.jieba_default()
        else:
            self.idf = IDFTable.load(idf)
        if sentences < 0 or min_token_len < 1 or min_sentence_chars < 1 or short_chars < 0 or sketch < 0 \
                or sketch_chars < 0 or line_sketch < 0:
            raise ValueError("sentences >= 0, min_token_len >= 1, min_sentence_chars >= 1, short_chars >= 0, "
                             "sketch >= 0, sketch_chars >= 0, line_sketch >= 0")
        if len(sketch_shingle) != 2 or min(sketch_shingle) < 1:
            raise ValueError("sketch_shingle is (cjk, other), both >= 1")
        if tf != "raw" and tf != "sublinear" and not (tf.startswith("cap:") and tf[4:].isdigit() and int(tf[4:]) > 0):
            raise ValueError(f"tf is 'sublinear', 'raw' or 'cap:N', not {tf!r}")
        self.tf = tf
        self.sketch = sketch
        self.sketch_chars = sketch_chars
        self.sketch_shingle = (int(sketch_shingle[0]), int(sketch_shingle[1]))
        self.line_sketch = line_sketch
        self.min_token_len = min_token_len
        self.n_sentences = sentences
        self.min_sentence_chars = min_sentence_chars
        self.short_chars = short_chars
        self.segmenter = _text.segmenter_name(segmenter)
        self.stopwords = _text.stopwords() if stopwords is None else stopwords
        self._vocab = _Vocabulary()
        if engine not in ("auto", "native", "python"):
            raise ValueError(f"engine is 'auto', 'native' or 'python', not {engine!r}")
        self._requested_segmenter = segmenter
        self._engine_request = engine
        self._python_lock = threading.Lock()
        self._native: Any = None  # the native core's object, made on first use (see :attr:`engine`)
        self._native_config: tuple | None = None
        self._engine: str | None = None
        if engine == "native":
            reason = self.native_unavailable_reason()
            if reason:
                raise RuntimeError(f"engine='native' is not available: {reason}")

    # -- engine --------------------------------------------------------------------------------------------
    # Methods the native core replaces: a subclass overriding one of them keeps the Python engine.
    _NATIVE_REPLACES = ("fingerprint_many", "token_weight", "_token_weights", "_simhash_batch", "_simhash_chunk",
                        "_token_ids", "_sketches", "_signature_keys", "_signatures", "_word_bags")

    def native_unavailable_reason(self) -> str | None:
        """Why this fingerprinter cannot use the native core (``None``: it can)."""
        module, reason = _native_module()
        if module is None:
            return reason
        for name in self._NATIVE_REPLACES:
            if getattr(type(self), name) is not getattr(Fingerprinter, name) or name in self.__dict__:
                return f"{type(self).__name__} overrides {name}"
        if self._requested_segmenter not in ("auto", "rjieba") or self.segmenter != "rjieba":
            return f"segmenter {self.segmenter!r}: the native core segments as rjieba does"
        if type(self.idf).get is not IDFTable.get or not isinstance(self.idf._native_idf(), (dict, tuple)):
            return "a custom IDFTable class"
        if not isinstance(self.stopwords, (set, frozenset)):
            return "stop words that are not a set"
        try:
            if not all(math.isfinite(float(v)) and abs(v) < 1e9 for v in (self.idf.default, *self._idf_extremes())):
                return "IDF values that are not finite or too large"
        except (TypeError, ValueError, OverflowError):
            return "IDF values that are not numbers"
        return None

    def _idf_extremes(self) -> tuple[float, ...]:
        return tuple(float(v) for v in self.idf.extremes())

    @property
    def engine(self) -> str:
        """The engine in use: ``"native"`` or ``"python"`` (decided on first use; see the ``engine`` parameter)."""
        if self._engine is None:
            request = self._engine_request
            if request == "auto" and early_start.python_engine_forced():
                request = "python"
            engine, reason = "python", None
            if request != "python":
                reason = self.native_unavailable_reason()
                if reason is None:
                    try:
                        self._native, engine = self._make_native(), "native"
                    except (TypeError, ValueError, OverflowError) as e:  # e.g. a word that is not a str
                        reason = f"the native core refused this configuration: {e}"
            if reason is not None and request == "native":
                raise RuntimeError(f"engine='native' is not available: {reason}")
            if reason is not None and _native_module()[0] is None:
                _notice_once(reason)  # not installed (a configuration it does not cover is no news)
            self._engine = engine
        return self._engine

    def _settings(self) -> tuple:
        """What the native core was made from (compared before each batch: a setting changed since remakes it)."""
        return (self.idf, self.stopwords, self.min_token_len, self.n_sentences, self.min_sentence_chars,
                self.short_chars, self.sketch, self.sketch_chars, self.sketch_shingle, self.line_sketch, self.tf,
                self.segmenter)

    def _make_native(self) -> Any:
        """The native core for these settings: made once per process for each IDF table, stop-word set and
        parameters (handing jieba's 350,000-word table to Rust as a dict costs ~0.05 s, as much as fingerprinting a
        few hundred texts; a table read from the IDF cache goes as the paths of the cache's files, which the core
        reads on a thread of its own, or takes the table the command started building early), shared by every
        Fingerprinter with the same ones (it is thread-safe)."""
        module = _native_module()[0]
        self._native_config = settings = self._settings()
        source = self.idf._native_idf()  # (the dict, or the IDF cache's files: see IDFTable)
        key = (id(source), self.idf.default, id(self.stopwords)) + settings[2:]
        cached = _NATIVE_CORES.get(key)
        if cached is not None and cached[0] is source and cached[1] is self.stopwords:
            return cached[2]
        ln_table = _ln_table() if self.tf == "sublinear" else None
        native = module.NativeFingerprinter(
            source, self.idf.default, self.stopwords, min_token_len=self.min_token_len,
            sentences=self.n_sentences, min_sentence_chars=self.min_sentence_chars, short_chars=self.short_chars,
            sketch=self.sketch, sketch_chars=self.sketch_chars, sketch_shingle=self.sketch_shingle,
            line_sketch=self.line_sketch, tf=self.tf, ln_table=ln_table)
        while len(_NATIVE_CORES) >= 8:  # a few configurations per process at most, in practice one
            _NATIVE_CORES.pop(next(iter(_NATIVE_CORES)))[2].wait()  # (built: see _wait_for_native_cores)
        _NATIVE_CORES[key] = (source, self.stopwords, native)  # (holding the objects keeps their ids theirs)
        return native

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_native"], state["_engine"] = None, None  # (the native object is remade on first use)
        del state["_python_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._python_lock = threading.Lock()

    # -- configuration -------------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """Everything that determines the fingerprint; stored with an index so mismatches can be refused."""
        return {
            "fingerprint_version": FINGERPRINT_VERSION,
            "idf": self.idf.checksum,
            "min_token_len": self.min_token_len,
            "sentences": self.n_sentences,
            "min_sentence_chars": self.min_sentence_chars,
            "short_chars": self.short_chars,
            "sketch": self.sketch,
            "sketch_chars": self.sketch_chars,
            "sketch_shingle": list(self.sketch_shingle),
            "line_sketch": self.line_sketch,
            "tf": self.tf,
        }

    def token_weight(self, token: str) -> int:
        """Integer weight of one occurrence of ``token`` (0 for punctuation, spaces, stop words, short tokens)."""
        if len(token) < self.min_token_len or token in self.stopwords or _text.content_key(token) != token:
            return 0
        return max(0, round(self.idf.get(token) * WEIGHT_SCALE))

    def _token_weights(self, tokens: list[str]) -> np.ndarray:
        """:meth:`token_weight` of each token, as float64 (the same values, with a few C-level passes).

        ``content_key(t) == t`` exactly when ``t.isalnum()`` (for a non-empty ``t``: ``[\\W_]`` removes exactly
        the code points that are not ``isalnum()``, see ``text._tables``), and ``numpy.rint`` rounds half to even
        like ``round``, so every weight equals :meth:`token_weight`'s. A subclass that overrides
        :meth:`token_weight` gets it called per token.
        """
        import numpy as np
        n = len(tokens)
        if type(self).token_weight is not Fingerprinter.token_weight:
            return np.fromiter(map(self.token_weight, tokens), dtype=np.float64, count=n)
        ok = np.fromiter(map(str.isalnum, tokens), dtype=bool, count=n)
        if self.min_token_len > 1:
            ok &= np.fromiter(map(len, tokens), dtype=np.intp, count=n) >= self.min_token_len
        ok &= ~np.fromiter(map(self.stopwords.__contains__, tokens), dtype=bool, count=n)
        weights = np.zeros(n, dtype=np.float64)
        at = np.flatnonzero(ok)
        if at.size:
            idf = np.fromiter(map(self.idf.get, compress(tokens, ok.tolist())), dtype=np.float64, count=at.size)
            w = np.rint(idf * WEIGHT_SCALE)
            weights[at] = np.where(w > 0, w, 0.0)
        return weights

    # -- fingerprints --------------------------------------------------------------------------------------
    def fingerprint(self, text: str) -> Fingerprint:
        return self.fingerprint_many([text])[0]

    def fingerprint_many(self, texts: Sequence[str]) -> list[Fingerprint]:
        """Fingerprints of a batch of texts (faster per text than calling :meth:`fingerprint` in a loop)."""
        if self._engine == "native" and self._native_config != self._settings():
            self._engine = self._native = None  # a setting was changed after the native core was made: remake it
        if self._engine != "native" and self.engine != "native":
            with self._python_lock:  # the pure-Python engine caches (a vocabulary): one thread at a time
                return self._fingerprint_many_python(texts)
        texts = texts if isinstance(texts, list) else list(texts)
        try:
            rows = self._native.fingerprint_many(texts)  # None for a text the native core leaves to Python
        except TypeError:  # not all str: the reference raises what it raises
            with self._python_lock:
                return self._fingerprint_many_python(texts)
        except ValueError as exc:
            if not isinstance(exc, getattr(_native_module()[0], "IdfCacheError", ())):
                raise
            # the IDF cache's files could not be read (damaged, or deleted while in use): the table is parsed
            # again from its file (and the entry written again), and a core made from that
            _log.warning("the IDF cache entry of %s is unusable (%s): parsing the table again", self.idf.source, exc)
            self.idf.reload_from_source()
            for key, (_, _, native) in list(_NATIVE_CORES.items()):
                if native is self._native:
                    del _NATIVE_CORES[key]
            self._engine = self._native = None
            return self.fingerprint_many(texts)
        # the version is Python's to say (the native core computes the fields; a version that changes only
        # defaults changes nothing there)
        v = FINGERPRINT_VERSION
        out = [Fingerprint(r[0], r[1], r[2], r[3], r[4], r[5], v, r[7]) if r is not None else None for r in rows]
        missing = [i for i, fp in enumerate(out) if fp is None]
        if missing:
            with self._python_lock:  # threads may share a native-engine fingerprinter; the Python one caches
                for i, fp in zip(missing, self._fingerprint_many_python([texts[i] for i in missing])):
                    out[i] = fp
        return out  # type: ignore[return-value]

    def _fingerprint_many_python(self, texts: Sequence[str]) -> list[Fingerprint]:
        """:meth:`fingerprint_many` in pure Python (with numpy): the reference the native core reproduces."""
        normalized = _text._normalize_many(texts)
        seg = self.segmenter
        tokens = [_text.segment(n, seg) for n in normalized]
        simhashes, n_features = self._simhash_batch(tokens)
        keys = _text._keys_many(normalized, self.min_sentence_chars)
        short_chars = self.short_chars
        sketches = self._sketches(normalized, keys)
        signatures = self._signatures([sentence_keys for _, sentence_keys in keys])
        return [
            Fingerprint(
                sim if nf else 0,  # simhash
                content_hash,
                signature + sketch,  # sentences (+ shingle sketch of a shorter text)
                nf,  # n_features
                len(key),  # n_chars
                len(key) < short_chars,  # short
                FINGERPRINT_VERSION,
                word_bag,
            )
            for (key, _), content_hash, sim, nf, signature, sketch, word_bag in zip(
                keys, content_hashes([k for k, _ in keys]), simhashes.tolist(), n_features.tolist(), signatures,
                sketches, self._word_bags(tokens, sketches))
        ]

    def _word_bags(self, tokens: list[list[str]], sketches: list[tuple[int, ...]]) -> list[int]:
        """:attr:`Fingerprint.word_bag` of each text: for the texts with a sketch, the sum of the vocabulary hashes
        of their word tokens (every token is in the vocabulary once the SimHashes are computed), else 0."""
        import numpy as np
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
        if not self.sketch or not self.sketch_chars:
            return out
        by_n: dict[int, list[int]] = {}
        for i, (key, _) in enumerate(keys):
            if 0 < len(key) < self.sketch_chars:
                n = self.sketch_shingle[0] if _text.has_cjk(key) else self.sketch_shingle[1]
                by_n.setdefault(n, []).append(i)
        for n, docs in by_n.items():
            for i, sketch in zip(docs, _bottom_k([keys[i][0] for i in docs], n, self.sketch)):
                out[i] = sketch
            if self.line_sketch:
                self._add_line_sketches(out, normalized, keys, docs, n)
        return out

    def _add_line_sketches(self, out: list[tuple[int, ...]], normalized: Sequence[str],
                           keys: list[tuple[str, list[str]]], docs: list[int], n: int) -> None:
        """Version 5: the bottom-``line_sketch`` hashes of each line (of at least ``min_sentence_chars``
        letters/ideographs, twice that without Chinese) of the texts ``docs`` that have two such lines or more,
        merged into their sketches in ``out``."""
        owner: list[int] = []
        line_keys: list[str] = []
        for i in docs:
            least = self.min_sentence_chars if _text.has_cjk(keys[i][0]) else 2 * self.min_sentence_chars
            lines = [k for k in map(_text.content_key, normalized[i].split("\n")) if len(k) >= least]
            if len(lines) >= 2:
                owner += [i] * len(lines)
                line_keys += lines
        merged: dict[int, set[int]] = {}
        for i, sketch in zip(owner, _bottom_k(line_keys, n, self.line_sketch) if line_keys else ()):
            merged.setdefault(i, set(out[i])).update(sketch)
        for i, hashes in merged.items():
            out[i] = tuple(sorted(hashes))

    def _signature_keys(self, keys: list[str]) -> list[str]:
        """The ``sentences`` longest distinct sentence keys (of at least ``min_sentence_chars`` characters)."""
        if self.n_sentences == 0 or not keys:
            return []
        keys = sorted(keys, key=len, reverse=True)  # stable: equal lengths stay in text order
        seen: dict[str, None] = {}
        for k in keys:
            seen.setdefault(k)
            if len(seen) == self.n_sentences:
                break
        return list(seen)

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
            self._vocab = vocab = _Vocabulary()
        return vocab.ids_of(flat, self._token_weights)

    def _simhash_batch(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np
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
        import numpy as np
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
        if self.tf != "raw":  # one weight per (document, token), from the token's count in the document
            pair, first, tf = np.unique(doc_of.astype(np.int64) * len(self._vocab.weights) + kept,
                                        return_index=True, return_counts=True)
            doc_of, kept, weights = doc_of[first], kept[first], weights[first]
            weights = _tf_weights(weights, tf, self.tf)
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


def _tf_weights(weights: np.ndarray, tf: np.ndarray, mode: str) -> np.ndarray:
    """The weight of a token that occurs ``tf`` times in a document, from the weight of one occurrence: ``raw``
    ``w * tf``; ``sublinear`` ``round(w * (1 + ln tf))``; ``cap:N`` ``w * min(tf, N)``. Whole numbers, so the
    sums stay exact."""
    import numpy as np
    if mode == "sublinear":
        return np.rint(weights * (1.0 + np.log(tf)))
    if mode.startswith("cap:"):
        return weights * np.minimum(tf, int(mode[4:]))
    return weights * tf


_M1, _M2, _GOLDEN = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x9E3779B97F4A7C15  # (splitmix64)
_SHINGLE_MUL = 0x100000001B3
_U64_MASK = (1 << 64) - 1


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of ``z + golden ratio`` (uint64 arrays): a stable, well-mixed 64-bit hash."""
    import numpy as np
    z = z + np.uint64(_GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


def _bottom_k(keys: Sequence[str], n: int, k: int) -> list[tuple[int, ...]]:
    """For each string: the ``k`` smallest distinct hashes of its ``n``-character shingles, ascending (a string
    shorter than ``n`` is one shingle). Stable 64-bit hashes (a polynomial over the code points, then the
    splitmix64 finaliser), computed for the whole batch with numpy; the results never collide in practice with
    sentence hashes (BLAKE2b), and a collision would only add a candidate."""
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
    z = _splitmix64(h) | np.uint64(SKETCH_BIT)
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


# -- sentence hashes (version 3) -----------------------------------------------------------------------------
# A sentence hash (top bit clear) is laid out as
#   bit 62       : the sentence has a CJK ideograph
#   bits 30..61  : "bag": the sum, mod 2^32, of a 32-bit hash of each character of the sentence key (a hash of
#                  the key's character multiset: the same for any reordering of the characters)
#   bits 0..29   : the low 30 bits of BLAKE2b of the key
# Equal keys give equal hashes, and different keys collide with probability ~2^-62, as before; but two hashes
# can also be compared for *how* their sentences differ, without the text: equal bags and different keys mean
# the same characters in another order (two words swapped), and bags that differ by the bag of a negation word
# mean the negation was inserted or removed (see :func:`contradicts`).
CJK_SENTENCE_BIT = 1 << 62
_BAG_SHIFT, _BAG_MASK, _KEY_MASK = 30, (1 << 32) - 1, (1 << 30) - 1


def _char_hashes(cps: np.ndarray) -> np.ndarray:
    """32-bit hashes of code points (splitmix64 finaliser, high half): stable across runs and machines."""
    import numpy as np
    return _splitmix64(cps.astype(np.uint64)) >> np.uint64(32)


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
        return {h for h in a.sentences if h < SKETCH_BIT} != {h for h in b.sentences if h < SKETCH_BIT}
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


# (16 x 4) float64 table: row v holds the bits of the nibble v, least significant first.
@lru_cache(maxsize=1)
def _nibble_bits() -> np.ndarray:
    import numpy as np

    return np.unpackbits(np.arange(16, dtype=np.uint8)[:, None], axis=1, bitorder="little")[:, :4].astype(np.float64)


@lru_cache(maxsize=1)
def _ln_table() -> list[float]:
    """``numpy.log(k)`` for k = 1 .. :data:`_LN_TABLE_SIZE`, for the native core's ``tf="sublinear"``."""
    import numpy as np

    return np.log(np.arange(1, _LN_TABLE_SIZE + 1, dtype=np.int64)).tolist()
