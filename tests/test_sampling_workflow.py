"""The sampling paper's workflow layer: plan, tables, claims, figure and reference rows (fast, tiny SYNTH)."""
import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from irrepro.core.verify import load_reference
from irrepro.errors import InputError
from irrepro.papers.sampling import claims, plan, plots, tables, trec

REPO = Path(__file__).resolve().parents[1]
SYNTH = {"users": 40, "items": 30, "alpha": [0.54, 0.25, 0.175, 0.03, 0.005], "dirichlet": "per_pair",
         "gain": "linear", "log_base": np.e, "systems": ["OPT", "REV-10", "SHIFT-5", "SHIFT-7"]}


def test_plan_resolves_and_checks_trec_collections():
    spine = SimpleNamespace(collections=["vaswani", "cranfield"])
    p = plan.resolve({"sampling": {"trec": {"collections": ["vaswani"]}}}, spine)
    assert p.trec_collections == ("vaswani",) and p.data_sets == ("synth", "vaswani")
    with pytest.raises(InputError, match=r"sampling\.trec\.collections: 'msmarco' is not a retrieved collection"):
        plan.resolve({"sampling": {"trec": {"collections": ["msmarco"]}}}, spine)


def test_synth_tables_and_claims():
    df = tables.synth_experiment(SYNTH, seed=1, budget_per_query=5, trials=20, alpha=0.05)
    assert list(df.system) == SYNTH["systems"]
    t2, t3, t4 = tables.synth_markdown(df)
    assert t2.startswith("| system | true | shallow") and "sd_q_unif" in t3 and "coverage" in t4
    v = claims.synth_values(df, trials=20)
    assert v["true/OPT"]["value"] == pytest.approx(df.loc[0, "true"])
    assert v["true/OPT"]["se"] == pytest.approx(2 ** 0.5 * df.loc[0, "true_se"])  # the verify tolerance's s.e.
    assert v["claim/true_order_as_paper"] is False  # not the paper's five systems
    assert isinstance(v["claim/u_hat_unbiased"], bool) and isinstance(v["claim/coverage_near_95"]["value"], bool)
    assert v["claim/shallow_pool_biased_low"] is bool((df.shallow < 0.5 * df.true).all())


def test_claims_thresholds_on_hand_made_rows():
    df = pd.DataFrame({"system": ["a", "b"], "true": [10.0, 5.0], "u_hat_mean": [10.2, 5.0], "u_hat_sd": [1.0, 1.0],
                       "sd_q_star": [1, 1], "sd_q_p": [2, 2], "sd_q_unif": [3, 3], "deep_sd": [2.0, 0.5]})
    # se = 1 / sqrt(4) = 0.5: |10.2 - 10| <= 1.5
    v = claims.trec_values("x", df, trials=4)
    assert v == {"x/claim/u_hat_unbiased": True, "x/claim/q_star_lt_q_p_lt_q_unif": True,
                 "x/claim/q_star_sd_below_deep_pool": False}
    df.loc[0, "u_hat_mean"] = 11.6
    assert claims.trec_values("x", df, trials=4)["x/claim/u_hat_unbiased"] is False


def test_comparative_on_synth_and_values():
    u, ranks, Ps, approx = tables.synth_matrices(SYNTH, seed=2)
    var, table, acc = tables.comparative(u, Ps, approx, window=3, budgets_per_query=[1, 4], accuracy_trials=5,
                                         seed=2)
    assert list(table.table) == ["table5", "table5", "table6", "table6", "table7", "table7"]
    assert list(acc.budget.unique()) == [40, 160]
    v = claims.comparative_values("synth", table, var)
    assert v["synth/table5/qstar/true_u"] == var["pair_qstar/true"]
    assert v["synth/claim/qstar_beats_naive_everywhere"] == all(
        var[f"{p}_qstar/{k}"] < var[f"{p}_naive/{k}"] for p in ("pair", "base", "rank") for k in ("approx", "true"))
    assert tables.comparative_markdown(table, "synth").startswith("Σ(Q)·n / |X| on synth (Tables 5–7")
    fig = plots.fig_accuracy(acc, "synth")
    assert len(fig.axes) == 3 and fig.axes[2].get_title() == "synth: Fig 3: Kendall's τ"


def test_trec_substitute_and_single_system():
    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    runs = {s: pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": docs, "rank": [1, 2, 1, 2]})
            for s, docs in (("s1", ["a", "b", "c", "d"]), ("s2", ["b", "a", "d", "c"]), ("s3", ["a", "e", "d", "e2"]))}
    u, ranks, Ps, approx = tables.trec_substitute(runs, qrels, depth=2)
    assert u.shape[0] == 2 and set(ranks) == {"s1", "s2", "s3"}
    assert np.all(approx["s1"][ranks["s1"] >= 2] == 0) and np.allclose(Ps["s1"], trec.target_depth(ranks["s1"], 2))
    t24 = tables.trec_single_system(u, ranks, seed=0, budget_per_query=1, trials=5, alpha=0.05, depth=2)
    assert len(t24) == 3 and {"u_hat_mean", "deep_sd", "sd_q_unif"} <= set(t24.columns)


def test_reference_rows_unchanged_by_grouping():
    """The grouped reference file keeps the items, paper values and data of the flat rows it replaced
    (config/reference/sampling.yaml, 81 rows); tolerances, kinds and bases were rewritten since."""
    rows = load_reference(REPO / "workflow" / "resources" / "reference" / "sampling.yaml")
    assert len(rows) == 81
    digest = hashlib.sha256(json.dumps([[r["item"], r["paper"], r.get("data")] for r in rows]).encode()).hexdigest()
    assert digest == "41b9a0fad40705f740e9038aee132e25ebbf74de4078b0f90e9bcb23fe265c78"
