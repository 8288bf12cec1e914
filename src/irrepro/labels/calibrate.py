"""From a relevance *score* (a bi-encoder's similarity) to a distribution over a prompt's G grades, fitted on human
labels of other queries only (:func:`crossfit`).

The mapping is an ordinal (proportional-odds, cumulative-logit) model of the human grade y ∈ {0..G-1} given the
score s,

    P(y <= j | s) = σ(θ_j − a·z),   z = (s − mean_s) / sd_s,   θ_0 < θ_1 < … < θ_{G-2},   σ(x) = 1 / (1 + e^{−x}),

so P(y = j | s) = P(y <= j | s) − P(y <= j−1 | s) (with P(y <= −1) = 0, P(y <= G−1) = 1); for G = 2 it is logistic
regression. It is fitted by maximum likelihood with a small ridge penalty λ(a² + Σ log-gaps²) (λ = :data:`RIDGE`,
so a grade absent from the training rows keeps a finite threshold), by L-BFGS (scipy, numerical gradient). With
a > 0 it is monotone in s: a higher score never lowers the expected grade, so within one fold the ranking of pairs
by expected grade is the ranking by score.

**Never fitted on the labels it is applied to.** :func:`crossfit` assigns the queries to ``folds`` folds (a seeded
permutation of the sorted query ids, dealt round-robin: :func:`query_folds`) and labels the pairs of each fold with
the mapping fitted on the pairs of the other folds. A query's human grades reach the labels of other queries only,
never its own (tests/test_encoder_labels.py changes one query's grades and checks that its labels do not move).
This is what the CI paper's PPI and CRC intervals require of the labels of the human-labelled queries they
correct with: labels that did not see those queries' human grades.
"""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError

#: ridge weight of the ordinal fit (on the slope and the log-gaps between thresholds): small against the mean
#: log-likelihood per pair it is added to; it keeps the fit finite when a grade is absent from the training rows
RIDGE = 1e-3


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _thresholds(params: np.ndarray) -> np.ndarray:
    """θ from (θ_0, log-gaps): θ_j = θ_0 + Σ_{i<=j} exp(g_i), strictly increasing."""
    return params[0] + np.concatenate([[0.0], np.cumsum(np.exp(params[1:]))])


def ordinal_probs(a: float, theta: np.ndarray, z: np.ndarray) -> np.ndarray:
    """P(y = j | z), an (n, G) array for G = len(theta) + 1 grades."""
    cum = _sigmoid(np.asarray(theta)[None, :] - a * np.asarray(z, dtype=float)[:, None])
    cum = np.concatenate([np.zeros((len(cum), 1)), cum, np.ones((len(cum), 1))], axis=1)
    return np.clip(np.diff(cum, axis=1), 0.0, 1.0)


def fit_ordinal(s: np.ndarray, y: np.ndarray, n_grades: int, ridge: float = RIDGE) -> dict:
    """The ordinal model of grades ``y`` (integers 0..G−1) given scores ``s``: ``{"mean", "sd", "a", "theta"}``
    (see the module docstring). Needs at least two distinct grades among ``y``."""
    from scipy.optimize import minimize

    s = np.asarray(s, dtype=float)
    y = np.asarray(y, dtype=int)
    G = int(n_grades)
    if len(s) != len(y) or len(s) == 0:
        raise InputError(f"fit_ordinal: {len(s)} scores and {len(y)} grades (need equally many, at least one)")
    if y.min() < 0 or y.max() > G - 1:
        raise InputError(f"fit_ordinal: grades must lie in 0..{G - 1}, got {y.min()}..{y.max()}")
    if len(np.unique(y)) < 2:
        raise InputError(f"fit_ordinal: the training rows hold one grade only ({int(y[0])}): nothing to fit a "
                         "score-to-grade mapping on (more queries, or more folds of them, are needed)")
    mean, sd = float(s.mean()), float(s.std())
    sd = sd if sd > 0 else 1.0
    z = (s - mean) / sd
    counts = np.bincount(y, minlength=G)
    cum = np.clip(np.cumsum(counts)[:-1] / len(y), 0.02, 0.98)
    start_theta = np.log(cum / (1 - cum))
    start = np.concatenate([[start_theta[0]], np.log(np.maximum(np.diff(start_theta), 0.1))])
    x0 = np.concatenate([[1.0], start])

    def nll(x):
        a, theta = x[0], _thresholds(x[1:])
        p = ordinal_probs(a, theta, z)[np.arange(len(y)), y]
        return -np.sum(np.log(np.maximum(p, 1e-300))) / len(y) + ridge * (a * a + np.sum(x[2:] ** 2))

    res = minimize(nll, x0, method="L-BFGS-B")
    return {"mean": mean, "sd": sd, "a": float(res.x[0]), "theta": _thresholds(res.x[1:]).tolist()}


def apply_ordinal(model: dict, s: np.ndarray) -> np.ndarray:
    """P(y = j | s) of a fitted :func:`fit_ordinal` model, (n, G)."""
    z = (np.asarray(s, dtype=float) - model["mean"]) / model["sd"]
    p = ordinal_probs(model["a"], np.asarray(model["theta"]), z)
    return p / p.sum(axis=1, keepdims=True)


def query_folds(query_ids, folds: int, seed: int) -> dict:
    """``{query_id: fold}``: the sorted distinct query ids permuted by ``numpy.random.default_rng(seed)`` and dealt
    round-robin into ``folds`` folds (sizes differ by at most one)."""
    qids = np.array(sorted({str(q) for q in query_ids}))
    if int(folds) < 2:
        raise InputError(f"calibration folds {folds!r}: expected at least 2 (a query's own human labels must never "
                         "fit the mapping that labels it)")
    if len(qids) < int(folds):
        raise InputError(f"calibration folds {folds}: only {len(qids)} queries to deal into them")
    perm = np.random.default_rng(int(seed)).permutation(len(qids))
    return {q: int(i % int(folds)) for i, q in zip(range(len(qids)), qids[perm])}


def crossfit(scores, grades, query_ids, n_grades: int, folds: int = 5, seed: int = 0,
             ridge: float = RIDGE, fit_queries=None) -> tuple[np.ndarray, list[dict]]:
    """``(probs, models)``: each pair's distribution over ``n_grades`` grades from the ordinal model fitted on the
    pairs of the other query folds (:func:`query_folds`), and the ``folds`` fitted models (with their fold and
    training size). ``grades`` are the pairs' human grades, clipped to 0..G−1 like the agreement table's.

    ``fit_queries``: only these queries' human grades fit the mapping (the few human-labelled queries of an
    evaluation; the grades of every other pair are ignored and may be anything, e.g. NaN). They are dealt into
    ``folds`` folds and each is labelled by the model of the other folds, as above; every other query by the mean of
    the ``folds`` models' distributions (cross-prediction, Zrnic & Candès 2024): the same models that label the fit
    queries, so a judged and an unjudged query are labelled alike (one model fitted on all of them would label the
    unjudged ones with a mapping the judged ones' labels never saw: a bias PPI's correction does not remove).
    None: every query is a fit query.
    """
    s = np.asarray(scores, dtype=float)
    q = np.asarray([str(x) for x in query_ids])
    if not (len(s) == len(grades) == len(q)):
        raise InputError(f"crossfit: {len(s)} scores, {len(grades)} grades, {len(q)} query ids (need equally many)")
    if fit_queries is None:
        fit = np.ones(len(q), dtype=bool)
    else:
        fq = {str(x) for x in fit_queries}
        fit = np.isin(q, sorted(fq))
        if not fit.any():
            raise InputError("crossfit: none of the fit_queries has a pair to fit the mapping on")
    g = np.asarray(grades, dtype=float)
    if np.isnan(g[fit]).any():
        raise InputError("crossfit: a pair of a fit query has no human grade")
    y = np.zeros(len(q), dtype=int)
    y[fit] = np.clip(g[fit], 0, n_grades - 1).astype(int)
    fold_of = query_folds(q[fit], folds, seed)
    f = np.array([fold_of.get(x, -1) for x in q])
    out = np.full((len(s), int(n_grades)), np.nan)
    models = []
    for k in range(int(folds)):
        train, test = fit & (f != k), f == k
        try:
            m = fit_ordinal(s[train], y[train], n_grades, ridge)
        except InputError as e:
            raise InputError(f"calibration fold {k} of {folds}: {e}") from None
        out[test] = apply_ordinal(m, s[test])
        models.append({"fold": k, "train_pairs": int(train.sum()), "train_queries": int(len(set(q[train]))),
                       **m})
    rest = ~fit
    if rest.any():
        out[rest] = np.mean([apply_ordinal(m, s[rest]) for m in models], axis=0)
    return out, models
