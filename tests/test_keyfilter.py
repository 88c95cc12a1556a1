"""The partition term filter's membership test (``es_simhash.index.elastic.keyfilter``): a code a partition holds is
never reported absent (that would lose a candidate), also after codes are added; and the codes are the same in every
process (a filter read from the cache answers for terms coded by another run)."""

from __future__ import annotations

import hashlib

import numpy as np

from es_simhash.index.elastic.keyfilter import TermFilter, key_codes, term_codes
from es_simhash.lookup.keys import DEFAULT


def test_every_held_code_is_found_and_few_others_pass():
    rng = np.random.default_rng(7)
    held = np.unique(rng.integers(-2**63, 2**63 - 1, 200_000, dtype=np.int64))
    f = TermFilter("p", "uuid", 10, held)
    assert f.has(held).all()
    others = np.setdiff1d(rng.integers(-2**63, 2**63 - 1, 50_000, dtype=np.int64), held)
    assert not f.has(others).any()  # (random 64-bit codes: a chance collision is about 1 in 10^13)
    more = np.unique(rng.integers(-2**63, 2**63 - 1, 900_000, dtype=np.int64))  # (outgrows the bit set)
    f.add(more[:1000], 12)
    assert f.has(more[:1000]).all() and f.has(held).all() and f.mark == 12
    f.add(more, 15)
    assert f.has(held).all() and f.has(more).all() and f.mark == 15
    f.add(np.empty(0, np.int64), 11)
    assert f.mark == 15  # (a mark never moves back)


def test_codes_are_the_same_in_every_process():
    assert term_codes("hex", ["0000000000000001", "ffffffffffffffff"]).tolist() == [1, -1]
    assert term_codes("key", ["13:0a1b2c3d", "0:00000001"]).tolist() == [(0x13 << 32) | 0x0A1B2C3D, 1]
    digest = int.from_bytes(hashlib.blake2b("页面/123".encode(), digest_size=8).digest(), "big", signed=True)
    assert term_codes("id", ["页面/123"]).tolist() == [digest]
    # a document's keys coded from its SimHash equal the codes of the key terms a lookup asks for
    sims = np.array([0x0123456789ABCDEF, 0xFEDCBA9876543210], dtype=np.uint64)
    asked = [t for row in DEFAULT.terms(sims) for t in row]
    assert key_codes(DEFAULT, sims).tolist() == term_codes("key", asked).tolist()


def test_has_answers_each_code_in_its_place():
    f = TermFilter("p", "uuid", 0, np.unique(term_codes("hex", ["00000000000000aa", "00000000000000cc"])))
    assert f.has(term_codes("hex", ["00000000000000cc", "00000000000000bb", "00000000000000aa"])).tolist() == [
        True, False, True]
    assert f.has(term_codes("hex", [])).tolist() == []
