"""Conformal risk control, the dual calibration of λ_low and λ_high (Oosterhuis et al., KDD 2024, Eqs. 20–25),
the CRC interval (Eq. 20) and per-query CRC (Secs. 6.2, 8.4).

Vectorisation (Eq. 24): the M calibration batches ``Q̄_i`` (Sec. 6.2) are index arrays into the ``n`` calibration
queries.  Because the batch metric is a mean, ``Û_CRC(Q̄_i, λ) − U(Q̄_i) = (C (û_λ − u))_i / b`` with ``C`` the
``M × n`` matrix of how often each query occurs in each batch, ``û_λ`` the per-query CRC values and ``u`` the
human values, so the losses at any λ for any batches cost one matrix product.  The search for each λ is a
(grid+1)-ary search — a grid of λ, then ever finer grids inside the bracket found, for the batches whose loss can
still change there — and returns the same λ as bisection to the requested tolerance ``tol``.  Of each grid it
evaluates only the few λ that decide the next bracket, predicted from the values it has, and the searches of
several label sets on the same batches run side by side (:func:`calibrate_crc_sets`, :func:`_calibrate`); the
result is, bit for bit, that of evaluating every λ of every grid.  The literal per-batch loop (bisection) is the
test reference ``tests/reference_crc.py`` (benchmark: ``tests/bench_calibration.py``), the search evaluating every
λ of every grid that of ``tests/test_crc_search.py``.  The products are small: on a busy machine run with one BLAS
thread (``OPENBLAS_NUM_THREADS=1``, or Snakemake ``threads: 1``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.ci.bootstrap import Interval
from irrepro.papers.ci.crc import _CRCKernel, _crc_u
from irrepro.papers.ci.metric import (_LOSS_RTOL, _check_alpha, _check_dist, _check_values, _gain_spec,
                                      _query_weights)


class CRCCalibration(NamedTuple):
    """Result of the dual calibration (Eq. 24).

    ``lam_low``/``lam_high`` ∈ [−1, 1] (NaN when that bound cannot be met); ``failed`` is True when either is NaN
    ("the method explicitly fails to provide a CI", Sec. 5.2); ``bound`` the right-hand side of Eq. 24;
    ``risk_low``/``risk_high`` the empirical risks at the returned λ (each < ``bound``; for a side that failed, the
    risk at its best end λ = ∓1, which is ≥ ``bound``); ``n_batches`` M.
    """
    lam_low: float
    lam_high: float
    failed: bool
    bound: float
    risk_low: float
    risk_high: float
    n_batches: int


def crc_bound(alpha, size):
    """Right-hand side of Eq. 24: ``½ (α − (1 − α)/size)`` — Eq. 15's ``α − (B − α)/n`` with B = 1, halved for the
    two-sided interval (Eq. 22).  ``size`` is M (Eq. 24 as printed) or the number of calibration queries n."""
    return 0.5 * (alpha - (1.0 - alpha) / size)


def sample_batches(n, n_batches=10_000, batch_size=None, *, rng):
    """M calibration batches ``Q̄_i`` of ``batch_size`` (default n) queries drawn with replacement from the n
    calibration queries (Sec. 6.2): an int array (M, batch_size) of indices, ``rng.integers(0, n, (M, b))``."""
    n = int(n)
    if n < 1:
        raise InputError(f"sample_batches: need n >= 1 calibration queries, got {n}")
    b = n if batch_size is None else int(batch_size)
    return np.random.default_rng(rng).integers(0, n, size=(int(n_batches), b))


def single_query_batches(n):
    """The per-query calibration batches ``Q̄_i = {q_i}`` (Sec. 6.2; M = n): ``arange(n)[:, None]``."""
    return np.arange(int(n))[:, None]


def _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction, label_gain, check_batches=True,
                        counts=None):
    alpha = _check_alpha(alpha)
    u = _check_values(u_true, "u_true", ndim=1)
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3 or P.shape[0] != u.size:
        raise InputError(f"calibration: dists must have shape (n, depth, G) with n = len(u_true) = {u.size}, "
                         f"got {P.shape}")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_spec(gain, P.shape[-1], label_gain)
    if batches is None:                     # batches given by their counts only (:func:`calibrate_crc`)
        if counts is None:
            raise InputError("calibration: give the batches, or their counts (M, n)")
        C = np.asarray(counts)
        if C.ndim != 2 or C.shape[0] < 1 or C.shape[1] != u.size or (C < 0).any():
            raise InputError(f"counts must be a non-negative (M, n) array with n = {u.size} calibration queries, "
                             f"got {C.shape}")
        rows = C.sum(axis=1)
        if (rows <= 0).any():
            raise InputError("counts: every batch must hold a query")
        B = np.broadcast_to(np.intp(0), (C.shape[0], int(rows.max())))   # the batches' shape (no indices)
    else:
        B = np.asarray(batches)
        if B.ndim != 2 or B.shape[0] < 1 or B.shape[1] < 1 or not np.issubdtype(B.dtype, np.integer):
            raise InputError(f"batches must be a 2-d int array (M, batch_size) of query indices, got {B.shape} "
                             f"{B.dtype}")
        if check_batches and ((B < 0).any() or (B >= u.size).any()):
            raise InputError(f"batches: query indices must lie in 0..{u.size - 1}")
    if correction == "batches":
        size = B.shape[0]
    elif correction == "queries":
        size = u.size
    else:
        raise InputError(f"correction must be 'batches' (Eq. 24 as printed: M) or 'queries' (Eq. 15: n), got "
                         f"{correction!r}")
    return alpha, u, P, w, g, B, crc_bound(alpha, size)


def _finish(lam_low, lam_high, risk_low, risk_high, bound, M):
    failed = bool(np.isnan(lam_low) or np.isnan(lam_high))
    return CRCCalibration(float(lam_low), float(lam_high), failed, float(bound), float(risk_low), float(risk_high),
                          int(M))


def _located(cnt, p0, valid, thr, L):
    """First feasible point from the counts ``cnt`` (Q, W) at the consecutive points ``p0 + 0..W−1`` of a grid of L
    points (``valid``: those in 0..L−1): ``(k, decided)``, k the first feasible evaluated point (L: none) and
    ``decided`` where the evaluated points decide it — an evaluated infeasible point (or −1) directly below k
    (or below L: none feasible); the count is non-increasing along the grid."""
    feasible = valid & (cnt < thr)
    found = feasible.any(axis=1)
    first = np.maximum(p0, 0)                           # lowest and highest evaluated point
    last = np.minimum(p0 + cnt.shape[1], L) - 1
    k = np.where(found, p0 + np.argmax(feasible, axis=1), L)
    return k, np.where(found, (k > first) | (k == 0), last == L - 1)


def _predict_first(D, cut, thr, M):
    """Predicted first feasible point of the first grid for each search from its D (Q, L0, S) for S of the M
    batches: the first point whose count, scaled to M, is below ``thr`` (L0: none)."""
    pred = np.count_nonzero(D < cut, axis=2) * (M / D.shape[2])
    return np.where(pred[:, -1] < thr, np.argmax(pred < thr, axis=1), D.shape[1])


def _predict_round(dlo, dhi, pf, base, cut, thr, grid):
    """Predicted first feasible inner point of each search's round (``grid``: none) from its active batches' D
    ``dlo``/``dhi`` at the bracket's ends (``pf``: their search, 0..Q−1): with D interpolated linearly between the
    ends, a batch is a loss at the inner points below its crossing of ``cut``."""
    Q = base.size
    below = np.ceil((cut - dlo) / (dhi - dlo) * (grid + 1)).astype(np.intp) - 1      # 0..grid: dlo < cut <= dhi
    hist = np.bincount(pf * (grid + 1) + below, minlength=Q * (grid + 1)).reshape(Q, grid + 1)
    ok = base[:, None] + hist.sum(axis=1, keepdims=True) - np.cumsum(hist, axis=1)[:, :grid] < thr
    return np.where(ok[:, -1], np.argmax(ok, axis=1), grid)


def _decided(k, first, last, L):
    """Whether the evaluated points ``first..last`` of a grid of L points decide its first feasible point, ``k``
    the first feasible of them (L: none): an evaluated infeasible point (or −1) directly below k, or below L."""
    return (k > first or k == 0) if k < L else last == L - 1


def _beyond(k, first, last, L):
    """The points to evaluate next where the evaluated points ``first..last`` do not decide (:func:`_decided`): the
    two below ``first`` (k = first) or the two above ``last`` (none feasible), the count being non-increasing
    along the grid."""
    return list(range(max(first - 2, 0), first)) if k < L else list(range(last + 1, min(last + 3, L)))


def _certain(D, cut, delta):
    """``#{D < cut}`` per row of D, or None where a value lies within ``delta`` of ``cut``."""
    below = np.count_nonzero(D < cut - delta, axis=-1)
    return None if (below != np.count_nonzero(D <= cut + delta, axis=-1)).any() else below


def _calibrate(u, sets, C, thr, b, tol, grid):
    """The searches for λ_high and λ_low (:func:`calibrate_crc`) of the label sets ``sets`` (``(P, ω, gain spec)``
    each, P (n, depth, G)) on the same batches (count matrix ``C``), run side by side; returns ``[(λ', count at λ')
    of λ_low's search, (λ_high, count at λ_high)]`` per set, with λ_low = −λ'.

    Search q (set ``qs[q]``, ``sign`` 1 for λ_high, −1 for λ_low mirrored) looks for the smallest λ with
    ``#{i: D_i(λ) < cut} < thr``, ``D_i(λ) = sign · b (Û_CRC(Q̄_i, sign · λ) − U(Q̄_i))`` non-decreasing in λ, by a
    (grid+1)-ary search on a bracket [infeasible, feasible]: first the grid ``lams0`` of ``grid + 2`` points from −1
    to 1 for all M batches, then rounds that split the bracket into ``grid + 1`` equal parts and move to the part
    holding the first feasible of its ``grid`` inner points, until the bracket is no wider than ``tol`` or no batch
    can change its sign inside it; the result is the bracket's feasible end.  A round looks only at the *active*
    batches (those whose sign can still change inside the bracket; the flat arrays ``seg`` (search), ``row``
    (batch), ``dlo``/``dhi`` (D at the bracket's ends), each search's rows consecutive and in increasing order) and
    evaluates a window of points around a predicted first feasible point — on the first grid from the first
    ``_PREDICT_BATCHES`` batches (:func:`_predict_first`), later from each active batch's D interpolated linearly
    between the bracket's ends (:func:`_predict_round`): that point and the one below it, in the first round (whose
    bracket is the first grid's, its prediction rougher) from three below to one above it — and, where the window
    does not decide the round (:func:`_located`), the points beyond it, nearest first (:func:`_beyond`).  All
    searches advance together, their D computed in one product with ``C`` for the first grid and for the searches
    with many active batches, otherwise from the active batches' rows of ``C``.

    Where a value lies within ``delta`` of ``cut`` the search evaluates every point of the round with the reference
    product — the round's grid times its active batches' rows, ``crc._CRCKernel`` and ``X Cᵀ``, as a search
    evaluating every point computes it.  A value computed with another product differs from the reference's, and
    both from the exact value, by rounding only: by less than ``delta / 2``, which bounds the rounding errors of the
    n-term sums and of the kernel ((n + depth + G) ε times ``b (max |Û_CRC − U| + max |U| + max Σ|ω|)``,
    |Û_CRC − U| largest at λ = ±1) with a wide margin (``_ROUNDING_MARGIN``).  So every evaluated value is on the
    side of ``cut`` of the reference's and of the exact value, and, the exact D being monotone in λ, so is every
    value the reference computes at the points not evaluated: every loss, count and λ is the one of evaluating
    every grid point with the reference product.
    """
    S, n, M = len(sets), u.size, C.shape[0]
    atol = _LOSS_RTOL * b * max(1.0, float(np.abs(u).max()))
    cut = -atol       # a batch whose Û_CRC equals U up to rounding is no loss either way: losses D < −atol
    kernels = [_CRCKernel(P, w, *g) for P, w, g in sets]
    lams0 = np.linspace(-1.0, 1.0, grid + 2)           # symmetric: −lams0[::-1] == lams0
    L0 = lams0.size
    X0 = np.concatenate([k(lams0) - u for k in kernels])   # (S·L0, n) per-query Û_CRC(q, λ) − U(q)
    scale = (np.abs(X0).reshape(S, -1).max(axis=1) + float(np.abs(u).max())
             + np.array([np.abs(w).sum(axis=1).max() for _, w, _ in sets]))
    delta = float(_ROUNDING_MARGIN * max(n + P.shape[1] + P.shape[2] for P, _, _ in sets) * np.finfo(float).eps * b
                  * scale.max())

    Q = 2 * S                                           # search q: set q // 2, λ_high (even q) or λ_low (odd q)
    qs, sign = np.repeat(np.arange(S), 2), np.tile([1.0, -1.0], S)
    lam_res, cnt_res = np.full(Q, np.nan), np.zeros(Q, dtype=np.int64)
    lo, hi, r_hi, base = np.zeros(Q), np.zeros(Q), np.zeros(Q, dtype=np.int64), np.zeros(Q, dtype=np.int64)
    alive = np.zeros(Q, dtype=bool)
    segs, rows, dlos, dhis = [], [], [], []

    # ---- the first grid: D for all batches at the points of X0's rows (the λ_low search's point j is lams0's point
    # L0 − 1 − j, its D negated), those around each search's first feasible point predicted from a sample of the
    # batches in one product
    sample = (X0 @ C[:_PREDICT_BATCHES].T).reshape(S, L0, -1)[qs]
    sample[1::2] = -sample[1::2, ::-1]
    kp = _predict_first(sample, cut, thr, M)
    raw = [[qs[q] * L0 + (j if sign[q] > 0 else L0 - 1 - j) for j in range(L0)] for q in range(Q)]
    need = sorted({raw[q][j] for q in range(Q) for j in (kp[q] - 1, kp[q]) if 0 <= j < L0})
    D0 = dict(zip(need, X0[need] @ C.T))

    def lt(d, sg, c):                                   # sg · d < c
        return d < c if sg > 0 else d > -c

    def le(d, sg, c):                                   # sg · d <= c
        return d <= c if sg > 0 else d >= -c

    def counts(q, points):                              # certain counts at the points (in D0), or None
        c = [np.count_nonzero(lt(D0[raw[q][j]], sign[q], cut - delta)) for j in points]
        if c != [np.count_nonzero(le(D0[raw[q][j]], sign[q], cut + delta)) for j in points]:
            return None
        return dict(zip(points, c))

    cnts = [counts(q, [j for j in (kp[q] - 1, kp[q]) if 0 <= j < L0]) for q in range(Q)]

    def first_feasible(cnt):
        return min((j for j in sorted(cnt) if cnt[j] < thr), default=L0)

    # where a window does not decide, the points beyond it, all searches' in one product per step
    pending = [q for q in range(Q) if cnts[q] is not None
               and not _decided(first_feasible(cnts[q]), min(cnts[q]), max(cnts[q]), L0)]
    while pending:
        more = {q: _beyond(first_feasible(cnts[q]), min(cnts[q]), max(cnts[q]), L0) for q in pending}
        miss = sorted({raw[q][j] for q in pending for j in more[q]} - D0.keys())
        if miss:
            D0.update(zip(miss, X0[miss] @ C.T))
        for q in pending:
            c = counts(q, more[q])
            cnts[q] = None if c is None else {**cnts[q], **c}
        pending = [q for q in pending if cnts[q] is not None
                   and not _decided(first_feasible(cnts[q]), min(cnts[q]), max(cnts[q]), L0)]
    for q in range(Q):
        cnt = cnts[q]
        if cnt is not None:
            k = first_feasible(cnt)
            Dk, sg = {j: D0[raw[q][j]] for j in (k - 1, k) if 0 <= j < L0}, sign[q]
        else:                                           # the reference: the product of all of lams0
            Dr = X0[qs[q] * L0:(qs[q] + 1) * L0] @ C.T
            Dr = Dr if sign[q] > 0 else -Dr[::-1]
            c = np.count_nonzero(Dr < cut, axis=1)
            k = int(np.argmax(c < thr)) if c[-1] < thr else L0
            cnt, Dk, sg = dict(enumerate(c.tolist())), dict(enumerate(Dr)), 1.0
        if k == L0:                                     # no λ ∈ [−1, 1] is feasible: λ NaN
            cnt_res[q] = cnt[L0 - 1]
            continue
        if k == 0:
            lam_res[q], cnt_res[q] = lams0[0], cnt[0]
            continue
        lo[q], hi[q], r_hi[q] = lams0[k - 1], lams0[k], cnt[k]
        loss_hi = lt(Dk[k], sg, cut)
        act = np.flatnonzero(lt(Dk[k - 1], sg, cut) & ~loss_hi)   # sign may change inside (lo, hi]
        base[q] = np.count_nonzero(loss_hi)                        # losses throughout the bracket
        if act.size and hi[q] - lo[q] > tol:
            alive[q] = True
            segs.append(np.full(act.size, q))
            rows.append(act)
            dlos.append(sg * Dk[k - 1][act])
            dhis.append(sg * Dk[k][act])
        else:
            lam_res[q], cnt_res[q] = hi[q], r_hi[q]
    seg, row = np.concatenate(segs + [np.zeros(0, np.intp)]), np.concatenate(rows + [np.zeros(0, np.intp)])
    dlo, dhi = np.concatenate(dlos + [np.zeros(0)]), np.concatenate(dhis + [np.zeros(0)])

    # ---- the rounds
    frac = np.arange(1, grid + 1) / (grid + 1)
    first = True
    while alive.any():
        qa = np.flatnonzero(alive)
        Qa, F = qa.size, seg.size
        A = np.bincount(seg, minlength=Q)[qa]
        off = np.concatenate([[0], np.cumsum(A)])       # search qa[i]'s active batches: off[i]:off[i + 1]
        pf = np.repeat(np.arange(Qa), A)
        lams = lo[qa, None] + (hi[qa] - lo[qa])[:, None] * frac
        kp = _predict_round(dlo, dhi, pf, base[qa], cut, thr, grid)
        # the window: the predicted point and the one below; in the first round, whose prediction is rougher,
        # from three below to one above
        W, p0 = (5, kp - 3) if first else (2, kp - 1)
        pts = p0[:, None] + np.arange(W)
        valid = (pts >= 0) & (pts < grid)
        ra = np.arange(Qa)
        lam_w = lams[ra[:, None], np.clip(pts, 0, grid - 1)]        # (Qa, W)
        X = np.empty((Qa, W, n))                        # sign · (Û_CRC − U) at the windows, one kernel call per set
        for s in np.unique(qs[qa]):
            m = qs[qa] == s
            sg = sign[qa][m, None, None]
            X[m] = sg * (kernels[s]((sg[:, :, 0] * lam_w[m]).ravel()) - u).reshape(-1, W, n)
        # D (W, F) at the windows: from the product with all of C for a search with many active batches, else
        # from its batches' rows of C
        joint = np.flatnonzero(A * _JOINT_RATIO >= W * M)
        Dj = X[joint].reshape(-1, n) @ C.T if joint.size else None
        D = np.empty((W, F))
        for i in range(Qa):
            f = slice(off[i], off[i + 1])
            if Dj is not None and i in joint:
                j = int(np.searchsorted(joint, i)) * W
                D[:, f] = Dj[j:j + W][:, row[f]]
            else:
                D[:, f] = X[i] @ C[row[f]].T
        loss = D < cut - delta
        unsure = np.zeros(Qa, dtype=bool)
        near = loss != (D <= cut + delta)
        if near.any():
            unsure = np.add.reduceat(near.any(axis=0), off[:-1]) > 0
        cnt = base[qa, None] + np.add.reduceat(loss, off[:-1], axis=1, dtype=np.int64).T
        k, decided = _located(cnt, p0, valid, thr, grid)
        wk, wk1 = np.clip(k - p0, 0, W - 1), np.clip(k - 1 - p0, 0, W - 1)
        up, down = k < grid, k > 0
        fr = np.arange(F)
        new_dhi = np.where(up[pf], D[wk[pf], fr], dhi)
        new_dlo = np.where(down[pf], D[wk1[pf], fr], dlo)
        new_hi = np.where(up, lams[ra, np.minimum(k, grid - 1)], hi[qa])
        new_lo = np.where(down, lams[ra, np.maximum(k - 1, 0)], lo[qa])
        new_r = np.where(up, cnt[ra, wk], r_hi[qa])
        for i in np.flatnonzero(unsure | ~decided):
            q, f = qa[i], slice(off[i], off[i + 1])
            points = [j for j in pts[i] if 0 <= j < grid]
            Dq = dict(zip(points, D[valid[i], f]))
            cq = None if unsure[i] else dict(zip(points, cnt[i][valid[i]].tolist()))
            kk, first_j, last_j = k[i], points[0], points[-1]
            while cq is not None and not _decided(kk, first_j, last_j, grid):   # the points beyond the window
                more = _beyond(kk, first_j, last_j, grid)
                Xm = sign[q] * (kernels[qs[q]](sign[q] * lams[i, more]) - u)
                Dm = (Xm @ C.T)[:, row[f]] if A[i] * _JOINT_RATIO >= len(more) * M else Xm @ C[row[f]].T
                c = _certain(Dm, cut, delta)
                if c is None:
                    cq = None
                else:
                    Dq.update(zip(more, Dm))
                    cq.update(zip(more, (base[q] + c).tolist()))
                    kk = min((j for j in sorted(cq) if cq[j] < thr), default=grid)
                    first_j, last_j = min(first_j, more[0]), max(last_j, more[-1])
            if cq is None:                              # the reference: the product of the round's whole grid
                Dg = sign[q] * ((kernels[qs[q]](sign[q] * lams[i]) - u) @ C[row[f]].T)
                c = base[q] + np.count_nonzero(Dg < cut, axis=1)
                kk = int(np.argmax(c < thr)) if (c < thr).any() else grid
                Dq, cq = dict(enumerate(Dg)), dict(enumerate(c.tolist()))
            new_hi[i], new_r[i], new_dhi[f] = (lams[i, kk], cq[kk], Dq[kk]) if kk < grid else (hi[q], r_hi[q], dhi[f])
            new_lo[i], new_dlo[f] = (lams[i, kk - 1], Dq[kk - 1]) if kk > 0 else (lo[q], dlo[f])
        lo[qa], hi[qa], r_hi[qa] = new_lo, new_hi, new_r
        base[qa] += np.add.reduceat(new_dhi < cut, off[:-1], dtype=np.int64)
        keep = (new_dlo < cut) & (new_dhi >= cut)
        done = alive & ((hi - lo <= tol) | (np.bincount(seg[keep], minlength=Q) == 0))
        lam_res[done], cnt_res[done] = hi[done], r_hi[done]
        alive &= ~done
        keep &= alive[seg]
        seg, row, dlo, dhi = seg[keep], row[keep], new_dlo[keep], new_dhi[keep]
        first = False
    return [((lam_res[2 * s + 1], int(cnt_res[2 * s + 1])), (lam_res[2 * s], int(cnt_res[2 * s]))) for s in range(S)]


def _batch_offsets(M, n):
    """``arange(M)[:, None] * n``: row i's offset into the flattened (M, n) count matrix (kept for the last shape:
    an experiment calibrates many times with the same M and n)."""
    key = (int(M), int(n))
    if _OFFSETS.get("key") != key:
        _OFFSETS.update(key=key, off=np.arange(M)[:, None] * n)
    return _OFFSETS["off"]


_OFFSETS: dict = {}
_ROUNDING_MARGIN = 64    # delta (:func:`_calibrate`) in units of (n + depth + G) ε times the scale of D
_PREDICT_BATCHES = 512   # the batches (the first ones) from which the first grid's first feasible λ is predicted
_JOINT_RATIO = 40        # a search with at least (λ evaluated) · M / _JOINT_RATIO active batches takes their D from
                         # the product with all of C (cost ∝ M n per λ), one with fewer from the product with their
                         # rows of C (cost ∝ their number · n, gathering the rows costing about _JOINT_RATIO times
                         # as much per row as the product per λ)


def batch_counts(batches, n):
    """``C`` (M, n) float: how often each of the n calibration queries occurs in each of the M batches (the matrix
    the calibration multiplies by; computed once where several label sets are calibrated on the same batches)."""
    B = np.asarray(batches)
    M = B.shape[0]
    return np.bincount((_batch_offsets(M, n) + B).ravel(), minlength=M * n).reshape(M, n).astype(float)


def calibrate_crc(u_true, dists, batches, alpha=0.05, *, weights=None, gain=None, correction="batches", tol=1e-6,
                  grid=15, label_gain="expected_gain", check_batches=True, counts=None):
    """Dual CRC calibration of ``λ_low`` and ``λ_high`` (Eqs. 22–24), vectorised over batches and λ.

    ``u_true`` (n,) human per-query values ``U(q)`` of the calibration queries, ``dists`` (n, depth, G) their LLM
    label distributions, ``batches`` (M, b) int indices into the n queries (:func:`sample_batches`, or
    :func:`single_query_batches` for per-query CIs).  With the losses of Eq. 23,

    * ``λ_high`` = the smallest λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) < U(Q̄_i)] < bound``,
    * ``λ_low``  = the largest  λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) > U(Q̄_i)] < bound``,

    where ``bound = ½(α − (1 − α)/M)`` (Eq. 24 as printed, ``correction="batches"``) or ``½(α − (1 − α)/n)``
    (``correction="queries"``: Eq. 15's finite-sample term counts the n distinct calibration queries, which is
    what the resampled batches are drawn from).  ``check_batches=False`` skips the range check of the indices (for
    batches drawn by the caller with ``rng.integers(0, n, ...)``, which lie in range); ``counts``: their
    :func:`batch_counts`, where the caller has them already.  λ = ±1 are the limits of
    :func:`perturb`.  If even λ = 1
    (resp. −1) cannot meet the bound (e.g. bound ≤ 0 because M or n is too small), that λ is NaN and ``failed``
    is True.

    Search: both risks are monotone in λ (μ̂_CRC is non-decreasing in λ), so a (grid+1)-ary search brackets each λ
    to ``tol`` (the returned λ is the feasible end of the bracket, so it always meets its bound; it equals the
    bisection of the per-batch loop (``tests/reference_crc.py``) to within ``tol``): a first grid of ``grid + 2`` λ
    from −1 to 1 for all M batches, then rounds of ``grid`` λ splitting the bracket into ``grid + 1`` equal parts,
    for the batches whose loss can still change inside it, until the bracket is no wider than ``tol`` or no batch
    can change its loss inside it.  Of each grid only the λ that decide the next bracket are evaluated
    (:func:`_calibrate`); the result is that of evaluating all of them with the products ``(û_λ − u) Cᵀ`` (``C``:
    query counts per batch, :func:`batch_counts`).
    """
    return calibrate_crc_sets(u_true, [dists], batches, alpha, weights=weights, gain=gain, correction=correction,
                              tol=tol, grid=grid, label_gain=label_gain, check_batches=check_batches,
                              counts=counts)[0]


def calibrate_crc_sets(u_true, dists_sets, batches, alpha=0.05, *, weights=None, gain=None, correction="batches",
                       tol=1e-6, grid=15, label_gain="expected_gain", check_batches=True, counts=None):
    """:func:`calibrate_crc` for several label sets of the same queries (``dists_sets``: a sequence of (n, depth, G)
    arrays) on the same batches (e.g. Fig 3's settings of β and ζ): a list, the i-th equal to
    ``calibrate_crc(u_true, dists_sets[i], batches, ...)``.  The sets' searches run side by side and share the
    products with the batches' count matrix."""
    sets = []
    for dists in dists_sets:
        _, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction,
                                                      label_gain, check_batches, counts)
        sets.append((P, w, g))
        check_batches = False                          # the same batches: checked once
    if not sets:
        return []
    M, b = B.shape
    grid = int(grid)
    if grid < 1:
        raise InputError(f"grid must be >= 1, got {grid}")
    # C[i, j] = how often query j occurs in batch i; b·(Û_CRC(Q̄_i, λ) − U(Q̄_i)) = (C (û_λ − u))_i
    C = batch_counts(batches, u.size) if counts is None else np.asarray(counts, dtype=float)
    thr = bound * M   # risk < bound  ⇔  number of losses < bound·M
    return [_finish(-lam_low, lam_high, c_low / M, c_high / M, bound, M)
            for (lam_low, c_low), (lam_high, c_high) in _calibrate(u, sets, C, thr, b, tol, grid)]


def crc_interval(dists, calibration, *, weights=None, gain=None, axis_mean=True, label_gain="expected_gain"):
    """CRC confidence interval ``C(Q, λ_high, λ_low) = [Û_CRC(Q, λ_low), Û_CRC(Q, λ_high)]`` (Eq. 20).

    ``dists`` (n, depth, G) of the queries Q to bound (no human labels needed), ``calibration`` from
    :func:`calibrate_crc`.  ``axis_mean=True``: dataset-level interval of the mean metric over Q (scalars);
    ``False``: one interval per query (arrays (n,)).  The estimate is the LLM prediction ``Û(Q) = Û_CRC(Q, 0)``.

    If the two searches cross (``λ_low > λ_high``, possible only where Û_CRC is flat in λ, e.g. one-hot labels) the
    interval spans ``[Û_CRC(min λ), Û_CRC(max λ)]``, which meets both calibrated constraints.  A failed calibration
    gives NaN bounds.
    """
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3:
        raise InputError(f"crc_interval: dists must have shape (n, depth, G), got {P.shape}")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_spec(gain, P.shape[-1], label_gain)
    lo_l, hi_l = calibration.lam_low, calibration.lam_high
    if calibration.failed:
        est = _crc_u(P, np.zeros(1), w, *g)[0]
        nan = np.full_like(est, np.nan)
        if axis_mean:
            return Interval(float(est.mean()), np.nan, np.nan)
        return Interval(est, nan, nan.copy())
    lams = np.array([min(lo_l, hi_l), max(lo_l, hi_l), 0.0])
    v = _crc_u(P, lams, w, *g)
    if axis_mean:
        v = v.mean(axis=1)
        return Interval(float(v[2]), float(v[0]), float(v[1]))
    return Interval(v[2], v[0], v[1])


def crc_per_query(u_true_cal, dists_cal, dists_test, alpha=0.05, *, weights_cal=None, weights_test=None, gain=None,
                  tol=1e-6, grid=15, label_gain="expected_gain"):
    """Per-query CRC intervals (Secs. 6.2, 7, 8.4): λ calibrated on the n single-query batches ``Q̄_i = {q_i}``
    (M = n, so the bound is ``½(α − (1 − α)/n)``), then one interval ``[Û_CRC(q, λ_low), Û_CRC(q, λ_high)]`` per
    test query.  Returns ``(Interval of arrays (n_test,), CRCCalibration)``; with n ≤ (1 − α)/α calibration
    queries the bound is ≤ 0 and the calibration fails (NaN intervals).
    """
    u = np.asarray(u_true_cal)
    cal = calibrate_crc(u, dists_cal, single_query_batches(u.size), alpha, weights=weights_cal, gain=gain,
                        correction="batches", tol=tol, grid=grid, label_gain=label_gain)
    return (crc_interval(dists_test, cal, weights=weights_test, gain=gain, axis_mean=False, label_gain=label_gain),
            cal)
