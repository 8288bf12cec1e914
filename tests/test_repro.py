"""irrepro.repro against repro_eval 0.5 (the reference implementation of Breuer et al., SIGIR 2020) on runs it reads
from TREC files, on hand-computed cases, and on the cases where repro_eval fails (lists of unequal length, a zero
original effect); the OK / OKish / FAIL boundaries of the regression verdict."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.repro import (FAIL, MIN_EFFECT, OK, OKISH, delta_ri, effect_ratio, ktu, ktu_repro_eval, rbo,
                           regression_verdict, rmse, ttest_paired, ttest_unpaired)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # repro_eval imports scipy.stats.stats and pkg_resources (deprecated)
    from repro_eval.Evaluator import RpdEvaluator
    from repro_eval.measure.document_order import KTU as RE_KTU
    from repro_eval.measure.document_order import RBO as RE_RBO
    from repro_eval.measure.overall_effects import DRI as RE_DRI
    from repro_eval.measure.overall_effects import ER as RE_ER
    from repro_eval.measure.statistics import ttest as re_ttest
    from repro_eval.util import load_run

TOL = 1e-9


# --- building runs --------------------------------------------------------------------------------------------


def run_frame(rows):
    """{query: [(doc, score), ...]} -> run frame."""
    return pd.DataFrame([(q, d, float(s)) for q, docs in rows.items() for d, s in docs],
                        columns=["query_id", "doc_id", "score"])


def ranked(rows_in_rank_order):
    """{query: [doc, ...]} in rank order -> run frame with strictly decreasing scores."""
    return run_frame({q: [(d, len(docs) - i) for i, d in enumerate(docs)] for q, docs in rows_in_rank_order.items()})


def random_run(rng, topics, pool, lengths, tie_step=0.5):
    """Several topics, scores on a coarse grid (many ties), lengths per topic as given."""
    rows = {}
    for q, n in zip(topics, lengths):
        docs = rng.choice(pool, size=n, replace=False)
        rows[q] = list(zip(docs, np.round(rng.gamma(2.0, 2.0, size=n) / tie_step) * tie_step))
    return run_frame(rows)


def reproduce(rng, run, pool, lengths, noise=0.8, tie_step=0.5):
    """A reproduction of ``run``: scores perturbed (ranks change, ties stay), some documents replaced by others of
    the pool, cut to the given length per topic."""
    out = []
    for (q, g), n in zip(run.groupby("query_id", sort=True), lengths):
        g = g.copy()
        g["score"] = np.round((g["score"] + rng.normal(0, noise, len(g))) / tie_step) * tie_step
        fresh = np.setdiff1d(pool, g["doc_id"].to_numpy())
        swap = rng.random(len(g)) < 0.2
        g.loc[swap, "doc_id"] = rng.choice(fresh, size=int(swap.sum()), replace=False)
        g = g.sort_values("score", ascending=False, kind="mergesort").head(n)
        out.append(g)
    return pd.concat(out, ignore_index=True)


def write_trec(run, path, rng):
    """A TREC run file sorted by score descending, equal scores in random order (trec_eval and repro_eval's
    break_ties must order them), scores written exactly."""
    df = run.assign(_r=rng.random(len(run))).sort_values(["query_id", "score", "_r"], ascending=[True, False, True])
    with open(path, "w") as f:
        for i, (q, d, s) in enumerate(zip(df.query_id, df.doc_id, df.score)):
            f.write(f"{q} Q0 {d} {i + 1} {float(s)!r} tag\n")
    return str(path)


def write_qrels(rng, topics, pool, path):
    with open(path, "w") as f:
        for q in topics:
            for d in rng.choice(pool, size=len(pool) // 3, replace=False):
                f.write(f"{q} 0 {d} {int(rng.integers(0, 3))}\n")
    return str(path)


def re_load(run, tmp_path, name, rng):
    """The run as repro_eval reads it (file order, nested dict)."""
    return load_run(write_trec(run, tmp_path / name, rng))


TOPICS = [str(q) for q in range(301, 309)]
#: doc ids whose sorted order is unrelated to any ranking
POOL = np.array([f"FBIS3-{i:05d}" for i in np.random.default_rng(7).choice(90000, 150, replace=False)])


def real_looking(seed, n=300, m=300):
    """BM25-like runs: ``n`` (original) and ``m`` (reproduced; an int or one per topic) documents per topic, scores
    decaying from ~20 printed with 2 decimals (ties in the tail), the reproduction from a slightly different
    parameter setting (scores scaled and jittered, a few documents swapped out)."""
    rng = np.random.default_rng(seed)
    pool = np.array([f"LA{int(x):06d}-{int(y):04d}" for x, y in zip(rng.integers(10000, 123199, 3 * n),
                                                                   rng.integers(1, 200, 3 * n))])
    pool = np.unique(pool)
    rows_o, rows_r = {}, {}
    ms = m if isinstance(m, list) else [m] * len(TOPICS)
    for q, mq in zip(TOPICS, ms):
        docs = rng.choice(pool, size=n + 50, replace=False)
        base = np.sort(rng.exponential(1.0, n + 50))[::-1].cumsum()[::-1]
        base = 20 * base / base.max()
        rows_o[q] = list(zip(docs[:n], np.round(base[:n], 2)))
        score_r = np.round(1.03 * base + rng.normal(0, 0.05, n + 50), 2)
        order = np.argsort(-score_r, kind="stable")[:mq]
        rows_r[q] = list(zip(docs[order], score_r[order]))
    return run_frame(rows_o), run_frame(rows_r), rng


# --- KTU ------------------------------------------------------------------------------------------------------


def test_repro_eval_ktu_crashes_on_lists_of_unequal_length(tmp_path):
    """The failure ktu avoids: repro_eval pairs the lists by rank, so a reproduction that returns fewer documents
    for a topic raises inside scipy."""
    rng = np.random.default_rng(0)
    orig = ranked({"1": ["a", "b", "c"]})
    repro = ranked({"1": ["a", "c"]})
    with pytest.raises(ValueError):
        RE_KTU(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), per_topic=True)
    with pytest.raises(InputError, match="unequal length"):
        ktu_repro_eval(orig, repro)


def test_ktu_of_lists_of_unequal_length_is_the_hand_computed_value():
    """U = {a, b, c}; ranks (a, b, c) = (1, 2, 3) and (1, 3, 2) (b is missing from the reproduction: rank 2 + 1):
    P = 2 (a-b, a-c), Q = 1 (b-c), no ties: tau = 1/3. Second topic: A = abcd, B = ae; ranks over U = abcde are
    (1, 2, 3, 4, 5) and (1, 3, 3, 3, 2): P = 4, Q = 3, 3 pairs tied in B only: tau_b = 1 / sqrt(10 * 7)."""
    orig = ranked({"1": ["a", "b", "c"], "2": ["a", "b", "c", "d"]})
    repro = ranked({"1": ["a", "c"], "2": ["a", "e"]})
    got = ktu(orig, repro)
    assert got.per_topic["1"] == pytest.approx(1 / 3, abs=1e-12)
    assert got.per_topic["2"] == pytest.approx(1 / math.sqrt(70), abs=1e-12)
    assert got.mean == pytest.approx((1 / 3 + 1 / math.sqrt(70)) / 2, abs=1e-12)
    # the reproduction missing b is not the same as the reproduction having b last
    assert ktu(orig, ranked({"1": ["a", "c", "b"]})).per_topic["1"] == pytest.approx(1 / 3, abs=1e-12)


def test_ktu_of_a_prefix_is_one_only_when_the_rest_is_tied_after_it():
    """B = the top 2 of A = abc: c is missing from B, ranked after B's last: ranks (1, 2, 3) and (1, 2, 3) -> 1."""
    assert ktu(ranked({"1": list("abc")}), ranked({"1": list("ab")})).per_topic["1"] == 1.0
    # but with two missing documents they tie in B while A orders them: tau_b < 1
    got = ktu(ranked({"1": list("abcd")}), ranked({"1": list("ab")})).per_topic["1"]
    assert got == pytest.approx(5 / math.sqrt(6 * 5), abs=1e-12)


def test_identical_runs_give_ktu_one_and_reversed_runs_minus_one():
    rng = np.random.default_rng(1)
    run = random_run(rng, TOPICS, POOL, [20, 35, 5, 50, 12, 3, 40, 2])
    assert (ktu(run, run).per_topic == 1.0).all() and ktu(run, run).mean == 1.0
    # reversed: negate the scores; equal scores must also reverse, so make them distinct first
    distinct = run.assign(score=run.groupby("query_id").cumcount().astype(float) * -1.0)
    rev = distinct.assign(score=-distinct["score"])
    assert (ktu(distinct, rev).per_topic == -1.0).all()


def test_one_swapped_pair_lowers_ktu_by_exactly_two_pairs():
    """n documents, one adjacent swap: Q = 1, P = C(n, 2) - 1, tau = 1 - 2 / C(n, 2)."""
    docs = [f"d{i:02d}" for i in range(10)]
    swapped = docs.copy()
    swapped[4], swapped[5] = swapped[5], swapped[4]
    got = ktu(ranked({"q": docs}), ranked({"q": swapped})).per_topic["q"]
    assert got == pytest.approx(1 - 2 / 45, abs=1e-12)


def test_ties_are_broken_by_doc_id_descending_as_trec_eval():
    """a and b tie in the original: trec_eval ranks b first. The reproduction ranks b above a: agreement (KTU 1).
    Breaking the tie by doc id ascending, or by row order, would give -1."""
    orig = run_frame({"1": [("a", 1.0), ("b", 1.0)]})
    repro = run_frame({"1": [("a", 1.0), ("b", 2.0)]})
    assert ktu(orig, repro).per_topic["1"] == 1.0
    assert ktu(orig, run_frame({"1": [("a", 2.0), ("b", 1.0)]})).per_topic["1"] == -1.0


def test_row_order_does_not_matter():
    rng = np.random.default_rng(2)
    orig = random_run(rng, TOPICS, POOL, [30] * 8)
    repro = reproduce(rng, orig, POOL, [25, 30, 30, 10, 30, 28, 30, 5])
    shuffled = repro.sample(frac=1.0, random_state=3)
    pd.testing.assert_series_equal(ktu(orig, repro).per_topic, ktu(orig, shuffled).per_topic)
    pd.testing.assert_series_equal(rbo(orig, repro, depth=30).per_topic, rbo(orig, shuffled, depth=30).per_topic)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_ktu_repro_eval_equals_repro_eval_on_random_runs(tmp_path, seed):
    """Runs with ties, read by repro_eval from files whose equal scores are in random order; equal lengths per topic
    (where repro_eval's KTU is defined), lengths differing between topics, depth cutting some topics."""
    rng = np.random.default_rng(seed)
    lengths = [int(x) for x in rng.integers(2, 60, len(TOPICS))]
    orig = random_run(rng, TOPICS, POOL, lengths)
    repro = reproduce(rng, orig, POOL, lengths)
    for depth in (1000, 25):
        want = RE_KTU(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), trim_thresh=depth,
                      per_topic=True)
        got = ktu_repro_eval(orig, repro, depth=depth)
        assert sorted(want) == list(got.per_topic.index)
        np.testing.assert_allclose(got.per_topic.to_numpy(), [want[q] for q in got.per_topic.index], rtol=0,
                                   atol=TOL)
        assert abs(got.mean - np.mean(list(want.values()))) <= TOL


def test_ktu_repro_eval_equals_repro_eval_on_real_looking_runs(tmp_path):
    orig, repro, rng = real_looking(8, n=300, m=300)
    want = RE_KTU(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), per_topic=True)
    got = ktu_repro_eval(orig, repro)
    np.testing.assert_allclose(got.per_topic.to_numpy(), [want[q] for q in got.per_topic.index], rtol=0, atol=TOL)


def test_ktu_equals_repro_eval_where_its_value_does_not_depend_on_doc_names(tmp_path):
    """Both lists hold the same documents and the original ranks them in doc id order: then repro_eval's
    rank-paired construction is Kendall's tau of the two permutations, which is what ktu computes."""
    rng = np.random.default_rng(6)
    for descending in (False, True):
        docs = sorted(rng.choice(POOL, 40, replace=False), reverse=descending)
        orig = ranked({"1": docs, "2": docs[:17]})
        repro = ranked({"1": list(rng.permutation(docs)), "2": list(rng.permutation(docs[:17]))})
        want = RE_KTU(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), per_topic=True)
        got = ktu(orig, repro)
        for q in ("1", "2"):
            assert abs(got.per_topic[q] - want[q]) <= TOL
        assert abs(got.per_topic["1"]) < 0.5  # a random permutation: the check is not the trivial 1


def test_repro_eval_ktu_depends_on_doc_names_and_ktu_does_not(tmp_path):
    """Renaming the documents (the same renaming in both runs) leaves both rankings as they were: ktu keeps its
    value, repro_eval's changes (it orders the union by doc id)."""
    rng = np.random.default_rng(9)
    docs = [f"d{i:02d}" for i in range(12)]
    orig = ranked({"1": docs})
    repro = ranked({"1": list(reversed(docs))})
    rename = dict(zip(docs, rng.permutation(docs)))
    orig2, repro2 = (r.assign(doc_id=r.doc_id.map(rename)) for r in (orig, repro))
    assert ktu(orig, repro).per_topic["1"] == ktu(orig2, repro2).per_topic["1"] == -1.0
    before = RE_KTU(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), per_topic=True)["1"]
    after = RE_KTU(re_load(orig2, tmp_path, "o", rng), re_load(repro2, tmp_path, "r", rng), per_topic=True)["1"]
    assert before == pytest.approx(-1.0) and after != pytest.approx(-1.0)
    assert ktu_repro_eval(orig2, repro2).per_topic["1"] == pytest.approx(after, abs=TOL)


def test_ktu_is_undefined_for_an_empty_list_and_left_out_of_the_mean():
    orig = ranked({"1": list("abc"), "2": list("xy")})
    repro = ranked({"1": list("abc")})  # topic 2 not reproduced
    got = ktu(orig, repro)
    assert got.per_topic["1"] == 1.0 and math.isnan(got.per_topic["2"]) and got.mean == 1.0


# --- RBO ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed,depth,p", [(10, 1000, 0.95), (11, 20, 0.95), (12, 50, 0.8), (13, 7, 0.5)])
def test_rbo_equals_repro_eval_on_random_runs_of_unequal_length(tmp_path, seed, depth, p):
    rng = np.random.default_rng(seed)
    lengths = [int(x) for x in rng.integers(1, 60, len(TOPICS))]
    orig = random_run(rng, TOPICS, POOL, lengths)
    repro = reproduce(rng, orig, POOL, [max(1, n - int(rng.integers(0, 10))) for n in lengths])
    want = RE_RBO(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), p=p, depth=depth,
                  pbar=False, per_topic=True)
    got = rbo(orig, repro, depth=depth, p=p)
    assert sorted(want) == list(got.per_topic.index)
    np.testing.assert_allclose(got.per_topic.to_numpy(), [want[q] for q in got.per_topic.index], rtol=0, atol=TOL)
    assert abs(got.mean - np.mean(list(want.values()))) <= TOL


def test_rbo_equals_repro_eval_on_real_looking_runs(tmp_path):
    orig, repro, rng = real_looking(14, n=400, m=[400, 390, 400, 120, 400, 399, 250, 400])
    want = RE_RBO(re_load(orig, tmp_path, "o", rng), re_load(repro, tmp_path, "r", rng), p=0.95, depth=1000,
                  pbar=False, per_topic=True)
    got = rbo(orig, repro)
    np.testing.assert_allclose(got.per_topic.to_numpy(), [want[q] for q in got.per_topic.index], rtol=0, atol=TOL)


def test_rbo_of_identical_lists_is_one_to_their_length_and_of_disjoint_lists_zero():
    docs = [f"d{i}" for i in range(30)]
    run = ranked({"1": docs, "2": docs[:10]})
    assert rbo(run, run, depth=10).per_topic.tolist() == pytest.approx([1.0, 1.0], abs=1e-12)
    # beyond its end a list adds no documents: identical 10-document lists at depth 30 score below 1
    assert rbo(run, run, depth=30).per_topic["2"] < 0.99
    assert rbo(ranked({"1": docs[:5]}), ranked({"1": docs[5:10]}), depth=5).per_topic["1"] == 0.0
    # one swap at the top costs more than one at the bottom
    top = ranked({"1": [docs[1], docs[0]] + docs[2:10]})
    bottom = ranked({"1": docs[:8] + [docs[9], docs[8]]})
    base = ranked({"1": docs[:10]})
    assert rbo(base, top, depth=10).mean < rbo(base, bottom, depth=10).mean < 1.0


# --- scores: RMSE, ER, ΔRI, t-tests ---------------------------------------------------------------------------


MEASURES = ["AP", "nDCG", "P@10", "nDCG@10", "R@1000"]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """repro_eval's evaluation of a (baseline, advanced) pair and its reproduction on one collection."""
    tmp = tmp_path_factory.mktemp("repro")
    rng = np.random.default_rng(20)
    lengths = [int(x) for x in rng.integers(20, 100, len(TOPICS))]
    runs = {}
    runs["b_orig"] = random_run(rng, TOPICS, POOL, lengths)
    runs["a_orig"] = reproduce(rng, runs["b_orig"], POOL, lengths, noise=2.0)
    runs["b_rep"] = reproduce(rng, runs["b_orig"], POOL, [n - 3 for n in lengths])
    runs["a_rep"] = reproduce(rng, runs["a_orig"], POOL, lengths)
    paths = {k: write_trec(r, tmp / k, rng) for k, r in runs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = RpdEvaluator(qrels_orig_path=write_qrels(rng, TOPICS, POOL, tmp / "qrels"),
                          run_b_orig_path=paths["b_orig"], run_a_orig_path=paths["a_orig"],
                          run_b_rep_path=paths["b_rep"], run_a_rep_path=paths["a_rep"])
        ev.trim()
        ev.evaluate()
    return ev


def scores(score_dict, measure):
    """repro_eval's {topic: {measure: value}} -> Series of one measure."""
    return pd.Series({q: v[measure] for q, v in score_dict.items()}, dtype=float)


def test_rmse_er_dri_and_paired_ttest_equal_repro_eval(evaluated):
    ev = evaluated
    assert set(MEASURES) <= set(next(iter(ev.run_b_orig_score.values())))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_rmse = ev.rmse()
        want_er, want_dri = ev.er(), ev.dri()
        want_p = ev.ttest()
    for m in MEASURES:
        bo, ao = scores(ev.run_b_orig_score, m), scores(ev.run_a_orig_score, m)
        br, ar = scores(ev.run_b_rep_score, m), scores(ev.run_a_rep_score, m)
        assert abs(rmse(bo, br) - want_rmse["baseline"][m]) <= TOL
        assert abs(rmse(ao, ar) - want_rmse["advanced"][m]) <= TOL
        er = effect_ratio(bo, ao, br, ar)
        assert er.reason is None and abs(er.value - want_er[m]) <= TOL, m
        dri = delta_ri(bo, ao, br, ar)
        assert dri.reason is None and abs(dri.value - want_dri[m]) <= TOL, m
        for side, (o, r) in {"baseline": (bo, br), "advanced": (ao, ar)}.items():
            assert abs(ttest_paired(o, r) - want_p[side][m]) <= TOL, (m, side)
        # topics are paired by id, not by position
        assert rmse(bo, br.iloc[::-1]) == rmse(bo, br)


def test_er_dri_and_unpaired_ttest_equal_repro_eval_on_other_topics(evaluated):
    """Replicability: the reproduced pair is scored on other topics (here: a subset under new ids)."""
    ev = evaluated
    rename = {q: f"new{i}" for i, q in enumerate(TOPICS[:5])}
    b_rpl = {rename[q]: v for q, v in ev.run_b_rep_score.items() if q in rename}
    a_rpl = {rename[q]: v for q, v in ev.run_a_rep_score.items() if q in rename}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_er = RE_ER(ev.run_a_orig_score, ev.run_b_orig_score, a_rpl, b_rpl)
        want_dri = RE_DRI(ev.run_a_orig_score, ev.run_b_orig_score, a_rpl, b_rpl)
        want_p = re_ttest(ev.run_b_orig_score, b_rpl, rpd=False)
    for m in MEASURES:
        bo, ao = scores(ev.run_b_orig_score, m), scores(ev.run_a_orig_score, m)
        br, ar = scores(b_rpl, m), scores(a_rpl, m)
        assert abs(effect_ratio(bo, ao, br, ar).value - want_er[m]) <= TOL
        assert abs(delta_ri(bo, ao, br, ar).value - want_dri[m]) <= TOL
        assert abs(ttest_unpaired(bo, br) - want_p[m]) <= TOL


def test_identical_scores_give_rmse_zero_er_one_dri_zero_and_p_one():
    rng = np.random.default_rng(21)
    b = pd.Series(rng.random(20), index=[f"q{i}" for i in range(20)])
    a = b + rng.normal(0.05, 0.02, 20)
    assert rmse(b, b) == 0.0
    assert effect_ratio(b, a, b, a).value == pytest.approx(1.0, abs=1e-12)
    assert delta_ri(b, a, b, a).value == pytest.approx(0.0, abs=1e-12)
    assert ttest_paired(b, b) == 1.0 and ttest_unpaired(b.to_numpy(), b.to_numpy()) == pytest.approx(1.0)
    assert ttest_paired(b, a) < 1e-6 and ttest_unpaired(b.to_numpy(), a.to_numpy()) < 1.0
    assert ttest_unpaired(np.full(5, 0.3), np.full(7, 0.3)) == 1.0
    # and they move the right way: a reproduction keeping half the effect
    half = b + (a - b) / 2
    assert effect_ratio(b, a, b, half).value == pytest.approx(0.5, abs=1e-12)
    assert rmse(a, half) == pytest.approx(float(np.sqrt(np.mean(((a - b) / 2) ** 2))), abs=1e-15)


@pytest.mark.parametrize("effect", [0.0, 0.4e-4, -0.9e-4])
def test_er_of_an_original_without_effect_is_nan_with_its_reason(effect):
    """repro_eval divides anyway: inf / nan for a zero effect, a ratio in the hundreds for one below 1e-4."""
    topics = [f"q{i}" for i in range(10)]
    b = pd.Series(np.linspace(0.2, 0.4, 10), index=topics)
    a = b + effect
    br, ar = b - 0.01, b + 0.02
    got = effect_ratio(b, a, br, ar)
    assert math.isnan(got.value) and "original effect" in got.reason and "below 0.0001" in got.reason
    assert got.original_effect == pytest.approx(effect, abs=1e-15) and got.reproduced_effect == pytest.approx(0.03)
    d = lambda s: {q: {"AP": float(v)} for q, v in s.items()}  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = RE_ER(d(a), d(b), d(ar), d(br))["AP"]
    assert not math.isfinite(theirs) or abs(theirs) > 300


def test_er_is_defined_from_one_unit_in_the_fourth_decimal():
    """An effect that prints as 0.0001 is resolved (MIN_EFFECT = 1e-4), even if binary arithmetic makes it
    0.0001 - 1e-17."""
    b = pd.Series([0.3000, 0.2000], index=["1", "2"])
    a = pd.Series([0.3001, 0.2001], index=["1", "2"])
    assert MIN_EFFECT == 1e-4
    got = effect_ratio(b, a, b, a)
    assert got.reason is None and got.value == pytest.approx(1.0)


def test_dri_over_a_zero_baseline_is_nan_with_its_reason():
    b = pd.Series([0.0, 0.0, 0.0], index=list("abc"))
    a = pd.Series([0.1, 0.2, 0.0], index=list("abc"))
    got = delta_ri(b, a, a, a + 0.1)
    assert math.isnan(got.value) and got.reason.startswith("original baseline mean")


def test_bad_inputs_are_refused_naming_the_problem():
    run = ranked({"1": list("abc")})
    with pytest.raises(InputError, match="'b' appears twice for query '1'"):
        ktu(pd.concat([run, run.iloc[[1]]]), run)
    with pytest.raises(InputError, match="lacks column"):
        rbo(run.drop(columns="score"), run)
    with pytest.raises(InputError, match="depth"):
        ktu(run, run, depth=0)
    with pytest.raises(InputError, match="different topics"):
        rmse(pd.Series([0.1, 0.2], index=["1", "2"]), pd.Series([0.1, 0.2], index=["1", "3"]))
    with pytest.raises(InputError, match="different topics"):
        ttest_paired(pd.Series([0.1, 0.2], index=["1", "2"]), pd.Series([0.1], index=["1"]))


# --- regression verdicts --------------------------------------------------------------------------------------


@pytest.mark.parametrize("original,reproduced,verdict", [
    (0.3456, 0.3456, OK),
    (0.3456, 0.345649, OK),        # rounds to 0.3456
    (0.3456, 0.345551, OK),        # rounds to 0.3456 from below
    (0.3456, 0.345651, OKISH),     # rounds to 0.3457: differs at 4 decimals
    (0.3456, 0.3461, OKISH),       # exactly 0.0005 apart (Pyserini's float test says FAIL here)
    (0.3456, 0.3451, OKISH),
    (0.3456, 0.346149, OKISH),     # rounds to 0.3461
    (0.3456, 0.346151, FAIL),      # rounds to 0.3462: just past the tolerance
    (0.3456, 0.3450, FAIL),
    (0.3456, math.nan, FAIL),
])
def test_regression_verdict_boundaries(original, reproduced, verdict):
    assert regression_verdict(original, reproduced) == verdict


def test_regression_verdict_options():
    assert regression_verdict(0.30, 0.31) == FAIL
    assert regression_verdict(0.30, 0.31, higher_is_okish=True) == OKISH
    assert regression_verdict(0.31, 0.30, higher_is_okish=True) == FAIL
    assert regression_verdict(0.3000, 0.3010, tolerance=0.001) == OKISH
    assert regression_verdict(0.3000, 0.3011, tolerance=0.001) == FAIL
    assert regression_verdict(0.12, 0.1249, decimals=2) == OK


# --- ER's Fieller interval ----------------------------------------------------------------------------------------


def test_er_interval_is_unbounded_exactly_when_the_original_effect_is_not_significant():
    from irrepro.repro import effect_ratio_interval

    rng = np.random.default_rng(4)
    n = 50
    b = rng.uniform(0.2, 0.5, n)
    noise = rng.normal(0, 0.05, n)
    for effect, significant in ((0.05, True), (0.0005, False)):
        a = b + effect + noise
        ci = effect_ratio_interval(b, a, b, a)  # a reproduction identical to the original: ER = 1
        d = a - b
        p = __import__("scipy").stats.ttest_1samp(d, 0).pvalue
        assert (p < 0.05) == significant == ci.bounded
        if ci.bounded:
            assert ci.low == pytest.approx(1) == ci.high  # d' = d: no uncertainty in the ratio
        else:
            assert math.isnan(ci.low) and ci.denominator_low < 0 < ci.denominator_high


def test_er_interval_covers_the_true_ratio():
    """Over 400 simulated reproductions whose true effect is half the original's, the 95% Fieller interval holds 0.5
    in 93-97% of them (binomial s.e. 1.1 points)."""
    from irrepro.repro import effect_ratio_interval

    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(400):
        b = rng.uniform(0.2, 0.5, 40)
        a = b + 0.04 + rng.normal(0, 0.03, 40)
        rb = b + rng.normal(0, 0.01, 40)
        ra = rb + 0.02 + rng.normal(0, 0.03, 40)
        ci = effect_ratio_interval(b, a, rb, ra)
        hits += bool(ci.bounded and ci.low <= 0.5 <= ci.high)
    assert 0.93 <= hits / 400 <= 0.97


def _er_experiment(seed=6, n=40):
    """Per-topic scores (Series indexed by topic id, in one order) of an original and a reproduced experiment whose
    per-topic effects are correlated."""
    rng = np.random.default_rng(seed)
    topics = [str(401 + j) for j in range(n)]
    b = rng.uniform(0.2, 0.5, n)
    a = b + 0.04 + rng.normal(0, 0.03, n)
    rb = b + rng.normal(0, 0.01, n)
    ra = rb + 0.8 * (a - b) + rng.normal(0, 0.01, n)
    return [pd.Series(x, index=pd.Index(topics, name="query_id")) for x in (b, a, rb, ra)]


def test_er_interval_pairs_series_by_topic_not_by_position():
    from irrepro.repro import effect_ratio_interval

    b, a, rb, ra = _er_experiment()
    aligned = effect_ratio_interval(b, a, rb, ra)
    assert aligned.bounded
    # the same as four arrays in one topic order
    arrays = effect_ratio_interval(*(x.to_numpy() for x in (b, a, rb, ra)))
    assert (arrays.low, arrays.high) == pytest.approx((aligned.low, aligned.high), abs=1e-12)
    rng = np.random.default_rng(7)
    for shuffle_each in (False, True):  # the reproduced experiment in another topic order (its two runs alike or not)
        p = rng.permutation(len(b))
        q = rng.permutation(len(b)) if shuffle_each else p
        ci = effect_ratio_interval(b, a, rb.iloc[p], ra.iloc[q])
        assert ci.bounded
        for got, want in ((ci.low, aligned.low), (ci.high, aligned.high),
                          (ci.denominator_low, aligned.denominator_low),
                          (ci.denominator_high, aligned.denominator_high)):
            assert got == pytest.approx(want, abs=1e-12)


def test_er_interval_rejects_other_topics_and_mixed_inputs():
    from irrepro.repro import effect_ratio_interval

    b, a, rb, ra = _er_experiment()
    other = {"401": "999"}  # the reproduction lacks topic 401 and has 999 instead
    rb2, ra2 = (x.rename(index=other) for x in (rb, ra))
    with pytest.raises(InputError, match=r"different topics \(only in the first: \['401'\], only in the second: "
                                         r"\['999'\]\)"):
        effect_ratio_interval(b, a, rb2, ra2)
    with pytest.raises(InputError, match="different topics"):
        effect_ratio_interval(b, a, rb.iloc[1:], ra.iloc[1:])
    with pytest.raises(InputError, match="2 of the 4 score vectors are Series"):
        effect_ratio_interval(b, a, rb.to_numpy(), ra.to_numpy())
    with pytest.raises(InputError, match="the original has 40 topics, the reproduction 39"):
        effect_ratio_interval(b.to_numpy(), a.to_numpy(), rb.to_numpy()[1:], ra.to_numpy()[1:])
