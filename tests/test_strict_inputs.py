"""Bad data never gets through silently: each reader rejects what it cannot read faithfully, naming file:line."""
import logging

import pandas as pd
import pytest

from irrepro.core.evaluation import evaluate_runs
from irrepro.core.trec import read_matrix_csv, read_qrels, read_run, read_trec_eval_q
from irrepro.errors import InputError


def _w(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("grade", ["1.5", "-0.5", "inf", "nan", "x"])
def test_qrels_reject_fractional_and_non_finite_grades(tmp_path, grade):
    p = _w(tmp_path, "q.txt", f"1 0 d1 1\n1 0 d2 {grade}\n")
    with pytest.raises(InputError, match=r"q.txt.*line 2.*not an integer grade|q.txt:2"):
        read_qrels(p)


def test_qrels_accept_integral_grades_written_as_floats(tmp_path):
    q = read_qrels(_w(tmp_path, "q.txt", "1 0 d1 2.0\n1 0 d2 -1\n"))
    assert q.relevance.tolist() == [2, -1]


def test_matrix_rejects_duplicate_topics_and_infinite_values(tmp_path):
    with pytest.raises(InputError, match=r"topic '3' appears twice \(first on line 3\)") as e:
        read_matrix_csv(_w(tmp_path, "m.csv", "topic,a,b\n\n3,0.1,0.2\n3,0.3,0.4\n"), "c", "AP")
    assert ":4" in str(e.value) or "line 4" in str(e.value)
    with pytest.raises(InputError, match="not finite"):
        read_matrix_csv(_w(tmp_path, "n.csv", "a,b\n0.1,inf\n"), "c", "AP")


def test_matrix_line_numbers_count_blank_lines(tmp_path):
    with pytest.raises(InputError) as e:
        read_matrix_csv(_w(tmp_path, "m.csv", "a,b\n\n\n0.1,0.2\n0.1\n"), "c", "AP")
    assert ":5" in str(e.value) or "line 5" in str(e.value)


def test_matrix_header_with_bom_and_crlf(tmp_path):
    p = tmp_path / "m.csv"
    p.write_bytes("\ufefftopic,a\r\n7,0.5\r\n".encode())
    df = read_matrix_csv(p, "c", "AP")
    assert df.topic.tolist() == ["7"] and df.system.tolist() == ["a"]


def test_trec_eval_checks_lines_of_measures_it_filters_out(tmp_path):
    p = _w(tmp_path, "t.txt", "map 1 0.5\nP_10 1 junk\n")
    with pytest.raises(InputError, match="not a number"):
        read_trec_eval_q(p, "c", measures=["AP"])


def test_run_rejects_infinite_scores(tmp_path):
    with pytest.raises(InputError, match="not finite"):
        read_run(_w(tmp_path, "r.run", "1 Q0 d1 1 inf tag\n"))


def test_judged_topics_drop_is_logged_and_an_all_unjudged_run_is_an_error(tmp_path, caplog):
    qrels = pd.DataFrame({"query_id": ["1"], "iteration": ["0"], "doc_id": ["d1"], "relevance": [1]})
    run = _w(tmp_path, "a.run", "1 Q0 d1 1 2.0 a\n9 Q0 d1 1 2.0 a\n")
    log = logging.getLogger("t")
    with caplog.at_level("INFO", logger="t"):
        df = evaluate_runs([("a", run)], qrels, ["AP"], "c", topics="judged", log=log)
    assert df.topic.tolist() == ["1"] and "dropped 1 unjudged topic(s): ['9']" in caplog.text
    none = _w(tmp_path, "b.run", "9 Q0 d1 1 2.0 b\n")
    with pytest.raises(InputError, match="b.run.*no topic of the run is judged|no topic of the run is judged"):
        evaluate_runs([("b", none)], qrels, ["AP"], "c", topics="judged")


def test_a_failed_jobs_log_holds_its_error(tmp_path):
    """As in a workflow job (a fresh process whose fds 1 and 2 go to the log)."""
    import subprocess
    import sys

    log, q = tmp_path / "job.log", _w(tmp_path, "q.txt", "1 0 d1 0.5\n")
    code = ("from irrepro.core.logs import log_to\nfrom irrepro.core.trec import read_qrels\n"
            f"with log_to({str(log)!r}):\n    read_qrels({str(q)!r})\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode != 0
    text = log.read_text()
    assert "job failed: InputError:" in text and "q.txt:1" in text and "not an integer grade" in text


def test_collection_topics_judged_logs_what_it_drops(caplog):
    from irrepro.datasets.collections import select_topics

    topics = pd.DataFrame({"query_id": ["1", "2", "3"], "text": ["a", "b", "c"]})
    qrels = pd.DataFrame({"query_id": ["2"], "iteration": ["0"], "doc_id": ["d"], "relevance": [1]})
    log = logging.getLogger("t2")
    with caplog.at_level("INFO", logger="t2"):
        kept = select_topics(topics, qrels, "judged", "mine", log)
    assert kept.query_id.tolist() == ["2"] and "mine: 2 topic(s) without judgments dropped" in caplog.text
    assert select_topics(topics, qrels, "all").query_id.tolist() == ["1", "2", "3"]
    with pytest.raises(InputError, match="mine: no topics with judgments"):
        select_topics(topics, qrels.assign(query_id="9"), "judged", "mine")
