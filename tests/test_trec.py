"""Parsers of the TREC formats, on inline fixtures: good files parse, bad lines are reported with file:line."""
import gzip

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


TREC_EVAL = """\
runid\tall\tsysA
map\t1\t0.5000
map\t2\t0.2500
P_10\t1\t0.3000
P_10\t2\t0.1000
map\tall\t0.3750
"""


def test_trec_eval_q(tmp_path):
    df = read_trec_eval_q(write(tmp_path, "a.txt", TREC_EVAL), collection="c")
    assert set(df.measure) == {"AP", "P@10"}
    m = to_matrix(df, "AP")
    assert m.loc["1", "sysA"] == 0.5 and m.loc["2", "sysA"] == 0.25
    # concatenated 4-column form (run measure topic value), as in the TREC DL artifacts
    df4 = read_trec_eval_q(write(tmp_path, "b.txt", "r1 map 1 0.1\nr2 map 1 0.2\nr1 map all 0.1\n"), "c")
    assert sorted(df4.system) == ["r1", "r2"]
    with pytest.raises(InputError, match=r"b2.txt:2: expected 'measure topic value'"):
        read_trec_eval_q(write(tmp_path, "b2.txt", "map 1 0.1\nmap 0.2\n"), "c")


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


def test_real_urbano_matrix(mirror):
    df = read_matrix_csv(mirror / "artifacts/urbano/sigir2019-statistical/adhoc8_ap.csv", "trec8", "AP")
    m = to_matrix(df, "AP")
    assert m.shape[0] == 50 and m.shape[1] > 100  # TREC-8 ad hoc: 50 topics, 129 runs
    assert ((m >= 0) & (m <= 1)).all().all()


def test_gz_is_read_transparently(tmp_path):
    p = tmp_path / "r.run.gz"
    with gzip.open(p, "wt") as f:
        f.write(RUN)
    assert len(read_run(p)) == 4
