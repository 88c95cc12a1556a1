"""Elasticsearch's own bit-vector search, the peer ``bench/lookup.py`` measures the permutation tables against:
a 64-bit SimHash stored as a ``dense_vector`` with ``element_type: "bit"`` and searched with ``knn`` and a
``similarity`` radius. The bench's recall figures rest on what is pinned here, on the real node: ``similarity``
= k returns exactly the vectors within k bits (ties at exactly k included, nothing at k + 1), each scored
``(64 - hamming) / 64``; checked against a brute-force count of the bits, for both index types."""

from __future__ import annotations

import random

import pytest

from support import flip_bits, popcount_reference

BITS = 64


@pytest.mark.elasticsearch_only  # (OpenSearch's vectors are a plugin its minimal distribution leaves out)
@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_similarity_bounds_the_hamming_distance_ties_and_all(client, es_index_name, index_type):
    rng = random.Random(20261126)
    query = rng.getrandbits(BITS)
    vectors: dict[str, int] = {}
    for d in range(8):  # several vectors at each distance 0..7: ties at every radius
        for j in range(4):
            vectors[f"at{d}-{j}"] = flip_bits(query, rng.sample(range(BITS), d))
    for j in range(150):  # and random ones, ~32 bits away
        vectors[f"random-{j}"] = rng.getrandbits(BITS)
    client.indices.create(index=es_index_name, settings={"number_of_shards": 1, "number_of_replicas": 0},
                          mappings={"properties": {"v": {
                              "type": "dense_vector", "dims": BITS, "element_type": "bit", "index": True,
                              "similarity": "l2_norm", "index_options": {"type": index_type}}}})
    ops = []
    for doc_id, v in vectors.items():
        ops += [{"index": {"_index": es_index_name, "_id": doc_id}}, {"v": format(v, "016x")}]
    assert not client.bulk(operations=ops, refresh=True)["errors"]

    for k in range(7):
        distance = {i: popcount_reference(v ^ query) for i, v in vectors.items()}
        want = {i: d for i, d in distance.items() if d <= k}
        resp = client.search(index=es_index_name, size=len(vectors), knn={
            "field": "v", "query_vector": format(query, "016x"), "k": len(vectors),
            "num_candidates": len(vectors), "similarity": k})
        got = {h["_id"]: h["_score"] for h in resp["hits"]["hits"]}
        assert set(got) == set(want), (index_type, k, sorted(set(got) ^ set(want)))
        assert {i: round(s * BITS) for i, s in got.items()} == {i: BITS - d for i, d in want.items()}
        assert len({d for d in want.values()}) == k + 1  # (every distance 0..k is there, 4 vectors each)
