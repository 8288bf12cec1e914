"""Parsers of the TREC formats, on inline fixtures: good files parse, bad lines are reported with file:line."""
import bz2
import gzip
import lzma
import re
from pathlib import Path

import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.core.scores import to_matrix
from irrepro.core.trec import (check_run_topics, read_matrix_csv, read_qrels, read_run, read_trec_eval_q, write_qrels,
                          write_run)

RUN = """\
1 Q0 d1 1 2.5 myrun
1 Q0 d2 2 2.5 myrun
1 Q0 d3 3 1.0 myrun
2 Q0 d9 1 0.3 myrun
"""
QRELS = """\
1 0 d1 1
1 0 d3 2
2 0 d9 0
2 0 d4 1
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read_run_orders_like_trec_eval(tmp_path):
    run = read_run(write(tmp_path, "r.txt", RUN))
    assert run["system"].unique().tolist() == ["myrun"]
    q1 = run[run.query_id == "1"]
    # ties in score are broken by docno descending, as trec_eval does
    assert q1.doc_id.tolist() == ["d2", "d1", "d3"]
    assert q1["rank"].tolist() == [1, 2, 3]


def test_run_roundtrip(tmp_path):
    run = read_run(write(tmp_path, "r.txt", RUN))
    out = tmp_path / "out.run"
    write_run(run, out, system="x")
    back = read_run(out)
    assert back[["query_id", "doc_id", "rank"]].equals(run[["query_id", "doc_id", "rank"]])
    assert back.system.iloc[0] == "x"


@pytest.mark.parametrize("bad,line,msg", [
    ("1 Q0 d1 1 2.5\n", 1, "expected 6 fields"),
    ("1 Q0 d1 1 2.5 r\n1 Q0 d2 x 2.0 r\n", 2, "rank 'x' is not an integer"),
    ("1 Q0 d1 1 abc r\n", 1, "score 'abc' is not a number"),
    ("1 Q0 d1 1 1 r\n1 Q0 d1 2 0.5 r\n", 2, "appears twice"),
    ("1 Q0 d1 1 nan r\n", 1, "NaN"),
])
def test_read_run_errors_name_file_and_line(tmp_path, bad, line, msg):
    p = write(tmp_path, "bad.run", bad)
    with pytest.raises(InputError) as e:
        read_run(p)
    assert f"{p}:{line}" in str(e.value) and msg in str(e.value)


def test_run_with_several_tags_needs_a_name(tmp_path):
    p = write(tmp_path, "r", "1 Q0 a 1 1 x\n1 Q0 b 2 0 y\n")
    with pytest.raises(InputError, match="several run tags"):
        read_run(p)
    assert read_run(p, system="s").system.unique().tolist() == ["s"]


def test_qrels_and_errors(tmp_path):
    q = read_qrels(write(tmp_path, "q", QRELS))
    assert len(q) == 4 and q.relevance.tolist() == [1, 2, 0, 1]
    with pytest.raises(InputError, match=r"q2:2: expected 4 fields"):
        read_qrels(write(tmp_path, "q2", "1 0 d1 1\n1 0 d2\n"))
    with pytest.raises(InputError, match=r"q3:2: .*repeats line 1"):
        read_qrels(write(tmp_path, "q3", "1 0 d1 1\n1 0 d1 0\n"))
    # the iteration column does not make a repeat a new judgment (ad-hoc qrels); both lines are named
    with pytest.raises(InputError, match=r"q5:2: .*repeats line 1 \(.*q5:1\)"):
        read_qrels(write(tmp_path, "q5", "1 0 4569 1\n1 1 4569 0\n"))
    # diversity qrels: the same pair under two subtopics is two judgments; the same subtopic twice is not
    assert len(read_qrels(write(tmp_path, "q6", "1 1 d1 1\n1 2 d1 0\n"), subtopics=True)) == 2
    with pytest.raises(InputError, match=r"q7:2: .*repeats line 1"):
        read_qrels(write(tmp_path, "q7", "1 1 d1 1\n1 1 d1 0\n"), subtopics=True)
    with pytest.raises(InputError, match=r"q4:1: relevance 'high'"):
        read_qrels(write(tmp_path, "q4", "1 0 d1 high\n"))
    out = tmp_path / "qo"
    write_qrels(q, out)
    back = read_qrels(out)  # written sorted by query, then document
    key = ["query_id", "doc_id"]
    assert back.sort_values(key).reset_index(drop=True).equals(q.sort_values(key).reset_index(drop=True))


def test_run_topics_must_be_judged(tmp_path):
    run = read_run(write(tmp_path, "r", RUN + "3 Q0 z 1 1 myrun\n"))
    qrels = read_qrels(write(tmp_path, "q", QRELS))
    with pytest.raises(InputError, match=r"1 topic\(s\) of the run are not in the qrels.*\['3'\]"):
        check_run_topics(run, qrels, "r", "q")


# trec_eval -q's layout: a run's per-topic rows, then its summary (`all` rows, `runid all <name>` among them)
TREC_EVAL = """\
map\t1\t0.5000
map\t2\t0.2500
P_10\t1\t0.3000
P_10\t2\t0.1000
runid\tall\tsysA
map\tall\t0.3750
"""


def test_trec_eval_q(tmp_path):
    df = read_trec_eval_q(write(tmp_path, "a.txt", TREC_EVAL), collection="c")
    assert set(df.measure) == {"AP", "P@10"}
    m = to_matrix(df, "AP")
    assert m.loc["1", "sysA"] == 0.5 and m.loc["2", "sysA"] == 0.25
    # without a runid line the file is one run, named after the file
    nameless = write(tmp_path, "nameless.txt", "".join(ln + "\n" for ln in TREC_EVAL.splitlines() if "runid" not in ln))
    assert read_trec_eval_q(nameless, "c").system.unique().tolist() == ["nameless.txt"]
    # concatenated 4-column form (run measure topic value), as in the TREC DL artifacts
    df4 = read_trec_eval_q(write(tmp_path, "b.txt", "r1 map 1 0.1\nr2 map 1 0.2\nr1 map all 0.1\n"), "c")
    assert sorted(df4.system) == ["r1", "r2"]
    with pytest.raises(InputError, match=r"b2.txt:2: expected 'measure topic value'"):
        read_trec_eval_q(write(tmp_path, "b2.txt", "map 1 0.1\nmap 0.2\n"), "c")


TE_DATA = Path(__file__).parent / "data" / "trec_eval"


def test_trec_eval_q_of_several_runs_names_each_row_after_the_runid_that_follows_it():
    """Real ``trec_eval -q`` output of three runs concatenated (tests/data/trec_eval/README.md): every value is the
    one ir_measures computes on the run of that name (4 decimals, as trec_eval prints)."""
    from irrepro.core.evaluation import evaluate_run

    measures = ["AP", "P@10", "RR", "nDCG@10"]
    df = read_trec_eval_q(TE_DATA / "multi.treceval", "c", measures)
    assert sorted(df.system.unique()) == ["alpha", "beta", "gamma"]
    qrels = read_qrels(TE_DATA / "qrels.txt")
    for system in ("alpha", "beta", "gamma"):
        ours = evaluate_run(read_run(TE_DATA / f"{system}.run"), qrels, measures).set_index(["topic", "measure"])
        theirs = df[df.system == system].set_index(["topic", "measure"])["value"]
        assert len(theirs) == len(ours) == 16
        assert (theirs - ours["value"].reindex(theirs.index)).abs().max() < 5.1e-5, system


@pytest.mark.parametrize("text,line,msg", [
    ("runid all a\nmap 1 0.5\n", 1, "ends a run with no per-topic rows before it"),
    ("map 1 0.5\nrunid all a\nmap all 0.5\nmap 1 0.2\n", 4, "followed by no 'runid all <name>' line"),
    ("map 1 0.5\nrunid all a\nrunid all b\n", 3, "ends a run with no per-topic rows before it"),
])
def test_trec_eval_q_rows_that_belong_to_no_run_are_an_error(tmp_path, text, line, msg):
    p = write(tmp_path, "t.txt", text)
    with pytest.raises(InputError, match=msg) as e:
        read_trec_eval_q(p, "c")
    assert f"{p}:{line}:" in str(e.value)


def test_trec_eval_q_measure_filter_names_what_the_file_holds(tmp_path):
    p = write(tmp_path, "a.txt", TREC_EVAL)
    with pytest.raises(InputError, match=r"a.txt: no per-topic rows of the measures \['map'\]; the file holds "
                                         r"\['AP', 'P@10'\].*map is AP"):
        read_trec_eval_q(p, "c", ["map"])
    # a measure the file lacks beside one it holds is an error too, never an import with fewer measures than asked
    with pytest.raises(InputError, match=r"a.txt: no per-topic rows of the measures \['nDCG@10'\]; the file holds "
                                         r"\['AP', 'P@10'\]"):
        read_trec_eval_q(p, "c", ["AP", "nDCG@10"])
    assert set(read_trec_eval_q(p, "c", ["AP"]).measure) == {"AP"}


def test_trec_eval_q_real_dl_file(mirror):
    df = read_trec_eval_q(mirror / "artifacts/trec-dl-pertopic/all.pass.dl2019.treceval.gz", "dl19", ["AP"])
    m = to_matrix(df, "AP")
    # TREC DL 2019 passage: 43 judged topics; 36 runs in the file (runid lines)
    assert m.shape == (43, 36)
    assert m.notna().all().all()


def test_matrix_csv(tmp_path):
    df = read_matrix_csv(write(tmp_path, "m.csv", '"s1","s2"\n0.1,0.2\n0.3,0.4\n'), "c", "AP")
    m = to_matrix(df, "AP")
    assert m.loc["2", "s2"] == 0.4 and m.shape == (2, 2)
    dfq = read_matrix_csv(write(tmp_path, "mq.csv", "topic,s1\n301,0.5\n302,0.25\n"), "c", "AP")
    assert sorted(dfq.topic) == ["301", "302"]
    with pytest.raises(InputError, match=r"bad.csv:3: expected 2 comma-separated"):
        read_matrix_csv(write(tmp_path, "bad.csv", "s1,s2\n0.1,0.2\n0.3\n"), "c", "AP")
    with pytest.raises(InputError, match=r"nan.csv:2: missing value for system 's2'"):
        read_matrix_csv(write(tmp_path, "nan.csv", "s1,s2\n0.1,NA\n"), "c", "AP")
    with pytest.raises(InputError, match=r"txt.csv:2: value for system 's1' 'x' is not a number"):
        read_matrix_csv(write(tmp_path, "txt.csv", "s1\nx\n"), "c", "AP")


@pytest.mark.parametrize("col", ["topic", "query", "query_id", "qid", "Topic", "QUERY", "topic_id"])
def test_matrix_topic_column_names(tmp_path, col):
    df = read_matrix_csv(write(tmp_path, "m.csv", f"{col},s1,s2\n301,0.5,0.1\n302,0.25,0.2\n"), "c", "AP")
    assert sorted(df.system.unique()) == ["s1", "s2"] and sorted(df.topic.unique()) == ["301", "302"]


def test_real_urbano_matrix(mirror):
    df = read_matrix_csv(mirror / "artifacts/urbano/sigir2019-statistical/adhoc8_ap.csv", "trec8", "AP")
    m = to_matrix(df, "AP")
    assert m.shape[0] == 50 and m.shape[1] > 100  # TREC-8 ad hoc: 50 topics, 129 runs
    assert ((m >= 0) & (m <= 1)).all().all()


def _compress(suffix, data: bytes) -> bytes:
    import zstandard

    return {".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": zstandard.ZstdCompressor().compress}[suffix](data)


COMPRESSED_READERS = {
    "run": (RUN, lambda p: read_run(p)),
    "qrels": (QRELS, lambda p: read_qrels(p)),
    "trec_eval": (TREC_EVAL, lambda p: read_trec_eval_q(p, "c")),
    "matrix": ("topic,s1,s2\n1,0.1,0.2\n2,0.3,0.4\n", lambda p: read_matrix_csv(p, "c", "AP")),
}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("kind", sorted(COMPRESSED_READERS))
def test_compressed_inputs_are_read_as_the_plain_file(tmp_path, kind, suffix):
    text, read = COMPRESSED_READERS[kind]
    plain = write(tmp_path, "f", text)
    packed = tmp_path / f"f{suffix}"
    packed.write_bytes(_compress(suffix, text.encode()))
    twice = tmp_path / f"twice{suffix}"  # two streams one after the other (gzip, bzip2, xz and zstd allow it)
    half = text.splitlines(keepends=True)
    twice.write_bytes(_compress(suffix, "".join(half[:2]).encode()) + _compress(suffix, "".join(half[2:]).encode()))
    for p in (packed, twice):
        pd.testing.assert_frame_equal(read(p), read(plain))


LONG_RUN = "".join(f"{q} Q0 d{d} {d + 1} {100 - d}.5 tag\n" for q in range(40) for d in range(100))


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("damage", ["truncated", "trailing garbage"])
def test_damaged_compressed_input_is_an_error_naming_the_file_and_line(tmp_path, suffix, damage):
    data = _compress(suffix, LONG_RUN.encode())
    data = data[: len(data) // 2] if damage == "truncated" else data + b"not a compressed stream"
    p = tmp_path / f"r.run{suffix}"
    p.write_bytes(data)
    with pytest.raises(InputError, match=r"cannot decompress line \d+ .*truncated, damaged") as e:
        read_run(p)
    assert re.search(rf"{re.escape(str(p))}:\d+: ", str(e.value)), str(e.value)
    for read in (read_qrels, lambda q: read_trec_eval_q(q, "c"), lambda q: read_matrix_csv(q, "c", "AP")):
        with pytest.raises(InputError, match=re.escape(str(p))):
            read(p)
