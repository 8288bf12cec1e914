"""Integration: ci.systems on config/test.yaml's vaswani with a population system and an imported run file (an
import of type runs whose documents are vaswani's), labelled by a label file: the systems table's values by all
human labels against ir_measures' evaluation of the same run files, the labelled queries, the difference rows and
the planning table."""
import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, snakemake
from irrepro.core.evaluation import evaluate_run
from irrepro.core.trec import read_qrels, read_run, write_run
from irrepro.papers.ci.systems import METHODS, draw_queries, judged_queries

pytestmark = pytest.mark.integration
V = "results/test"
POP = "bm25_k1-0.9_b-0.75"


@pytest.fixture(scope="module")
def systems_run(tmp_path_factory, mirror):
    wd = tmp_path_factory.mktemp("cisys")
    snakemake(wd, "--cores", "2", f"{V}/runs/vaswani/{POP}.run", f"{V}/collections/vaswani/qrels.txt")
    run = read_run(wd / V / f"runs/vaswani/{POP}.run")
    qrels = read_qrels(wd / V / "collections/vaswani/qrels.txt")
    # "my run": the population run's top 30 of each query in another order (every 3rd document first)
    rows = []
    for q, g in run[run["rank"] <= 30].groupby("query_id"):
        docs = g.sort_values("rank").doc_id.tolist()
        order = docs[::3] + [d for i, d in enumerate(docs) if i % 3]
        rows += [(q, d, r, float(-r)) for r, d in enumerate(order, 1)]
    mine = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])
    (wd / "myruns").mkdir()
    write_run(mine, wd / "myruns" / "myrun.run", system="myrun")
    # labels of every ranked pair: the human grade, flipped for 20% of the pairs (seeded)
    grade = {(str(q), str(d)): int(r > 0) for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)}
    pairs = pd.concat([run[["query_id", "doc_id"]], mine[["query_id", "doc_id"]]]).drop_duplicates()
    rng = np.random.default_rng(0)
    with open(wd / "mylabels.txt", "w") as f:
        for q, d in zip(pairs.query_id, pairs.doc_id):
            g = grade.get((str(q), str(d)), 0)
            f.write(f"{q} 0 {d} {1 - g if rng.random() < 0.2 else g}\n")
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg["imports"]["mine"] = {"type": "runs", "runs": str(wd / "myruns"),
                              "qrels": str(wd / V / "collections/vaswani/qrels.txt")}
    cfg["labels"]["labelers"]["mylabels"] = {"backend": "file", "path": str(wd / "mylabels.txt"), "smoothing": 0.2}
    cfg["ci"]["systems"] = {"collection": "vaswani", "systems": [POP, "mine/myrun"], "labeler": "mylabels",
                            "n": 40, "seed": 1}  # 40: every method gives an interval
    cfg_path = wd / "cisys.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    snakemake(wd, "--cores", "2", f"{V}/ci/systems_plan_vaswani.md", config=cfg_path)
    return wd, run, mine, qrels


def test_systems_table_for_a_population_system_and_an_imported_run(systems_run):
    wd, run, mine, qrels = systems_run
    t = pd.read_csv(wd / V / "ci/systems_vaswani.csv", keep_default_na=False, na_values=[""])
    s = t[t.kind == "system"]
    assert set(s.system) == {POP, "mine/myrun"} and set(s.measure) == {"DCG@10", "nDCG@10"}
    assert set(s.method) == set(METHODS) and len(s) == 2 * 2 * len(METHODS)
    assert (s.n == 40).all() and (s.N == qrels.query_id.nunique()).all()
    assert np.isfinite(s[["estimate", "low", "high"]].to_numpy()).all() and (s.low < s.high).all()
    # the value by all human labels is DCG@10 (gain 2^r - 1) of each run file, as the project's evaluation gives it
    for name, r in ((POP, run), ("mine/myrun", mine)):
        ev = evaluate_run(r.assign(score=-r["rank"].astype(float)), qrels, ["DCG@10"]).value.mean()
        assert np.allclose(s[(s.system == name) & (s.measure == "DCG@10")].truth, ev), name
    assert s[s.system == POP].truth.iloc[0] != s[s.system == "mine/myrun"].truth.iloc[0]
    # differences: my run − the baseline (the first system listed)
    d = t[t.kind == "difference"]
    assert len(d) == 2 * 3 and set(d.system) == {"mine/myrun"} and set(d.system_b) == {POP}
    tr = d[d.measure == "DCG@10"].truth.iloc[0]
    assert np.isclose(tr, s[(s.system == "mine/myrun") & (s.measure == "DCG@10")].truth.iloc[0]
                      - s[(s.system == POP) & (s.measure == "DCG@10")].truth.iloc[0])
    assert (d.alpha_adjusted == 0.05).all()  # one system compared: Bonferroni changes nothing
    q = pd.read_csv(wd / V / "ci/systems/vaswani/queries.tsv", sep="\t", dtype=str).query_id.tolist()
    assert q == draw_queries(judged_queries(qrels), 40, 1)
    assert (wd / V / "ci/systems_vaswani.png").stat().st_size > 0


def test_planning_table_rows(systems_run):
    wd, *_ = systems_run
    p = pd.read_csv(wd / V / "ci/systems_plan_vaswani.csv")
    assert set(p.method) == set(METHODS) and set(p.target_relative) == {0.1, 0.2, 0.3}
    # a wider target never needs more queries
    for _, g in p.groupby(["system", "measure", "method"]):
        k = g.sort_values("target_relative").n_needed.to_numpy()
        assert (np.diff(k) <= 0).all()



def test_own_queries_with_a_topics_file_and_qrels_of_a_few_of_them(systems_run):
    """Mode own with files of one's own: a topics file of 50 of vaswani's queries and a qrels file judging 10 of
    them; the systems table is over the 50 (N), from the 10 (n), with no truth."""
    wd, run, mine, qrels = systems_run
    topics = pd.read_csv(wd / V / "collections/vaswani/topics.tsv", sep="\t", dtype=str, keep_default_na=False)
    fifty = topics[topics.query_id.isin(judged_queries(qrels)[:50])]
    fifty.to_csv(wd / "my-topics.tsv", sep="\t", index=False)
    ten = draw_queries(fifty.query_id.tolist(), 10, 3)
    lines = [line for line in (wd / V / "collections/vaswani/qrels.txt").read_text().splitlines()
             if line.split()[0] in set(ten)]
    (wd / "my-qrels.txt").write_text("\n".join(lines) + "\n")
    cfg = yaml.safe_load((wd / "cisys.yaml").read_text())
    cfg["version"] = "own"
    cfg["ci"]["systems"].update(mode="own", topics=str(wd / "my-topics.tsv"), qrels=str(wd / "my-qrels.txt"),
                                baseline="mine/myrun")
    path = wd / "own.yaml"
    path.write_text(yaml.safe_dump(cfg))
    snakemake(wd, "--cores", "2", "results/own/ci/systems_plan_vaswani.md", config=path)
    t = pd.read_csv(wd / "results/own/ci/systems_vaswani.csv", keep_default_na=False, na_values=[""])
    s = t[t.kind == "system"]
    assert (s.N == 50).all() and (s.n == 10).all() and s.truth.isna().all()
    pq = pd.read_csv(wd / "results/own/ci/systems/vaswani/per_query.csv", dtype={"query_id": str})
    assert set(pq.query_id) == set(fifty.query_id) and set(pq[pq.labelled].query_id) == set(ten)
    q = pd.read_csv(wd / "results/own/ci/systems/vaswani/queries.tsv", sep="\t", dtype=str).query_id.tolist()
    assert q == ten
    d = t[t.kind == "difference"]
    assert set(d.system) == {POP} and set(d.system_b) == {"mine/myrun"}  # the named baseline

def _scheduled(wd, cfg_path, change):
    cfg = yaml.safe_load(cfg_path.read_text())
    change(cfg["ci"]["systems"])
    p = cfg_path.with_name("changed.yaml")
    p.write_text(yaml.safe_dump(cfg))
    out = snakemake(wd, "-n", "--cores", "1", f"{V}/ci/systems_plan_vaswani.md", config=p).stdout
    return {line.split()[1].rstrip(":") for line in out.splitlines() if line.strip().startswith("rule ")}


@pytest.mark.parametrize("key, value, affected", [
    ("plan_widths", [0.5], {"ci_systems_plan"}),
    ("plan_deltas", [0.5], {"ci_systems_plan"}),
    ("baseline", "mine/myrun", {"ci_systems", "ci_systems_plan"}),
    ("measures", ["DCG@10"], {"ci_systems", "ci_systems_plan"}),
    ("seed", 2, {"ci_systems_pairs", "ci_systems_labels", "ci_systems", "ci_systems_plan"}),
])
def test_systems_keys_rerun_only_what_they_change(systems_run, key, value, affected):
    wd, *_ = systems_run
    assert _scheduled(wd, wd / "cisys.yaml", lambda s: s.update({key: value})) == affected


# ------------------------------------------------------------------ the shipped own-queries example, end to end
OWN = "results/own-queries"


@pytest.fixture(scope="module")
def own_run(tmp_path_factory, mirror):
    """config/own-queries.yaml as shipped (its qrels path is relative to the working directory: the repository's
    config folder is linked into the test's), its ci.systems targets."""
    wd = tmp_path_factory.mktemp("ownq")
    (wd / "config").symlink_to(REPO / "config")
    snakemake(wd, "--cores", "2", f"{OWN}/ci/systems_plan_vaswani.md", config=REPO / "config" / "own-queries.yaml")
    return wd


def test_the_own_queries_example_runs_end_to_end(own_run):
    wd = own_run
    qrels = read_qrels(wd / OWN / "collections/vaswani/qrels.txt")
    shipped = read_qrels(REPO / "config/own-queries/vaswani-qrels-10.txt")
    # the shipped qrels are vaswani's own judgments of the 10 queries the config's comment says (seed 0)
    ten = draw_queries(judged_queries(qrels), 10, 0)
    assert sorted(shipped.query_id.unique(), key=int) == ten
    pd.testing.assert_frame_equal(shipped.reset_index(drop=True),
                                  qrels[qrels.query_id.isin(ten)].reset_index(drop=True))
    t = pd.read_csv(wd / OWN / "ci/systems_vaswani.csv", keep_default_na=False, na_values=[""])
    s = t[t.kind == "system"]
    topics = pd.read_csv(wd / OWN / "collections/vaswani/topics.tsv", sep="\t", dtype=str)
    assert len(topics) == 93 and (s.n == 10).all() and (s.N == 93).all()
    assert s.truth.isna().all() and s.covered.isna().all()  # nothing observes the mean over all 93
    # 10 judged queries: PPI gives intervals; the bootstrap, PPI++ and CRC cannot hold their level and say so
    ok = s[s.method == "ppi"]
    assert np.isfinite(ok[["estimate", "low", "high"]].to_numpy()).all() and (ok.low <= ok.estimate).all()
    assert (ok.estimate <= ok.high).all() and len(ok) == 2 * 2
    no = s[s.method.isin(["bootstrap", "ppi++", "crc"])]
    assert len(no) == 3 * 2 * 2 and no.low.isna().all() and no.note.str.contains("cannot hold its 95% level").all()
    q = pd.read_csv(wd / OWN / "ci/systems/vaswani/queries.tsv", sep="\t", dtype=str).query_id.tolist()
    assert q == ten
    pairs = pd.read_csv(wd / OWN / "ci/systems/vaswani/pairs.tsv", sep="\t", dtype={"query_id": str})
    assert pairs.query_id.nunique() == 93 and pairs[~pairs.query_id.isin(ten)].relevance.isna().all()
    d = t[t.kind == "difference"]
    assert set(d.system) == {"qld_mu-1000"} and set(d.system_b) == {"bm25_k1-0.9_b-0.4"} and d.truth.isna().all()
    b = t[t.kind == "bias"]
    assert len(b) == 2 * 2 and not b.same_model.any()
    md = (wd / OWN / "ci/systems_vaswani.md").read_text()
    assert "10 judged of 93 queries" in md and "all human labels" not in md
    power = pd.read_csv(wd / OWN / "ci/systems_power_vaswani.csv")
    assert set(power.method) == {"bootstrap", "ppi", "ppi++"} and set(power.delta_relative) == {0.05, 0.1, 0.2}
