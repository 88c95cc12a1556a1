"""Fingerprints: TF-IDF weighted 64-bit SimHash, its four 16-bit segments, and the long-sentence signature.

How a text becomes a :class:`Fingerprint` (``FINGERPRINT_VERSION`` 6):

1. ``text.normalize``: NFKC (full/half width), casefold, collapsed whitespace (a run with a line break becomes
   one line break: since version 3 a title or heading line is a sentence of its own); since version 4 a space
   between two CJK ideographs is removed (a repost spaced out character by character reads as the original);
   since version 6 the text a reader sees (:mod:`es_simhash.fingerprint.fold`): invisible characters dropped, Traditional
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

The hot path (:meth:`Fingerprinter.fingerprint_many`) is vectorised with numpy over a whole batch of documents
(:mod:`es_simhash.fingerprint.reference`): one dict lookup per token, then gathers and two ``bincount``s; the
content key and sentence keys come from a few numpy passes over the batch's code points
(``text._keys_many``); no per-bit or per-sentence regex work in Python loops.

When the native core is installed (``native/``, module ``es_simhash_native``), ``fingerprint_many`` hands the batch to
it (``Fingerprinter(engine=...)``, :mod:`es_simhash.fingerprint.native_core`): the same fingerprints bit for bit,
computed in Rust with the GIL released. The Python engine stays the reference.

This module holds :class:`Fingerprinter`: its settings (:mod:`~es_simhash.fingerprint.config`), the choice of
engine and the native core's life cycle; the fingerprint itself is :mod:`~es_simhash.fingerprint.model`, its
sentence, content and sketch hashes :mod:`~es_simhash.fingerprint.hashes`.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import Any, Sequence

from es_simhash.fingerprint import early_start, native_core
from es_simhash.fingerprint import text as _text
from es_simhash.fingerprint.config import FingerprintSettings
from es_simhash.fingerprint.hashes import (NEGATIONS, content_hashes, contradicting_pair, contradicts, sentence_hashes,
                                           text_contradicts)
from es_simhash.fingerprint.idf import IDFTable
from es_simhash.fingerprint.model import (FINGERPRINT_VERSION, SKETCH_BIT, WEIGHT_SCALE, Fingerprint, hash64, hex64,
                                          is_sketch)
from es_simhash.fingerprint.native_core import start_native_segmenter
from es_simhash.fingerprint.reference import ReferenceEngine, Vocabulary

log = logging.getLogger(__name__)

__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "hash64", "is_sketch", "WEIGHT_SCALE", "SKETCH_BIT",
           "sentence_hashes", "content_hashes", "contradicts", "contradicting_pair", "text_contradicts", "NEGATIONS",
           "hex64", "start_native_segmenter"]


class Fingerprinter(ReferenceEngine):
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
        sentence or two of a short text, but only a few of its shingles: :attr:`Fingerprint.sketch`. Sketch hashes
        have the top bit set (:data:`SKETCH_BIT`), sentence hashes have it clear, so storage can keep them in one
        field.
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
    fuzzy:
        for texts without a sketch, how many of their longest sentences each add a fuzzy hash
        (:attr:`Fingerprint.fuzzy`, version 7; default 16, at most 16; 0: none).
    segmenter:
        ``"auto"`` (rjieba when installed, else jieba), ``"rjieba"`` or ``"jieba"``.
    engine:
        ``"auto"`` (default): the native core (the ``es_simhash_native`` module, built from ``native/``) when it is
        installed and supports this configuration, else this pure-Python code; ``"native"``: the native core or an
        error; ``"python"``: this code, the reference. Both give identical fingerprints
        (``tests/test_native_fingerprint.py``). ``ES_SIMHASH_ENGINE=python`` in the environment forces the
        reference under ``"auto"``. See :func:`native_unavailable_reason`.
    """


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
        fuzzy: int = 16,
    ) -> None:
        if engine != "python" and segmenter in ("auto", "rjieba"):
            start_native_segmenter()  # (in the background while the IDF table is read)
        if isinstance(idf, IDFTable):
            self.idf = idf
        elif idf is None:
            self.idf = IDFTable.jieba_default()
        else:
            self.idf = IDFTable.load(idf)
        settings = FingerprintSettings(min_token_len, sentences, min_sentence_chars, short_chars, sketch, sketch_chars,
                                       sketch_shingle, line_sketch, tf, fuzzy)
        self.min_token_len = settings.min_token_len
        self.n_sentences = settings.sentences
        self.min_sentence_chars = settings.min_sentence_chars
        self.short_chars = settings.short_chars
        self.sketch = settings.sketch
        self.sketch_chars = settings.sketch_chars
        self.sketch_shingle = settings.sketch_shingle
        self.line_sketch = settings.line_sketch
        self.tf = settings.tf
        self.n_fuzzy = settings.fuzzy
        self.segmenter = _text.segmenter_name(segmenter)
        self.stopwords = _text.stopwords() if stopwords is None else stopwords
        self._vocab = Vocabulary()
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
                        "_token_ids", "_sketches", "_signature_keys", "_signatures", "_word_bags", "_fuzzy")

    def native_unavailable_reason(self) -> str | None:
        """Why this fingerprinter cannot use the native core (``None``: it can)."""
        module, reason = native_core.native_module()
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
            if reason is not None and native_core.native_module()[0] is None:
                native_core.notice_once(reason)  # not installed (a configuration it does not cover is no news)
            self._engine = engine
        return self._engine

    def _settings(self) -> tuple:
        """What the native core was made from (compared before each batch: a setting changed since remakes it)."""
        return (self.idf, self.stopwords, *self.settings.as_tuple(), self.segmenter)

    def _make_native(self) -> Any:
        """The native core for these settings: made once per process for each IDF table, stop-word set and
        parameters (handing jieba's 350,000-word table to Rust as a dict costs ~0.05 s, as much as fingerprinting a
        few hundred texts; a table read from the IDF cache goes as the paths of the cache's files, which the core
        reads on a thread of its own, or takes the table the command started building early), shared by every
        Fingerprinter with the same ones (it is thread-safe)."""
        module = native_core.native_module()[0]
        self._native_config = settings = self._settings()
        source = self.idf._native_idf()  # (the dict, or the IDF cache's files: see IDFTable)
        key = (id(source), self.idf.default, id(self.stopwords)) + settings[2:]
        cached = native_core.NATIVE_CORES.get(key)
        if cached is not None and cached[0] is source and cached[1] is self.stopwords:
            return cached[2]
        logs = native_core.ln_table() if self.tf == "sublinear" else None
        native = module.NativeFingerprinter(
            source, self.idf.default, self.stopwords, min_token_len=self.min_token_len,
            sentences=self.n_sentences, min_sentence_chars=self.min_sentence_chars, short_chars=self.short_chars,
            sketch=self.sketch, sketch_chars=self.sketch_chars, sketch_shingle=self.sketch_shingle,
            line_sketch=self.line_sketch, tf=self.tf, ln_table=logs, fuzzy=self.n_fuzzy)
        while len(native_core.NATIVE_CORES) >= 8:  # a few configurations per process at most, in practice one
            native_core.NATIVE_CORES.pop(next(iter(native_core.NATIVE_CORES)))[2].wait()  # (built: see _wait_for_native_cores)
        native_core.NATIVE_CORES[key] = (source, self.stopwords, native)  # (holding the objects keeps their ids theirs)
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
        return self.settings.meta(self.idf.checksum)

    @property
    def settings(self) -> FingerprintSettings:
        """The fingerprint settings as they are now (checked: a value set out of bounds raises ``ValueError``)."""
        return FingerprintSettings(self.min_token_len, self.n_sentences, self.min_sentence_chars, self.short_chars,
                                   self.sketch, self.sketch_chars, self.sketch_shingle, self.line_sketch, self.tf,
                                   self.n_fuzzy)


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
            # (the text a reader sees, which both engines start from: HTML references read, a hard wrap joined)
            rows = self._native.fingerprint_many([_text.prepare(t) if isinstance(t, str) else t for t in texts])
        except TypeError:  # not all str: the reference raises what it raises
            with self._python_lock:
                return self._fingerprint_many_python(texts)
        except ValueError as exc:
            if not isinstance(exc, getattr(native_core.native_module()[0], "IdfCacheError", ())):
                raise
            # the IDF cache's files could not be read (damaged, or deleted while in use): the table is parsed
            # again from its file (and the entry written again), and a core made from that
            log.warning("the IDF cache entry of %s is unusable (%s): parsing the table again", self.idf.source, exc)
            self.idf.reload_from_source()
            for key, (_, _, native) in list(native_core.NATIVE_CORES.items()):
                if native is self._native:
                    del native_core.NATIVE_CORES[key]
            self._engine = self._native = None
            return self.fingerprint_many(texts)
        # the version is Python's to say (the native core computes the fields; a version that changes only
        # defaults changes nothing there)
        v = FINGERPRINT_VERSION
        out = [Fingerprint(r[0], r[1], r[2], r[3], r[4], r[5], v, r[7], r[8], r[9], r[10], r[11])
               if r is not None else None for r in rows]
        missing = [i for i, fp in enumerate(out) if fp is None]
        if missing:
            with self._python_lock:  # threads may share a native-engine fingerprinter; the Python one caches
                for i, fp in zip(missing, self._fingerprint_many_python([texts[i] for i in missing])):
                    out[i] = fp
        return out  # type: ignore[return-value]

