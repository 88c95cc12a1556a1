"""Shared helpers of the bench scripts: plain-text tables and the closing PASS/FAIL lines against targets."""

from __future__ import annotations

import platform
import time
from typing import Sequence

import numpy as np


def fmt_table(rows: Sequence[Sequence[str]]) -> str:
    """Rows of strings (the first is the header) as an aligned table: first column left, the rest right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``): ratios between
    systems move with the microarchitecture (cache sizes above all), so every timing bench prints it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def verdicts(checks: Sequence[tuple[bool, str]], t_start: float, strict: bool) -> int:
    """Print one PASS/FAIL line per (ok, message) and the run time; the exit code (1 only under --strict)."""
    for ok, msg in checks:
        print(f"{'PASS' if ok else 'FAIL'} {msg}")
    print(f"(total run time {time.perf_counter() - t_start:.0f} s)")
    return 1 if strict and not all(ok for ok, _ in checks) else 0


def random_u64(rng: np.random.Generator, size: int) -> np.ndarray:
    """Uniform random 64-bit fingerprints."""
    return rng.integers(0, np.iinfo(np.uint64).max, size=size, dtype=np.uint64, endpoint=True)


def flip_bits(rng: np.random.Generator, value: int, d: int) -> int:
    """``value`` with ``d`` distinct random bits flipped (a planted neighbour at distance ``d``)."""
    for b in rng.choice(64, size=d, replace=False).tolist():
        value ^= 1 << b
    return value
