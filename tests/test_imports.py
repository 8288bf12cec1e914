"""Every module of the library imports (a moved module or a stale relative import fails here, not in a DAG job),
and the workflow scripts hold no `sys.path` edits."""
import importlib
import pkgutil
from pathlib import Path

import pytest

import irrepro

MODULES = sorted(m.name for m in pkgutil.walk_packages(irrepro.__path__, "irrepro."))


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)


def test_function_level_imports_resolve():
    """Imports inside functions (kept lazy for start-up time) name modules that exist."""
    import ast

    root = Path(irrepro.__file__).parent
    bad = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("irrepro"):
                if importlib.util.find_spec(node.module) is None:
                    bad.append(f"{path.relative_to(root)}:{node.lineno} {node.module}")
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                bad.append(f"{path.relative_to(root)}:{node.lineno} relative import (use irrepro.<package>)")
    assert not bad, bad


def test_workflow_holds_python_only_in_its_scripts():
    """Library and tool code lives in src/irrepro (tools: irrepro.tools); workflow/ holds rules, schemas and the
    rules' scripts, its only Python under workflow/scripts/."""
    repo = Path(__file__).resolve().parents[1]
    stray = [str(p.relative_to(repo)) for p in (repo / "workflow").rglob("*.py")
             if (repo / "workflow" / "scripts") not in p.parents]
    assert not stray, f"Python outside workflow/scripts/: {stray}"


def test_workflow_scripts_import_what_exists():
    """`from irrepro.x import name` in every workflow script names a module and an attribute that exist."""
    import ast

    repo = Path(__file__).resolve().parents[1]
    bad = []
    for path in sorted((repo / "workflow" / "scripts").rglob("*.py")):
        text = path.read_text()
        assert "sys.path" not in text, f"{path}: no sys.path edits"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("irrepro"):
                try:
                    mod = importlib.import_module(node.module)
                except ImportError as e:
                    bad.append(f"{path.name}:{node.lineno} {node.module}: {e}")
                    continue
                for alias in node.names:
                    if not hasattr(mod, alias.name) and importlib.util.find_spec(
                            f"{node.module}.{alias.name}") is None:
                        bad.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
    assert not bad, bad


def test_run_file_names_strip_only_known_extensions(tmp_path):
    """Dots inside a run's name stay: three BM25 settings are three systems, TREC's input.<tag>.gz is <tag>."""
    from irrepro.core.trec import run_name, run_systems

    names = ["bm25_k1-0.9_b-0.5.run", "bm25_k1-0.9_b-0.15.run", "bm25_k1-0.9_b-0.25.run"]
    assert [s for s, _ in run_systems([tmp_path / n for n in names])] == [n[:-4] for n in names]
    assert run_name("/d/input.uogTrA44xu.gz") == "uogTrA44xu"
    assert run_name("ql.res.txt") == "ql.res" and run_name("x.run.gz") == "x" and run_name("plain") == "plain"


def test_run_files_that_give_one_system_are_an_error_naming_both(tmp_path):
    from irrepro.core.trec import run_systems
    from irrepro.errors import InputError

    with pytest.raises(InputError, match=r"run files .*bm25\.run and .*bm25\.run\.gz both give system 'bm25'"):
        run_systems([tmp_path / "bm25.run", tmp_path / "bm25.run.gz"])


@pytest.mark.parametrize("bad", ["<script>alert(2)<", "a b.run", "runé.txt", "...run", ".hidden.run", "-x.run"])
def test_a_run_file_that_cannot_name_a_system_is_refused_naming_it(tmp_path, bad):
    from irrepro.core.trec import run_name
    from irrepro.errors import InputError

    with pytest.raises(InputError, match="cannot name a system") as e:
        run_name(tmp_path / bad)
    assert bad in str(e.value)


@pytest.mark.parametrize("name,ok", [("nDCG@0", False), ("P@-1", False), ("DCG@0", False), ("RBP(p=0.8)", False),
                                     ("nonsense", False), ("Judged@10", True), ("R@100", True), ("DCG@10", True),
                                     ("AP", True), ("nDCG@10", True), ("ERR(rel=2)@20", False), ("P(rel=2)@10", True)])
def test_measures_are_checked_naming_the_key(name, ok):
    """A measure must be computable here: parsed by ir_measures with a cutoff >= 1 and supported by an installed
    provider (RBP has none installed), or irrepro's own DCG@k."""
    from irrepro.core.evaluation import check_measure
    from irrepro.errors import InputError

    if ok:
        check_measure(name, "measures[0]")
    else:
        with pytest.raises(InputError, match=r"config key measures\[0\]"):
            check_measure(name, "measures[0]")


def test_an_accepted_measure_is_computed():
    """What the check accepts, the evaluation computes (Judged@10 and R@100 on a tiny run)."""
    import pandas as pd

    from irrepro.core.evaluation import evaluate_run

    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    got = evaluate_run(run, qrels, ["Judged@10", "R@100"]).set_index("measure")["value"]
    assert got["Judged@10"] == 0.5 and got["R@100"] == 0.5


def test_adding_a_measure_reruns_no_matrix_or_trec_eval_import(dag, tmp_path):
    """The global ``measures`` is a param only of the rules that compute measures: adding R@100 schedules the
    collections' evaluation again but no matrix or trec_eval import (their scores do not depend on it)."""
    import re

    import yaml

    from conftest import TEST_CONFIG, snakemake

    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["measures"] = list(cfg["measures"]) + ["R@100"]
    p = tmp_path / "more_measures.yaml"
    p.write_text(yaml.safe_dump(cfg))
    out = snakemake(dag, "-n", "--cores", "1", config=p).stdout
    rules = set(re.findall(r"^(?:local)?rule (\S+):", out, flags=re.M))
    assert "evaluate" in rules, rules            # the change is seen where the measures are computed
    assert "import_scores" not in rules, rules


#: what a Snakemake process must not import while it reads the Snakefile and resolves the config's plan: every job's
#: Snakemake processes on a cluster (two per job) and every dry run parse it, and these took 0.9 s of its 2.3 s
#: (scipy.stats, reached through a package ``__init__``) before the plan's imports were kept light
HEAVY_AT_PARSE = ("scipy.stats", "statsmodels", "torch", "transformers", "matplotlib", "sklearn")


def heavy_imports(importtime: str) -> list:
    """The :data:`HEAVY_AT_PARSE` modules imported (themselves or a submodule: scipy's lazy loader logs only the
    submodules of ``scipy.stats``) by the output of ``python -X importtime``."""
    names = {line.rsplit("|", 1)[-1].strip() for line in importtime.splitlines() if line.startswith("import time:")}
    return sorted(h for h in HEAVY_AT_PARSE if any(n == h or n.startswith(h + ".") for n in names))


def test_heavy_imports_reads_importtime_output():
    text = ("import time: self [us] | cumulative | imported package\n"
            "import time:       606 |     563595 | snakemake.cli\n"
            "import time:     34202 |     397273 |     scipy.stats._stats_py\n")
    assert heavy_imports(text) == ["scipy.stats"]  # the wrong input: a parse that imported scipy.stats
    assert heavy_imports(text.replace("scipy.stats._stats_py", "scipy.special")) == []
    assert heavy_imports(text.replace("scipy.stats._stats_py", "torchvision")) == []


@pytest.mark.parametrize("config", ["config/test.yaml", "config/config.yaml"])
def test_parsing_the_snakefile_imports_no_heavy_library(config, tmp_path):
    import subprocess
    import sys

    repo = Path(irrepro.__file__).parents[2]
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "snakemake", "-s", str(repo / "Snakefile"),
                        "-d", str(tmp_path), "--configfile", str(repo / config), "--list-rules"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "stats_compare" in p.stdout
    assert heavy_imports(p.stderr) == []
