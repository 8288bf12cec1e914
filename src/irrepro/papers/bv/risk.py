"""Risk-sensitive evaluation measures: URisk, TRisk, ZRisk and GeoRisk.

No Python IR toolkit provides them; definitions follow the original papers (as restated in the Appendix of
Zhang et al., IP&M 2022):

* URisk (Wang, Bennett & Collins-Thompson, SIGIR 2012; Dinçer, Macdonald & Ounis, SIGIR 2014), Eq. 17:
  ``URisk_α = (1/n) [Σ_{q∈Q+} δ_q + (1 + α) Σ_{q∈Q−} δ_q]`` with ``δ_q = x_q − b_q``; α ≥ 0 weighs losses.
* TRisk (Dinçer et al. 2014): the studentised URisk, ``TRisk_α = URisk_α / (s / sqrt(n))`` where ``s`` is the
  sample standard deviation of the per-topic risk-reward values ``δ_q`` (losses scaled by ``1 + α``); |TRisk| > 2
  marks a significant risk/reward.
* ZRisk (Dinçer, Macdonald & Ounis, SIGIR 2016), Eqs. 18–19: on the 2 × n table of the system and the baseline,
  expected values ``e_{i,q} = S_i · T_q / N`` (row total × topic total / grand total),
  ``z_q = (x_q − e_q) / sqrt(e_q)`` and ``ZRisk_α = Σ_{q∈Q+} z_q + (1 + α) Σ_{q∈Q−} z_q``.
  A topic whose expected value is 0 (both scores 0) contributes 0.
* GeoRisk (Dinçer et al. 2016), Eq. 20: ``sqrt( (Σ_q x_q / n) · Φ(ZRisk_α / n) )`` with Φ the standard normal CDF.

* Robustness Index (Collins-Thompson, CIKM 2009; SIGIR 2013 Zhang et al., Sec. 1): ``RI = (n+ − n−) / |Q|``,
  ``n+`` (``n−``) the queries the model improves (hurts) over the original model; ties count in neither.
* ``<Init`` (Zighelnic & Kurland, SIGIR 2008): the fraction of queries on which the model is worse than the
  original (initial) model.

All functions take the system's and the baseline's per-topic scores (1-D arrays of equal length) and return a float;
``*_matrix`` versions take a systems × topics matrix and a baseline vector and return one value per system.
"""
from __future__ import annotations

import numpy as np

from irrepro.core.quantiles import norm_cdf
from irrepro.errors import InputError


def _pair(x, b):
    x, b = np.asarray(x, float), np.asarray(b, float)
    if x.shape != b.shape or x.ndim != 1:
        raise InputError(f"system and baseline need equal-length 1-D score vectors, got {x.shape} and {b.shape}")
    if x.size == 0:
        raise InputError("no topics")
    if np.isnan(x).any() or np.isnan(b).any():
        raise InputError("scores contain NaN")
    return x, b


def _alpha(alpha):
    if alpha < 0:
        raise InputError(f"risk parameter alpha must be >= 0, got {alpha}")
    return float(alpha)


def urisk(x, b, alpha: float = 0.0) -> float:
    """URisk_α (Eq. 17). α = 0 gives the mean difference (e.g. the MAP difference)."""
    x, b = _pair(x, b)
    d = x - b
    return float((d[d > 0].sum() + (1 + _alpha(alpha)) * d[d <= 0].sum()) / d.size)


def trisk(x, b, alpha: float = 0.0) -> float:
    """TRisk_α: URisk_α divided by its standard error (Dinçer et al. 2014)."""
    x, b = _pair(x, b)
    d = x - b
    r = np.where(d > 0, d, (1 + _alpha(alpha)) * d)
    if r.size < 2:
        raise InputError("TRisk needs at least 2 topics")
    s = r.std(ddof=1)
    if s == 0:
        raise InputError("TRisk undefined: the per-topic risk-reward values are constant")
    return float(r.mean() / (s / np.sqrt(r.size)))


def zrisk(x, b, alpha: float = 0.0) -> float:
    """ZRisk_α (Eqs. 18–19) on the 2 × n table of system and baseline."""
    x, b = _pair(x, b)
    if (x < 0).any() or (b < 0).any():
        raise InputError("ZRisk needs non-negative scores")
    t = np.vstack([x, b])
    total = t.sum()
    if total == 0:
        raise InputError("ZRisk undefined: every score is 0")
    e = t.sum(axis=1)[0] * t.sum(axis=0) / total
    z = np.zeros_like(x)
    ok = e > 0
    z[ok] = (x[ok] - e[ok]) / np.sqrt(e[ok])
    return float(z[z > 0].sum() + (1 + _alpha(alpha)) * z[z <= 0].sum())


def georisk(x, b, alpha: float = 0.0) -> float:
    """GeoRisk_α (Eq. 20): geometric mean of the mean score and Φ(ZRisk_α / n)."""
    x, b = _pair(x, b)
    return float(np.sqrt(x.mean() * norm_cdf(zrisk(x, b, alpha) / x.size)))


def risk_table(X, baseline, alpha: float = 0.0):
    """All four measures for every system (rows of ``X``) against one baseline vector: a DataFrame."""
    import pandas as pd
    X = np.asarray(X, float)
    return pd.DataFrame([{"urisk": urisk(r, baseline, alpha), "trisk": trisk(r, baseline, alpha),
                          "zrisk": zrisk(r, baseline, alpha), "georisk": georisk(r, baseline, alpha)} for r in X])


def robustness_index(x, b) -> float:
    """Robustness Index ``(n+ − n−) / |Q|`` of ``x`` over the original model ``b`` (SIGIR 2013, Table 1)."""
    x, b = _pair(x, b)
    return float(((x > b).sum() - (x < b).sum()) / x.size)


def below_init(x, b) -> float:
    """``<Init``: the fraction of queries on which ``x`` is worse than the original model ``b`` (SIGIR 2013, Table 1)."""
    x, b = _pair(x, b)
    return float((x < b).mean())
