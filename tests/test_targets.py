"""Every table and figure is a named file target that can be rebuilt alone, without recomputing anything upstream.

After a complete run of config/test.yaml (the shared ``dag`` fixture):
- ``snakemake --summary`` names the rule of every table and figure and finds it up to date;
- asking for every table and figure again does nothing (touch nothing: nothing to be done);
- forcing them (``-f``) reruns only the jobs that write them, never an upstream job (retrieval, scoring, imports);
- deleting figures and asking for them by name runs exactly their jobs, and the rebuilt files are byte-identical.
"""
import collections
import re

import pytest

from conftest import snakemake

pytestmark = pytest.mark.integration

V = "results/test"
TABLE_OR_FIGURE = (".csv", ".md", ".png", ".pdf")
# Rules upstream of every paper: forcing a table or figure must never rerun one of them.
UPSTREAM = {"fetch_artifact", "fetch_collection", "index", "run", "evaluate", "import_scores", "bv_querymodels"}


def tables_and_figures(workdir):
    root = workdir / V
    return sorted(str(p.relative_to(workdir)) for p in root.rglob("*")
                  if p.is_file() and p.suffix in TABLE_OR_FIGURE and "logs" not in p.relative_to(root).parts)


def job_stats(out):
    """{rule: count} from Snakemake's "Job stats" table (empty when there is nothing to do)."""
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal\s+(\d+)", out, re.S)
    if not m:
        return {}
    stats = {}
    for line in m.group(1).splitlines():
        rule, count = line.split()
        stats[rule] = int(count)
    assert sum(stats.values()) == int(m.group(2))
    return stats


def summary(workdir):
    """{output file: (rule, status, plan)} from `snakemake --summary`."""
    p = snakemake(workdir, "--summary")
    rows = [line.split("\t") for line in p.stdout.splitlines() if line.startswith(("results/", "resources/"))]
    return {r[0]: (r[2], r[4], r[5]) for r in rows}


def test_every_table_and_figure_is_an_up_to_date_target(dag):
    targets = tables_and_figures(dag)
    assert len(targets) >= 20
    s = summary(dag)
    missing = [t for t in targets if t not in s]
    assert not missing, f"not produced by any rule (not a target): {missing}"
    stale = {t: s[t] for t in targets if s[t][1:] != ("ok", "no update")}
    assert not stale, f"not up to date after a complete run: {stale}"
    # touch nothing, ask for every table and figure: nothing runs
    p = snakemake(dag, "-n", *targets)
    assert "Nothing to be done" in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]


def test_forcing_tables_and_figures_reruns_only_their_rules(dag):
    targets = tables_and_figures(dag)
    rule_of = {t: r for t, (r, _, _) in summary(dag).items()}
    p = snakemake(dag, "-n", "-f", *targets)
    stats = job_stats(p.stdout + p.stderr)
    assert stats, (p.stdout + p.stderr)[-3000:]
    # rules that only write values files between two forced targets (e.g. vb_checks: vb_scores' per-topic tables ->
    # values for the verify table) rerun too, as they must; nothing else
    outputs_of = {}
    for f, r in rule_of.items():
        outputs_of.setdefault(r, []).append(f)
    values_only = {r for r, fs in outputs_of.items() if all("/values/" in f for f in fs)}
    assert set(stats) - values_only == {rule_of[t] for t in targets}
    assert not set(stats) & UPSTREAM


FIGURES = ["figures/population_vaswani.png", "bv/fig1_vaswani.png", "vb/web2012/fig2.png", "sampling/figs1-3_synth.png",
           "ci/fig4_dl19-pool_flant5-large.png"]


def test_figures_rebuild_alone(dag):
    """Ask for figures by name (five, of five papers' stages, in one Snakemake call: each start parses the whole
    workflow): only their rules run, one job each (dry run with -f; real run after deleting them, same bytes). A
    figure whose rebuild pulled in any other job — an upstream rule, a second figure — fails the job count."""
    targets = [f"{V}/{f}" for f in FIGURES if (dag / V / f).exists()]
    assert len(targets) == len(FIGURES), sorted(set(FIGURES) - {t.removeprefix(f"{V}/") for t in targets})
    table = summary(dag)
    rules = collections.Counter(table[t][0] for t in targets)
    assert len(rules) == len(targets)  # five different rules
    p = snakemake(dag, "-n", "-f", *targets)
    assert job_stats(p.stdout + p.stderr) == rules
    before = {t: (dag / t).read_bytes() for t in targets}
    for t in targets:
        (dag / t).unlink()
    p = snakemake(dag, "--cores", "2", *targets)
    out = p.stdout + p.stderr
    assert job_stats(out) == rules, out[-3000:]
    assert f"{len(targets)} of {len(targets)} steps (100%) done" in out
    for t in targets:
        assert (dag / t).read_bytes() == before[t], f"{t} rebuilt with different bytes"
    # the targeted build left its provenance: the newest record lists what it wrote (the figures and their
    # siblings, nothing else of the version) with each file's md5, and the command that asked for them
    import hashlib
    import json

    record = json.loads(max((dag / V / "provenance").glob("*.json")).read_text())
    made = record["outputs_md5"]
    for t in targets:
        rel = t.removeprefix(f"{V}/")
        assert made[rel] == hashlib.md5(before[t]).hexdigest(), rel
    assert {table[f"{V}/{rel}"][0] for rel in made} == set(rules), sorted(made)  # those rules' files only
    assert all(t in record["run"]["command"] for t in targets)
    assert record["project"]["name"] == "irrepro" and record["config"]["version"] == "test"
