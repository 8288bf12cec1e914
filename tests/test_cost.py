"""The cost table (irrepro.core.cost) and that every rule that does work writes a benchmark file."""
import re
from pathlib import Path

import pandas as pd
import pytest

from irrepro.core.cost import benchmark_files, cost_table, read_benchmarks

REPO = Path(__file__).resolve().parents[1]
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(path, s, cpu, rss):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")


def test_rules_jobs_and_shares(tmp_path):
    root = tmp_path / "benchmarks"
    bench(root / "run" / "vaswani" / "BM25.tsv", 3.0, 2.5, 100)
    bench(root / "run" / "vaswani" / "QL.tsv", 1.0, 0.5, 300)
    bench(root / "bv_table2.tsv", 6.0, 5.0, 50)
    jobs = read_benchmarks(benchmark_files(root), [root])
    assert sorted(jobs["rule"]) == ["bv_table2", "run", "run"]
    assert set(jobs["job"]) == {"", "vaswani/BM25", "vaswani/QL"}
    t = cost_table(jobs).set_index("rule")
    assert list(t.index) == ["bv_table2", "run", "total"]  # most expensive first, total last
    assert t.loc["run", "jobs"] == 2 and t.loc["run", "wall_s"] == 4.0 and t.loc["run", "cpu_s"] == 3.0
    assert t.loc["run", "max_rss_mb"] == 300  # the largest job's peak, not a sum
    assert t.loc["bv_table2", "share_of_wall"] == pytest.approx(0.6)
    assert t.loc["total", "wall_s"] == 10.0 and t.loc["total", "jobs"] == 3


def test_last_measurement_of_a_job_counts(tmp_path):
    root = tmp_path / "benchmarks"
    p = root / "index" / "vaswani.tsv"
    bench(p, 9.0, 9.0, 10)
    with open(p, "a") as f:  # `--benchmark-repeats`-style second row: the last one is the run that built it
        f.write("2.0\t0:00:02\t20\t1\t1\t1\t0\t0\t50\t1.5\n")
    t = cost_table(read_benchmarks(benchmark_files(root), [root])).set_index("rule")
    assert t.loc["index", "wall_s"] == 2.0 and t.loc["index", "cpu_s"] == 1.5


def test_a_file_that_is_not_a_benchmark_names_itself(tmp_path):
    root = tmp_path / "benchmarks"
    root.mkdir()
    (root / "x.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match=r"x\.tsv: not a Snakemake benchmark file"):
        read_benchmarks(benchmark_files(root), [root])
    with pytest.raises(ValueError, match="not under any of the benchmark folders"):
        read_benchmarks([tmp_path / "elsewhere.tsv"], [root])


def test_no_benchmarks_is_an_empty_table(tmp_path):
    assert cost_table(read_benchmarks(benchmark_files(tmp_path / "none"), [tmp_path / "none"])).empty


def test_every_rule_that_runs_something_writes_a_benchmark_named_by_rule_and_all_wildcards():
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    missing, misnamed = [], []
    for f in files:
        text = f.read_text()
        # rules may sit inside an `if` (indented) or a loop (`rule:` with a `name:`): split at every rule line
        for block in re.split(r"\n(?=\s*(?:rule|checkpoint)(?: \w+)?:)", text):
            m = re.match(r"\s*(?:rule|checkpoint)(?: (\w+))?:", block)
            if not m or not re.search(r"^\s+(script|shell|run|notebook|wrapper):", block, re.M):
                continue
            if m.group(1) is None:
                # made in a loop, one per collection: its benchmarks lie in benchmarks/<family>/<collection>.tsv and
                # its names come from rule_names(..., "<family>") (the cost table's row: the family)
                b = re.search(r"^\s+benchmark:\n\s+f?\"[^\"]*/benchmarks/(\w+)/\{collection\}\.tsv\"", block, re.M)
                if not b or not re.search(rf'rule_names\(\w+, "{b.group(1)}"\)', text):
                    misnamed.append(f"{f.name}: a rule made in a loop: {block.strip().splitlines()[:3]}")
                continue
            rule = m.group(1)
            b = re.search(r"^\s+benchmark:\n\s+f?\"([^\"]+)\"", block, re.M)
            if not b:
                missing.append(f"{f.name}:{rule}")
                continue
            path = b.group(1)
            out_wc = set(re.findall(r"\{\{(\w+)\}\}", block.split("output:")[1].split("log:")[0]))
            if f"/benchmarks/{rule}" not in path or set(re.findall(r"\{\{(\w+)\}\}", path)) != out_wc:
                misnamed.append(f"{f.name}:{rule}: {path}")
    assert not missing, f"rules without a benchmark: file: {missing}"
    assert not misnamed, f"benchmark paths must be benchmarks/<rule>[/<each wildcard>].tsv: {misnamed}"


@pytest.mark.integration
def test_the_run_writes_a_cost_table_of_every_rule_that_ran(dag):
    from conftest import snakemake

    v = dag / "results" / "test"
    t = pd.read_csv(v / "cost.csv")
    assert t["rule"].iloc[-1] == "total"
    rules = set(t["rule"]) - {"total"}
    # every rule with outputs in the run (per `snakemake --summary`) has its jobs in the table; `cost` itself
    # is measured after the table is written
    summary = snakemake(dag, "--summary").stdout.splitlines()
    ran = {line.split("\t")[2] for line in summary if line.startswith(("results/", "resources/"))} - {"cost"}
    # a rule made per collection in a loop (stats_compare_<collection>) is counted under its family's row
    ran = {next((f for f in rules if r.startswith(f"{f}_")), r) if r not in rules else r for r in ran}
    assert ran <= rules, f"rules missing from cost.csv: {sorted(ran - rules)}"
    assert "stats_compare" in rules
    body = t[t["rule"] != "total"]
    # shares are written with 3 decimals: their sum is 1 within half a unit of the last digit per row
    assert (body["wall_s"] >= 0).all() and body["share_of_wall"].sum() == pytest.approx(1.0, abs=0.0005 * len(body))
    files = [p for p in (v / "benchmarks").rglob("*.tsv") if p != v / "benchmarks" / "cost.tsv"]
    files += list((dag / "resources" / "benchmarks").rglob("*.tsv"))
    assert int(t["jobs"].iloc[-1]) == len(files)
    assert (v / "cost.png").stat().st_size > 1000


def test_growth_fit_recovers_linear_and_quadratic_costs():
    from irrepro.core.cost import extrapolate, fit_growth

    a, b = fit_growth([100, 200, 400], [1.0, 2.0, 4.0])
    assert b == pytest.approx(1.0) and extrapolate(a, b, 800) == pytest.approx(8.0)
    a, b = fit_growth([10, 20, 40], [0.5, 2.0, 8.0])
    assert b == pytest.approx(2.0) and extrapolate(a, b, 80) == pytest.approx(32.0)
    with pytest.raises(ValueError, match="positive"):
        fit_growth([0, 1, 2], [1, 2, 3])


def test_affine_fit_separates_set_up_from_per_unit_cost():
    from irrepro.core.cost import fit_affine, fit_growth

    sizes, secs = [25, 50, 100], [6.0 + 0.05 * n for n in (25, 50, 100)]
    fixed, per = fit_affine(sizes, secs)
    assert fixed == pytest.approx(6.0) and per == pytest.approx(0.05)
    # the power law over the same three points would call this sub-linear (b well below 1)
    assert fit_growth(sizes, secs)[1] < 0.6
