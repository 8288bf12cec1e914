"""Determinism: the same config gives byte-identical results across two independent runs of the DAG: the shared
``dag`` (local, ``--cores 2``, two-thread rules on two cores) and ``second_run`` (every job on one thread; on SLURM
where the SLURM test runs, else local ``--cores 1``; see tests/conftest.py).

Compared: every file under results/<version>/ except logs, benchmark files, the cost table and the label agreement
table, which carry timings (tables, run files,
score tables, verify tables, figures, provenance.json). Figures are reproducible because the workflow sets
SOURCE_DATE_EPOCH (PDF dates).
"""
import pytest

from conftest import result_files

pytestmark = pytest.mark.integration


def test_two_runs_with_other_threads_and_job_order_give_identical_bytes(dag, second_run):
    work, info = second_run
    a, b = result_files(dag), result_files(work)
    assert sorted(a) == sorted(b)
    assert len(a) > 20
    differ = [k for k in a if a[k].read_bytes() != b[k].read_bytes()]
    assert not differ, f"files differ between --cores 2 and a one-thread {info['executor']} run: {differ}"
