"""Rank correlations of system rankings that weigh the top: τ_AP (:func:`tau_ap`)."""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError


def tau_ap(truth, estimate) -> float:
    """AP rank correlation τ_AP of the ranking by ``estimate`` against the ranking by ``truth`` (Yilmaz, Aslam &
    Robertson, "A new rank correlation coefficient for information retrieval", SIGIR 2008).

    Both are scores of the same N items, higher = better. Walk down the ranking by ``estimate``; for the item at
    rank i (i = 2..N) let C(i) be the number of items above it in that ranking that ``truth`` also ranks above it.
    Then

        τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1,

    the mean over ranks of the precision of "the items above this one belong above it", rescaled to [−1, 1]. Like
    Kendall's τ it is 1 for the same ranking and −1 for the reversed one, but a swap near the top of the estimated
    ranking costs more than one near the bottom (it spoils the precision at every rank below it). It is not
    symmetric: ``truth`` is the reference (here the ranking by human labels), ``estimate`` the ranking judged.

    **Ties** (the paper defines strict rankings only): the value is the expectation of τ_AP when each ranking's ties
    are broken uniformly at random, independently. A pair tied in ``truth`` then counts 1/2 in C(i); an item among
    m tied in ``estimate`` below a items ranked strictly above them is at each of the ranks a + 1 .. a + m with
    equal probability, and the expected C at rank a + k is ``mean over the group of (its correct items among the
    a above) + (k − 1)/2`` (the k − 1 group members above it are a random subset; each pair within the group is
    correct one way round). So the same ranking with ties gives less than 1, and all-equal truths give 0. For other
    treatments see Urbano & Marrero, "The treatment of ties in AP correlation" (ICTIR 2017).

    NaN for fewer than 2 items.
    """
    t = np.asarray(truth, dtype=float).ravel()
    e = np.asarray(estimate, dtype=float).ravel()
    if t.shape != e.shape:
        raise InputError(f"tau_ap: truth and estimate must score the same items, got {t.size} and {e.size}")
    if not (np.isfinite(t).all() and np.isfinite(e).all()):
        raise InputError("tau_ap: scores contain NaN or inf")
    N = t.size
    if N < 2:
        return float("nan")
    # corr[y, x]: y placed above x is right by the truth (1), a truth tie (1/2), or wrong (0)
    corr = (t[:, None] > t[None, :]) + 0.5 * (t[:, None] == t[None, :])
    above = e[:, None] > e[None, :]  # y strictly above x in the estimated ranking
    c_above = (corr * above).sum(axis=0)  # per item x: correct items among those strictly above it
    total = 0.0
    for v in np.unique(e):  # each group of items tied in the estimate
        members = e == v
        m = int(members.sum())
        a = int((e > v).sum())
        mean_a = float(c_above[members].mean())
        for k in range(1, m + 1):
            if a + k >= 2:
                total += (mean_a + (k - 1) / 2) / (a + k - 1)
    return float(2.0 * total / (N - 1) - 1.0)
