"""Intervals around any run's metric with few human-labelled queries (irrepro.papers.ci.systems / sample_size): PPI's
coverage on synthetic data with a known truth, the no-signal fallback, PPI++'s λ, the calibration mapping fitted on
the labelled queries only, and the systems table on small runs against ir_measures."""
import copy

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.core.evaluation import evaluate_run
from irrepro.errors import InputError
from irrepro.labels import calibrate as C
from irrepro.papers.ci import finite, sample_size, systems
from irrepro.papers.ci.bootstrap import bootstrap_ci
from irrepro.papers.ci.calibration import calibrate_crc, crc_interval
from irrepro.papers.ci.experiment import covers
from irrepro.papers.ci.ppi import ppi_mean_ci, ppi_power_lambda

ALPHA = 0.1
SEEDS = 2000


def _binomial_tol(p, R):
    """Three binomial standard errors of a coverage rate estimated from R independent seeds (a true-level
    interval lands outside with probability 0.0027), plus 0.005 for the normal approximation of the interval
    itself at n = 100 (z instead of t_{99}: 0.900 vs 0.897 nominal)."""
    return 3 * np.sqrt(p * (1 - p) / R) + 0.005


def _synthetic(R, n, N_u, signal, seed):
    """R independent data sets: human values U ~ Gamma(2, 1) (mean 2, the known truth), predictions
    ``signal·(0.8 U + 0.3) + noise`` (biased), n labelled and N_u unlabelled queries each."""
    rng = np.random.default_rng(seed)
    u = rng.gamma(2.0, 1.0, size=(R, n + N_u))
    pred = signal * (0.8 * u + 0.3) + rng.normal(0, 0.5, size=u.shape) + (1 - signal) * 2.0
    return u[:, :n], pred[:, :n], pred[:, n:]


def _coverage(low, high, truth=2.0):
    return float(covers(low, high, truth).mean())


def test_ppi_covers_within_binomial_error_over_2000_seeds():
    yt, yp, yu = _synthetic(SEEDS, 100, 1000, signal=1.0, seed=1)
    tol = _binomial_tol(1 - ALPHA, SEEDS)
    for lam in (1.0, "tuned"):
        ci = ppi_mean_ci(yt, yp, yu, ALPHA, lam=lam)
        cov = _coverage(ci.low, ci.high)
        assert abs(cov - (1 - ALPHA)) <= tol, (lam, cov, tol)
    # the check can fail: the labels' mean alone (no correction by the n human values) is biased by 0.1
    naive = yu.mean(1)
    z = stats.norm.ppf(1 - ALPHA / 2)
    se = yu.std(1, ddof=1) / np.sqrt(yu.shape[1])
    assert abs(_coverage(naive - z * se, naive + z * se) - (1 - ALPHA)) > tol


def test_useless_labels_ppi_still_covers_and_falls_back_to_the_human_width():
    yt, yp, yu = _synthetic(SEEDS, 100, 1000, signal=0.0, seed=2)
    tol = _binomial_tol(1 - ALPHA, SEEDS)
    classic = ppi_mean_ci(yt, yp, yu, ALPHA, lam=0.0)  # the CLT interval of the n human values
    boot = bootstrap_ci(yt[:200], ALPHA, 2000, rng=0)
    for lam in (1.0, "tuned"):
        ci = ppi_mean_ci(yt, yp, yu, ALPHA, lam=lam)
        assert abs(_coverage(ci.low, ci.high) - (1 - ALPHA)) <= tol
    tuned = ppi_mean_ci(yt, yp, yu, ALPHA, lam="tuned")
    ratio = (tuned.high - tuned.low) / (classic.high - classic.low)
    # λ̂ ≈ 0 when the predictions carry no signal: the width is the human-only width, up to λ̂'s noise (λ̂ ~ 0.1 at
    # n = 100 costs λ̂² s²_pred/s²_U ≈ 1% of the variance)
    assert 0.97 <= np.median(ratio) <= 1.03
    # λ = 1 pays for the noise of the predictions: wider than the human-only interval by sqrt(1 + s²_pred/s²_U)
    plain = ppi_mean_ci(yt, yp, yu, ALPHA)
    assert np.median((plain.high - plain.low) / (classic.high - classic.low)) > 1.05
    # and the bootstrap's width is the same human-only width (basic bootstrap vs CLT: within 10% at n = 100)
    r = (boot.high - boot.low) / (classic.high - classic.low)[:200]
    assert 0.9 <= np.median(r) <= 1.1


def test_useless_labels_crc_still_covers():
    """CRC with labels that carry no signal (every document's distribution the same noise, drawn independently
    of the human grades): the interval stays valid (conservative), over 500 seeds."""
    R, n, N_u, depth = 500, 20, 200, 5
    w = 1 / np.log2(np.arange(2, depth + 2))
    hits, ratio = [], []
    for r in range(R):
        rng = np.random.default_rng(r)
        grades = rng.random((n + N_u, depth)) < 0.3
        u = (grades * w).sum(1)
        p1 = rng.uniform(0.05, 0.95, size=(n + N_u, depth))
        P = np.stack([1 - p1, p1], -1)
        batches = rng.integers(0, n, size=(500, n))
        cal = calibrate_crc(u[:n], P[:n], batches, ALPHA, weights=np.broadcast_to(w, (n, depth)))
        _, lo, hi = crc_interval(P[n:], cal, weights=np.broadcast_to(w, (N_u, depth)))
        hits.append(bool(covers(lo, hi, u[n:].mean())))
        b = bootstrap_ci(u[:n], ALPHA, 1000, rng=r)
        ratio.append((hi - lo) / (b.high - b.low))
    cov = np.mean(hits)
    assert cov >= 1 - ALPHA - 3 * np.sqrt(ALPHA * (1 - ALPHA) / R), cov
    # the width falls back to about the human-only (bootstrap) width: its calibration can only rely on the n human
    # values (median ratio 1.20 measured; the band excludes a collapse below, or a blow-up to the metric's range)
    assert 0.8 <= np.median(ratio) <= 1.5, np.median(ratio)


def test_lambda_one_is_the_papers_arithmetic_bit_for_bit_and_lambda_zero_the_human_clt():
    rng = np.random.default_rng(0)
    yt, yp, yu = rng.random(30), rng.random(30), rng.random(200)
    a = ppi_mean_ci(yt, yp, yu, 0.05)
    b = ppi_mean_ci(yt, yp, yu, 0.05, lam=1)
    pred = np.concatenate([yp, yu])
    err = yt - yp
    est = pred.mean() + err.mean()
    se = np.sqrt(pred.var(ddof=1) / pred.size + err.var(ddof=1) / 30)
    for x in (a, b):
        assert x.estimate == est and x.se == se
    c = ppi_mean_ci(yt, yp, yu, 0.05, lam=0.0)
    assert np.isclose(c.estimate, yt.mean()) and np.isclose(c.se, yt.std(ddof=1) / np.sqrt(30))
    with pytest.raises(InputError):
        ppi_mean_ci(yt, yp, yu, lam=1.5)
    with pytest.raises(InputError):
        ppi_mean_ci(yt, yp, yu, lam="best")


def test_power_lambda_minimises_the_variance():
    rng = np.random.default_rng(3)
    u = rng.normal(size=50)
    p = 0.5 * u + rng.normal(size=50)
    pa = np.concatenate([p, 0.5 * rng.normal(size=500) + rng.normal(size=500)])
    lam = float(ppi_power_lambda(u, p, pa))
    grid = np.linspace(0, 1, 101)
    se = [float(ppi_mean_ci(u, p, pa[50:], lam=g).se) for g in grid]
    assert abs(grid[int(np.argmin(se))] - lam) <= 0.02


# ------------------------------------------------------------------------------- calibration on labelled queries
def _scores(seed=0, Q=30, per=8):
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(Q)], per)
    y = rng.integers(0, 2, size=q.size)
    s = y + rng.normal(0, 0.7, size=q.size)
    return s, y.astype(float), q


def test_an_evaluated_querys_human_grades_never_reach_the_mapping():
    s, y, q = _scores()
    fit = [f"q{i}" for i in range(10)]
    base, models = C.crossfit(s, y, q, 2, folds=5, seed=0, fit_queries=fit)
    assert np.isfinite(base).all() and [m["fold"] for m in models] == [0, 1, 2, 3, 4]
    assert all(m["train_queries"] == 8 for m in models)  # 10 fit queries, 2 in each fold
    evaluated = ~np.isin(q, fit)
    # the evaluated queries are labelled by the same five models as the fit ones (their mean: cross-prediction),
    # not by a sixth fitted on all ten fit queries, whose mapping no fit query's label ever saw
    mix = np.mean([C.apply_ordinal(m, s[evaluated]) for m in models], axis=0)
    assert np.allclose(base[evaluated], mix, rtol=0, atol=1e-15)
    all_ten = C.apply_ordinal(C.fit_ordinal(s[~evaluated], y[~evaluated].astype(int), 2), s[evaluated])
    assert not np.allclose(base[evaluated], all_ten, rtol=0, atol=1e-6)
    # any grades (even none) for the evaluated queries: every label is the same, bit for bit
    y_nan = np.where(evaluated, np.nan, y)
    same, _ = C.crossfit(s, y_nan, q, 2, folds=5, seed=0, fit_queries=fit)
    assert np.array_equal(same, base)
    y_flip = np.where(evaluated, 1 - y, y)
    same, _ = C.crossfit(s, y_flip, q, 2, folds=5, seed=0, fit_queries=fit)
    assert np.array_equal(same, base)
    # the check can fail: without fit_queries the flipped grades move the labels
    a, _ = C.crossfit(s, y, q, 2, folds=5, seed=0)
    b, _ = C.crossfit(s, y_flip, q, 2, folds=5, seed=0)
    assert not np.allclose(a, b)
    # a labelled query's own grades reach the evaluated queries' mapping, never its own labels (out of fold)
    y2 = y.copy()
    y2[q == "q3"] = 1 - y2[q == "q3"]
    moved, _ = C.crossfit(s, y2, q, 2, folds=5, seed=0, fit_queries=fit)
    assert np.array_equal(moved[q == "q3"], base[q == "q3"])
    assert not np.allclose(moved[evaluated], base[evaluated])


def test_fit_queries_without_pairs_or_grades_are_errors():
    s, y, q = _scores()
    with pytest.raises(InputError, match="none of the fit_queries"):
        C.crossfit(s, y, q, 2, fit_queries=["nope"])
    y[q == "q1"] = np.nan
    with pytest.raises(InputError, match="no human grade"):
        C.crossfit(s, y, q, 2, fit_queries=["q1", "q2", "q3", "q4", "q5"])


def test_crossfit_without_fit_queries_is_unchanged():
    s, y, q = _scores(1)
    a, ma = C.crossfit(s, y, q, 2, folds=5, seed=2)
    b, mb = C.crossfit(s, y, q, 2, folds=5, seed=2, fit_queries=sorted(set(q)))
    assert np.array_equal(a, b) and ma == mb


# ------------------------------------------------------------------------------------------- the systems table
def _toy(seed=0, Q=40, docs=30):
    rng = np.random.default_rng(seed)
    rows, runs = [], {}
    for qi in range(Q):
        for d in range(docs):
            g = int(rng.random() < 0.25) + int(rng.random() < 0.1)
            if rng.random() < 0.8:
                rows.append((str(qi), f"d{d}", g))
    qrels = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    grade = {(q, d): g for q, d, g in rows}
    for name, quality in (("good", 1.5), ("poor", 0.3)):
        r = []
        for qi in range(Q):
            sc = [quality * grade.get((str(qi), f"d{d}"), 0) + rng.normal() for d in range(docs)]
            for rank, d in enumerate(np.argsort(sc)[::-1], 1):
                r.append((str(qi), f"d{d}", rank, float(-rank)))
        runs[name] = pd.DataFrame(r, columns=["query_id", "doc_id", "rank", "score"])
    labels = []
    for qi in range(Q):
        for d in range(docs):
            g = min(grade.get((str(qi), f"d{d}"), 0), 2)
            p = np.full(3, 0.1)
            p[g] += 0.7
            labels.append((str(qi), f"d{d}", *p))
    labels = pd.DataFrame(labels, columns=["query_id", "doc_id", "p_0", "p_1", "p_2"])
    return runs, qrels, labels


def test_systems_table_truth_is_ir_measures_and_the_intervals_are_sane():
    runs, qrels, labels = _toy()
    lq = systems.draw_queries(systems.judged_queries(qrels), 10, seed=1)
    table, diffs, per_query, _ = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10", "nDCG@10"],
                                                          alpha=0.05, n_boot=2000, n_batches=2000, seed=0)
    assert set(table.method) == set(systems.METHODS) and len(table) == 2 * 2 * 4
    import ir_measures
    ndcg = ir_measures.nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10  # gain 2^r - 1, as DCG@10 (ir_measures: linear)
    for name, run in runs.items():
        ev = evaluate_run(run, qrels, ["DCG@10"]).groupby("measure")["value"].mean()
        t = table[(table.system == name) & (table.measure == "DCG@10")]
        assert np.allclose(t.truth, ev["DCG@10"])
        q = qrels.rename(columns={"relevance": "relevance"})
        nd = ir_measures.calc_aggregate([ndcg], q, run[["query_id", "doc_id", "score"]])[ndcg]
        t = table[(table.system == name) & (table.measure == "nDCG@10")]
        assert np.allclose(t.truth, nd)
    # 10 judged queries are too few for CRC and the bootstrap to hold their 95% level: no interval, and the note
    # says why
    crc = table[table.method == "crc"]
    assert crc.low.isna().all() and crc.note.str.contains("cannot hold its 95% level with n = 10").all()
    boot = table[table.method == "bootstrap"]
    assert boot.low.isna().all() and boot.note.str.contains("resampling n = 10 judged queries cannot hold").all()
    tuned = table[table.method == "ppi++"]  # PPI++ needs 40 (finite.PPI_TUNED_MIN_QUERIES)
    assert tuned.low.isna().all() and tuned.note.str.contains("a λ fitted on n = 10 judged queries cannot hold").all()
    # PPI's estimate lies inside its interval
    t = table[table.method == "ppi"]
    assert (t.low <= t.estimate + 1e-12).all() and (t.estimate <= t.high + 1e-12).all()
    assert (t.low < t.high).all()
    assert (table.n == 10).all() and (table.N == qrels.query_id.nunique()).all()
    # PPI's estimate: the labels' mean over all N corrected by the mean error on the 10 labelled queries
    pq = per_query[(per_query.system == "good") & (per_query.measure == "DCG@10")]
    p = table[(table.system == "good") & (table.measure == "DCG@10") & (table.method == "ppi")]
    lab = pq[pq.labelled]
    assert np.isclose(p.estimate.iloc[0], pq.u_pred.mean() + (lab.u_true - lab.u_pred).mean())
    # good labels: PPI is narrower than the bootstrap, and the difference poor − good (the baseline, listed first)
    # excludes 0 and is negative, as its truth
    # (narrower than the t interval of the 10 human values alone)
    for (s, m), pq in per_query.groupby(["system", "measure"]):
        h = pq[pq.labelled].u_true.to_numpy()
        human = 2 * stats.t.ppf(0.975, 9) * h.std(ddof=1) / np.sqrt(10) * np.sqrt(1 - 10 / len(pq))
        w = table[(table.system == s) & (table.measure == m) & (table.method == "ppi")].width.iloc[0]
        assert w < human, (s, m, w, human)
    d = diffs[(diffs.measure == "DCG@10") & (diffs.method == "ppi")]
    assert len(d) == 1 and (d.system_a.iloc[0], d.system_b.iloc[0]) == ("poor", "good")
    assert d.excludes_zero.iloc[0] and d.estimate.iloc[0] < 0 and d.truth.iloc[0] < 0


def test_systems_intervals_do_not_read_the_evaluated_queries_grades():
    """Changing the qrels of queries that are not labelled moves only the truth, never an interval."""
    runs, qrels, labels = _toy(2)
    lq = systems.draw_queries(systems.judged_queries(qrels), 20, seed=3)  # 20: enough for a CRC interval
    a, *_ = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10", "nDCG@10"], n_boot=500, n_batches=500)
    q2 = qrels.copy()
    q2.loc[~q2.query_id.isin(lq), "relevance"] = 1 - q2.loc[~q2.query_id.isin(lq), "relevance"].clip(upper=1)
    b, *_ = systems.evaluate_systems(runs, q2, labels, lq, ["DCG@10", "nDCG@10"], n_boot=500, n_batches=500)
    cols = ["estimate", "low", "high"]
    assert np.isfinite(a[a.method != "ppi++"][cols].to_numpy()).all()  # PPI++ has none from 20 judged queries
    assert np.array_equal(a[cols].to_numpy(), b[cols].to_numpy(), equal_nan=True)
    assert not np.allclose(a.truth, b.truth)


def test_draw_queries_is_seeded_and_checked():
    qs = [str(i) for i in range(20)]
    assert systems.draw_queries(qs, 5, 1) == systems.draw_queries(qs, 5, 1)
    assert systems.draw_queries(qs, 5, 1) != systems.draw_queries(qs, 5, 2)
    with pytest.raises(InputError):
        systems.draw_queries(qs, 19, 0)
    with pytest.raises(InputError, match="DCG@k"):
        systems.parse_measure("AP")


def test_planning_widths_and_n_needed_agree_with_the_intervals():
    """The planned width at m = n is the interval's width at n; n_needed of that width is n; the width falls to 0
    at m = N and every target is reachable by m <= N (the old planning, on the variance of a mean over infinitely
    many queries, had a floor: 'inf' for a small target)."""
    yt, yp, yu = _synthetic(1, 40, 60, signal=1.0, seed=5)
    yt, yp, yu = yt[0], yp[0], yu[0]
    pa = np.concatenate([yp, yu])
    N = pa.size
    terms = sample_size.variance_terms(yt, yp, pa)
    curve = sample_size.width_curve(terms, [40, N], N, alpha=0.05)
    for lam, meth in ((1.0, "ppi"), ("tuned", "ppi++")):
        ci = finite.ppi_interval(yt, yp, pa, 0.05, lam=lam)
        w = curve[(curve.method == meth) & (curve.m == 40)].width.iloc[0]
        # PPI: the same formula; PPI++: the plug-in variance against the interval's jackknife one (within 10%)
        assert np.isclose(w, ci.high - ci.low, rtol=1e-12 if meth == "ppi" else 0.1), (meth, w, ci)
    assert (curve[curve.m == N].width == 0).all()
    ci = finite.ppi_interval(yt, yp, pa, 0.05)
    need = sample_size.n_needed(terms, float(ci.high - ci.low) * (1 + 1e-9), N, alpha=0.05)
    assert need["ppi"] == 40
    assert need["bootstrap"] > need["ppi"]
    assert sample_size.n_needed(terms, 1e-6, N)["ppi"] == N


def test_plan_markdown_keeps_every_row_and_says_what_the_target_is():
    need = pd.DataFrame([{"system": "bm25", "measure": "DCG@10", "target_relative": rw, "target_width": rw * 2.0,
                          "method": meth, "n_needed": k, "n": 10, "N": 93, "width_at_n": 0.8}
                         for rw, meth, k in ((0.1, "ppi", 54.0), (0.1, "bootstrap", 90.0), (0.3, "crc", 11.0))])
    md = sample_size.plan_markdown(need, "vaswani", alpha=0.05)
    rows = [line for line in md.splitlines() if line.startswith("| bm25 ")]
    assert len(rows) == 3 and "| 54 |" in rows[0] and "| 90 |" in rows[1] and rows[2].endswith("| 0.8 |")
    assert "n = 10 labelled" in md and "mean over the N = 93 queries" in md and "95% interval" in md
    assert "(1 − m/N)" in md and "at most N" in md
    assert "90% interval" in sample_size.plan_markdown(need, "vaswani", alpha=0.1)


def test_systems_markdown_names_each_estimate_and_shows_crc_centre(tmp_path):
    """CRC's estimate column is its interval's centre, and the Markdown says what each estimate is: no estimate
    outside its own interval, no unexplained mark."""
    runs, qrels, labels = _toy(4)
    lq = systems.draw_queries(systems.judged_queries(qrels), 20, seed=2)  # 20: enough for a CRC interval
    table, diffs, _, bias = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10"], n_boot=200, n_batches=200)
    path = tmp_path / "s.md"
    systems.write_systems_md(table, diffs, "vaswani", "minilm", lq, 0.05, path, bias=bias)
    md = path.read_text()
    assert "†" not in md and "its estimate is the interval's centre" in md
    for r in table.itertuples():
        if r.method == "ppi++":  # none from 20 judged queries (it needs 40): the table says so
            assert np.isnan(r.low) and f"| {r.measure} | {r.system} | ppi++ | — | no interval (see below) |" in md
            continue
        assert r.low <= r.estimate <= r.high
        assert f"| {r.measure} | {r.system} | {r.method} | {r.estimate:.4f} | [{r.low:.4f}, {r.high:.4f}] |" in md
    assert "Differences from the baseline good" in md and "| DCG@10 | poor − good |" in md
    assert "Label bias on the 20 judged queries" in md and "Self-preference warning" not in md


def test_the_plan_checks_the_systems_block():
    """ci.systems names systems of the population or of a runs import, a defined labeler, and for a calibrated
    labeler at least as many labelled queries as its folds."""
    from types import SimpleNamespace

    from irrepro.papers.ci.plan import resolve_systems

    from irrepro.plan import same_model

    spine = SimpleNamespace(collections=["vaswani"], systems={"vaswani": ["bm25", "qld"]}, V="results/x",
                            same_model=lambda s, lab: same_model(s, lab, base["labels"]["labelers"][lab]))
    base = {"labels": {"labelers": {"minilm": {"backend": "biencoder", "model": "minilm"},
                                    "f": {"backend": "file", "path": "x"}},
                       "collections": {"vaswani": {"prompt": "binary"}}},
            "imports": {},
            "ci": {"systems": {"collection": "vaswani", "systems": ["bm25", "qld"], "labeler": "minilm", "n": 10,
                               "queries": None, "seed": 0, "measures": ["DCG@10", "nDCG@5"],
                               "plan_widths": [0.1]}}}
    r = resolve_systems(base, spine)
    assert r["runs"] == {"bm25": "results/x/runs/vaswani/bm25.run", "qld": "results/x/runs/vaswani/qld.run"}
    assert r["k"] == 10 and r["prompt"] == "binary"
    for change, match in ((lambda s: s.update(systems=["bm25", "nope"]), "neither a population system"),
                          (lambda s: s.update(systems=["bm25"]), "at least two"),
                          (lambda s: s.update(systems=["bm25", "imp/x"]), "not an import of type runs"),
                          (lambda s: s.update(labeler="nope"), "not defined under labels.labelers"),
                          (lambda s: s.update(n=3), "at least 5 queries"),
                          (lambda s: s.update(collection="cranfield"), "not a retrieved collection")):
        cfg = copy.deepcopy(base)
        change(cfg["ci"]["systems"])
        with pytest.raises(InputError, match=match):
            resolve_systems(cfg, spine)
    cfg = copy.deepcopy(base)
    cfg["ci"]["systems"].update(labeler="f", n=3)
    assert resolve_systems(cfg, spine)["n"] == 3  # a file labeler fits nothing
    cfg["ci"]["systems"]["collection"] = None
    assert resolve_systems(cfg, spine) is None


# ------------------------------------------------------------------------- grade scales and degenerate labels
def _dl19_like(seed=0, Q=30, docs=25):
    """TREC DL 2019's scale: qrels with grades 0-3, a good and a poor run, labels on ``G`` grades that put 0.8 on
    the human grade (cut to G − 1) and spread the rest."""
    rng = np.random.default_rng(seed)
    grade = {(str(q), f"d{d}"): int(rng.choice(4, p=[0.5, 0.2, 0.2, 0.1])) for q in range(Q) for d in range(docs)}
    qrels = pd.DataFrame([(q, d, g) for (q, d), g in grade.items()], columns=["query_id", "doc_id", "relevance"])
    runs = {}
    for name, quality in (("good", 1.5), ("poor", 0.3)):
        r = []
        for q in range(Q):
            sc = [quality * grade[(str(q), f"d{d}")] + rng.normal() for d in range(docs)]
            r += [(str(q), f"d{d}", rank, float(-rank)) for rank, d in enumerate(np.argsort(sc)[::-1], 1)]
        runs[name] = pd.DataFrame(r, columns=["query_id", "doc_id", "rank", "score"])

    def labels(G):
        rows = []
        for (q, d), g in grade.items():
            p = np.full(G, 0.2 / (G - 1))
            p[min(g, G - 1)] = 0.8
            rows.append((q, d, *p))
        return pd.DataFrame(rows, columns=["query_id", "doc_id"] + [f"p_{r}" for r in range(G)])

    return runs, qrels, labels


def test_human_values_are_the_qrels_grades_and_labels_on_fewer_grades_are_refused():
    """DL19's grades 0-3 with labels of a 2-grade prompt: the human values (the truth, and the labelled queries'
    values every interval uses) are DCG@10 on the qrels' grades as ir_measures computes it, never grades cut to
    the labels' scale; and the labels cannot predict them, so the table is refused."""
    import ir_measures

    runs, qrels, labels = _dl19_like()
    queries = systems.judged_queries(qrels)
    for name, run in runs.items():
        ev = evaluate_run(run, qrels, ["DCG@10"]).set_index("topic")["value"]
        for G in (2, 4):
            a = systems.system_arrays(run, qrels, labels(G), queries, 10)
            assert a["grades"].max() == 3
            assert np.allclose(a["u_true"], ev.reindex(queries).to_numpy()), (name, G)
    lq = systems.draw_queries(queries, 10, seed=1)
    with pytest.raises(InputError, match=r"the labels table has 2 grades \(0\.\.1\) but the qrels grade up to 3"):
        systems.evaluate_systems(runs, qrels, labels(2), lq, ["DCG@10", "nDCG@10"], n_boot=200, n_batches=200)
    with pytest.raises(InputError, match=r"config key ci\.systems\.prompt: 'binary' has 2 grades \(0\.\.1\) but the "
                                         r"qrels of dl19-pool grade up to 3 \(e\.g\. query"):
        systems.check_grade_scale(qrels, 2, "config key ci.systems.prompt: 'binary'", "dl19-pool")
    # labels on the qrels' scale: the truth is ir_measures' DCG@10 and nDCG@10 (gain 2^r − 1), and not every row
    # covers it
    table, *_ = systems.evaluate_systems(runs, qrels, labels(4), lq, ["DCG@10", "nDCG@10"], n_boot=200,
                                         n_batches=200)
    ndcg = ir_measures.nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10
    for name, run in runs.items():
        t = table[table.system == name].set_index("measure").truth
        assert np.allclose(t["DCG@10"], evaluate_run(run, qrels, ["DCG@10"]).value.mean())
        nd = ir_measures.calc_aggregate([ndcg], qrels, run[["query_id", "doc_id", "score"]])[ndcg]
        assert np.allclose(t["nDCG@10"], nd)


def test_the_plan_refuses_a_prompt_with_fewer_grades_than_the_collection():
    """Before any job: the collection's top grade from its ``grades`` mapping, else from ir_datasets' declared
    qrels grades, against the ci.systems prompt's (or the label stage's) grades."""
    from types import SimpleNamespace

    from irrepro.papers.ci.plan import resolve_systems

    from irrepro.plan import same_model

    spine = SimpleNamespace(collections=["dl19", "cranfield", "vaswani"], V="results/x",
                            systems={c: ["bm25", "qld"] for c in ("dl19", "cranfield", "vaswani")},
                            same_model=lambda s, lab: same_model(s, lab, cfg["labels"]["labelers"][lab]))
    cfg = {"collections": {"dl19": {"ir_datasets": "msmarco-passage/trec-dl-2019/judged"},
                           "cranfield": {"ir_datasets": "cranfield",
                                         "grades": {"-1": -1, "1": 4, "2": 3, "3": 2, "4": 1}},
                           "vaswani": {"ir_datasets": "vaswani"}},
           "labels": {"labelers": {"f": {"backend": "file", "path": "x"}},
                      "collections": {"dl19": {"prompt": "binary"}, "cranfield": {"prompt": "cranfield"}}},
           "imports": {},
           "ci": {"systems": {"collection": "dl19", "systems": ["bm25", "qld"], "labeler": "f", "n": 10,
                              "queries": None, "seed": 0, "measures": ["DCG@10"], "plan_widths": [0.1]}}}
    with pytest.raises(InputError, match=r"config key ci\.systems\.prompt: 'binary' \(taken from "
                                         r"labels\.collections\.dl19\.prompt\) has 2 grades \(0\.\.1\) but the qrels "
                                         r"of dl19 grade up to 3 \(ir_datasets 'msmarco-passage/trec-dl-2019/judged'"):
        resolve_systems(cfg, spine)
    cfg["ci"]["systems"]["prompt"] = "trecdl"
    assert resolve_systems(cfg, spine)["n_grades"] == 4
    cfg["ci"]["systems"].update(collection="cranfield", prompt="trecdl")
    with pytest.raises(InputError, match=r"'trecdl' has 4 grades \(0\.\.3\) but the qrels of cranfield grade up to "
                                         r"4 \(collections\.cranfield\.grades\)"):
        resolve_systems(cfg, spine)
    cfg["ci"]["systems"]["prompt"] = None
    assert resolve_systems(cfg, spine)["prompt"] == "cranfield"
    cfg["ci"]["systems"].update(collection="vaswani", prompt="binary")
    assert resolve_systems(cfg, spine)["n_grades"] == 2


def test_a_labeler_giving_one_grade_has_no_crc_interval_and_says_why(tmp_path):
    """Labels with all their mass on grade 0: CRC's λ has nothing to move, its calibration fails; the row's
    interval is NaN with a note in the table and the Markdown, the other methods are unaffected."""
    runs, qrels, labels = _toy(Q=60)
    qrels["relevance"] = qrels.relevance.clip(upper=1)
    one = labels[["query_id", "doc_id"]].assign(p_0=1.0, p_1=0.0)
    lq = systems.draw_queries(systems.judged_queries(qrels), 40, seed=1)  # 40: every method could give one
    table, diffs, _, _ = systems.evaluate_systems(runs, qrels, one, lq, ["DCG@10", "nDCG@10"], n_boot=200,
                                                  n_batches=200)
    crc = table[table.method == "crc"]
    assert crc.low.isna().all() and crc.high.isna().all()
    assert crc.note.str.startswith("no CRC interval: the labels give every ranked document of the labelled "
                                   "queries grade 0 with probability 1").all()
    rest = table[table.method != "crc"]
    assert (rest.note == "").all() and np.isfinite(rest.low).all()
    long = systems.systems_long(table, diffs)
    assert long.columns[-1] == "note" and long.note.fillna("").astype(bool).sum() == len(crc)
    path = tmp_path / "s.md"
    systems.write_systems_md(table, diffs, "toy", "one-grade", lq, 0.05, path)
    md = path.read_text()
    assert md.count("| crc | ") == 4 and md.count("no interval (see below)") == 4 and "[nan" not in md
    assert "Rows without an interval:" in md and "DCG@10, good, crc: no CRC interval" in md
    # labels with some mass on every grade: every row has an interval, and the table has no note column
    table, diffs, _, _ = systems.evaluate_systems(runs, qrels, one.assign(p_0=0.9, p_1=0.1), lq, ["DCG@10"],
                                                  n_boot=200, n_batches=200)
    assert np.isfinite(table.low).all() and "note" not in systems.systems_long(table, diffs)


def test_ppi_plus_plus_gives_no_interval_below_its_floor_and_is_never_planned_there():
    """PPI++ from 39 judged queries: no interval and a note saying why; from 40: an interval (its coverage below 40
    fell to 0.917-0.938, tests/bench_ppi_tuned.py). A planned width that any m reaches still needs 40 judged queries
    for PPI++ and 20 for the bootstrap, 2 for PPI; the width curve is NaN below each floor."""
    rng = np.random.default_rng(3)
    d = rng.gamma(2.0, size=100)
    dp = d + rng.normal(0, 0.5, size=100)
    floor = finite.PPI_TUNED_MIN_QUERIES
    for n in (floor - 1, floor):
        rows = {r["method"]: r for r in systems.difference_intervals(d, dp, np.arange(n))}
        r = rows["ppi++"]
        if n < floor:
            assert np.isnan(r["low"]) and np.isnan(r["estimate"]) and "no PPI++ interval" in r["note"], r
            assert f"n = {n} judged" in r["note"] and "cannot hold its 95% level" in r["note"]
            assert r["covered"] is None  # a refusal is not a miss: no interval, no coverage
        else:
            assert np.isfinite([r["low"], r["high"]]).all() and r["low"] < r["high"] and r["note"] == "", r
            assert isinstance(r["covered"], bool)
        assert np.isfinite(rows["ppi"]["low"]) and rows["ppi"]["note"] == ""
    terms = sample_size.variance_terms(d[:floor], dp[:floor], dp)
    need = sample_size.n_needed(terms, 1e9, 100)
    assert need == {"bootstrap": finite.BOOTSTRAP_MIN_QUERIES, "ppi": 2, "ppi++": floor}, need
    curve = sample_size.width_curve(terms, [10, 30, floor, 60], 100).set_index(["method", "m"]).width
    assert np.isnan(curve["ppi++", 30]) and np.isfinite(curve["ppi++", floor]) and np.isfinite(curve["ppi", 10])
    assert np.isnan(curve["bootstrap", 10]) and np.isfinite(curve["bootstrap", 30])
    with pytest.raises(InputError, match="unknown method"):
        finite.min_queries("ppi+")


def test_a_zero_width_interval_says_why():
    """Human values that do not vary over the judged queries (qrels of one grade) give the bootstrap, and PPI with
    labels matching them, an interval of width 0 from n < N queries: the row's note says why instead of presenting
    [x, x] as certainty (it said nothing before). Values that vary: no note."""
    N, n = 100, 50  # 50: PPI++ gives an interval too (it needs 40)
    d = np.zeros(N)
    rows = {r["method"]: r for r in systems.difference_intervals(d, d, np.arange(n))}
    for m in ("bootstrap", "ppi", "ppi++"):
        assert rows[m]["width"] == 0 and rows[m]["note"].startswith(f"zero width from n = {n} of N = {N}"), rows[m]
    rng = np.random.default_rng(0)
    d = rng.normal(size=N)
    rows = {r["method"]: r for r in systems.difference_intervals(d, d + rng.normal(0, 0.3, N), np.arange(n))}
    assert all(r["note"] == "" and r["width"] > 0 for r in rows.values())


def test_validation_labelled_queries_are_the_listed_judged_ones_or_a_seeded_draw():
    from irrepro.papers.ci.systems import draw_queries, validation_labelled

    judged = [str(q) for q in range(1, 11)]
    assert validation_labelled(judged, None, 4, 3) == draw_queries(judged, 4, 3)
    assert validation_labelled(judged, ["7", "2"], 4, 3) == ["7", "2"]
    with pytest.raises(InputError, match=r"config key ci.systems.queries: \['11'\] have no judgment"):
        validation_labelled(judged, ["2", "11"], 4, 3, "config key ci.systems.queries")
