"""How the suite itself runs: under ``make test`` (pytest-xdist, ``--dist loadgroup``) each test carries its group
in its node id, so that one worker runs the DAG tests (the test DAG once, not once per worker) and module-scoped
fixtures are made once. A pytest or pytest-xdist release that drops the group would split every group over the
workers; these tests fail then."""
import pytest

from conftest import DAG_GROUP, xdist_worker


def test_a_unit_test_runs_in_its_module_group(request):
    if not xdist_worker():
        pytest.skip("not under pytest-xdist (make test runs the suite on xdist workers)")
    assert request.node.nodeid.endswith("@test_suite"), request.node.nodeid


@pytest.mark.integration
def test_a_dag_test_runs_in_the_dag_group(request, dag):
    if not xdist_worker():
        pytest.skip("not under pytest-xdist (make test runs the suite on xdist workers)")
    assert request.node.nodeid.endswith(f"@{DAG_GROUP}"), request.node.nodeid
    assert (dag / "results" / "test").is_dir()
