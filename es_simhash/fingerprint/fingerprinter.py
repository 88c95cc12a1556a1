"""Fingerprints (:class:`Fingerprinter`): the TF-IDF weighted 64-bit SimHash of a text, its four 16-bit segments
and its sentence signature, in fingerprint version ``FINGERPRINT_VERSION`` (7). Two fingerprints made with the same
version and settings (:attr:`Fingerprinter.config`) are comparable, whichever run, machine or engine made them.

How a text becomes a :class:`Fingerprint`:

1. The text a reader sees (:mod:`~es_simhash.fingerprint.text`, :mod:`~es_simhash.fingerprint.fold`), normalised:
   NFKC, casefold, whitespace collapsed (a line break stays one: a title is a sentence of its own), no space
   between two CJK ideographs, invisible characters and romanisation after ideographs dropped, Traditional
   characters folded to Simplified ones.
2. Tokens: jieba-compatible words for Chinese, words for other text. A token weighs ``round(idf * 1024)`` times
   its capped count (``tf``); punctuation, stop words and short tokens weigh 0. Weights are whole numbers, so every
   sum is exact in any order.
3. The SimHash: bit ``i`` is 1 when the tokens whose BLAKE2b hash has bit ``i`` set outweigh the rest (a tie: 0).
   Two fingerprints within Hamming distance 3 agree on one of its four 16-bit segments at least.
4. The sentence signature: hashes of the longest sentences, each with a hash of its character multiset
   (:func:`contradicts` tells a negation or a reordering from two of them); for a short text a bottom-k sketch of
   its character shingles, by line too; for a longer one, fuzzy hashes of its longest sentences.

Two engines compute these fingerprints bit for bit alike: the Python reference (numpy over a whole batch,
:mod:`~es_simhash.fingerprint.reference`) and the native core (``native/``, module ``es_simhash_native``, through
:mod:`~es_simhash.fingerprint.native_core`), in Rust with the GIL released. :class:`Fingerprinter` holds the
settings (:mod:`~es_simhash.fingerprint.config`) and the engine chosen for them; the fingerprint itself is
:mod:`~es_simhash.fingerprint.model`, its other hashes :mod:`~es_simhash.fingerprint.hashes`."""

from __future__ import annotations

import logging
import math
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

from es_simhash.fingerprint import early_start, native_core
from es_simhash.fingerprint import text as _text
from es_simhash.fingerprint.config import DEFAULTS, FingerprintSettings
from es_simhash.fingerprint.idf import IDFTable
from es_simhash.fingerprint.model import (FINGERPRINT_VERSION, Fingerprint)
from es_simhash.fingerprint.native_core import start_native_segmenter

if TYPE_CHECKING:
    from es_simhash.fingerprint.reference import ReferenceEngine

log = logging.getLogger(__name__)

__all__ = ["Fingerprinter"]

ENGINES = ("auto", "native", "python")


def _reference_engine() -> type[ReferenceEngine]:
    """The Python reference engine's class. Its module imports numpy (~0.1 s), which a run on the native core never
    needs: it is imported here, when a Python engine is first made or named, and nowhere else in this module."""
    from es_simhash.fingerprint.reference import ReferenceEngine

    return ReferenceEngine


class Fingerprinter:
    """Turns texts into :class:`Fingerprint` objects. Reuse one instance: it caches token hashes and weights.

    ``idf``: an :class:`~es_simhash.fingerprint.idf.IDFTable`, a path to a jieba-format IDF file, or ``None`` for
    jieba's table. ``min_token_len``, ``sentences``, ``min_sentence_chars``, ``short_chars``, ``sketch``,
    ``sketch_chars``, ``sketch_shingle``, ``line_sketch``, ``tf`` and ``fuzzy``: the fingerprint settings, described
    on :class:`~es_simhash.fingerprint.config.FingerprintSettings`, whose defaults are these; they stay attributes
    of the same names (``n_sentences`` and ``n_fuzzy`` for ``sentences`` and ``fuzzy``), checked by
    :attr:`settings`. ``segmenter``: ``"auto"`` (rjieba when installed, else jieba), ``"rjieba"`` or ``"jieba"``.
    ``stopwords``: tokens that weigh nothing (``None``: the bundled list).

    The engine is chosen explicitly. ``engine="auto"`` (default): the native core (the ``es_simhash_native``
    module, built from ``native/``) when it is installed and covers this configuration, else the Python engine;
    ``"native"``: the native core or a ``RuntimeError``; ``"python"``: the Python engine
    (:attr:`python`). Both give identical fingerprints (``tests/test_native_fingerprint.py``).
    ``ES_SIMHASH_ENGINE=python`` in the environment turns ``"auto"`` into ``"python"``. See
    :meth:`native_unavailable_reason`.

    ``python_engine`` makes the Python engine from the fingerprinter, whose settings it reads (``None``: a
    :class:`~es_simhash.fingerprint.reference.ReferenceEngine`). A custom one, such as a subclass of it that
    weighs or picks terms otherwise, changes the fingerprints, so the native core never stands in for it:
    ``"auto"`` then means ``"python"`` and ``"native"`` is an error. A class (or another picklable callable)
    keeps the fingerprinter picklable.
    """

    def __init__(
        self,
        idf: IDFTable | str | None = None,
        *,
        min_token_len: int = DEFAULTS.min_token_len,
        sentences: int = DEFAULTS.sentences,
        min_sentence_chars: int = DEFAULTS.min_sentence_chars,
        short_chars: int = DEFAULTS.short_chars,
        sketch: int = DEFAULTS.sketch,
        sketch_chars: int = DEFAULTS.sketch_chars,
        sketch_shingle: tuple[int, int] = DEFAULTS.sketch_shingle,
        line_sketch: int = DEFAULTS.line_sketch,
        segmenter: str = "auto",
        stopwords: frozenset[str] | None = None,
        tf: str = DEFAULTS.tf,
        engine: str = "auto",
        fuzzy: int = DEFAULTS.fuzzy,
        python_engine: Callable[[Fingerprinter], ReferenceEngine] | None = None,
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
        if engine not in ENGINES:
            raise ValueError(f"engine is 'auto', 'native' or 'python', not {engine!r}")
        if python_engine is not None and python_engine is _reference_engine():
            python_engine = None  # (the reference, named: not a custom engine)
        self._python_engine = python_engine
        self._python: ReferenceEngine | None = None  # made on first use (see :attr:`python`)
        self._python_lock = threading.Lock()
        self._requested_segmenter = segmenter
        self._engine_request = engine
        self._native: Any = None  # the native core's object, made on first use (see :attr:`engine`)
        self._native_config: tuple | None = None
        self._engine: str | None = None
        if engine == "native":
            reason = self.native_unavailable_reason()
            if reason:
                raise RuntimeError(f"engine='native' is not available: {reason}")

    # -- engines -------------------------------------------------------------------------------------------
    @property
    def python(self) -> ReferenceEngine:
        """The Python engine (the reference, or the one ``python_engine`` makes), made on first use. It computes
        every fingerprint under ``engine="python"``, and under the native core the rare text the core leaves to it."""
        if self._python is None:
            make = self._python_engine or _reference_engine()
            self._python = make(self)
        return self._python

    def native_unavailable_reason(self) -> str | None:
        """Why this fingerprinter cannot use the native core (``None``: it can)."""
        module, reason = native_core.native_module()
        if module is None:
            return reason
        if self._python_engine is not None:
            name = getattr(self._python_engine, "__qualname__", type(self._python_engine).__name__)
            return f"a custom Python engine ({name}): the native core computes the reference's fingerprints"
        if self._requested_segmenter not in ("auto", "rjieba") or self.segmenter != "rjieba":
            return f"segmenter {self.segmenter!r}: the native core segments as rjieba does"
        if type(self.idf).get is not IDFTable.get or not isinstance(self.idf._native_idf(), (dict, tuple)):
            return "a custom IDFTable class"
        if not isinstance(self.stopwords, (set, frozenset)):
            return "stop words that are not a set"
        try:
            extremes = tuple(float(v) for v in self.idf.extremes())
            if not all(math.isfinite(float(v)) and abs(v) < 1e9 for v in (self.idf.default, *extremes)):
                return "IDF values that are not finite or too large"
        except (TypeError, ValueError, OverflowError):
            return "IDF values that are not numbers"
        return None

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

    def _native_key(self) -> tuple:
        """What the native core was made from (compared before each batch: a setting changed since remakes it)."""
        return (self.idf, self.stopwords, *self.settings.as_tuple(), self.segmenter)

    def _make_native(self) -> Any:
        """The native core for the settings as they are now, shared with every fingerprinter of the same ones
        (:func:`~es_simhash.fingerprint.native_core.core_for`)."""
        self._native_config = self._native_key()
        return native_core.core_for(self.idf, self.stopwords, self.settings, self.segmenter)

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

    def token_weight(self, token: str) -> int:
        """Integer weight of one occurrence of ``token`` (0 for punctuation, spaces, stop words, short tokens), as
        the Python engine gives it."""
        return self.python.token_weight(token)

    # -- fingerprints --------------------------------------------------------------------------------------
    def fingerprint(self, text: str) -> Fingerprint:
        return self.fingerprint_many([text])[0]

    def fingerprint_many(self, texts: Sequence[str]) -> list[Fingerprint]:
        """Fingerprints of a batch of texts (faster per text than calling :meth:`fingerprint` in a loop)."""
        if self._engine == "native" and self._native_config != self._native_key():
            self._engine = self._native = None  # a setting was changed after the native core was made: remake it
        if self._engine != "native" and self.engine != "native":
            return self._python_many(texts)
        texts = texts if isinstance(texts, list) else list(texts)
        try:
            # (the text a reader sees, which both engines start from: HTML references read, a hard wrap joined)
            rows = self._native.fingerprint_many([_text.prepare(t) if isinstance(t, str) else t for t in texts])
        except TypeError:  # not all str: the reference raises what it raises
            return self._python_many(texts)
        except ValueError as exc:
            if not native_core.is_idf_cache_error(exc):
                raise
            # the IDF cache's files could not be read (damaged, or deleted while in use): the table is parsed
            # again from its file (and the entry written again), and a core made from that
            log.warning("the IDF cache entry of %s is unusable (%s): parsing the table again", self.idf.source, exc)
            self.idf.reload_from_source()
            native_core.forget(self._native)
            self._engine = self._native = None
            return self.fingerprint_many(texts)
        # the version is Python's to say (the native core computes the fields; a version that changes only
        # defaults changes nothing there)
        v = FINGERPRINT_VERSION
        out = [Fingerprint(r[0], r[1], r[2], r[3], r[4], r[5], v, r[7], r[8], r[9], r[10], r[11], r[12], r[13])
               if r is not None else None for r in rows]
        missing = [i for i, fp in enumerate(out) if fp is None]
        if missing:
            for i, fp in zip(missing, self._python_many([texts[i] for i in missing])):
                out[i] = fp
        return out  # type: ignore[return-value]

    def _python_many(self, texts: Sequence[str]) -> list[Fingerprint]:
        """The Python engine's fingerprints. It caches (a vocabulary), and threads may share a fingerprinter: one
        thread at a time."""
        with self._python_lock:
            return self.python.fingerprint_many(texts)
