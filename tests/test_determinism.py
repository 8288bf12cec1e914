"""Determinism: the same config gives byte-identical results across two independent runs: the shared ``dag``
(local, ``--cores 2``, the whole DAG of config/test.yaml, two-thread rules on two cores) and ``second_run`` (every
job on one thread; on SLURM where the SLURM test runs, else local ``--cores 1``; see tests/conftest.py).

Compared: every result file the second run was asked to build (every file under results/<version>/ that the jobs
of ``conftest.SECOND_RUN_TARGETS`` make, except logs, benchmark files, the cost table and the label agreement
table, which carry timings) against the same file of ``dag``. The second run builds a subset of the DAG, not all
of it: running the whole DAG again was CI's largest item, and the subset takes each kind of result through its
rules (PISA index, retrieval runs, score table, the stats stage's tables and figures, label pairs, label tables and
agreement, one paper's tables, values, verify table and figures). Figures are reproducible because the workflow
sets SOURCE_DATE_EPOCH (PDF dates). The unit tests below check that the comparison cannot pass on nothing.
"""
import pytest

from conftest import SECOND_RUN_TARGETS, assert_runs_identical, compare_runs, parse_summary, planned_outputs


@pytest.mark.integration
def test_two_runs_with_other_threads_and_job_order_give_identical_bytes(dag, second_run):
    work, info = second_run
    assert_runs_identical(dag, work, info["planned"], f"one-thread {info['executor']} run")


# ---------------------------------------------------------------- the comparison on the subset (no DAG run)
def _run(root, files: dict):
    """A fake run's working directory: ``files`` ({path under results/test: bytes}) written into it."""
    for rel, data in files.items():
        p = root / "results" / "test" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def _plan(*rels, rule="r"):
    return {f"results/test/{r}": rule for r in rels}


def test_compare_runs_reports_missing_differing_and_unexpected_files(tmp_path):
    files = {"scores/c.tsv": b"1", "runs/c/s.run": b"2", "vb/verify.csv": b"3"}
    dag = _run(tmp_path / "dag", {**files, "only/in_dag.csv": b"4"})
    plan = {**_plan(*files), "resources/indexes/c.pisa": "index", "results/test/logs/x.log": "r",
            "results/test/benchmarks/r/c.tsv": "r", "results/test/cost.csv": "cost"}
    same = compare_runs(dag, _run(tmp_path / "same", files), plan)
    # what the dag run made beyond the plan is not compared; logs, benchmarks and resources are not results
    assert same == {"compared": sorted(files), "missing": [], "not_in_dag": [], "unplanned": [], "differ": []}

    lacking = compare_runs(dag, _run(tmp_path / "lacking", {"scores/c.tsv": b"1"}), plan)
    assert lacking["missing"] == ["runs/c/s.run", "vb/verify.csv"]
    assert lacking["compared"] == ["scores/c.tsv"]

    other = compare_runs(dag, _run(tmp_path / "other", {**files, "runs/c/s.run": b"2 "}), plan)
    assert other["differ"] == ["runs/c/s.run"] and not other["missing"]

    extra = compare_runs(dag, _run(tmp_path / "extra", {**files, "new.csv": b"5"}), plan)
    assert extra["not_in_dag"] == ["new.csv"] and extra["unplanned"] == ["new.csv"]

    # a second run that made nothing: every planned result is missing, nothing compared
    empty = compare_runs(dag, tmp_path / "empty", plan)
    assert empty["missing"] == sorted(files) and empty["compared"] == []


def test_compare_runs_refuses_a_plan_without_results(tmp_path):
    dag = _run(tmp_path / "dag", {"scores/c.tsv": b"1"})
    for plan in ({}, {"resources/indexes/c.pisa": "index", "results/test/logs/x.log": "r",
                      "results/test/cost.md": "cost", "results/other/scores/c.tsv": "evaluate"}):
        with pytest.raises(AssertionError, match="nothing to compare"):
            compare_runs(dag, dag, plan)


def test_parse_summary():
    text = ("Building DAG of jobs...\noutput_file\tdate\trule\tlog-file(s)\tstatus\tplan\n"
            "results/test/scores/c.tsv\t-\tevaluate\t-\tmissing\tupdate pending\n"
            "resources/indexes/c.pisa\t-\tindex\t-\tmissing\tupdate pending\n")
    assert parse_summary(text) == {"results/test/scores/c.tsv": "evaluate", "resources/indexes/c.pisa": "index"}
    with pytest.raises(ValueError):
        parse_summary("Building DAG of jobs...\nNothing to be done.\n")


def test_second_run_targets_cover_the_rule_kinds_without_the_neural_index(tmp_path):
    """The targets' jobs (a ``snakemake --summary``, no job run) span retrieval, scores, stats, the label stage and
    a paper's verify table and figures, with both local rules that fetch, and leave out the MiniLM index (the DAG's
    costliest job); every target is a result file that the comparison covers."""
    planned = planned_outputs(tmp_path)
    rules = set(planned.values())
    wanted = {"fetch_artifact", "fetch_collection", "index", "run", "evaluate", "stats_reliability", "labels_pairs",
              "labels", "labels_agreement", "verify", "vb_figures"}
    assert wanted <= rules, sorted(wanted - rules)
    assert any(r.startswith("stats_compare") for r in rules), sorted(rules)
    assert "neural_index" not in rules and "neural_run" not in rules
    assert set(SECOND_RUN_TARGETS) <= set(planned), sorted(set(SECOND_RUN_TARGETS) - set(planned))
    assert len(compare_runs(tmp_path / "dag", tmp_path / "second", planned)["missing"]) > 20
