"""Bad data never gets through silently: each reader rejects what it cannot read faithfully, naming file:line."""
import logging
import re

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


def _runs_import(tmp_path, measures):
    runs = tmp_path / "runs"
    runs.mkdir(exist_ok=True)
    (runs / "a.run").write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n2 Q0 d3 1 1.0 a\n")
    (runs / "b.run").write_text("1 Q0 d2 1 2.0 b\n1 Q0 d1 2 1.0 b\n2 Q0 d4 1 1.0 b\n")
    q = _w(tmp_path, "q.txt", "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 0\n")
    return {"type": "runs", "runs": str(runs), "qrels": str(q), "measures": measures}


@pytest.mark.parametrize("pair", [["AP", "MAP"], ["RR", "MRR"], ["P@10", "P(rel=1)@10"]])
def test_two_names_of_one_measure_are_refused_never_a_zero_column(tmp_path, pair):
    from irrepro.core.evaluation import import_scores
    from irrepro.plan import check_config

    spec = _runs_import(tmp_path, pair)
    with pytest.raises(InputError, match=rf"config key imports.m.measures\[1\]: '{re.escape(pair[1])}' and "
                                         rf"imports.m.measures\[0\] '{re.escape(pair[0])}' are one measure"):
        check_config({"imports": {"m": spec}})
    with pytest.raises(InputError, match=rf"config key measures\[1\]: '{re.escape(pair[1])}'"):
        check_config({"measures": pair, "imports": {"m": {**spec, "measures": None}}})
    with pytest.raises(InputError, match=rf"'{re.escape(pair[0])}' and '{re.escape(pair[1])}' are one measure"):
        import_scores("m", spec, str(tmp_path), None)   # the library refuses too
    ok = import_scores("m", {**spec, "measures": pair[:1]}, str(tmp_path), None)
    assert (ok.value > 0).any()


@pytest.mark.parametrize("name,canonical", [("map", "AP"), ("P_10", "P@10"), ("ndcg_cut_10", "nDCG@10"),
                                            ("recip_rank", "RR"), ("MAP", "AP")])
def test_trec_eval_import_measures_are_ir_measures_names(tmp_path, name, canonical):
    from irrepro.plan import check_config

    te = _w(tmp_path, "t.txt", "map 1 0.5\nP_10 1 0.1\nrecip_rank 1 1\nndcg_cut_10 1 0.3\nrunid all r\n")
    spec = {"type": "trec_eval", "path": str(te), "measures": ["Bpref", name]}
    with pytest.raises(InputError, match=rf"config key imports.t.measures\[1\]: '{name}' is .*write '{re.escape(canonical)}'"):
        check_config({"imports": {"t": spec}})
    check_config({"imports": {"t": {**spec, "measures": ["Bpref", canonical]}}})
    assert set(read_trec_eval_q(te, "t", [canonical]).measure) == {canonical}


@pytest.mark.parametrize("measure", ["alpha_nDCG@20", "ERR_IA@20"])
def test_diversity_measures_on_ad_hoc_qrels_are_refused(tmp_path, measure):
    from irrepro.core.evaluation import evaluate_runs
    from irrepro.plan import check_config

    spec = _runs_import(tmp_path, ["AP", measure])
    with pytest.raises(InputError, match=rf"config key imports.m.measures\[1\]: '{measure}' is a diversity "
                                         r"measure.*collection 'm'"):
        check_config({"imports": {"m": spec}})
    with pytest.raises(InputError, match=rf"config key measures\[0\]: '{measure}' is a diversity measure.*"
                                         r"collection 'm'"):
        check_config({"measures": [measure], "imports": {"m": {**spec, "measures": None}}})
    qrels = read_qrels(spec["qrels"])
    with pytest.raises(InputError, match=rf"'{measure}' is a diversity measure.*collection 'm'"):
        evaluate_runs([("a", tmp_path / "runs" / "a.run")], qrels, [measure], "m")


def test_diversity_measure_in_the_global_measures_names_the_collections():
    from pathlib import Path

    import yaml

    from irrepro.plan import check_config
    from irrepro.schema import validate_config

    repo = Path(__file__).resolve().parents[1]
    cfg = validate_config(yaml.safe_load((repo / "config" / "test.yaml").read_text()), repo / "workflow" / "schemas")
    cfg["measures"] = ["AP", "ERR_IA@20"]
    with pytest.raises(InputError, match=r"config key measures\[1\]: 'ERR_IA@20' is a diversity measure.*"
                                         r"collections \['dl19-pool', 'vaswani'\]"):
        check_config(cfg)


def test_a_trec_eval_measure_the_file_lacks_is_an_error_naming_what_it_holds(tmp_path):
    """An import never holds fewer measures than its config asks: a stats table of a measure without scores would
    read as a comparison that found nothing."""
    from irrepro.core.evaluation import import_scores

    te = _w(tmp_path, "t.txt", "map 1 0.5\nP_10 1 0.1\nrunid all r\n")
    with pytest.raises(InputError, match=r"t.txt: no per-topic rows of the measures \['nDCG@10'\]; the file holds "
                                         r"\['AP', 'P@10'\]"):
        import_scores("t", {"type": "trec_eval", "path": str(te), "measures": ["AP", "nDCG@10"]}, "res", None,
                      logging.getLogger("t3"))
    df = import_scores("t", {"type": "trec_eval", "path": str(te), "measures": ["AP"]}, "res", None)
    assert set(df.measure) == {"AP"}
