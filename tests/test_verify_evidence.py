"""The evidence functions behind explained verify rows: each computes what its explanation claims, and each has a
case where the explanation must fail (the row is then unexplained)."""
import numpy as np
import pandas as pd
import pytest

from irrepro.core.verify import evidence_meets, paper_outside_bound
from irrepro.errors import InputError
from irrepro.papers.bv import evidence as bv_ev
from irrepro.papers.bv.biasvariance import tradeoff_groups
from irrepro.papers.bv.tables import TABLE9_COLUMNS, table9_row


def _matrix(seed=0, systems=12, topics=20):
    rng = np.random.default_rng(seed)
    return rng.beta(0.6, 1.5, (systems, 1)) * rng.beta(1.0, 1.0, (systems, topics)) * rng.uniform(0.3, 1, topics)


@pytest.mark.parametrize("col", TABLE9_COLUMNS)
def test_table9_cells_equal_table9_row(col):
    """The vectorised cells are Table 9's own readings (a stack of two matrices, each against table9_row)."""
    Xs = np.stack([_matrix(0), _matrix(1)])
    got = bv_ev.table9_cells(Xs, col)
    for r in range(2):
        assert got[r] == pytest.approx(table9_row(Xs[r], seed=0)[col], abs=1e-12)
    with pytest.raises(InputError, match="default readings only"):
        bv_ev.table9_cells(Xs, col, random_grouping="resampled")


def _data(X, **kw):
    return {"matrices": {"c": X}, "seed": 1, "table9": {}, **kw}


def test_missing_topics_range_holds_the_full_matrix_and_rejects_a_far_value():
    """Topics of a 22-topic matrix left out: the range of the cell over the 20 public topics + 2 drawn ones holds
    the full matrix's cell; a value far outside it is not explained."""
    full = _matrix(3, topics=22)
    X = np.delete(full, [4, 17], axis=1)
    for col in ("original", "difficulty"):
        ev = bv_ev.missing_topics({"item": f"table9/c/{col}"}, _data(X), {}, missing=2, fill="public",
                                  resamples=500, coverage=0.99)
        assert ev["low"] < ev["high"] and "20 public topics + 2 topics" in ev["how"]
        assert evidence_meets(ev, table9_row(full, seed=0)[col], None, 5e-5)
        assert not evidence_meets(ev, ev["high"] + 0.01, None, 5e-5)
    zero = bv_ev.missing_topics({"item": "table9/c/original"}, _data(X), {}, missing=2, fill="zero", resamples=50)
    assert zero["low"] == pytest.approx(zero["high"])  # zero topics: positions do not move the ungrouped cell
    Z = np.concatenate([X, np.zeros((X.shape[0], 2))], axis=1)
    assert zero["low"] == pytest.approx(table9_row(Z, seed=0)["original"])
    with pytest.raises(InputError, match="no score matrix of 'other'"):
        bv_ev.missing_topics({"item": "table9/other/original"}, _data(X), {}, missing=2)


def test_missing_topics_at_known_places_are_one_value_not_a_draw():
    """Topics whose ids are known sit at their places: 4 and 17 of a 22-topic matrix (ids 1-22) left out and put
    back as zeros give one value, the cell of that very matrix; drawn at random places instead, the range is wide
    and the row's verdict would rest on randomness alone."""
    full = _matrix(5, topics=22)
    full[:, [4, 17]] = 0.0
    X = np.delete(full, [4, 17], axis=1)
    for col in ("random", "random_norm", "difficulty"):
        row = {"item": f"table9/c/{col}"}
        known = bv_ev.missing_topics(row, _data(X), {}, ids=[1, 22], at=[18, 5], fill="zero")
        assert known["low"] == known["high"] == pytest.approx(bv_ev.table9_cells(full[None], col)[0], abs=1e-12)
        assert "topics 5, 18" in known["how"] and "known places" in known["how"]
        drawn = bv_ev.missing_topics(row, _data(X), {}, missing=2, fill="zero", resamples=300)
        assert "their places are unknown" in drawn["how"]
        if col != "difficulty":  # zero topics are hardest wherever they sit: only the random groups move
            assert drawn["high"] - drawn["low"] > 1e-3
    with pytest.raises(InputError, match="public matrix of c has 20 topics"):
        bv_ev.missing_topics({"item": "table9/c/random"}, _data(X), {}, ids=[1, 23], at=[5, 18])
    with pytest.raises(InputError, match="need 'ids: \\[first, last\\]'"):
        bv_ev.missing_topics({"item": "table9/c/random"}, _data(X), {}, at=[5, 18])
    with pytest.raises(InputError, match="not distinct ids"):
        bv_ev.missing_topics({"item": "table9/c/random"}, _data(X), {}, ids=[1, 22], at=[5, 30])


def test_resampled_ranges_are_widened_by_their_own_monte_carlo_error():
    """The 0.5-99.5% range of R resamples is taken at the order statistics 2 binomial s.e. of the rank further out
    (rank of the 0.5% quantile among 2,000: 10 +- 2 x 3.15): never narrower than the plain quantiles."""
    x = np.arange(2000.0)
    lo, hi, how = bv_ev._range(x, 0.99)
    assert (lo, hi) == (3.0, 1996.0) and "order statistics 4 and 1997" in how
    assert lo <= np.quantile(x, 0.005) and hi >= np.quantile(x, 0.995)
    assert bv_ev._range(x, 1.0)[:2] == (0.0, 1999.0)


def test_run_resamples_is_reproducible_and_holds_ours():
    X = _matrix(4, systems=15)
    row = {"item": "table9/c/random"}
    a = bv_ev.run_resamples(row, _data(X), {}, resamples=300)
    assert a == bv_ev.run_resamples(row, _data(X), {}, resamples=300)  # seeded by bv.seed and the item
    assert a != bv_ev.run_resamples(row, {**_data(X), "seed": 2}, {}, resamples=300)
    assert evidence_meets(a, table9_row(X, seed=0)["random"], None, 0)
    assert not evidence_meets(a, 0.99, None, 0)


def _tied(seed=5):
    X = _matrix(seed, topics=20)
    tied = [3, 8, 11]
    rest = np.sort(np.delete(X.max(axis=0), tied))
    # three different topics with the same maximum, between the 3rd and 4th hardest of the others: hardest first
    # they take positions 3-5, across the first two groups of 5, so the order among them moves both cells
    X[:, tied] *= (rest[2] + rest[3]) / 2 / X[:, tied].max(axis=0)
    return X


def _tie_break_cells(X, descending: bool):
    """Both difficulty cells with the tied topics taken in descending (or ascending) topic position."""
    n = X.shape[1]
    order = np.lexsort((-np.arange(n) if descending else np.arange(n), X.max(axis=0)))
    return {c: float(bv_ev.table9_cells(X[None], c, difficulty_order=order[None])[0])
            for c in ("difficulty", "difficulty_norm")}


def _ref(c, cells):
    return [{"item": f"table9/c/{k}", "paper": round(v, 4)} for k, v in cells.items()]


def test_tie_orders_hold_one_order_for_every_difficulty_cell():
    """The printed cells of one tie order (descending topic position here): both rows are explained by the orders
    that give both cells, and the range holds nothing but that reading's values."""
    X = _tied()
    asc, desc = _tie_break_cells(X, False), _tie_break_cells(X, True)
    assert abs(asc["difficulty"] - desc["difficulty"]) > 1e-3  # the tie break matters
    assert asc["difficulty"] == pytest.approx(table9_row(X, seed=0)["difficulty"], abs=1e-12)
    order = np.lexsort((-np.arange(X.shape[1]), X.max(axis=0)))  # the other tie break, by the library's groups
    assert desc["difficulty"] == pytest.approx(tradeoff_groups(X, [order[k:k + 5] for k in range(0, 20, 5)], "topic"))
    data = _data(X, reference=_ref("c", desc))
    for c in ("difficulty", "difficulty_norm"):
        row = {"item": f"table9/c/{c}", "paper": round(desc[c], 4), "tolerance": 5e-5}
        ev = bv_ev.tie_orders(row, data, {}, resamples=400)
        assert ev["low"] == pytest.approx(desc[c], abs=1e-12) and ev["high"] == pytest.approx(desc[c], abs=1e-12)
        assert evidence_meets(ev, row["paper"], asc[c], 5e-5)
        assert "every printed difficulty cell" in ev["how"]
    with pytest.raises(InputError, match="no tied per-topic maxima"):
        bv_ev.tie_orders({"item": "table9/c/difficulty", "paper": 0.1}, _data(_matrix(6)), {}, resamples=10)


def test_tie_orders_refuse_cells_of_two_different_orders():
    """The raw cell of one tie order and the normalised cell of another: each row alone lies in the envelope of
    the orders, but no single order gives both, so neither row is explained (the envelope of different readings
    explained both before)."""
    X = _tied()
    asc, desc = _tie_break_cells(X, False), _tie_break_cells(X, True)
    assert abs(asc["difficulty_norm"] - desc["difficulty_norm"]) > 1e-3
    mixed = {"difficulty": desc["difficulty"], "difficulty_norm": asc["difficulty_norm"]}
    # no order gives both: the mixed pair is not one order's (checked over every order of the three topics)
    data = _data(X, reference=_ref("c", mixed))
    for c in ("difficulty", "difficulty_norm"):
        row = {"item": f"table9/c/{c}", "paper": round(mixed[c], 4), "tolerance": 5e-5}
        with pytest.raises(InputError, match="no single tie order gives every printed difficulty cell of c") as e:
            bv_ev.tie_orders(row, data, {}, resamples=400)
        assert f"give difficulty_norm {round(desc['difficulty_norm'], 4):.4f}" in str(e.value)


def test_copied_cell_and_own_identity():
    ref = [{"item": "t/a", "paper": -0.9376}, {"item": "s/B/bias", "paper": 0.11},
           {"item": "s/B/total", "paper": 0.0797}, {"item": "s/B/var", "paper": 0.0646},
           {"item": "s/C/bias", "paper": 0.11}, {"item": "s/C/var", "paper": 0.0961},
           {"item": "s/C/total", "paper": 0.182}]
    data = {"reference": ref}
    ev = bv_ev.copied_cell({"item": "t/b"}, data, {}, source="t/a")
    assert evidence_meets(ev, -0.9376, -0.8585, 5e-5) and not evidence_meets(ev, -0.9375, -0.8585, 5e-5)
    half = {"bias": 0.005, "var": 0.00005, "total": 0.00005}
    var = bv_ev.own_identity({"item": "s/B/var"}, data, {}, identity="bias2_plus_var", rounding=half)
    # total - bias^2 with every printed number anywhere within half a unit of its last digit
    assert (var["low"], var["high"]) == pytest.approx((0.0797 - 0.00005 - 0.115 ** 2, 0.0797 + 0.00005 - 0.105 ** 2))
    assert var["against"] == "paper_bound" and paper_outside_bound(var, 0.0646)  # the printed 0.0646 cannot be
    exact = bv_ev.own_identity({"item": "s/B/var"}, data, {}, identity="bias2_plus_var")
    assert exact["low"] == exact["high"] == pytest.approx(0.0676)
    total = bv_ev.own_identity({"item": "s/C/total"}, data, {}, identity="bias2_plus_var", rounding=half)
    assert total["low"] < 0.1082 < total["high"] and paper_outside_bound(total, 0.182)
    # a self-consistent printed row is no inconsistency
    data2 = {"reference": [*ref[:2], {"item": "s/B/total", "paper": 0.0767}, ref[3]]}
    assert not paper_outside_bound(bv_ev.own_identity({"item": "s/B/var"}, data2, {}, identity="bias2_plus_var",
                                                      rounding=half), 0.0646)


def test_own_identity_eq16_uses_the_other_runs_target():
    ref = []
    for run, (vr, vx, cv) in {"a": (0.0826, 0.1065, 0.0747), "b": (0.1113, 0.1316, 0.0729),
                              "x": (0.1088, 0.0618, 0.0381)}.items():
        ref += [{"item": f"table8/{run}/var_rho", "paper": vr}, {"item": f"table8/{run}/var_x", "paper": vx},
                {"item": f"table8/{run}/cov", "paper": cv}]
    ev = bv_ev.own_identity({"item": "table8/x/var_rho"}, {"reference": ref}, {}, identity="eq16_var_rho",
                            rounding=0.00005)
    var_t = sorted([0.0826 - 0.1065 + 2 * 0.0747, 0.1113 - 0.1316 + 2 * 0.0729])
    w = 7 * 0.00005  # Var(x_T): var_rho, var_x, 2 Cov; this run's var_x, 2 Cov
    assert (ev["low"], ev["high"]) == pytest.approx((var_t[0] + 0.0618 - 0.0762 - w, var_t[1] + 0.0618 - 0.0762 + w))
    assert paper_outside_bound(ev, 0.1088) and not paper_outside_bound(ev, 0.1110)


def test_sampling_table3_sd_ratio():
    from irrepro.papers.sampling.evidence import table3_sd_ratio
    q = 1.959963984540054
    readings = pd.DataFrame({"system": ["A", "B"], "reading": ["expected"] * 2, "ci_halfwidth": [2.0, 1.0]})
    ref = [{"item": "sd_q_star/A", "paper": 1.1 * 2.0 / q}, {"item": "sd_q_star/B", "paper": 1.0 * 1.0 / q}]
    data = {"tables": {"ci_halfwidth_readings": readings}, "reference": ref}
    ev = table3_sd_ratio({"item": "ci_halfwidth/A"}, data, {"ci_halfwidth/A": {"value": 2.0}})
    assert ev["low"] == pytest.approx(2.0 * 1.05) and ev["low"] == ev["high"]
    # the mean of the ratios 1.1 and 1.0 is an estimate: s.e. sd / sqrt(2) = 0.05, times ours
    assert ev["se"] == pytest.approx(2.0 * np.std([1.1, 1.0], ddof=1) / np.sqrt(2))
    assert evidence_meets(ev, 2.1, 2.0, 0.008) and not evidence_meets(ev, 2.0, 2.0, 0.008)
    with pytest.raises(InputError, match="no ci_halfwidth_readings"):
        table3_sd_ratio({"item": "ci_halfwidth/A"}, {}, {"ci_halfwidth/A": 2.0})


def test_vb_case_study_reading():
    from irrepro.papers.vb.evidence import case_study_reading
    doc = {"case_studies": {"jordan": {"intents": ["a", "p"], "pi": [0.8, 0.2],
                                       "systems": {"athlete_only": {"covers": ["a"]}}}},
           "readings": {"case_studies": {"value": "ES", "gains": "binary", "source": "s"}}}
    ev = case_study_reading({"item": "x"}, {"document": doc}, {}, case="jordan", system="athlete_only")
    assert ev["low"] == pytest.approx(0.8) and evidence_meets(ev, 0.8, 0.4, 5e-4)
    doc["readings"]["case_studies"]["value"] = "VB_1"  # the reading is the file's: VB_1 for every cell
    vb1 = case_study_reading({"item": "x"}, {"document": doc}, {}, case="jordan", system="athlete_only")
    assert vb1["low"] == pytest.approx(0.4) and not evidence_meets(vb1, 0.8, 0.4, 5e-4)
    with pytest.raises(InputError, match="no case study"):
        case_study_reading({"item": "x"}, {"document": doc}, {}, case="john", system="a")
