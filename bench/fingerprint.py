#!/usr/bin/env python
"""Fingerprinting throughput of es-simhash against its peers, measured in the same process.

Absolute times on a shared machine are noise; the ratios between systems timed in the same run are what this
script reports and checks. Systems, on the same real ~1,000-character Chinese documents (People's Daily 1998,
cut at sentence ends to 800..1,200 characters):

* ``native``           ``Fingerprinter(engine="native").fingerprint_many(texts)``: the native core (``native/``,
  module ``es_simhash_native``; warm: its token cache has seen the texts)
* ``es-simhash batch``  ``Fingerprinter(engine="python").fingerprint_many(texts)``: the Python reference (warm)
* ``es-simhash cold``   the same on a fresh ``Fingerprinter`` (empty vocabulary cache; info only)
* ``es-simhash single`` ``Fingerprinter().fingerprint(text)`` one at a time (Python; info only)
* ``peer``              ``simhash.Simhash(jieba.lcut(text))`` (PyPI ``jieba`` + ``simhash``): what most Python users do
* ``segmentation only`` ``rjieba.cut(text)`` on the already normalised texts: the floor es-simhash builds on

Targets (issue 13): native / Python reference >= 2.5x, native / segmentation only (``rjieba.cut`` alone) >= 1.0x,
native / peer >= 25x; the last line is machine-readable:
``RESULT native_vs_python=... native_vs_rjieba=... native_vs_jieba_simhash=...``. Python reference targets
(info for the reference since the native core exists): es-simhash batch / peer >= 50x, / segmentation only >= 0.70.
The fold of fingerprint version 6 (``es_simhash.fingerprint.fold``: Traditional characters to Simplified ones, invisible
characters and romanisation dropped) is timed against no fold in the same run: ``native, fold off`` is the native
core with its fold turned off (``es_simhash_native._set_fold(False)``; not a version 6 fingerprint, for timing
only), on the same Simplified documents and on their OpenCC ``s2t`` conversion; target: the fold costs at most 10%
of native throughput (``RESULT fold_on_vs_off=...``: native throughput with the fold / without, >= 0.90).
Version 7 is timed against version 6's settings in the same run: ``native, v6 settings`` is the native core without
fuzzy sentence hashes (``fuzzy=0``) on the texts as given (no entities read, no hard wraps joined; not a version 6
fingerprint, for timing only); target: version 7 costs at most 10% (``RESULT v7_vs_v6_settings=...`` >= 0.90).
``--rust`` also builds and runs ``native/src/bin/fpbench.rs`` on the same documents: inside Rust, the full
fingerprint against jieba-rs segmentation alone (target >= 0.70; ``RESULT fingerprint_vs_segment=...``).
The English case (BBC News; peer: regex words + ``simhash.Simhash``) is reported as secondary information.

Every system is warmed up once, then the systems are timed in interleaved rounds (``--repeats``, default 3) so
that a noisy neighbour slows all of them alike; the table shows the median per system and the ratios use the
medians. Run ``python bench/fingerprint.py --help`` for options.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.metadata
import io
import logging
import os
import platform
import pstats
import random
import re
import statistics
import sys
import time
from typing import Callable, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpora  # noqa: E402
from _common import cpu_model, fmt_table, verdicts  # noqa: E402  (bench/ is on sys.path when run as a script)

TARGET_PEER_RATIO = 50.0
TARGET_SEGMENTATION_RATIO = 0.70
TARGET_NATIVE_VS_PYTHON = 2.5
TARGET_NATIVE_VS_RJIEBA = 1.0
TARGET_NATIVE_VS_PEER = 25.0
TARGET_RUST_FINGERPRINT_VS_SEGMENT = 0.70
TARGET_FOLD = 0.90
TARGET_V7 = 0.90  # native throughput / the same with version 6's settings: version 7 costs at most 10%
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SENTENCE_PIECE = re.compile(r"[^。！？!?\n]*(?:[。！？!?]+[”’』」]*\n?|\n|$)")


# -- data ------------------------------------------------------------------------------------------------------
def chunk_article(article: str, lo: int, hi: int) -> list[str]:
    """Consecutive pieces of ``article`` of ``lo..hi`` characters, cut after sentence ends / paragraph breaks.

    An article of L characters is cut into about ``L // lo`` pieces of equal length (at most ``hi``); pieces that
    end up outside ``lo..hi`` (a very long sentence, a short tail) are dropped.
    """
    pieces = [p for p in _SENTENCE_PIECE.findall(article) if p]
    target = min(hi, len(article) / max(1, len(article) // lo))
    out, cur = [], ""
    for p in pieces:
        if cur and len(cur) + len(p) > hi:
            out.append(cur)
            cur = ""
        cur += p
        if len(cur) >= target:
            out.append(cur)
            cur = ""
    out.append(cur)
    return [c for c in (c.strip() for c in out) if lo <= len(c) <= hi]


def chinese_docs(n: int, lo: int, hi: int) -> list[str]:
    """The first ``n`` pieces of ``lo..hi`` characters of the People's Daily articles (file order).

    The corpus yields ~900 such pieces; past them, further passes cut each article again after dropping its first
    1, 2, ... sentence pieces (other cut points: overlapping but different documents, as reprints are)."""
    docs: list[str] = []
    seen: set[str] = set()
    articles = corpora.peoples_daily_articles(min_chars=lo)
    for shift in range(8):
        for art in articles:
            if shift:
                pieces = [p for p in _SENTENCE_PIECE.findall(art) if p]
                art = "".join(pieces[shift:])
            for d in chunk_article(art, lo, hi):
                if d not in seen:
                    seen.add(d)
                    docs.append(d)
            if len(docs) >= n:
                break
        if len(docs) >= n:
            break
    if len(docs) < n:
        print(f"note: only {len(docs)} Chinese documents of {lo}..{hi} chars available (asked for {n})")
    return docs[:n]


def english_docs(n: int, seed: int) -> list[str]:
    """``n`` BBC News articles, a seeded sample (the corpus is ordered by category)."""
    docs = corpora.bbc_news()
    if n >= len(docs):
        return docs
    return random.Random(seed).sample(docs, n)


# -- timing ----------------------------------------------------------------------------------------------------
class System:
    def __init__(self, name: str, run: Callable[[], object], setup: Callable[[], None] | None = None) -> None:
        self.name = name
        self.run = run
        self.setup = setup  # called (untimed) before every run, e.g. a fresh Fingerprinter
        self.times: list[float] = []

    def once(self) -> float:
        if self.setup is not None:
            self.setup()
        t0 = time.perf_counter()
        self.run()
        return time.perf_counter() - t0

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def measure(systems: Sequence[System], repeats: int) -> None:
    for s in systems:  # warm-up: dictionaries loaded, caches filled, code paths hot
        s.once()
    for _ in range(repeats):  # interleaved rounds: noise hits every system alike
        for s in systems:
            s.times.append(s.once())


def table(systems: Sequence[System], n_docs: int, n_chars: int, reference: System) -> str:
    rows = [("system", "median s", "min s", "max s", "docs/s", "kchars/s", f"x {reference.name}")]
    for s in systems:
        rows.append(
            (
                s.name,
                f"{s.median:.3f}",
                f"{min(s.times):.3f}",
                f"{max(s.times):.3f}",
                f"{n_docs / s.median:,.0f}",
                f"{n_chars / s.median / 1000:,.0f}",
                f"{s.median / reference.median:.3f}",
            )
        )
    return fmt_table(rows)


def paired(a: System, b: System) -> str:
    """Per-round ratios time(b)/time(a) = speed(a)/speed(b): how much the noise moved the ratio."""
    return ", ".join(f"{tb / ta:.3g}" for ta, tb in zip(a.times, b.times))


# -- profile ---------------------------------------------------------------------------------------------------
def stage_breakdown(fp, texts: Sequence[str], repeats: int) -> list[tuple[str, float]]:
    """Median time of each stage of ``Fingerprinter.fingerprint_many`` (warm cache), done stage by stage.

    Mirrors the body of the Python engine's ``fingerprint_many``; uses its private helpers
    (``text._normalize_many``, ``ReferenceEngine._simhash_batch``, ``text._keys_many``, ``fingerprint.content_hashes``,
    ``ReferenceEngine._sketches``, ``ReferenceEngine._signatures``, ``ReferenceEngine._word_bags``).
    """
    from es_simhash.fingerprint import fingerprinter as F
    from es_simhash.fingerprint import text as T

    stages: dict[str, list[float]] = {}

    def clock(name: str, fn):
        t0 = time.perf_counter()
        out = fn()
        stages.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    seg, py = fp.segmenter, fp.python
    for _ in range(repeats + 1):
        norm = clock("text._normalize_many (NFKC etc.)", lambda: T._normalize_many(texts))
        toks = clock("text.segment (rjieba.cut+re-split)", lambda: [T.segment(n, seg) for n in norm])
        clock("_simhash_batch (ids+numpy)", lambda: py._simhash_batch(toks))
        keys = clock("text._keys_many (content+sentences)", lambda: T._keys_many(norm, fp.min_sentence_chars))
        clock("content_hashes (bag+hash64)", lambda: F.content_hashes([k for k, _ in keys]))
        sketches = clock("_sketches (shingle bottom-k)", lambda: py._sketches(norm, keys))
        clock("_signatures (sort+sentence_hashes)", lambda: py._signatures([s for _, s in keys]))
        clock("_word_bags", lambda: py._word_bags(toks, sketches))
    # drop the warm-up pass
    return [(name, statistics.median(ts[1:])) for name, ts in stages.items()]


def profile_top(fn: Callable[[], object], top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime").print_stats(top)
    text = buf.getvalue()
    start = text.find("   ncalls")
    return text[start:].rstrip() if start >= 0 else text.rstrip()


# -- main ------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="es-simhash fingerprinting throughput vs jieba+simhash and vs segmentation alone "
        "(ratios measured in the same run).",
    )
    ap.add_argument(
        "--docs", type=int, default=1500,
        help="Chinese documents (default 1500; past the ~904 pieces of 800..1200 chars, re-cut articles)",
    )
    ap.add_argument("--min-chars", type=int, default=800, help="shortest Chinese document (default 800)")
    ap.add_argument("--max-chars", type=int, default=1200, help="longest Chinese document (default 1200)")
    ap.add_argument("--en-docs", type=int, default=1000, help="English BBC documents (default 1000; 0 skips)")
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up (default 3)")
    ap.add_argument("--seed", type=int, default=1998, help="seed of the English sample (default 1998)")
    ap.add_argument("--quick", action="store_true", help="small run (<30 s): 200 Chinese, 200 English docs")
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of fingerprint_many")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the per-stage breakdown of es-simhash")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--rust", action="store_true",
                    help="also build and run the Rust bench (native/src/bin/fpbench.rs: fingerprint vs jieba-rs cut)")
    ap.add_argument("--dump", metavar="DIR",
                    help="write the Chinese documents, IDF table and stop words for fpbench to DIR and exit")
    args = ap.parse_args(argv)
    if args.quick:
        args.docs, args.en_docs = min(args.docs, 200), min(args.en_docs, 200)
    if args.repeats < 1 or args.docs < 1:
        ap.error("--repeats and --docs must be >= 1")

    import jieba
    import numpy as np
    import rjieba
    import simhash

    from es_simhash import Fingerprinter
    from es_simhash.fingerprint import text as T
    from es_simhash.fingerprint.native_core import native_module as _native_module

    if args.dump:
        dump(args.dump, chinese_docs(args.docs, args.min_chars, args.max_chars), Fingerprinter(engine="python"))
        return 0
    native_module, native_reason = _native_module()
    if native_module is None:
        print(f"the native core is not available ({native_reason}): pip install ./native")
        return 1

    jieba.setLogLevel(logging.WARNING)
    logging.getLogger("simhash").setLevel(logging.WARNING)
    t_start = time.perf_counter()

    print("es-simhash fingerprinting benchmark")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, jieba {jieba.__version__}, "
        f"simhash {importlib.metadata.version('simhash')}, rjieba {importlib.metadata.version('rjieba')}, cpus {os.cpu_count()} ({cpu_model()}); "
        f"es-simhash segmenter: {T.segmenter_name()}; repeats {args.repeats} (median), 1 warm-up each"
    )

    # ---- Chinese -------------------------------------------------------------------------------------------
    zh = chinese_docs(args.docs, args.min_chars, args.max_chars)
    zh_chars = sum(map(len, zh))
    zh_norm = [T.normalize(t) for t in zh]
    print(
        f"\n== Chinese: {len(zh)} People's Daily pieces, {args.min_chars}..{args.max_chars} chars "
        f"(mean {zh_chars / len(zh):.0f}, total {zh_chars:,})"
    )

    fp = Fingerprinter(engine="python")
    nat = Fingerprinter(fp.idf, engine="native")
    cold: dict[str, Fingerprinter] = {}
    idf = fp.idf  # share the loaded IDF table: a fresh Fingerprinter then costs nothing but an empty cache

    def fresh() -> None:
        cold["fp"] = Fingerprinter(idf, engine="python")

    # sanity: batch == one at a time, and what we time is what we think
    batch = fp.fingerprint_many(zh)
    assert batch == [fp.fingerprint(t) for t in zh], "fingerprint_many differs from fingerprint"
    assert nat.fingerprint_many(zh) == batch, "the native core differs from the Python reference"
    assert T.segmenter_name() != "rjieba" or T.segment(zh_norm[0]) == rjieba.cut(zh_norm[0])

    native = System("native", lambda: nat.fingerprint_many(zh))

    def without_fold(texts: list[str]) -> Callable[[], object]:
        def run() -> object:
            native_module._set_fold(False)
            try:
                return nat.fingerprint_many(texts)
            finally:
                native_module._set_fold(True)
        return run

    nofold = System("native, fold off", without_fold(zh))
    v6_settings = Fingerprinter(idf, engine="native", fuzzy=0)

    def as_v6() -> object:  # (no fuzzy sentence hashes, and the text as given: no entities read, no wraps joined)
        prepare = T.prepare
        T.prepare = lambda text: text
        try:
            return v6_settings.fingerprint_many(zh)
        finally:
            T.prepare = prepare

    v6 = System("native, v6 settings", as_v6)
    es = System("es-simhash batch", lambda: fp.fingerprint_many(zh))
    es_single = System("es-simhash single", lambda: [fp.fingerprint(t) for t in zh])
    es_cold = System("es-simhash cold", lambda: cold["fp"].fingerprint_many(zh), setup=fresh)
    peer = System("peer jieba+simhash", lambda: [simhash.Simhash(jieba.lcut(t)).value for t in zh])
    seg = System("segmentation only", lambda: [rjieba.cut(n) for n in zh_norm])
    zh_systems = [native, v6, nofold, es, es_single, es_cold, peer, seg]
    measure(zh_systems, args.repeats)
    print(table(zh_systems, len(zh), zh_chars, native))
    print("(last column: median time of the system / median time of native, i.e. how many times faster "
          "native is)")
    print(f"per-round native / es-simhash batch:            {paired(native, es)}")
    print(f"per-round native / segmentation only:           {paired(native, seg)}")
    print(f"per-round native / peer:                        {paired(native, peer)}")
    print(f"per-round es-simhash batch / peer:              {paired(es, peer)}")
    print(f"per-round es-simhash batch / segmentation only: {paired(es, seg)}")

    peer_ratio = peer.median / es.median
    seg_ratio = seg.median / es.median
    native_py, native_seg, native_peer = es.median / native.median, seg.median / native.median, peer.median / native.median
    fold_ratio = nofold.median / native.median
    v7_ratio = v6.median / native.median
    print(f"per-round native / native, v6 settings:         {paired(native, v6)}")
    print(f"per-round native / native, fold off:            {paired(native, nofold)}")

    # the same on the documents in Traditional script (OpenCC s2t): every character goes through the fold
    import opencc

    zh_t = [opencc.OpenCC("s2t.json").convert(t) for t in zh]
    assert nat.fingerprint_many(zh_t) == batch, "a Traditional conversion fingerprints like its original"
    trad = System("native, Traditional", lambda: nat.fingerprint_many(zh_t))
    trad_nofold = System("native, Traditional, fold off", without_fold(zh_t))
    measure([trad, trad_nofold], args.repeats)
    print(f"\n-- the same documents in Traditional script (OpenCC s2t): native with the fold "
          f"{len(zh_t) / trad.median:,.0f} docs/s, fold off {len(zh_t) / trad_nofold.median:,.0f} docs/s "
          f"(on / off {trad_nofold.median / trad.median:.3f})")

    if not args.no_breakdown:
        print("\n-- where es-simhash batch spends its time (stages run one after another, warm cache, median)")
        stages = stage_breakdown(fp, zh, args.repeats)
        total = sum(t for _, t in stages)
        seg_t = dict(stages).get("text.segment (rjieba.cut+re-split)", 0.0)
        for name, t in stages:
            print(f"   {name:<38} {t * 1000:8.1f} ms  {100 * t / total:5.1f}%")
        print(f"   {'sum of stages':<38} {total * 1000:8.1f} ms  (es-simhash batch median {es.median * 1000:.1f} ms)")
        print(
            f"   non-segmentation share: {100 * (total - seg_t) / total:.1f}% "
            f"-> a 0.70 ratio allows at most {100 * (1 - TARGET_SEGMENTATION_RATIO):.0f}%"
        )

    if args.profile:
        print("\n-- cProfile of one warm fingerprint_many over the Chinese documents (by own time)")
        print(profile_top(lambda: fp.fingerprint_many(zh), 20))

    # ---- English -------------------------------------------------------------------------------------------
    en_info = []
    if args.en_docs > 0:
        en = english_docs(args.en_docs, args.seed)
        en_chars = sum(map(len, en))
        en_norm = [T.normalize(t) for t in en]
        print(f"\n== English (secondary): {len(en)} BBC News articles (mean {en_chars / len(en):.0f} chars)")
        word = re.compile(r"\w+")
        fp_en = Fingerprinter(idf, engine="python")
        nat_en = Fingerprinter(idf, engine="native")
        en_native = System("native", lambda: nat_en.fingerprint_many(en))
        en_es = System("es-simhash batch", lambda: fp_en.fingerprint_many(en))
        en_single = System("es-simhash single", lambda: [fp_en.fingerprint(t) for t in en])
        en_peer = System("peer regex+simhash", lambda: [simhash.Simhash(word.findall(t.lower())).value for t in en])
        en_split = System("peer split+simhash", lambda: [simhash.Simhash(t.lower().split()).value for t in en])
        en_seg = System("tokenization only", lambda: [T.segment(n) for n in en_norm])
        en_systems = [en_native, en_es, en_single, en_peer, en_split, en_seg]
        measure(en_systems, args.repeats)
        print(table(en_systems, len(en), en_chars, en_es))
        en_info = [
            f"INFO English native / es-simhash batch = {en_es.median / en_native.median:.2f}x",
            f"INFO English es-simhash batch / peer regex+simhash = {en_peer.median / en_es.median:.1f}x",
            f"INFO English es-simhash batch / tokenization only  = {en_seg.median / en_es.median:.2f}",
        ]

    # ---- verdict -------------------------------------------------------------------------------------------
    print("\n== results")
    print(f"INFO native: {len(zh) / native.median:,.0f} docs/s; es-simhash batch: {len(zh) / es.median:,.0f} docs/s; peer {len(zh) / peer.median:,.0f} docs/s; "
          f"segmentation only {len(zh) / seg.median:,.0f} docs/s")
    print(f"INFO es-simhash single / batch = {es.median / es_single.median:.2f}; "
          f"cold / warm = {es.median / es_cold.median:.2f}")
    for line in en_info:
        print(line)
    print(f"INFO the same ratios from each system's fastest round (noise only ever adds time): "
          f"native / Python reference {min(es.times) / min(native.times):.2f}x, / rjieba.cut alone "
          f"{min(seg.times) / min(native.times):.2f}x, / jieba+simhash {min(peer.times) / min(native.times):.1f}x")
    rust_ratio = run_rust_bench(zh, fp, args.repeats) if args.rust else None
    results = [
        (native_py >= TARGET_NATIVE_VS_PYTHON,
         f"native / Python reference (es-simhash batch) = {native_py:.2f}x  (target >= {TARGET_NATIVE_VS_PYTHON:g}x)"),
        (native_seg >= TARGET_NATIVE_VS_RJIEBA,
         f"native / rjieba.cut alone = {native_seg:.2f}x  (target >= {TARGET_NATIVE_VS_RJIEBA:g}x)"),
        (native_peer >= TARGET_NATIVE_VS_PEER,
         f"native / jieba.lcut+simhash.Simhash = {native_peer:.1f}x  (target >= {TARGET_NATIVE_VS_PEER:g}x)"),
        (v7_ratio >= TARGET_V7,
         f"native throughput / the same with version 6's settings = {v7_ratio:.3f}  (target >= {TARGET_V7:.2f}: "
         "version 7 costs at most 10%)"),
        (fold_ratio >= TARGET_FOLD,
         f"native throughput with the fold / without = {fold_ratio:.3f}  (target >= {TARGET_FOLD:.2f}: the fold "
         "costs at most 10%)"),
        *([(rust_ratio >= TARGET_RUST_FINGERPRINT_VS_SEGMENT,
            f"inside Rust: full fingerprint / jieba-rs cut alone = {rust_ratio:.2f}  "
            f"(target >= {TARGET_RUST_FINGERPRINT_VS_SEGMENT:.2f})")] if rust_ratio is not None else []),
    ]
    # the Python reference's own former targets: information now that the native core carries the speed
    print(f"INFO Python reference: es-simhash batch / peer = {peer_ratio:.1f}x (former target {TARGET_PEER_RATIO:g}x), "
          f"/ segmentation alone = {seg_ratio:.2f} (former target {TARGET_SEGMENTATION_RATIO:.2f})")
    code = verdicts(results, t_start, args.strict)
    print(f"RESULT native_vs_python={native_py:.3f} native_vs_rjieba={native_seg:.3f} "
          f"native_vs_jieba_simhash={native_peer:.3f}")
    print(f"RESULT fold_on_vs_off={fold_ratio:.3f} traditional_fold_on_vs_off={trad_nofold.median / trad.median:.3f}")
    print(f"RESULT v7_vs_v6_settings={v7_ratio:.3f}")
    return code


# -- the Rust bench ----------------------------------------------------------------------------------------------
def dump(directory: str, docs: Sequence[str], fp) -> None:
    """The documents, IDF table and stop words of ``fp`` as ``native/src/bin/fpbench.rs`` reads them."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "texts.bin"), "w", encoding="utf-8") as fh:
        fh.write("\0".join(docs))
    with open(os.path.join(directory, "idf.tsv"), "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.writelines(f"{w}\t{v!r}\n" for w, v in fp.idf.items() if "\t" not in w and "\n" not in w)
        fh.write(f"\0default\t{fp.idf.default!r}\n")
    with open(os.path.join(directory, "stopwords.txt"), "w", encoding="utf-8") as fh:
        fh.writelines(f"{w}\n" for w in sorted(fp.stopwords))
    print(f"wrote {len(docs)} documents, {len(fp.idf)} IDF entries, {len(fp.stopwords)} stop words to {directory}")


def run_rust_bench(docs: Sequence[str], fp, repeats: int) -> float | None:
    """Build (``cargo build --release``) and run fpbench on ``docs``; its ``fingerprint_vs_segment`` ratio."""
    import subprocess
    import tempfile

    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/es-simhash/cargo-target"))
    native_dir = os.path.join(ROOT, "native")
    print("\n== inside Rust (native/src/bin/fpbench.rs): full fingerprint vs jieba-rs segmentation alone")
    build = subprocess.run(["cargo", "build", "--release", "--quiet", "--no-default-features", "--features", "bench",
                            "--bin", "fpbench"], cwd=native_dir, env=env)
    if build.returncode:
        print("cargo build failed")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        dump(tmp, docs, fp)
        out = subprocess.run([os.path.join(env["CARGO_TARGET_DIR"], "release", "fpbench"), tmp, str(max(5, repeats))],
                             capture_output=True, text=True, env=env)
    print(out.stdout.rstrip())
    if out.returncode:
        print(out.stderr.rstrip())
        return None
    for line in out.stdout.splitlines():
        if line.startswith("RESULT fingerprint_vs_segment="):
            return float(line.split("=", 1)[1])
    return None


if __name__ == "__main__":
    sys.exit(main())
