import numpy as np
import pytest

from es_simhash.lookup import hamming
from support import popcount_reference


@pytest.fixture(params=["native", "lookup-table"])
def popcount_impl(request, monkeypatch):
    if request.param == "lookup-table":
        monkeypatch.setattr(hamming, "_HAS_BITWISE_COUNT", False)
    return hamming.popcount


def test_popcount_equals_python_bit_counting(popcount_impl):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**64 - 1, size=5000, dtype=np.uint64, endpoint=True)
    x[:3] = [0, 2**64 - 1, 2**63]
    assert popcount_impl(x).tolist() == [popcount_reference(int(v)) for v in x]


def test_within_returns_nearest_first():
    q = 0b1011
    cands = hamming.as_uint64([0b1011 ^ 0b111, 0b1011, 2**64 - 1, 0b1011 ^ 1])
    pos, dist = hamming.within(q, cands, 3)
    assert pos.tolist() == [1, 3, 0]
    assert dist.tolist() == [0, 1, 3]


def test_signed_round_trip():
    for v in (0, 1, 2**63 - 1, 2**63, 2**64 - 1):
        s = hamming.to_signed(v)
        assert -(2**63) <= s < 2**63
        assert hamming.to_unsigned(s) == v
