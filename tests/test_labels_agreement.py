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
    f = summary.set_index("labeler").loc["flat"]
    assert np.isnan(f.spearman) and f.kappa == pytest.approx(0.0) and f.exact == 0.5
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
