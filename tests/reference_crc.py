"""Test-only reference of the CRC dual calibration (Oosterhuis et al., KDD 2024, Eq. 24): bisection, and for every
λ a Python loop over the batches — the literal reading the vectorised
:func:`irrepro.papers.ci.calibration.calibrate_crc` is checked against (tests/test_intervals.py) and timed against
(tests/bench_calibration.py)."""
import numpy as np

from irrepro.papers.ci.calibration import _calibration_inputs, _finish
from irrepro.papers.ci.crc import _crc_u
from irrepro.papers.ci.metric import _LOSS_RTOL


def calibrate_crc_loop(u_true, dists, batches, alpha=0.05, *, weights=None, gain=None, correction="batches",
                       tol=1e-6, label_gain="expected_gain"):
    """Reference implementation of :func:`~irrepro.papers.ci.calibration.calibrate_crc`: bisection, and for every
    λ a Python loop over the M batches computing ``Û_CRC(Q̄_i, λ)`` from the batch's label distributions and ``U(Q̄_i)`` literally (Eq. 24).

    Same inputs and result (λ to within ``tol``); slow — for tests and benchmarks only.
    """
    alpha, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction,
                                                      label_gain)
    M = B.shape[0]
    thr = bound * M
    lam1 = np.empty(1)

    atol = _LOSS_RTOL * max(1.0, float(np.abs(u).max()))  # equal up to rounding: no loss (as calibrate_crc)

    def losses(lam):
        lam1[0] = lam
        hi = lo = 0
        for idx in B:
            u_crc = _crc_u(P[idx], lam1, w[idx], *g)[0].mean()   # Û_CRC(Q̄_i, λ)
            u_batch = u[idx].mean()                              # U(Q̄_i)
            hi += u_crc < u_batch - atol
            lo += u_crc > u_batch + atol
        return hi, lo

    h_m1, l_m1 = losses(-1.0)
    h_p1, l_p1 = losses(1.0)
    # λ_high: smallest feasible
    if not h_p1 < thr:
        lam_high, r_high = np.nan, h_p1
    elif h_m1 < thr:
        lam_high, r_high = -1.0, h_m1
    else:
        a, z, r_high = -1.0, 1.0, h_p1
        while z - a > tol:
            mid = 0.5 * (a + z)
            h, _ = losses(mid)
            if h < thr:
                z, r_high = mid, h
            else:
                a = mid
        lam_high = z
    # λ_low: largest feasible
    if not l_m1 < thr:
        lam_low, r_low = np.nan, l_m1
    elif l_p1 < thr:
        lam_low, r_low = 1.0, l_p1
    else:
        a, z, r_low = -1.0, 1.0, l_m1
        while z - a > tol:
            mid = 0.5 * (a + z)
            _, lo = losses(mid)
            if lo < thr:
                a, r_low = mid, lo
            else:
                z = mid
        lam_low = a
    return _finish(lam_low, lam_high, r_low / M, r_high / M, bound, M)
