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


def _config(tmp_path, args, markexpr="", keyword="", collectonly=False):
    """A stand-in for pytest's config: what ``_vllm_tests_wanted`` reads."""
    from types import SimpleNamespace

    return SimpleNamespace(args=args, invocation_params=SimpleNamespace(dir=tmp_path),
                           option=SimpleNamespace(markexpr=markexpr, keyword=keyword, collectonly=collectonly))


def test_vllm_install_starts_in_the_background_only_where_its_tests_run(tmp_path):
    """The session starts vLLM's install early only where the command line selects tests/test_vllm.py: ``make test``
    (the testpaths), the file or a test in it; not ``make test-fast`` (``-m "... not slow"``), another file, ``-k``
    (unsure) or ``--collect-only``."""
    from conftest import REPO, _vllm_tests_wanted

    tests = str(REPO / "tests")
    vllm = str(REPO / "tests" / "test_vllm.py")
    assert _vllm_tests_wanted(_config(tmp_path, [tests]))
    assert _vllm_tests_wanted(_config(tmp_path, [str(REPO)]))
    assert _vllm_tests_wanted(_config(tmp_path, [f"{vllm}::test_vllm_degenerate_server_is_refused"]))
    assert _vllm_tests_wanted(_config(REPO, ["tests/test_vllm.py"]))  # relative to where pytest was started
    assert _vllm_tests_wanted(_config(REPO, ["tests/test_labels.py", "tests/test_vllm_degenerate.py"]))
    assert _vllm_tests_wanted(_config(tmp_path, [tests], markexpr="slow or integration"))
    assert not _vllm_tests_wanted(_config(tmp_path, [tests], markexpr="not integration and not slurm and not slow"))
    assert not _vllm_tests_wanted(_config(tmp_path, [str(REPO / "tests" / "test_labels.py")]))
    assert not _vllm_tests_wanted(_config(tmp_path, [str(REPO / "src")]))
    assert not _vllm_tests_wanted(_config(tmp_path, [tests], keyword="vllm"))
    assert not _vllm_tests_wanted(_config(tmp_path, [tests], collectonly=True))
