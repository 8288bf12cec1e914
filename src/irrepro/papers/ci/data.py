"""Reading the label stage's tables for the CI analyses: a collection's labelled ranking and one labeler's
distributions as the arrays of :mod:`irrepro.papers.ci.intervals`, and the validation half of a 50:50 split."""
from __future__ import annotations

from irrepro.core.gain import dcg_weights
from irrepro.labels.stage import read_labels, read_pairs
from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN
from irrepro.papers.ci.ranking import label_matrix, per_query_dcg


def load(pairs_path, labels_path, k, label_gain=DEFAULT_LABEL_GAIN):
    """``(query_ids, grades, dists, weights, u_true, u_pred)`` for DCG@k of the ranking (top k slots).

    ``weights`` are the DCG weights ω (Eq. 1) with 0 past a query's last document; ``u_true`` U(q) (Eq. 1, human
    grades) and ``u_pred`` Û(q) (Eq. 6, the labeler's predicted gain, see ``label_gain``), each ``(N,)``.
    """
    qids, grades, dists, mask = label_matrix(read_pairs(pairs_path), read_labels(labels_path))
    depth = min(k, grades.shape[1])
    grades, dists, mask = grades[:, :depth], dists[:, :depth], mask[:, :depth]
    weights = dcg_weights(depth)[None, :] * mask
    u_true, u_pred = per_query_dcg(grades, dists, mask, k, label_gain)
    return qids, grades, dists, weights, u_true, u_pred


def n_validation(N: int) -> int:
    """Size of the validation half of N queries (the paper's 50:50 split): ``N // 2``."""
    return N // 2
