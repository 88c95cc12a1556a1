"""`evaluate`: scores on a user's own labels, and a sweep that finds the setting their data needs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import combinations

import pytest

from es_simhash.results.evaluate import Labels, load_labels, score, sweep
from es_simhash.errors import LabelError
from support import chinese_articles, templated_crawl


def heavily_edited(text: str) -> str:
    """Every 30th character replaced: what some content farms do; the SimHash moves 3 to 14 bits."""
    return "".join("某" if i % 30 == 7 else ch for i, ch in enumerate(text))


def run_on(text: str) -> str:
    """The text as one run of characters, no sentence ends or line breaks (a transcript, a scraped table cell):
    no long sentence or fuzzy hash survives the edits, so the SimHash alone can find its copies."""
    return re.sub(r"[。！？!?；;\n]", "，", text)


@pytest.fixture(scope="module")
def labels() -> Labels:
    arts = [run_on(a) for a in chinese_articles() if 800 <= len(a) <= 2000][:31]
    return Labels(pairs=[(heavily_edited(a), a, True) for a in arts[:30]]
                  + [(arts[i], arts[i + 1], False) for i in range(30)])


def test_a_sweep_finds_the_looser_k_these_labels_call_for(labels):
    res = sweep(labels)
    assert res.current.precision == 1.0 and res.current.recall < 0.1  # k = 3 misses the heavy edits
    assert res.best["k"] > 3 and res.best_score.f1 > res.current.f1 + 0.3 and res.best_score.precision == 1.0
    k_rows = {v: sc for s, v, sc in res.rows if s == "k"}
    assert [k_rows[k].recall for k in sorted(k_rows)] == sorted(k_rows[k].recall for k in k_rows)  # monotone
    assert k_rows[3] == res.current
    # (k beyond the 3 bits the default lookup keys guarantee: run as dedup advises, with keys that guarantee it)
    assert res.lookups == {k: f"tables:{k}:3" for k in range(4, 9)} and res.to_dict()["best_lookup"] == \
        f"tables:{res.best['k']}:3"


def test_clustered_labels_score_what_the_engine_clusters(tmp_path):
    arts = chinese_articles()[60:70]
    lines = [{"id": f"o{i}", "content": a, "cluster": f"c{i}"} for i, a in enumerate(arts)]
    lines += [{"id": "r0", "content": "转载：" + arts[0], "cluster": "c0"},
              {"id": "r1", "content": arts[1] + "（完）", "cluster": "c2"}]  # mislabelled: a copy of o1, said c2
    got = score(load_labels(json.dumps(x, ensure_ascii=False) for x in lines))
    assert (got.true_pairs, got.predicted_pairs) == (2, 2)  # (o0, r0), (o2, r1) labelled; (o0, r0), (o1, r1) found
    assert (got.precision, got.recall) == (0.5, 0.5)


def test_bad_labels_name_their_line():
    with pytest.raises(LabelError, match="labels:2: a pair needs"):
        load_labels(['{"a": "x", "b": "y", "duplicate": true}', '{"a": "x", "duplicate": "maybe"}'])
    with pytest.raises(LabelError, match="mixed"):
        load_labels(['{"a": "x", "b": "y", "duplicate": true}', '{"id": 1, "content": "t", "cluster": "c"}'])


def test_evaluate_from_the_command_line(labels, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"a": a, "b": b, "duplicate": d}, ensure_ascii=False) + "\n"
                            for a, b, d in labels.pairs), encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "es_simhash", "evaluate", str(path), "--json"], capture_output=True,
                         timeout=600)
    got = json.loads(res.stdout)
    assert res.returncode == 0 and got["best"]["k"] > 3 and got["best_score"]["f1"] > got["current"]["f1"]
    res = subprocess.run([sys.executable, "-m", "es_simhash", "evaluate", str(tmp_path / "nope.jsonl")],
                         capture_output=True, timeout=600)
    assert res.returncode == 1 and "labels file not found" in res.stderr.decode()


def _pair_score(truth: set, predicted: set) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1, computed here from the two sets of pairs."""
    hit = len(truth & predicted)
    p = hit / len(predicted) if predicted else 1.0
    r = hit / len(truth) if truth else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _same_cluster_pairs(members: dict) -> set:
    return {tuple(sorted(p)) for ids in members.values() for p in combinations(ids, 2)}


@pytest.mark.parametrize("seed", [3, 11])
def test_evaluate_scores_the_clusters_dedup_makes(cli, tmp_path, seed):
    """Labelled clusters of templated reprints (a site's header and footer around real text): the recheck at the
    end of `dedup` takes back merges the template caused, so the rule on arrival and `dedup` disagree. `evaluate`
    scores `dedup`'s final clusters, whatever the data, with the same settings."""
    records = templated_crawl(seed, 600)
    for r in records:
        r["cluster"] = "event-" + r["id"][1:]  # o7 and its reprint r7 are one event
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    report = tmp_path / "report.jsonl"
    res = cli("dedup", str(path), "--report", str(report), "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    found: dict[str, list[str]] = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        found.setdefault(row["cluster"], []).append(row["id"])
    labelled: dict[str, list[str]] = {}
    for r in records:
        labelled.setdefault(r["cluster"], []).append(r["id"])
    p, r, f1 = _pair_score(_same_cluster_pairs(labelled), _same_cluster_pairs(found))
    # (the data is one where the recheck matters: without it, other clusters)
    res_arrival = cli("dedup", str(path), "--report", str(tmp_path / "arrival.jsonl"), "--no-recheck",
                      "--no-progress", cwd=tmp_path)
    assert res_arrival.returncode == 0
    arrival = {json.loads(x)["id"]: json.loads(x)["cluster"]
               for x in (tmp_path / "arrival.jsonl").read_text(encoding="utf-8").splitlines()}
    final = {json.loads(x)["id"]: json.loads(x)["cluster"] for x in report.read_text(encoding="utf-8").splitlines()}
    assert arrival != final

    res = cli("evaluate", str(path), "--no-sweep", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)["current"]
    assert got["predicted_pairs"] == len(_same_cluster_pairs(found))
    assert (got["precision"], got["recall"], got["f1"]) == (round(p, 4), round(r, 4), round(f1, 4))
