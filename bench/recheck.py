"""What the recheck costs ``es-simhash index``, and that it gives ``dedup``'s clusters: the real command line, three
ways into fresh indexes of one node, on two crawls.

* ``index --no-recheck``: the decisions made on arrival (the ingest alone);
* ``index``: the defaults, the ingest and then the recheck of the run's documents;
* ``dedup``: the embedded engine with its defaults, whose clusters ``index`` must give.

The crawls: ``short``, People's Daily paragraphs with half of them reprinted inside three site templates (the
crawl the tests use, ``tests/support.py`` ``templated_crawl``: 12,988 records by default), where most duplicates
are matched through sentences and sketches and so are rechecked; ``news``, whole People's Daily articles with a
quarter of them reprinted (a site's header and footer, an inserted sentence, a cut tail), where most are matched by
SimHash and the recheck has less to look at. For each: wall seconds and node CPU seconds of both ``index`` runs
(the least of ``--rounds`` runs each, in alternating order), their ratio, how many records the two put in other
clusters (what the recheck changed: both decide alike on arrival), and whether
``index``'s clusters are ``dedup``'s (id, cluster, duplicate_of of every record).

    python bench/recheck.py [--docs 12988] [--es-url URL]

Ends with ``RESULT short_wall_ratio=R short_node_cpu_ratio=N news_wall_ratio=R news_node_cpu_ratio=N
same_clusters=1``: the ratios are ``index`` over ``index --no-recheck``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _common import cpu_model, fmt_table  # noqa: E402
from _es import add_node_options, client_for, es_node, unique_name  # noqa: E402


def short_crawl(n: int) -> list[dict]:
    from support import templated_crawl

    return templated_crawl(7, n)


def news_crawl(n: int) -> list[dict]:
    import corpora

    rng = random.Random(1998)
    articles = [a for a in corpora.peoples_daily_articles() if 400 <= len(a) <= 4000]
    originals = articles[: max(1, (n * 4) // 5)]
    records = [{"id": f"a{i}", "content": a} for i, a in enumerate(originals)]
    for i in rng.sample(range(len(originals)), min(len(originals), n - len(originals))):
        text, edit = originals[i], rng.randrange(3)
        if edit == 0:
            text = f"来源：人民网\n{text}\n（责任编辑：李明）"
        elif edit == 1:
            parts = text.split("。")
            parts.insert(len(parts) // 2, "点击关注我们的公众号，获取更多精彩内容")
            text = "。".join(parts)
        else:
            text = text[: int(len(text) * 0.8)]
        records.append({"id": f"r{i}", "content": text})
    rng.shuffle(records)
    return records


def node_cpu_s(client) -> float:
    stats = client.nodes.stats(metric="process", filter_path="nodes.*.process.cpu.total_in_millis")
    return sum(n["process"]["cpu"]["total_in_millis"] for n in stats["nodes"].values()) / 1000.0


def clusters(report: Path) -> dict[str, tuple[str, str | None]]:
    rows = [json.loads(x) for x in report.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: (r["cluster"], r["duplicate_of"]) for r in rows}


def es_simhash(*args, env, cwd) -> str:
    res = subprocess.run([sys.executable, "-m", "es_simhash", *map(str, args), "--no-progress"], capture_output=True,
                         env=env, cwd=cwd, text=True)
    if res.returncode != 0:
        raise SystemExit(f"es-simhash {' '.join(map(str, args))} failed ({res.returncode}): {res.stderr.strip()}")
    return res.stderr


def measure(name: str, records: list[dict], url: str, client, work: Path, rounds: int) -> dict:
    """Both ``index`` runs, ``rounds`` times in alternating order into fresh indexes; each one's least wall and node
    CPU seconds (a node warms up: the first runs of a process pay for it)."""
    path = work / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    env = {**os.environ, "ES_URL": url}
    out: dict = {"records": len(records)}
    runs = (("index --no-recheck", ["--no-recheck"]), ("index", []))
    for round_ in range(rounds):
        for label, extra in runs if round_ % 2 == 0 else runs[::-1]:
            index = unique_name(f"recheck-{name}")
            report = work / f"{name}-{label.replace(' ', '')}.jsonl"
            c0, t0 = node_cpu_s(client), time.perf_counter()
            err = es_simhash("index", path, "--index", index, "--report", report, "--dead-letters",
                             work / "dead.jsonl", "--checkpoint", work / f"{index}.cp.json", *extra, env=env, cwd=work)
            wall, cpu = time.perf_counter() - t0, node_cpu_s(client) - c0
            best = out.get(label, (wall, cpu, None))
            out[label] = (min(wall, best[0]), min(cpu, best[1]), err.strip().splitlines())
            out[f"{label} clusters"] = clusters(report)
            client.options(ignore_status=404).indices.delete(index=index)
    es_simhash("dedup", path, "--report", work / f"{name}-dedup.jsonl", "--dead-letters", work / "dead.jsonl",
               env=env, cwd=work)
    dedup = clusters(work / f"{name}-dedup.jsonl")
    out["same"] = out["index clusters"] == dedup
    out["differ"] = sum(out["index clusters"][i] != out["index --no-recheck clusters"][i] for i in dedup)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=12_988, help="records per crawl")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each, alternating (least time counts)")
    add_node_options(ap, heap="1g")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    with es_node(args.es_url, args.heap) as (url, where), tempfile.TemporaryDirectory() as tmp:
        print(f"es-simhash index with and without its recheck: {where}; {cpu_model()}, {os.cpu_count()} cores",
              flush=True)
        client = client_for(url)
        results = {name: measure(name, build(args.docs), url, client, Path(tmp), args.rounds)
                   for name, build in (("short", short_crawl), ("news", news_crawl))}
    rows, ratios = [], {}
    for name, r in results.items():
        (w0, c0, _), (w1, c1, lines) = r["index --no-recheck"], r["index"]
        ratios[name] = (w1 / w0, c1 / c0)
        rows.append((name, f"{r['records']:,}", f"{w0:.1f}", f"{w1:.1f}", f"{w1 / w0:.2f}", f"{c0:.1f}", f"{c1:.1f}",
                     f"{c1 / c0:.2f}", f"{r['differ']:,}", "yes" if r["same"] else "NO"))
        print(f"{name}: {next((x for x in lines if x.startswith('recheck:')), 'recheck: nothing changed')}")
    print(fmt_table([("crawl", "records", "wall s no-recheck", "wall s index", "ratio", "node CPU s no-recheck",
                      "node CPU s index", "ratio", "records in other clusters", "clusters = dedup's"), *rows]))
    same = all(r["same"] for r in results.values())
    print(f"(total run time {time.perf_counter() - t_start:.0f} s)")
    print(f"RESULT short_wall_ratio={ratios['short'][0]:.2f} short_node_cpu_ratio={ratios['short'][1]:.2f} "
          f"news_wall_ratio={ratios['news'][0]:.2f} news_node_cpu_ratio={ratios['news'][1]:.2f} "
          f"same_clusters={int(same)}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
