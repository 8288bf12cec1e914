"""Lucene BM25 through Anserini's command line (irrepro.retrieval.lucene).

A dozen short documents are indexed and searched, and every score is checked against Lucene 9's BM25 computed by
hand: ``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``.
Every document has fewer than 24 indexed terms, the lengths Lucene's one-byte length encoding stores exactly, and
every word is its own Porter stem, so the analysis is a lower-cased whitespace split less the stopwords. On vaswani
the measures are pinned against the numbers measured with Anserini.
"""
import math
import subprocess
import sys
import time
from collections import Counter

import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.retrieval import lucene as L
from irrepro.retrieval import pisa

DOCS = [
    ("d01", "cat dog fish"),
    ("d02", "cat cat cat bird"),
    ("d03", "the dog will bark at the barn"),
    ("d04", "fish lake lake hill"),
    ("d05", "about the farm and the barn about the road"),
    ("d06", "bird tree hill road farm barn lake fish dog cat"),
    ("d07", "tree tree"),
    ("d08", "road"),
    ("d09", "cat will"),
    ("d10", "lake fish fish fish fish dog"),
    ("d11", "farm about"),
    ("d12", "hill tree bird"),
]
TOPICS = pd.DataFrame({"query_id": ["1", "2", "10"], "text": ["cat fish", "barn farm road", "lake bird tree"]})


def stopwords(analyzer):
    from pyterrier_pisa.stopwords import _STOPWORDS
    return set(_STOPWORDS["lucene" if analyzer == "default" else "terrier"])


def hand_bm25(query, analyzer, k1, b, docs=DOCS):
    """Lucene 9's BM25 of every document for ``query``: {doc_id: score} of the documents that match."""
    stop = stopwords(analyzer)
    toks = {d: [w for w in t.lower().split() if w not in stop] for d, t in docs}
    assert all(len(t) < 24 for t in toks.values())  # stored exactly by Lucene's length encoding
    n = len(toks)
    avgdl = sum(map(len, toks.values())) / n
    out = {}
    for d, tt in toks.items():
        tf = Counter(tt)
        s = 0.0
        for w in query.lower().split():  # a repeated query word counts each time, as in Lucene
            if w in stop or not tf[w]:
                continue
            df = sum(1 for x in toks.values() if w in x)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf[w] / (tf[w] + k1 * (1 - b + b * len(tt) / avgdl))
        if s > 0:
            out[d] = s
    return out


@pytest.fixture(scope="module")
def engine():
    try:
        return L.find_jar(), L.find_java()
    except L.LuceneSetupError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def indexes(engine, tmp_path_factory):
    root = tmp_path_factory.mktemp("lucene")
    return {a: (root / a, L.index(DOCS, root / a, analyzer=a)) for a in ("default", "terrier")}


# ---------------------------------------------------------------- scores against the hand computation

@pytest.mark.parametrize("analyzer", ["default", "terrier"])
@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (1.2, 0.75), (2.0, 1.0)])
def test_bm25_scores_match_lucene_formula(indexes, analyzer, k1, b):
    path, meta = indexes[analyzer]
    assert meta["documents"] == meta["indexed"] == len(DOCS)
    run = L.search(path, TOPICS, k1=k1, b=b, hits=100)
    assert list(run.columns) == ["query_id", "doc_id", "score"]
    for qid, text in zip(TOPICS.query_id, TOPICS.text):
        want = hand_bm25(text, analyzer, k1, b)
        got = run[run.query_id == qid]
        assert set(got.doc_id) == set(want), qid
        for d, s in zip(got.doc_id, got.score):
            assert s == pytest.approx(want[d], rel=2e-6, abs=2e-6), (qid, d)
        assert list(got.score) == sorted(got.score, reverse=True)  # best first


def test_k1_and_b_change_scores_and_ranking(indexes):
    """d06, the longest document (10 terms), is second for 'cat fish' at b = 0.4 and last at b = 1."""
    path, _ = indexes["default"]
    q = TOPICS.iloc[[0]]
    a = L.search(path, q, k1=0.9, b=0.4).set_index("doc_id")["score"]
    c = L.search(path, q, k1=2.0, b=1.0).set_index("doc_id")["score"]
    assert set(a.index) == set(c.index)
    assert (a - c.reindex(a.index)).abs().min() > 1e-3
    assert list(a.index[:2]) == ["d01", "d06"] and c.index[-1] == "d06"


def test_hits_cuts_each_query(indexes):
    path, _ = indexes["default"]
    run = L.search(path, TOPICS, hits=2)
    assert run.groupby("query_id").size().max() == 2
    full = L.search(path, TOPICS, hits=100)
    top2 = full.groupby("query_id").head(2).reset_index(drop=True)
    pd.testing.assert_frame_equal(run.sort_values(["query_id", "score"]).reset_index(drop=True),
                                  top2.sort_values(["query_id", "score"]).reset_index(drop=True))


# ---------------------------------------------------------------- analysis

def test_stopwords_differ_between_analyzers(indexes):
    """'will' is only in Lucene's list, 'about' only in Terrier's: each is a term under the other analyzer, at
    query time and in the documents' lengths (the hand computation checks the lengths)."""
    q = pd.DataFrame({"query_id": ["w", "a"], "text": ["will", "about"]})
    default = L.search(indexes["default"][0], q)
    terrier = L.search(indexes["terrier"][0], q)
    assert set(default.query_id) == {"a"} and set(default.doc_id) == {"d05", "d11"}
    assert set(terrier.query_id) == {"w"} and set(terrier.doc_id) == {"d03", "d09"}
    assert "about" not in stopwords("default") and "about" in stopwords("terrier")
    assert "will" in stopwords("default") and "will" not in stopwords("terrier")


def test_query_analysis_matches_documents(indexes):
    """Upper case, punctuation and an English possessive are analysed away at query time as in the documents."""
    path, _ = indexes["default"]
    plain = L.search(path, TOPICS.iloc[[0]])
    noisy = L.search(path, pd.DataFrame({"query_id": ["1"], "text": ["CAT's, Fish!"]}))
    pd.testing.assert_frame_equal(plain, noisy)


def test_repeated_query_word_counts_twice(indexes):
    path, _ = indexes["default"]
    once = L.search(path, pd.DataFrame({"query_id": ["1"], "text": ["lake"]})).set_index("doc_id")["score"]
    twice = L.search(path, pd.DataFrame({"query_id": ["1"], "text": ["lake lake"]})).set_index("doc_id")["score"]
    assert (twice / once.reindex(twice.index)).tolist() == pytest.approx([2.0] * len(twice), rel=1e-6)


def test_search_rejects_another_analyzer(indexes):
    with pytest.raises(InputError, match="indexed with analyzer 'default'"):
        L.search(indexes["default"][0], TOPICS, analyzer="terrier")
    L.search(indexes["default"][0], TOPICS, analyzer="default")


def test_empty_and_stopword_only_topics_return_no_rows(indexes):
    q = pd.DataFrame({"query_id": ["1", "2", "3"], "text": ["cat", "", "the"]})
    run = L.search(indexes["default"][0], q)
    assert set(run.query_id) == {"1"}
    with pytest.raises(InputError, match="whitespace"):
        L.search(indexes["default"][0], pd.DataFrame({"query_id": ["a b"], "text": ["cat"]}))


# ---------------------------------------------------------------- index identity and determinism

def test_index_is_deterministic_and_keyed(engine, indexes, tmp_path):
    path, meta = indexes["default"]
    again = L.index(pd.DataFrame(DOCS, columns=["doc_id", "text"]), tmp_path / "again")
    assert again["fingerprint"] == meta["fingerprint"] and again["docs_sha256"] == meta["docs_sha256"]
    pd.testing.assert_frame_equal(L.search(path, TOPICS), L.search(tmp_path / "again", TOPICS))
    assert indexes["terrier"][1]["fingerprint"] != meta["fingerprint"]
    changed = L.index([*DOCS[:-1], ("d12", "hill tree")], tmp_path / "changed")
    assert changed["fingerprint"] != meta["fingerprint"]
    assert L.index_info(tmp_path / "changed") == changed
    # an index is replaced in place; a directory that is not one of ours is not touched
    L.index([{"docno": "x", "text": "cat"}], tmp_path / "changed")
    assert L.index_info(tmp_path / "changed")["documents"] == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("x")
    with pytest.raises(InputError, match="not a Lucene index"):
        L.index(DOCS, tmp_path / "other")
    with pytest.raises(InputError, match="whitespace"):
        L.index([("a b", "cat")], tmp_path / "bad")


# ---------------------------------------------------------------- system names and run files

def test_system_names_read_back():
    sy = L.LuceneSystem("default", pisa.System("bm25", (("k1", 0.9), ("b", 0.4))))
    assert sy.name == "lucene-bm25_k1-0.9_b-0.4"
    assert L.parse_system(sy.name) == sy
    te = L.LuceneSystem("terrier", pisa.System("bm25", (("k1", 1.2), ("b", 0.75))))
    assert te.name == "lucene-terrier-bm25_k1-1.2_b-0.75"
    assert L.parse_system(te.name) == te
    for bad in ["bm25_k1-0.9_b-0.4", "lucene-porter2-bm25_k1-0.9_b-0.4", "lucene-default-bm25_k1-0.9_b-0.4",
                "lucene-qld_mu-1000", "lucene-bm25_k1-0.9_b-0.4+rm3_fb-10_terms-20_lambda-0.5"]:
        with pytest.raises(InputError):
            L.parse_system(bad)
    with pytest.raises(InputError):
        pisa.parse_system(sy.name)  # a Lucene name is not taken for a PISA system


def test_run_file_round_trip(indexes, tmp_path):
    from irrepro.core.trec import read_run, write_run

    system = L.parse_system("lucene-terrier-bm25_k1-1.2_b-0.75")
    run = L.run_system(indexes["terrier"][0], system, TOPICS, depth=5)
    path = tmp_path / f"{system.name}.run"
    write_run(run, path, system=system.name, depth=5)
    back = read_run(path)
    assert set(back.system) == {system.name}
    assert L.parse_system(back.system.iloc[0]) == system
    merged = run.merge(back, on=["query_id", "doc_id"], suffixes=("", "_file"))
    assert len(merged) == len(run) == len(back)
    assert (merged.score - merged.score_file).abs().max() < 1e-6
    with pytest.raises(InputError, match="needs an index with analyzer 'terrier'"):
        L.run_system(indexes["default"][0], system, TOPICS, depth=5)


# ---------------------------------------------------------------- setup and failures

def test_missing_jar_names_the_install(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(L.LuceneSetupError, match=r"pip install --no-deps pyserini==0\.25\.0"):
        L.find_jar()


def test_old_java_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    L.java_version.cache_clear()
    try:
        assert L.java_version(str(fake)) == 8
        with pytest.raises(L.LuceneSetupError, match="Java 8"):
            L.find_java()
    finally:
        L.java_version.cache_clear()


def test_a_bogus_java_home_is_named_when_another_java_is_used(monkeypatch, tmp_path, caplog):
    """JAVA_HOME pointing at no runtime: the java on PATH is used, and a warning names both (it fell back silently
    before)."""
    good = tmp_path / "bin" / "java"
    good.parent.mkdir()
    good.write_text('#!/bin/sh\necho \'openjdk version "17.0.9"\' >&2\n')
    good.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", str(good.parent))
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    L.java_version.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="irrepro.retrieval.lucene"):
            assert L.find_java() == str(good)
        assert f"{tmp_path / 'nowhere' / 'bin' / 'java'} (does not run) not usable; using {good}" in caplog.text
    finally:
        L.java_version.cache_clear()


def test_java_failure_reports_command_and_stderr(engine):
    with pytest.raises(L.LuceneError) as e:
        L._run_java("io.anserini.search.SearchCollection", ["-index", "/nonexistent-index", "-bm25"])
    msg = str(e.value)
    assert "io.anserini.search.SearchCollection" in msg and "-index /nonexistent-index" in msg
    assert "Error" in msg  # Java's own message, although Anserini exits with status 0


# ---------------------------------------------------------------- vaswani

#: measured with Anserini 0.25.0's jar (ir_measures): unrounded scores (ties ordered as trec_eval orders them) and
#: Anserini's own output (scores rounded to 4 decimals, ties by ascending doc id); PISA (porter2, Terrier stopwords)
#: gives 0.3053 / 0.4667 on the same settings
VASWANI = {("default", False): (0.2857, 0.4368), ("default", True): (0.2856, 0.4368),
           ("terrier", False): (0.2986, 0.4564), ("terrier", True): (0.2986, 0.4571)}


def test_vaswani_bm25(engine, irds_home, tmp_path):
    import ir_datasets
    import ir_measures

    from irrepro.datasets import collections as coll

    ds = ir_datasets.load("vaswani")
    docs, topics, qrels = list(coll.docs_iter(ds)), coll.topics(ds), coll.qrels(ds)
    start = time.time()
    for analyzer in ("default", "terrier"):
        meta = L.index(docs, tmp_path / analyzer, analyzer=analyzer)
        assert meta["indexed"] == 11429
        for anserini_ties in (False, True):
            run = L.search(tmp_path / analyzer, topics, k1=0.9, b=0.4, hits=1000, anserini_ties=anserini_ties)
            m = ir_measures.calc_aggregate([ir_measures.AP, ir_measures.nDCG @ 10],
                                           qrels[["query_id", "doc_id", "relevance"]], run)
            got = (round(m[ir_measures.AP], 4), round(m[ir_measures.nDCG @ 10], 4))
            assert got == VASWANI[analyzer, anserini_ties], (analyzer, anserini_ties, got)
    assert time.time() - start < 120


def test_terrier_stopwords_are_pyterrier_pisas_read_without_importing_pyterrier():
    """The Lucene index key's stopword digest comes from pyterrier-pisa's list, read without importing PyTerrier
    (the Snakefile computes it at every start): the same words, and the same digest, once the package is imported."""
    code = ("import sys; from irrepro.retrieval import lucene\n"
            "a = lucene.get_analyzer('terrier').settings(); words = lucene.get_analyzer('terrier').words()\n"
            "assert 'pyterrier' not in sys.modules and 'pyterrier_pisa' not in sys.modules, 'imported'\n"
            "from pyterrier_pisa.stopwords import _STOPWORDS\n"
            "assert words == tuple(_STOPWORDS['terrier']) and len(words) > 500, len(words)\n"
            "assert lucene.get_analyzer('terrier').settings() == a\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
