"""The dedup engine on real text: exact and near duplicates, in-batch and cross-batch, clusters, empties."""

import itertools

import pytest

from es_simhash import Fingerprinter
from es_simhash.fingerprint import is_sketch
from es_simhash.decide.rule import RuleBase
from es_simhash.engine.dedup_engine import DedupEngine
from es_simhash.decide.default import DefaultRule
from es_simhash.errors import DuplicateIdError
from es_simhash.records import Decision, Document, StoredDoc
from es_simhash.index.base import Lookup
from es_simhash.index.memory import MemoryIndex
from support import chinese_articles, english_articles


@pytest.fixture(scope="module")
def articles():
    return [a for a in chinese_articles() if 1000 <= len(a) <= 4000][:60]


def reprint(article: str) -> str:
    """What a reprinting site does: a header, a couple of punctuation edits, a footer."""
    return "本网讯 " + article.replace("，", ",", 3) + "（责任编辑：王敏）"


def test_exact_and_near_duplicates_join_the_original_cluster(fingerprinter, articles):
    engine = DedupEngine(fingerprinter=fingerprinter, batch_size=7)
    docs = [Document(f"a{i}", a) for i, a in enumerate(articles[:20])]
    docs += [Document("copy-of-a3", articles[3]), Document("reprint-of-a5", reprint(articles[5]))]
    results = {r.id: r for r in engine.process(docs)}
    originals = [results[f"a{i}"] for i in range(20)]
    assert all(not r.duplicate and r.cluster == r.id for r in originals)
    assert results["copy-of-a3"].duplicate and results["copy-of-a3"].cluster == "a3"
    assert results["copy-of-a3"].reason == "exact" and results["copy-of-a3"].distance == 0
    near = results["reprint-of-a5"]
    assert near.duplicate and near.cluster == "a5" and near.reason == "simhash" and 0 < near.distance <= 3


def test_duplicates_inside_one_batch_and_across_batches(fingerprinter, articles):
    engine = DedupEngine(fingerprinter=fingerprinter, batch_size=1000)
    first = list(engine.process([Document("x", articles[0]), Document("x-copy", articles[0])]))
    assert first[1].duplicate and first[1].duplicate_of == "x"  # same batch
    second = list(engine.process([Document("x-later", reprint(articles[0]))]))
    assert second[0].duplicate and second[0].cluster == "x"  # a later batch


def test_a_duplicate_of_a_duplicate_joins_the_canonical_cluster(fingerprinter, articles):
    engine = DedupEngine(fingerprinter=fingerprinter)
    a = articles[10]
    b = a + "（完）"
    c = b + "更多新闻请关注本站。"
    res = list(engine.process([Document("a", a), Document("b", b), Document("c", c)]))
    assert [r.cluster for r in res] == ["a", "a", "a"]
    assert res[2].duplicate


def test_unrelated_articles_stay_apart(fingerprinter, articles):
    engine = DedupEngine(fingerprinter=fingerprinter)
    res = list(engine.process([Document(str(i), a) for i, a in enumerate(articles)]))
    assert not any(r.duplicate for r in res)


def test_texts_without_features_never_match_each_other():
    engine = DedupEngine()
    res = list(engine.process([Document("e1", ""), Document("e2", ""), Document("p1", "。。！！"),
                               Document("p2", "？？……")]))
    assert [r.duplicate for r in res] == [False] * 4
    assert [r.reason for r in res] == ["no-features"] * 4


def test_short_reposts_are_decided_by_sentences():
    engine = DedupEngine()
    res = list(engine.process([
        Document("w1", "国务院今天召开常务会议，部署进一步做好稳就业工作。会议强调要加大对中小企业的支持力度。"),
        Document("w2", "转发：国务院今天召开常务会议，部署进一步做好稳就业工作！会议强调要加大对中小企业的支持力度"),
        Document("w3", "国务院今天召开常务会议，研究部署加强安全生产工作。会议要求各地严格落实责任。"),
    ]))
    assert res[1].duplicate and res[1].reason == "sentences" and res[1].cluster == "w1"
    assert not res[2].duplicate


def test_a_larger_k_catches_more(fingerprinter, articles):
    edited = [a.replace("。", "。据悉，", 4) for a in articles[:30]]
    no_sentences = Fingerprinter(fingerprinter.idf, sentences=0, sketch=0, fuzzy=0)

    def count(k):
        # the sentence path (shared long sentences) would catch these edits at any k: fingerprint without a
        # sentence signature or fuzzy hashes to see the SimHash bound alone
        engine = DedupEngine(fingerprinter=no_sentences, rule=DefaultRule(k=k))
        res = list(engine.process([Document(f"o{i}", a) for i, a in enumerate(articles[:30])] +
                                  [Document(f"e{i}", a) for i, a in enumerate(edited)]))
        return sum(r.duplicate for r in res)
    assert count(0) <= count(3) <= count(8)
    assert count(8) > count(0)


def test_duplicate_ids_are_reported_not_indexed(articles):
    engine = DedupEngine()
    out = engine.process_batch([Document("same", articles[0]), Document("same", articles[1])])
    assert not isinstance(out[0], Exception)
    assert isinstance(out[1], DuplicateIdError)
    assert len(engine.index) == 1


def test_check_finds_near_duplicates_without_indexing(fingerprinter, articles):
    index = MemoryIndex()
    engine = DedupEngine(index, fingerprinter)
    list(engine.process([Document(str(i), a) for i, a in enumerate(articles[:10])]))
    found = engine.check(reprint(articles[4]))
    assert [d.of.id for d in found] == ["4"]
    assert len(index) == 10


@pytest.mark.parametrize("batch_size", [20, 1000])
def test_boilerplate_footer_stops_counting_once_it_is_common(batch_size, articles):
    """The embedded index counts sentence document frequency like Elasticsearch does (across batches too):
    a footer shared by unrelated posts stops making them duplicates once more than max_sentence_df hold it."""
    footer = "本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性。"
    openings = sorted({a.split("。")[0][:60] for a in chinese_articles() if len(a.split("。")[0]) >= 20})[:200]
    posts = [f"{o}。{footer}" for o in openings]
    index = MemoryIndex(max_sentence_df=10)
    res = list(DedupEngine(index, batch_size=batch_size).process([Document(f"p{i}", t) for i, t in enumerate(posts)]))
    footer_fp = Fingerprinter().fingerprint(footer)
    footer_sentence = [h for h in footer_fp.sentences if not is_sketch(h)]
    assert len(footer_sentence) == 1
    probe = index.lookup([Lookup("probe", footer_fp)], 3)[0]
    assert probe.sentence_df[footer_sentence[0]] == len(posts) == 200
    # every post matched through sentences shares a sentence or sketch hash with its match besides the footer's:
    # the footer alone never made two posts duplicates
    fps = {r.id: r.fingerprint for r in res}
    footer_hashes = set(Fingerprinter(sketch=10_000).fingerprint(footer).hashes)  # (every shingle of it)
    merged = [r for r in res if r.reason == "sentences"]
    assert all(set(fps[r.id].hashes) & set(fps[r.duplicate_of].hashes) - footer_hashes for r in merged)
    assert not [r for r in res if r.duplicate and r.reason not in ("sentences", "simhash", "exact")]


def _clusters(docs, rule=None, fingerprinter=None):
    engine = DedupEngine(rule=rule, fingerprinter=fingerprinter)
    return {r.id: r.cluster for r in engine.process([Document(i, t) for i, t in docs])}


POST = "我们支持这项改革方案，它会让更多的年轻人在城市里找到稳定的工作。"


def test_a_negated_short_text_is_not_a_duplicate_but_a_repost_is():
    c = _clusters([
        ("post", POST),
        ("repost", "转发微博：" + POST + " #每日一句#"),
        ("negated", POST.replace("支持", "不支持")),
        ("negated-repost", "转发：" + POST.replace("支持", "不支持")),
    ])
    assert c["repost"] == "post"
    assert c["negated"] != "post"
    assert c["negated-repost"] == c["negated"]  # the negated text has reposts of its own


def test_swapped_chinese_words_are_not_a_duplicate():
    a = "北京队在昨晚的决赛中以三比一战胜了上海队，夺得本赛季的联赛冠军。"
    b = "上海队在昨晚的决赛中以三比一战胜了北京队，夺得本赛季的联赛冠军。"
    c = _clusters([("a", a), ("b", b), ("a2", a.replace("，", ", "))])
    assert c["b"] == "b" and c["a2"] == "a"
    # the guard is what keeps them apart: every shingle method calls them near duplicates
    assert _clusters([("a", a), ("b", b)], DefaultRule(meaning_guard=False))["b"] == "a"


def test_swapped_english_names_are_not_a_duplicate_but_reordered_sentences_are():
    a = "Police say Smith attacked Jones outside the club on Friday night. Both men were later arrested."
    c = _clusters([
        ("a", a),
        ("swap", a.replace("Smith", "@").replace("Jones", "Smith").replace("@", "Jones")),
        ("reordered", "Both men were later arrested. Police say Smith attacked Jones outside the club on Friday night."),
    ])
    assert c["swap"] == "swap"
    assert c["reordered"] == "a"


def test_english_negation_is_not_a_duplicate_but_a_typo_is():
    a = "The central bank will raise interest rates again next month, officials said on Tuesday."
    c = _clusters([
        ("a", a),
        ("not", a.replace("will raise", "will not raise")),
        ("typo", a.replace("officials", "offcials").replace("Tuesday", "Tuesdya")),
        ("rt", "RT @bbcnews: " + a),
    ])
    assert c["not"] == "not"
    assert c["typo"] == "a" and c["rt"] == "a"


# One book's attribution under quotes of it (four books, seven quotes): before, the attribution was a long sentence
# two quotes shared, and nearly every pair of them was one cluster.
_ATTRIBUTIONS = [" —— 尤瓦尔·赫拉利《未来简史：从智人到智神》", "——加西亚·马尔克斯《霍乱时期的爱情》（杨玲译）",
                 " ― 米兰·昆德拉《不能承受的生命之轻》", " -- 村上春树《挪威的森林》（林少华译）"]
_QUOTES = ["人类的历史，就是一部不断摆脱饥荒、瘟疫和战争的历史。", "我们正在学习如何设计大脑，延长寿命，也学会了随心所欲地杀死思想。",
           "生命中曾经有过的所有灿烂，原来终究，都需要用寂寞来偿还。", "过去都是假的，回忆是一条没有归途的路，以往的一切春天都无法复原。",
           "人永远都无法知道自己该要什么，因为人只能活一次，既不能拿它跟前世相比，也不能在来生加以修正。",
           "每个人都有属于自己的一片森林，也许我们从来不曾去过，但它一直在那里。", "死并非生的对立面，而作为生的一部分永存。"]


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize("attribution", _ATTRIBUTIONS)
def test_two_quotes_of_one_book_are_not_one_cluster_for_their_attribution_but_their_reposts_join_them(engine, attribution):
    fingerprinter = Fingerprinter(engine=engine)
    merged = []
    for i, j in itertools.combinations(range(len(_QUOTES)), 2):
        c = _clusters([("a", _QUOTES[i] + attribution), ("b", _QUOTES[j] + attribution),
                       ("a-shared", "分享一句话：" + _QUOTES[i] + attribution), ("b-bare", _QUOTES[j])], fingerprinter=fingerprinter)
        assert c["a-shared"] == "a" and c["b-bare"] == c["b"]
        if c["b"] == "a":
            merged.append((i, j))
    assert merged == []


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_tag_moved_into_a_label_at_the_start_is_a_repost_not_words_in_another_order(engine):
    """"【每日一句】" opening a post and "#每日一句#" closing it: the same characters in another order, which the
    meaning guard reads as words swapped unless the label is a sentence of its own (a "】" ends it)."""
    c = _clusters([("post", POST), ("tagged", POST + " #每日一句#"), ("labelled", "【每日一句】" + POST),
                   ("labelled-swap", "【每日一句】" + POST.replace("年轻人", "@").replace("城市", "年轻人").replace("@", "城市"))],
                  fingerprinter=Fingerprinter(engine=engine))
    assert c["tagged"] == c["labelled"] == "post"
    assert c["labelled-swap"] == "labelled-swap"


def test_a_correction_inside_a_long_article_does_not_split_it(articles):
    # the guard is for short texts, where one sentence is the message; a long reprint with one sentence negated
    # is still the same article
    long = next(a for a in articles if len(a) > 600 and "是" in a)
    edited = long.replace("是", "不是", 1)
    c = _clusters([("a", long), ("b", edited)])
    assert c["b"] == "a"


def test_a_short_article_inside_a_big_site_template_is_found():
    article = ("Speak easy plan for media players\n\nMusic and film fans will be able to control their digital media "
               "players just by speaking to them, under plans in development by two US firms.")
    page = ("Home > News > World\n\nShare this article: Facebook Twitter Email\n\n" + article +
            "\n\n(Agencies)\n\nCopyright 2005 Global Wire. All rights reserved. This material may not be published, "
            "broadcast, rewritten or redistributed. Comments are closed for this article. Views expressed are "
            "those of the author and not of Global Wire.")
    other = page.replace(article, "Tiny tablets tested at tech fair\n\nA new generation of small touch screen "
                                  "computers went on show this week, promising to change how people read the news.")
    c = _clusters([("article", article), ("page", page), ("other", other)])
    assert c["page"] == "article"
    assert c["other"] == "other"  # same template, different article


def test_worker_processes_give_the_same_results(articles):
    docs = [Document(f"o{i}", a) for i, a in enumerate(articles)]
    docs += [Document(f"r{i}", reprint(a)) for i, a in enumerate(articles) if i % 3 == 0]  # in later batches
    docs += [Document("empty", ""), Document("o3-copy", articles[3])]
    inline = [r.to_dict() for r in DedupEngine(batch_size=15).process(docs)]
    for threads in (False, True):  # processes; threads (what the native engine gets by default)
        parallel = [r.to_dict() for r in DedupEngine(batch_size=15, workers=2, worker_threads=threads).process(docs)]
        assert parallel == inline
    assert sum(r["duplicate"] for r in parallel) >= 20


def test_worker_threads_sharing_the_pure_python_fingerprinter_give_the_same_results():
    # the Python engine learns its vocabulary as it goes: worker threads sharing one fingerprinter take turns
    import random

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(20000)]
    docs = [Document(f"d{i}", " ".join(rng.choice(words) for _ in range(300))) for i in range(600)]
    inline = [r.to_dict() for r in DedupEngine(fingerprinter=Fingerprinter(engine="python"), batch_size=100)
              .process(docs)]
    threaded = DedupEngine(fingerprinter=Fingerprinter(engine="python"), batch_size=100, workers=2, worker_threads=True)
    assert [r.to_dict() for r in threaded.process(docs)] == inline


def test_stopping_early_with_worker_processes_does_not_hang(articles):
    import subprocess
    import sys

    code = (
        "from es_simhash.engine.dedup_engine import DedupEngine, Document\n"
        "docs = [Document(str(i), '测试' * (i % 50 + 10)) for i in range(5000)]\n"
        "if __name__ == '__main__':\n"
        "    for r in DedupEngine(batch_size=100, workers=1).process(docs):\n"
        "        break\n"
        "    print('stopped')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "stopped" in out.stdout, out.stderr


def test_check_decides_as_ingest_does():
    """``check(text)`` and ingesting the same text decide alike. Two unrelated canonical pages d1 and d2 share a
    site's two template sentences; a third page q shares them too and is close enough in SimHash to both that each
    alone would make it a "sentences" duplicate. Held by two clusters, the template sentences are boilerplate for
    q (``max_sentence_clusters``): ingest keeps q canonical, so check must report nothing."""
    from es_simhash.fingerprint import Fingerprint

    base = 0x1234_5678_9ABC_DEF0
    t1, t2 = 0x11, 0x22                                   # the template's sentence hashes
    flip20 = (1 << 20) - 1                                 # 20 bits
    d1 = Fingerprint(base, 1, (t1, t2, 0x31, 0x32, 0x33), 50, 900, False)
    d2 = Fingerprint(base ^ flip20, 2, (t1, t2, 0x41, 0x42, 0x43), 50, 900, False)  # 20 bits from d1
    q = Fingerprint(base ^ ((1 << 10) - 1), 3, (t1, t2, 0x51), 50, 900, False)       # 10 bits from both
    engine = DedupEngine()
    [r1, r2] = engine.process_batch([Document("d1", "d1"), Document("d2", "d2")], [d1, d2])
    assert (r1.reason, r2.reason) == ("canonical", "canonical")
    engine.fingerprinter.fingerprint = lambda text: q  # check() fingerprints its text: give it q's
    assert engine.check("q") == []
    [rq] = engine.process_batch([Document("q", "q")], [q])
    assert rq.reason == "canonical"
    # with one cluster holding the template, q is a duplicate, and both paths say so
    other = DedupEngine()
    other.process_batch([Document("d1", "d1")], [d1])
    other.fingerprinter.fingerprint = lambda text: q
    assert [(d.of.id, d.reason) for d in other.check("q")] == [("d1", "sentences")]
    assert other.process_batch([Document("q", "q")], [q])[0].duplicate_of == "d1"


def test_a_repost_spaced_out_character_by_character_is_a_duplicate():
    """A short post reposted with a space between every character (a way around filters) reads as the original:
    a space between two ideographs is no word boundary."""
    post = "各位业主请注意：本周六上午九点到十二点小区停水检修，请大家提前做好储水准备，给您带来不便敬请谅解。"
    spaced = " ".join("转发微博：" + post)  # "转 发 微 博 ： 各 位 ..."
    engine = DedupEngine()
    [orig, repost] = engine.process([Document("post", post), Document("spaced", spaced)])
    assert repost.duplicate_of == "post" and repost.reason != "no-features", repost
    assert Fingerprinter().fingerprint(" ".join(post)).content_hash == Fingerprinter().fingerprint(post).content_hash
    # English keeps its spaces: words are not glued together
    assert Fingerprinter().fingerprint("the cat sat").simhash != Fingerprinter().fingerprint("thecatsat").simhash


def test_one_term_repeated_all_over_two_texts_does_not_make_them_duplicates():
    """Two unrelated reports that both repeat an anonymised name (某某) dozens of times: with raw TF x IDF that one
    term sets most bits and they come out a few bits apart; its weight counts at most 5 occurrences, so they
    stay as far apart as unrelated texts are."""
    import re

    def anonymised(text: str) -> str:  # the name after every clause
        return re.sub(r"([，。])", r"\1某某称", text)

    texts = [anonymised(a) for a in chinese_articles() if 800 <= len(a) <= 1200][:20]
    assert min(t.count("某某") for t in texts) >= 30
    raw, capped = Fingerprinter(tf="raw"), Fingerprinter()
    pairs = list(zip(texts[::2], texts[1::2]))
    assert sum(raw.fingerprint(a).distance(raw.fingerprint(b)) <= 3 for a, b in pairs) >= 5  # the failure
    assert min(capped.fingerprint(a).distance(capped.fingerprint(b)) for a, b in pairs) > 12
    results = list(DedupEngine().process(Document(str(i), t) for i, t in enumerate(texts)))
    assert not any(r.duplicate for r in results)


# -- templates of short posts: the template's sentences and characters are not a duplicate -----------
NOTICE = "本文转载自网络，版权归原作者所有，如有侵权请联系删除。"
BODIES = [
    "小区东门的路灯坏了快一个月，晚上回家黑漆漆的，希望物业尽快修一修。",
    "今天在菜市场买的西红柿特别甜，三块钱一斤，推荐大家周末去看看。",
    "地铁四号线早高峰又晚点了二十分钟，上班打卡差点迟到。",
    "周六上午图书馆有免费的儿童绘本讲读活动，需要提前在公众号报名。",
    "楼下新开的面馆味道一般，但是分量很足，价格也还算实惠。",
    "明天起气温骤降，最低零下五度，出门记得多穿点衣服。",
]


def _header(body: str, site: str = "江南都市网", author: str = "王建国", notice: str = NOTICE) -> str:
    return f"来源：{site}　作者：{author}\n{body}\n{notice}"


def test_short_posts_in_one_site_template_are_not_one_cluster():
    docs = [(f"p{i}", _header(b)) for i, b in enumerate(BODIES)] + [("repost", _header(BODIES[3], "北方网", "陈静"))]
    c = _clusters(docs)
    # the second post can look like a repost of the first (nothing yet says the header is a template); from the
    # third on, the header and the notice are held by more than one text and no longer count
    assert all(c[f"p{i}"] == f"p{i}" for i in range(2, len(BODIES)))
    assert c["repost"] == "p3"  # the same post under another site's header is still a duplicate
    # without crowded sketch hashes and holders split by crowd_k, the template swallows every post
    old = _clusters(docs, DefaultRule(crowd_k=None, crowd_sketch=False, sentence_sketch_support=0,
                                      simhash_sketch_support=0))
    assert len(set(old.values())) == 1


# -- version 5: a short body between a site header and a long disclaimer is in the sketch ----------------------
DISCLAIMER = ("特别声明：本站转载的文章仅仅是出于传播信息的需要，并不意味着代表本站的观点或者证实其内容的真实性；"
              "其他媒体、网站或者个人从本站转载使用，必须保留本站注明的来源，并且自负版权等法律责任。")
SAYINGS = ["久旱逢甘雨，他乡遇故知。", "千里之行，始于足下。", "读书破万卷，下笔如有神。", "海内存知己，天涯若比邻。"]


def _site_post(body: str, site: str, author: str) -> str:
    """A post of the site template whose disclaimer is most of the post."""
    return _header(body, site, author, DISCLAIMER)


@pytest.mark.parametrize("line_sketch", [8, 0])
def test_a_templated_post_is_found_by_its_body_once_the_template_is_boilerplate(line_sketch):
    # the template's hashes: what two posts of other sites, with other bodies, share
    fpr = Fingerprinter(line_sketch=line_sketch)
    a, b = (fpr.fingerprint(_site_post(s, site, who)) for s, site, who in
            [(SAYINGS[2], "北方网", "李晓明"), (SAYINGS[3], "中国网", "张华")])
    template = frozenset(set(a.hashes) & set(b.hashes))
    post = StoredDoc("post", fpr.fingerprint(_site_post(SAYINGS[0], "江南都市网", "王建国")), cluster="post")
    rule = DefaultRule()
    bare = fpr.fingerprint("分享一句话：" + SAYINGS[0].replace("，", ","))
    other_post = fpr.fingerprint(_site_post(SAYINGS[1], "江南都市网", "陈静"))
    assert rule.decide(other_post, [post], template) is None  # another post of the template
    found = rule.decide(bare, [post], template)  # the post's saying reposted alone, with a prefix
    # version 4's sketch (the whole text's 12 smallest shingle hashes) holds the disclaimer's shingles and at most a
    # couple of the saying's; the body line's own hashes are what finds the repost
    assert (found is not None) == (line_sketch > 0)


def test_posts_of_a_template_with_a_long_disclaimer_stay_apart_from_a_cold_start():
    # the disclaimer is most of each post: all posts are within crowd_k bits of each other, so the second joins the
    # first and, counted by SimHash, that cluster is one holder of the template for good
    sayings = SAYINGS + ["少壮不努力，老大徒伤悲。", "不积跬步，无以至千里。", "己所不欲，勿施于人。", "三人行，必有我师焉。"]
    sites, authors = ["江南都市网", "北方网", "中国网", "东方资讯"], ["王建国", "李晓明", "张华", "陈静", "刘洋"]
    docs = [(f"p{i}", _site_post(s, sites[i % 4], authors[i % 5])) for i, s in enumerate(sayings)]
    docs.append(("repost", _site_post(sayings[5], "华夏经纬网", "周强")))
    c = _clusters(docs)
    # from the third post on, the first two (one cluster) and the new post each have a body of their own: the
    # template's hashes are held by two holders and no longer count
    assert all(c[f"p{i}"] == f"p{i}" for i in range(2, len(sayings)))
    assert c["repost"] == "p5"  # the same saying under another site's header is still a duplicate
    old = _clusters(docs, DefaultRule(crowd_own=0))
    assert len({old[f"p{i}"] for i in range(len(sayings))}) < len(sayings) - 2


def test_a_cluster_holding_a_post_and_its_bare_repost_does_not_make_the_body_boilerplate():
    # the saying alone and the saying inside the template are far apart in SimHash (the template is most of the
    # post), but one is inside the other: one holder of the saying, not two
    saying = "书山有路勤为径，学海无涯苦作舟。"
    sites, authors = ["江南都市网", "北方网", "中国网", "东方资讯"], ["王建国", "李晓明", "张华", "陈静"]
    docs = [(f"p{i}", _site_post(s, sites[i], authors[i])) for i, s in enumerate(SAYINGS)]
    docs += [("post", _site_post(saying, "华夏经纬网", "周强")), ("bare", saying),
             ("again", _site_post(saying + " 说得真好！", "东方资讯", "刘洋"))]
    fpr = Fingerprinter()
    post, bare = (fpr.fingerprint(t) for i, t in docs if i in ("post", "bare"))
    assert post.distance(bare) > DefaultRule().crowd_k  # what made the cluster count as two holders
    c = _clusters(docs)
    # (the second post of the template can look like a repost of the first: see the tests above)
    assert [c[f"p{i}"] for i in range(2, len(SAYINGS))] == [f"p{i}" for i in range(2, len(SAYINGS))]
    assert c["bare"] == "post"
    assert c["again"] == "post"


@pytest.mark.parametrize("crowding", [1, 0])  # 0: the sentence counts alone decide what is boilerplate
def test_the_batch_size_never_changes_a_decision(crowding, fingerprinter, articles):
    """A batch is decided in one lookup, each document against the batch's earlier ones (``MemoryIndex.lookup``'s
    ``before``): whatever the batch size, every document gets the decision it gets when decided alone, after all
    the documents before it (a batch of one). The stream has reprints inside one batch and across batches, short
    posts of one template whose header becomes boilerplate part-way (the index's cap is 3), an id given twice and
    a document whose text is empty."""
    header = "来源：城市论坛 作者：网友 特别声明：本文仅代表作者观点，转载请注明出处。\n"
    sayings = ["今天下午三点小区停水，请大家提前储水。", "周末图书馆开放时间调整为早九点到晚五点。",
               "明天早上地铁二号线部分站点临时封闭。", "本周六社区组织义务植树，欢迎报名参加。",
               "下周一起菜市场搬到新址营业，地址在东门。", "今晚八点社区广场有露天电影，请自带座椅。"]
    docs = []
    for i, a in enumerate(articles[:24]):
        docs.append(Document(f"a{i}", a))
        if i % 3 == 0:
            docs.append(Document(f"a{i}-reprint", reprint(a)))
        if i % 4 == 1:
            docs.append(Document(f"post{i}", header + sayings[i % len(sayings)]))
        if i % 5 == 2:
            docs.append(Document(f"a{i - 2}-again", reprint(articles[i - 2]) + "（完）"))
    docs += [Document("a3", "同一个编号又出现了一次"), Document("empty", "")]

    def decide(batch_size):
        engine = DedupEngine(MemoryIndex(max_sentence_df=3), fingerprinter=fingerprinter, batch_size=batch_size,
                             rule=DefaultRule(max_sentence_clusters=crowding))
        return [(type(r).__name__,) if isinstance(r, Exception) else
                (r.id, r.cluster, r.duplicate_of, r.reason, r.distance)
                for _, results in engine.process_batches(((docs[i:i + batch_size], None)
                                                          for i in range(0, len(docs), batch_size)))
                for r in results]

    one_by_one = decide(1)
    assert sum(1 for r in one_by_one if len(r) > 1 and r[2] is not None) >= 10  # duplicates were found
    assert ("DuplicateIdError",) in one_by_one
    for size in (7, 1000):
        assert decide(size) == one_by_one


def test_in_batch_candidates_look_like_stored_ones_and_a_failed_batch_is_not_seen(fingerprinter, articles):
    """A rule gets every candidate as an index keeps it (no text, no record), whether it came from the index or
    from earlier in the batch; and when a batch fails while being decided (a rule that raises, Ctrl-C) its ids are
    not remembered as seen, so the same documents can be given again."""
    seen_texts = []

    class Recording(DefaultRule):
        fail = False

        def decide(self, fp, candidates, boilerplate=frozenset()):
            seen_texts.extend((c.text, c.fields) for c in candidates)
            if self.fail:
                raise RuntimeError("rule failed")
            return super().decide(fp, candidates, boilerplate)

    docs = [Document("a", articles[0], {"url": "u-a"}), Document("b", reprint(articles[0]), {"url": "u-b"}),
            Document("c", articles[0] + "（完）", {"url": "u-c"})]
    for size in (1, 1000):
        seen_texts.clear()
        res = list(DedupEngine(fingerprinter=fingerprinter, rule=Recording(), batch_size=size).process(docs))
        assert [r.cluster for r in res] == ["a", "a", "a"]
        assert seen_texts and all(t == (None, None) for t in seen_texts), size
    rule = Recording()
    engine = DedupEngine(fingerprinter=fingerprinter, rule=rule)
    list(engine.process(docs[:1]))
    rule.fail = True
    with pytest.raises(RuntimeError, match="rule failed"):
        list(engine.process(docs[1:]))
    rule.fail = False
    assert [(r.id, r.cluster) for r in engine.process(docs[1:])] == [("b", "a"), ("c", "a")]


def test_numbered_notices_of_one_template_are_not_one_holder_of_it():
    # notices that differ only in their numbers: neither is the other inside a template (each has hashes of its
    # own), so a false merge of two of them still counts as two holders of the template, which turns boilerplate
    footer = "本文转载仅仅是出于传播信息的需要，并不意味着代表本网站观点或证实其内容的真实性。"
    posts = [f"第{i}号公告：今天下午{i}点将进行例行的系统维护工作。{footer}" for i in range(80)]
    engine = DedupEngine(batch_size=20)
    results = list(engine.process([Document(f"p{i}", t) for i, t in enumerate(posts)]))
    assert sum(r.duplicate for r in results) <= engine.index.max_sentence_df


# -- DefaultRule.rechecked(): the sentence match reaches further when a recheck follows -----------------------
COURIER_HEADER = [
    "Evening Courier Online - your trusted source for regional and world news since nineteen ninety eight",
    "This story is brought to you by our sponsor, Harbour Street Savings, helping local families plan ahead",
    "Edited for the web by our weekend desk; corrections and complaints go to the readers' editor"]
COURIER_FOOTER = [
    "Copyright Evening Courier Online. All rights reserved. Republication without written permission is prohibited",
    "Sign up to the Courier morning briefing to get the day's headlines in your inbox before breakfast"]


def test_the_rechecked_rule_finds_leads_wrapped_in_a_sites_lines_and_not_follow_up_stories(fingerprinter):
    arts = english_articles()
    found = {"on arrival": 0, "rechecked": 0}
    for a in arts[:300]:
        lead = "\n".join([p for p in a.split("\n") if p.strip()][:3])
        if not 300 < len(lead) < 800:
            continue
        # the lead with one typo, between a site's header, sponsor and editor lines and its footer
        wrapped = "\n".join([*COURIER_HEADER, lead.replace("the ", "teh ", 1), *COURIER_FOOTER])
        original = StoredDoc("lead", fingerprinter.fingerprint(lead), cluster="lead")
        fp = fingerprinter.fingerprint(wrapped)
        found["on arrival"] += DefaultRule().decide(fp, [original]) is not None
        found["rechecked"] += DefaultRule.rechecked().decide(fp, [original]) is not None
    assert found["rechecked"] >= found["on arrival"] + 3, found
    # two BBC follow-up stories that reuse two paragraphs: 2 of 5 signature sentences shared, 17 bits apart
    by_title = {a.split("\n")[0]: a for a in arts}
    one, other = (fingerprinter.fingerprint(by_title[t]) for t in
                  ("Dollar drops on reserves concerns", "Asian banks halt dollar's slide"))
    stored = [StoredDoc("other", other, cluster="other")]
    assert DefaultRule().decide(one, stored) is None
    assert DefaultRule.rechecked().decide(one, stored) is None
    # (what half of the smaller signature, not 40%, keeps apart beyond sentence_k; the number guard, which keeps
    # them apart too, left out)
    assert DefaultRule(far_sentence_k=24, far_shared_sentences=0.4, number_guard=0).decide(one, stored) is not None


def test_the_rule_of_a_run_is_the_rechecked_one_and_without_the_recheck_the_plain_one():
    """``DefaultRule.for_run``: what every command decides with (``-k``, ``--recheck/--no-recheck``)."""
    assert DefaultRule.for_run(5) == DefaultRule.rechecked(k=5)
    assert DefaultRule.for_run(5, recheck=False) == DefaultRule(k=5)
    assert DefaultRule.for_run() == DefaultRule.rechecked()
    assert DefaultRule.for_run(4, recheck=False, number_guard=0) == DefaultRule(k=4, number_guard=0)


class SameSimHashOnly(RuleBase):
    """A rule of one's own: a duplicate is a text with exactly the SimHash of a candidate (no sentence tests)."""

    candidate_distance = 0

    def decide(self, fp, candidates, boilerplate=frozenset()):
        return next((Decision(c, 0, "same-simhash") for c in candidates
                     if not fp.empty and c.fingerprint.simhash == fp.simhash), None)


def test_a_rule_of_ones_own_drives_the_engine_the_recheck_and_explain(fingerprinter, articles):
    """A rule that inherits RuleBase and writes only ``decide`` and ``candidate_distance`` decides ingest (an exact
    copy joins its article, a reprint with a line added does not), is what the recheck keeps, and explains."""
    from es_simhash.clustering import recheck

    a, b = articles[0], articles[1]
    index = MemoryIndex()
    engine = DedupEngine(index, fingerprinter, SameSimHashOnly())
    got = {r.id: r for r in engine.process([Document("a", a), Document("b", b), Document("a-copy", a),
                                            Document("a-reprint", "来源：本网\n" + a + "\n（责任编辑：王敏）")])}
    assert got["a-copy"].duplicate_of == "a" and got["a-copy"].reason == "same-simhash"
    assert not got["a-reprint"].duplicate and not got["b"].duplicate
    assert engine.check(a)[0].of.id in ("a", "a-copy")
    assert list(recheck(index, engine.rule).changes) == []
    why = engine.explain(a, b)
    assert why["duplicate"] is False and why["reason"] is None
    assert engine.explain(a, a)["reason"] == "same-simhash"


def _variants(text: str, other: str) -> list[str]:
    """Texts to compare ``text`` with: copies edited as crawls edit them, copies with other figures (the number
    guard's case), cut, wrapped in a template, negated, and another article."""
    bump = str.maketrans("0123456789０１２３４５６７８９", "1234567890１２３４５６７８９０")
    half = text[: len(text) // 2]
    return [reprint(text), text.translate(bump), half, half.translate(bump), "".join(
        "某" if i % 30 == 7 else ch for i, ch in enumerate(text)), other, other.translate(bump), text[:60],
        "不" + text[:60], text[:60] + "\n" + other[:60], "本网讯 " + text[:40] + "（责任编辑：王敏）"]


def test_explain_tells_the_story_the_decision_acted_on():
    """For many pairs of real texts, `DefaultRule.trace` (what `explain` prints) gives the decision `decide` makes
    and names the test that failed: the number guard only when it took a match back (the same rule without it
    matches), the meaning guard only when it vetoed one, and otherwise the last test made."""
    from dataclasses import replace

    fingerprinter = Fingerprinter()
    texts = [a for a in chinese_articles() if 200 <= len(a) <= 3000][:40] + english_articles()[:20]
    pairs = [(t, v) for i, t in enumerate(texts) for v in _variants(t, texts[(i + 1) % len(texts)])]
    fps = fingerprinter.fingerprint_many([x for pair in pairs for x in pair])
    seen = {"numbers": 0, "meaning": 0, "match": 0, "other": 0}
    for rule in (DefaultRule(), DefaultRule.rechecked()):
        no_numbers = replace(rule, number_guard=0)
        no_guards = replace(no_numbers, meaning_guard=False)
        for j in range(0, len(fps), 2):
            fp, other = fps[j], fps[j + 1]
            cand = [StoredDoc("b", other, cluster="b")]
            decided = rule.decide(fp, cand)
            traced, steps = rule.trace(fp, other)
            assert (traced is None) == (decided is None), pairs[j // 2]
            if decided is not None:
                assert (traced.reason, traced.distance) == (decided.reason, decided.distance)
                assert all(s.passed is not False for s in steps if s.test in ("numbers", "meaning"))
                seen["match"] += 1
                continue
            failed = [s for s in steps if s.passed is False]
            assert failed and steps[-1] is failed[-1], steps
            if no_numbers.decide(fp, cand) is not None:
                assert steps[-1].test == "numbers", steps
                seen["numbers"] += 1
            elif no_guards.decide(fp, cand) is not None:
                assert steps[-1].test == "meaning", steps
                seen["meaning"] += 1
            else:
                assert steps[-1].test not in ("numbers", "meaning"), steps
                seen["other"] += 1
    assert all(seen.values()), seen  # (every kind of story was told)
