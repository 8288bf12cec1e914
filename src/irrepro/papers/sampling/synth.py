"""SYNTH (Schnabel, Swaminathan, Frazier & Joachims, ICTIR 2016, Sec. 7.1): a synthetic recommender collection.

"A sample X of 6000 users (queries) and 2000 items (documents). The ground truth judgments u(x, y) ∈ {0..4} for each
user/item pair were drawn from a categorical distribution whose parameters were drawn from a Dirichlet distribution
with hyper-parameters α = (.54, .25, .175, .03, .005)". Systems: OPT ranks each user's items by true relevance;
SHIFT-m shifts OPT's ranking down by m (items pushed past the end re-enter at the top); REV-m reverses OPT's top m.
Evaluation measure: DCG@2000.

Choices the text leaves open (config options, see docs/sampling.md):

* ``dirichlet``: ``per_pair`` (a categorical drawn for every user/item pair, so grades are i.i.d. with
  p = α/Σα: our default), ``per_user`` (one categorical per user) or ``global`` (one for the whole collection);
* ``gain``: ``linear`` (gain = u, our default) or ``exponential`` (2^u − 1);
* the DCG discount's log base (``sampling.dcg_weights(base=...)``): e (natural log) reproduces Table 2's true U(S)
  (OPT 284.4); base 2 gives about 197.
* ties in OPT's sort: broken by item index (stable sort), a deterministic choice.

All arrays are users × items; a ranking is given as each item's 0-based rank (``ranks[x, y]``).
"""
from __future__ import annotations

import numpy as np

ALPHA = (0.54, 0.25, 0.175, 0.03, 0.005)
SYSTEMS = ("OPT", "REV-75", "REV-150", "SHIFT-5", "SHIFT-7")


def generate_grades(n_users=6000, n_items=2000, alpha=ALPHA, dirichlet="per_pair", seed=0) -> np.ndarray:
    """Grades u(x, y) ∈ {0..len(alpha)-1}, users × items (int8)."""
    rng = np.random.default_rng(seed)
    k = len(alpha)
    if dirichlet == "per_pair":
        # a fresh categorical per pair: marginally, grades are i.i.d. categorical with p = α / Σα
        p = np.asarray(alpha, float) / np.sum(alpha)
        theta = np.repeat(p[None, :], n_users, axis=0)
    elif dirichlet == "per_user":
        theta = rng.dirichlet(alpha, size=n_users)                    # users × k
    elif dirichlet == "global":
        theta = np.repeat(rng.dirichlet(alpha)[None, :], n_users, axis=0)
    else:
        raise ValueError(f"dirichlet must be 'per_pair', 'per_user' or 'global', got {dirichlet!r}")
    cdf = np.cumsum(theta, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random((n_users, n_items))
    grades = np.zeros((n_users, n_items), dtype=np.int8)
    for j in range(k - 1):
        grades += (u >= cdf[:, j:j + 1]).astype(np.int8)
    return grades


def opt_order(grades) -> np.ndarray:
    """Items of each user in OPT's order (descending grade, ties by item index)."""
    return np.argsort(-grades.astype(np.int16), axis=1, kind="stable")


def system_order(order_opt, name: str) -> np.ndarray:
    """Item order of a SYNTH system derived from OPT's order."""
    if name == "OPT":
        return order_opt
    kind, _, m = name.partition("-")
    m = int(m)
    if kind == "SHIFT":
        return np.roll(order_opt, m, axis=1)
    if kind == "REV":
        out = order_opt.copy()
        out[:, :m] = order_opt[:, :m][:, ::-1]
        return out
    raise ValueError(f"unknown SYNTH system {name!r}")


def ranks_from_order(order) -> np.ndarray:
    """0-based rank of every item (inverse permutation of each row)."""
    ranks = np.empty_like(order)
    rows = np.arange(order.shape[0])[:, None]
    ranks[rows, order] = np.arange(order.shape[1])[None, :]
    return ranks


def gains(grades, gain="linear") -> np.ndarray:
    if gain == "linear":
        return grades.astype(np.float64)
    if gain == "exponential":
        return 2.0 ** grades.astype(np.float64) - 1.0
    raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")


def synth(n_users=6000, n_items=2000, alpha=ALPHA, dirichlet="per_pair", gain="linear", systems=SYSTEMS, seed=0):
    """Utilities u (users × items, float) and ranks {system: users × items 0-based ranks}."""
    g = generate_grades(n_users, n_items, alpha, dirichlet, seed)
    order = opt_order(g)
    ranks = {s: ranks_from_order(system_order(order, s)) for s in systems}
    return gains(g, gain), ranks
