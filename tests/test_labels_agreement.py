"""Agreement of labels with human grades (Spearman, Cohen's kappa, confusion matrix) and the seeded query sample."""
import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.labels.agreement import agreement, cohen_kappa, sample_queries


def test_cohen_kappa_by_hand():
    # 2x2: p_o = (20 + 15) / 50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)
    assert cohen_kappa(np.eye(3) * 4) == pytest.approx(1.0)
    assert np.isnan(cohen_kappa([[5, 0], [0, 0]]))  # chance agreement 1


def test_agreement_table():
    pairs = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"],
                          "relevance": [0, 1, 2, 0]})  # grade 2 > G-1 = 1: counted as 1
    perfect = pd.DataFrame({"labeler": "good", "query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"],
                            "p_0": [0.9, 0.2, 0.1, 0.8], "p_1": [0.1, 0.8, 0.9, 0.2]})
    flat = perfect.assign(labeler="flat", p_0=[0.6, 0.6, 0.6, 0.6], p_1=[0.4, 0.4, 0.4, 0.4])
    summary, conf = agreement(pd.concat([perfect, flat]), pairs)
    good = summary.set_index("labeler").loc["good"]
    assert good.pairs == 4 and good.queries == 2 and good.kappa == pytest.approx(1.0) and good.exact == 1.0
    # ranks: expected grade 1, 3, 4, 2; human 1.5, 3.5, 3.5, 1.5 (ties): rho = 4 / (sqrt(5) * 2)
    assert good.spearman == pytest.approx(2 / np.sqrt(5))
    # tau_b: 4 concordant, 0 discordant of 6 pairs, 2 tied in the human grade only: 4 / sqrt(6 * 4)
    assert good.kendall_tau_b == pytest.approx(4 / np.sqrt(24))
    assert good.weighted_kappa == pytest.approx(1.0)
    # within query 1 (human 0, 1) and query 2 (human 1, 0) the expected grades are in the human order: rho = 1 each
    assert good.per_query_spearman == pytest.approx(1.0) and good.ranked_queries == 2
    f = summary.set_index("labeler").loc["flat"]
    assert np.isnan(f.spearman) and f.kappa == pytest.approx(0.0) and f.exact == 0.5
    assert np.isnan(f.kendall_tau_b) and np.isnan(f.per_query_spearman) and f.ranked_queries == 0
    # a labeler that inverts every query's order: per-query rho -1 (pooled rho alone would not say so)
    inv = perfect.assign(labeler="inv", p_0=[0.1, 0.9, 0.8, 0.2], p_1=[0.9, 0.1, 0.2, 0.8])
    s2, _ = agreement(inv, pairs)
    assert s2.per_query_spearman.iloc[0] == pytest.approx(-1.0)
    assert conf[conf.labeler == "flat"][["pred_0", "pred_1"]].to_numpy().tolist() == [[2, 0], [2, 0]]
    with pytest.raises(InputError, match="no human grade"):
        agreement(perfect.assign(doc_id="zz"), pairs)


def test_sample_queries_seeded_and_complete():
    pairs = pd.DataFrame({"query_id": [str(q) for q in range(20) for _ in range(3)], "doc_id": "d"})
    a, b = sample_queries(pairs, 5, seed=1), sample_queries(pairs, 5, seed=1)
    assert a.equals(b) and a.query_id.nunique() == 5 and len(a) == 15
    assert set(sample_queries(pairs, 5, seed=2).query_id) != set(a.query_id)
    assert sample_queries(pairs, None, 0) is pairs and len(sample_queries(pairs, 50, 0)) == 60
    with pytest.raises(InputError):
        sample_queries(pairs, 0, 0)


def test_weighted_kappa_charges_far_misses_more_than_near_ones():
    from irrepro.labels.agreement import weighted_kappa

    near = np.array([[5, 5, 0], [0, 10, 0], [0, 0, 10]])  # 5 pairs of grade 0 called 1
    far = np.array([[5, 0, 5], [0, 10, 0], [0, 0, 10]])  # the same 5 called 2
    assert weighted_kappa(np.diag([4, 3, 3])) == pytest.approx(1.0)
    assert weighted_kappa(far) < weighted_kappa(near) < 1.0
    # by hand: n = 30, w = ((r - s) / 2)^2, observed sum w C = 5 * 0.25 = 1.25 (near)
    e = np.outer(near.sum(1), near.sum(0)) / 30
    w = (np.subtract.outer(range(3), range(3)) / 2.0) ** 2
    assert weighted_kappa(near) == pytest.approx(1 - 1.25 / (w * e).sum())


def test_agreement_table_puts_collections_and_speeds_side_by_side():
    from irrepro.labels.agreement import agreement_table

    pairs = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"], "relevance": [0, 1, 1, 0]})
    lab = pd.DataFrame({"labeler": "m", "query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"],
                        "p_0": [0.9, 0.2, 0.1, 0.8], "p_1": [0.1, 0.8, 0.9, 0.2]})
    s, _ = agreement(lab, pairs)
    t = agreement_table({"x": s, "y": s}, {("x", "m"): {"pairs_per_s": 12.5}})
    assert t.collection.tolist() == ["x", "y"] and t.pairs_per_s.tolist()[0] == 12.5
    assert t.pairs_per_s.isna().tolist() == [False, True]
