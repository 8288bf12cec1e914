"""Prediction-powered inference for the mean metric (Oosterhuis et al., KDD 2024, Eqs. 7–11)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irrepro.core.quantiles import norm_ppf
from irrepro.errors import InputError
from irrepro.papers.ci.metric import _check_alpha, _check_values


class PPIInterval(NamedTuple):
    """PPI interval (Eq. 11): ``estimate ± z·se`` with ``se = sqrt(σ̂²_error/n + σ̂²_pred/N)`` (Eq. 10)."""
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray


def ppi_mean_ci(y_true, y_pred, y_pred_unlabelled, alpha=0.05, *, include_labelled=True, ddof=1, lam=1.0):
    """Prediction-powered CI for the mean metric (Eqs. 8, 10, 11), optionally power-tuned (PPI++).

    ``y_true`` (..., n) human values ``U(q_i)`` and ``y_pred`` (..., n) predictions ``Û(q_i)`` of the n labelled
    queries; ``y_pred_unlabelled`` (..., N_u) predictions of the queries without human labels.

    The paper's ``Q`` holds N queries, the first n of them labelled, and the mean prediction of Eq. 8 runs over ALL
    N of them: with ``include_labelled=True`` (default, the paper) the prediction set is ``y_pred ∪
    y_pred_unlabelled`` (N = n + N_u).  ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=1)`` averages the
    predictions over ``Yhat_unlabeled`` only; ``include_labelled=False`` reproduces that convention.

    ``Û_PPI = mean(pred over the N) + mean(U − Û over the n)`` (Eq. 8);
    ``σ̂² = σ̂²_pred/N + σ̂²_error/n`` with sample variances of ``ddof`` (Eq. 10 divides by N − 1 and n − 1: ddof=1;
    ppi_py uses ddof=0); interval ``Û_PPI ± Φ⁻¹(1 − α/2) σ̂`` (Eq. 11, 1.96 for α = 0.05).
    Leading axes are independent repetitions.

    ``lam``: the weight λ of the predictions (PPI++, Angelopoulos, Duchi & Zrnic 2023; ppi_py's ``lam``):
    ``Û = λ·mean(pred over the N) + mean(U − λ·Û over the n)``, ``σ̂² = λ²σ̂²_pred/N + σ̂²_{U−λÛ}/n``.  ``1``
    (default) is the paper's PPI above, computed by exactly its arithmetic; ``0`` the classical CLT interval of the
    n human values alone; ``"tuned"`` the variance-minimising :func:`ppi_power_lambda` per row, so predictions
    without signal get λ ≈ 0 (the interval falls back to the human-only one) instead of widening it.
    """
    alpha = _check_alpha(alpha)
    yt = _check_values(y_true, "y_true")
    yp = _check_values(y_pred, "y_pred")
    yu = _check_values(y_pred_unlabelled, "y_pred_unlabelled")
    if yt.shape != yp.shape or yt.ndim < 1:
        raise InputError(f"ppi_mean_ci: y_true {yt.shape} and y_pred {yp.shape} must have the same shape (..., n)")
    if yu.ndim != yt.ndim or yu.shape[:-1] != yt.shape[:-1]:
        raise InputError(f"ppi_mean_ci: y_pred_unlabelled {yu.shape} must have the leading shape of y_true "
                         f"{yt.shape[:-1]} and one last axis of unlabelled queries")
    ddof = int(ddof)
    n = yt.shape[-1]
    pred = np.concatenate([yp, yu], axis=-1) if include_labelled else yu
    N = pred.shape[-1]
    if n <= ddof or N <= ddof:
        raise InputError(f"ppi_mean_ci: need more than ddof={ddof} labelled (got n={n}) and prediction (got "
                         f"N={N}) queries")
    z = norm_ppf(1 - alpha / 2)
    if isinstance(lam, str) or float(lam) != 1.0:
        if isinstance(lam, str):
            if lam != "tuned":
                raise InputError(f"ppi_mean_ci: lam must be a number in [0, 1] or 'tuned', got {lam!r}")
            lam = ppi_power_lambda(yt, yp, pred, ddof=ddof)
        lam = np.asarray(lam, dtype=float)
        if not np.isfinite(lam).all() or (lam < 0).any() or (lam > 1).any():
            raise InputError(f"ppi_mean_ci: lam must lie in [0, 1], got {lam}")
        lb = lam[..., None] if lam.ndim else lam
        err = yt - lb * yp
        est = lam * pred.mean(axis=-1) + err.mean(axis=-1)
        se = np.sqrt(lam ** 2 * pred.var(axis=-1, ddof=ddof) / N + err.var(axis=-1, ddof=ddof) / n)
        return PPIInterval(est, est - z * se, est + z * se, se)
    err = yt - yp
    est = pred.mean(axis=-1) + err.mean(axis=-1)
    se = np.sqrt(pred.var(axis=-1, ddof=ddof) / N + err.var(axis=-1, ddof=ddof) / n)
    return PPIInterval(est, est - z * se, est + z * se, se)


def ppi_power_lambda(y_true, y_pred, pred_all, *, ddof=1):
    """The PPI++ weight λ̂ minimising the variance of the estimate (ppi_py ``_calc_lhat_glm`` for the mean):
    ``λ̂ = Cov(U, Û) / ((1 + n/N) Var(Û))`` over the n labelled queries, clipped to [0, 1] (0 where Var(Û) = 0).

    ``y_true``, ``y_pred`` (..., n); ``pred_all`` (..., N) the predictions the mean prediction runs over.
    """
    yt = np.asarray(y_true, dtype=float)
    yp = np.asarray(y_pred, dtype=float)
    n, N = yt.shape[-1], np.shape(pred_all)[-1]
    cov = ((yt - yt.mean(axis=-1, keepdims=True)) * (yp - yp.mean(axis=-1, keepdims=True))).sum(axis=-1) / (n - ddof)
    var = yp.var(axis=-1, ddof=ddof)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(var > 0, cov / ((1 + n / N) * var), 0.0)
    return np.clip(lam, 0.0, 1.0)
