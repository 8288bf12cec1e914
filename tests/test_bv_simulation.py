"""BV-Test Sec. 3.4: simulated document collections (irrepro.papers.bv.simulation) and Tables 10-11 (Eq. 12-14)."""
import time

import numpy as np
import pandas as pd
import pytest

from irrepro.papers.bv import biasvariance as bv
from irrepro.papers.bv import simulated
from irrepro.papers.bv import simulation as sim
from irrepro.errors import InputError


def simulate_ap_naive(pos_rel, n_ret: int, R: int, k: int, rng: np.random.Generator,
                      unretrieved: str = "poisson") -> np.ndarray:
    """The literal procedure for one system–topic pair (draw ``N`` scores, sort, compute AP), ``k`` samples.

    Slow; the reference the vectorised ``simulation.simulate_ap`` is tested against (test-only code). Scores are the ranks
    (``−rank`` as score), so sorting reproduces the run's order.
    """
    pos_rel = np.asarray(pos_rel, int)
    r = len(pos_rel)
    nonrel = np.setdiff1d(np.arange(n_ret), pos_rel)
    out = np.zeros(k)
    for j in range(k):
        rs = min(rng.poisson(r), n_ret)
        relc = rng.choice(pos_rel, rs, replace=True) if rs and r else np.array([], int)
        nn = n_ret - rs if len(nonrel) else 0
        nonc = rng.choice(nonrel, nn, replace=True) if nn else np.array([], int)
        ranks = np.concatenate([relc, nonc]).astype(float)
        labels = np.concatenate([np.ones(len(relc)), np.zeros(len(nonc))])
        # stable sort by original rank; a relevant copy and a non-relevant one never share a rank
        o = np.argsort(ranks, kind="stable")
        lab = labels[o]
        if unretrieved == "poisson":
            Rs = rs + rng.poisson(R - r)
        elif unretrieved == "fixed":
            Rs = rs + R - r
        else:
            Rs = rs
        if Rs > 0:
            cum = np.cumsum(lab)
            out[j] = (lab * cum / np.arange(1, len(lab) + 1)).sum() / Rs
    return out


def _profile(pos, n, R):
    pos = np.asarray(pos)
    return sim.RelevanceProfile(["s"], ["1"], np.array([[n]]), np.array([[len(pos)]]),
                                pos[None, None, :] if len(pos) else np.full((1, 1, 1), -1), np.array([R]))


@pytest.mark.parametrize("unretrieved", sim.UNRETRIEVED)
def test_vectorised_simulation_matches_the_literal_procedure(unretrieved):
    """Same distribution as drawing N scores, sorting and computing AP: mean and sd agree within sampling error."""
    pos, n, R = [0, 3, 4, 10, 50, 200], 300, 9
    k = 20000
    a = sim.simulate_ap(_profile(pos, n, R), k, np.random.default_rng(2), unretrieved)[0, 0]
    b = simulate_ap_naive(pos, n, R, k, np.random.default_rng(3), unretrieved)
    se = np.sqrt(a.var() / k + b.var() / k)
    assert abs(a.mean() - b.mean()) < 4 * se
    assert a.std() == pytest.approx(b.std(), rel=0.05)
    # quantiles too (the whole distribution, not just two moments)
    assert np.quantile(a, [0.1, 0.5, 0.9]) == pytest.approx(np.quantile(b, [0.1, 0.5, 0.9]), abs=0.02)


def test_simulation_edge_cells():
    rng = np.random.default_rng(0)
    # no relevant document retrieved: AP 0 in every sample (r_s ~ Poisson(0) = 0)
    assert (sim.simulate_ap(_profile([], 50, 4), 10, rng)[0, 0] == 0).all()
    # every retrieved document relevant and R_s = r_s: AP 1 whenever a relevant copy is drawn
    y = sim.simulate_ap(_profile([0, 1, 2], 3, 3), 500, rng, "retrieved")[0, 0]
    assert set(np.unique(y)) <= {0.0, 1.0} and y.mean() > 0.9
    # a single relevant document at rank 1 of 1: AP = r_s / R_s, r_s capped at N = 1
    y = sim.simulate_ap(_profile([0], 1, 1), 500, rng, "fixed")[0, 0]
    assert set(np.unique(y)) <= {0.0, 1.0}
    # an empty list (topic missing from a run)
    assert (sim.simulate_ap(_profile([], 0, 5), 5, rng)[0, 0] == 0).all()


def _runs_and_qrels(tmp_path):
    """Two small runs in TREC format, with tied scores, one missing a topic, and qrels with graded labels."""
    run_a = ["1 Q0 d1 1 3.0 a", "1 Q0 d2 2 2.0 a", "1 Q0 d3 3 2.0 a", "1 Q0 d4 4 1.0 a", "1 Q0 d9 5 0.5 a",
             "2 Q0 d5 1 5.0 a", "2 Q0 d6 2 4.0 a", "2 Q0 d7 3 3.0 a"]
    run_b = ["1 Q0 d4 1 9.0 b", "1 Q0 d3 2 8.0 b", "1 Q0 d1 3 1.0 b"]  # no topic 2
    qrels = ["1 0 d1 1", "1 0 d3 2", "1 0 d8 1", "1 0 d2 0", "2 0 d6 1", "2 0 d7 2", "3 0 d1 0"]
    for name, lines in (("a.run", run_a), ("b.run", run_b), ("qrels.txt", qrels)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    from irrepro.core.trec import read_qrels
    runs = {s: sim.read_scored_run(tmp_path / f"{s}.run") for s in ("a", "b")}
    return runs, read_qrels(tmp_path / "qrels.txt")


def test_profile_and_real_ap_agree_with_trec_eval(tmp_path):
    from irrepro.core.evaluation import evaluate_run
    runs, qrels = _runs_and_qrels(tmp_path)
    prof = sim.relevance_profile(runs, qrels)
    assert prof.topics == ["1", "2", "3"]
    assert prof.R.tolist() == [3, 2, 0]
    # trec_eval's order: ties by docno descending, so d3 (rank 2) before d2 in run a
    assert prof.pos[0, 0, :2].tolist() == [0, 1] and prof.r[0].tolist() == [2, 2, 0]
    assert prof.n_ret.tolist() == [[5, 3, 0], [3, 0, 0]]
    ap = sim.average_precision(prof)
    for i, s in enumerate(prof.systems):
        e = evaluate_run(runs[s], qrels, ["AP"]).set_index("topic")["value"]
        for j, t in enumerate(prof.topics):
            if prof.R[j] > 0:
                assert ap[i, j] == pytest.approx(e.get(t, 0.0)), (s, t)
    assert not prof.useful[2] and prof.useful[:2].all()
    # grade threshold 2: only d3 and d7 relevant
    p2 = sim.relevance_profile(runs, qrels, rel_threshold=2)
    assert p2.R.tolist() == [1, 1, 0]
    # depth cut
    assert sim.relevance_profile(runs, qrels, depth=2).n_ret.tolist() == [[2, 2, 0], [2, 0, 0]]


def test_unsorted_run_is_ranked_like_trec_eval(tmp_path):
    runs, qrels = _runs_and_qrels(tmp_path)
    shuffled = {s: r.sample(frac=1.0, random_state=1) for s, r in runs.items()}
    a, b = sim.relevance_profile(runs, qrels), sim.relevance_profile(shuffled, qrels)
    assert (a.pos == b.pos).all() and (a.n_ret == b.n_ret).all()


def test_bad_run_file_names_file_and_line(tmp_path):
    p = tmp_path / "bad.run"
    p.write_text("1 Q0 d1 1 3.0 a\n1 Q0 d2 2 nan a\n")
    with pytest.raises(InputError, match=r"bad\.run:2: score is NaN"):
        sim.read_scored_run(p)
    p.write_text("1 Q0 d1 1 3.0 a\n1 Q0 d1 2 2.0 a\n")
    with pytest.raises(InputError, match="twice"):
        sim.read_scored_run(p)


def test_eq12_identity_and_tables_10_11():
    rng = np.random.default_rng(5)
    Y = rng.random((6, 4, 50))
    b2, v, c = bv.per_topic_bias_variance(Y)
    mse = ((Y - c[None, :, None]) ** 2).mean(axis=2)
    assert b2 + v == pytest.approx(mse)                           # Eq. 12
    assert c == pytest.approx(Y.max(axis=0).mean(axis=1))         # c = mean of y_T,j
    r = bv.averaged_tradeoff(b2, v)                               # Eq. 13-14 then Pearson
    assert r == pytest.approx(np.corrcoef(b2.mean(1), v.mean(1))[0, 1])
    t = bv.per_topic_tradeoff(b2, v)
    assert t["pearson"].tolist() == pytest.approx([np.corrcoef(b2[:, j], v[:, j])[0, 1] for j in range(4)])


def test_per_topic_table_and_bad_input(tmp_path):
    runs, qrels = _runs_and_qrels(tmp_path)
    runs["c"] = runs["a"].assign(score=-runs["a"]["score"])   # a third system: the reversed ranking
    prof = sim.relevance_profile(runs, qrels)
    df = sim.per_topic_table(prof, 30, np.random.default_rng(1))
    assert list(df.columns) == sim.PER_TOPIC_COLUMNS and len(df) == 9
    assert not df.isna().any().any()
    row = simulated.table10_row(df)
    assert row["useful_topics"] == 2 and -1 <= row["pearson"] <= 1
    t11 = simulated.table11_rows(df)
    assert t11["topic"].tolist() == ["1", "2"]                     # topic 3 (no relevant document) left out
    # topic 2: system b has no list (AP 0 always) -> still defined across the three systems, or a reason
    assert all((p is not None) or n for p, n in zip(t11["pearson"], t11["note"]))
    # a single system: Table 10 undefined -> InputError, not NaN
    with pytest.raises(InputError, match="at least 2 systems"):
        simulated.table10_row(df[df["system"] == "a"])
    # k < 2, unknown denominator, threshold 0
    with pytest.raises(InputError, match="k must be >= 2"):
        sim.simulate_ap(prof, 1, np.random.default_rng(0))
    with pytest.raises(InputError, match="unretrieved"):
        sim.simulate_ap(prof, 5, np.random.default_rng(0), "all")
    with pytest.raises(InputError, match="threshold"):
        sim.relevance_profile(runs, qrels, rel_threshold=0)
    with pytest.raises(InputError, match="NaN"):
        bv.per_topic_bias_variance(np.full((2, 2, 3), np.nan))


def test_constant_topic_in_table11_is_reported_not_nan():
    # two systems identical on topic 1 -> Bias² and Var constant across systems: undefined, with the reason
    df = pd.DataFrame({"system": ["a", "b", "a", "b"], "topic": ["1", "1", "2", "2"], "R": 1, "r": 1, "n_ret": 5,
                       "ap": 0.5, "mean": [0.5, 0.5, 0.2, 0.6], "bias2": [0.01, 0.01, 0.16, 0.0],
                       "var": [0.02, 0.02, 0.01, 0.03], "c": 0.6, "useful": True})
    t = simulated.table11_rows(df)
    assert t.loc[0, "pearson"] is None and "constant" in t.loc[0, "note"]
    assert t.loc[1, "pearson"] == pytest.approx(-1.0)
    s = simulated.table11_summary(t)
    assert s["defined"] == 1 and s["share_negative"] == 1.0


def test_seeded_and_fast():
    """k = 100 collections per topic for 30 systems x 50 topics x 1000 documents (r ~ 20 relevant each) takes
    seconds; the same seed gives the same numbers, another seed different ones."""
    rng = np.random.default_rng(0)
    S, T, N = 30, 50, 1000
    r = rng.integers(0, 40, (S, T))
    pos = np.full((S, T, 40), -1)
    for i in range(S):
        for j in range(T):
            pos[i, j, :r[i, j]] = np.sort(rng.choice(N, r[i, j], replace=False))
    prof = sim.RelevanceProfile([f"s{i}" for i in range(S)], [str(j) for j in range(T)], np.full((S, T), N), r, pos,
                                r.max(axis=0) + 5)
    t = time.process_time()
    y1 = sim.simulate_ap(prof, 100, np.random.default_rng(7))
    elapsed = time.process_time() - t
    assert y1.shape == (S, T, 100) and np.isfinite(y1).all() and (y1 >= 0).all() and (y1 <= 1).all()
    assert elapsed < 15, f"simulation took {elapsed:.1f} s CPU"
    assert (sim.simulate_ap(prof, 100, np.random.default_rng(7)) == y1).all()
    assert not (sim.simulate_ap(prof, 100, np.random.default_rng(8)) == y1).all()


def test_shared_samples_have_the_same_margins_and_couple_systems(tmp_path):
    """shared=True: one system's AP has the distribution of the independent simulation (Poisson splitting), and
    two systems retrieving the same relevant documents move together across samples."""
    prof = _profile([0, 3, 4, 10, 50, 200], 300, 9)
    prof.rel_id, prof.U = np.arange(6)[None, None, :], np.array([6])
    k = 20000
    for u in sim.UNRETRIEVED:
        a = sim.simulate_ap(prof, k, np.random.default_rng(2), u, shared=True)[0, 0]
        b = sim.simulate_ap(prof, k, np.random.default_rng(3), u)[0, 0]
        assert abs(a.mean() - b.mean()) < 4 * np.sqrt(a.var() / k + b.var() / k), u
        assert np.quantile(a, [0.1, 0.5, 0.9]) == pytest.approx(np.quantile(b, [0.1, 0.5, 0.9]), abs=0.02)
    # two systems, all retrieved documents relevant, the same documents: identical APs per sample when shared
    two = sim.RelevanceProfile(["a", "b"], ["1"], np.array([[3], [3]]), np.array([[3], [3]]),
                               np.array([[[0, 1, 2]], [[0, 1, 2]]]), np.array([5]),
                               np.array([[[0, 1, 2]], [[2, 1, 0]]]), np.array([3]))
    y = sim.simulate_ap(two, 200, np.random.default_rng(0), "poisson", shared=True)
    assert (y[0, 0] == y[1, 0]).all() and y[0, 0].std() > 0
    y = sim.simulate_ap(two, 200, np.random.default_rng(0), "poisson")
    assert not (y[0, 0] == y[1, 0]).all()
    # the profile numbers each relevant document once per topic, whichever system retrieved it
    runs, qrels = _runs_and_qrels(tmp_path)
    runs["c"] = runs["a"].assign(score=-runs["a"]["score"])
    p = sim.relevance_profile(runs, qrels)
    a_ids = p.rel_id[0, 0, :p.r[0, 0]].tolist()              # system a, topic 1: d3 then d1
    c_ids = p.rel_id[2, 0, :p.r[2, 0]].tolist()              # system c (reversed): d1 then d3
    assert a_ids == c_ids[::-1] and p.U.tolist() == [2, 2, 0]
