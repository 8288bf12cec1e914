"""Shared by the CI scripts: load a collection's labelled ranking and one labeler's distributions as arrays."""
import json

import numpy as np
import pandas as pd

from irrepro.papers.ci.intervals import dcg_weights
from irrepro.papers.ci.ranking import label_matrix, per_query_dcg


def load(pairs_path, labels_path, k):
    """``(query_ids, grades, dists, weights, u_true, u_pred)`` for DCG@k of the ranking (top k slots)."""
    pairs = pd.read_csv(pairs_path, sep="\t", dtype={"query_id": str, "doc_id": str})
    labels = pd.read_csv(labels_path, sep="\t", dtype={"query_id": str, "doc_id": str})
    qids, grades, dists, mask = label_matrix(pairs, labels)
    depth = min(k, grades.shape[1])
    grades, dists, mask = grades[:, :depth], dists[:, :depth], mask[:, :depth]
    weights = dcg_weights(depth)[None, :] * mask
    u_true, u_pred = per_query_dcg(grades, dists, mask, k)
    return qids, grades, dists, weights, u_true, u_pred


def settings(sm):
    return json.loads(sm.params.settings)


def n_validation(N):
    return N // 2


def dump(values, path):
    with open(path, "w") as f:
        json.dump(values, f, indent=1, sort_keys=True, default=float)


def clean(x):
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else x
