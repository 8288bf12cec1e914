"""Evidence behind the bias-variance papers' explained verify rows (``workflow/resources/reference/bv.yaml``).

An explained row names one of these functions (``evidence: {fn: <name>, <arguments>}``);
:func:`irrepro.core.verify.attach_evidence` calls it as ``fn(row, data, values, **arguments)`` and the row is
explained only when the returned interval meets the rule of :func:`irrepro.core.verify.evidence_meets`. ``data``
holds the run's inputs: ``matrices`` (collection -> systems x topics array, the public score matrix of the row's
measure), ``table9`` (the ``bv.table9`` settings), ``seed`` (``bv.seed``) and ``reference`` (every reference row:
the paper's own printed numbers). Each function returns ``{"low", "high", "how", "against"}``:

* :func:`missing_topics` (a data difference: the paper's topic set had topics the public matrix lacks): the cell
  with the missing topics at their known places in the topic order (one value), or, where their places are
  unknown, over matrices with them at random places;
* :func:`run_resamples` (a data difference: the paper's run set differs): the cell over run sets of the public
  size drawn with replacement from the public runs (a system bootstrap);
* :func:`tie_orders` (an ambiguous order: tied per-topic maxima make "hardest first" not unique): the cell over
  the random orders of the tied topics that give every printed difficulty cell of the collection (one order for
  all its cells);
* :func:`copied_cell` (a transcription: the printed cell repeats another printed cell): that cell's printed value;
* :func:`own_identity` (a paper inconsistency: the paper's own printed cells of the row, under its own identity
  Bias^2 + Var = total or Eq. 16, give another value than the printed one): that value, compared with ours.

Monte-Carlo ranges are the central ``coverage`` quantiles of the resamples (0.99: the 0.5-99.5% range, wide enough
to hold the cell the difference can cause without resting on a single extreme resample), each widened by its own
Monte-Carlo error (:func:`_range`); enumerations of possible readings (tie orders, unknown places of missing
topics) use min-max (``coverage: 1``): each resample is a reading the paper could have used. Resampling is
vectorised over resamples (numpy stacks, no per-resample Python loop).
"""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.bv.biasvariance import _check

TABLE9_EVIDENCE_COLUMNS = ("original", "original_norm", "random", "random_norm", "difficulty", "difficulty_norm")


def _pearson_rows(a, b):
    """Pearson correlation of each row pair of two ``R x S`` arrays (NaN where a row is constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a ** 2).sum(axis=1) * (b ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def _normalise(Xs):
    """Eq. 11 (max-min per topic over systems) of each matrix of an ``R x S x T`` stack; a constant topic -> 0."""
    lo, hi = Xs.min(axis=1, keepdims=True), Xs.max(axis=1, keepdims=True)
    span = hi - lo
    return np.where(span > 0, (Xs - lo) / np.where(span > 0, span, 1.0), 0.0)


def _group_weights(assign, size):
    """``R x T x G`` weights (1 / group size) of consecutive groups of ``size`` over each row's topic order."""
    R, T = assign.shape
    n_groups = -(-T // size)
    pos = np.empty_like(assign)
    np.put_along_axis(pos, assign, np.broadcast_to(np.arange(T), (R, T)), axis=1)  # position of each topic
    g = pos // size
    sizes = np.minimum(size, T - np.arange(n_groups) * size)
    W = np.zeros((R, T, n_groups))
    np.put_along_axis(W, g[:, :, None], 1.0 / sizes[g][:, :, None], axis=2)
    return W


def _grouped(Xs, W, target=None):
    """BV-Test Table 9's grouped cell (target "topic": each group's target is the mean of its per-topic maxima, of
    ``target`` when given: the scores whose maxima set the target, ``Xs`` by default)."""
    G = np.einsum("rst,rtg->rsg", Xs, W)
    c = np.einsum("rt,rtg->rg", (Xs if target is None else target).max(axis=1), W).mean(axis=1)
    return _pearson_rows((G.mean(axis=2) - c[:, None]) ** 2, G.var(axis=2))


def table9_cells(Xs, column: str, order_size: int = 5, difficulty_size: int = 5, difficulty_order=None,
                 norm_target: str = "normalised", **settings) -> np.ndarray:
    """One BV-Test Table 9 column for each matrix of an ``R x S x T`` stack (vectorised over R): the readings of
    ``irrepro.papers.bv.tables.table9_row`` with ``random_grouping: topic_order`` and ``difficulty_target: topic``
    (the defaults; others raise ``InputError``). ``difficulty_order``: an ``R x T`` topic order per matrix (hardest
    first) to use instead of the stable sort of the per-topic maxima (ties by topic position)."""
    if settings.get("random_grouping", "topic_order") != "topic_order" \
            or settings.get("difficulty_target", "topic") != "topic":
        raise InputError("Table 9 evidence implements the default readings only (bv.table9.random_grouping "
                         "topic_order, bv.table9.difficulty_target topic)")
    if column not in TABLE9_EVIDENCE_COLUMNS:
        raise InputError(f"unknown Table 9 column {column!r}; expected one of {', '.join(TABLE9_EVIDENCE_COLUMNS)}")
    if norm_target not in ("normalised", "original"):
        raise InputError(f"norm_target {norm_target!r}: 'normalised' (Sec. 3.3: c = 1) or 'original'")
    Xs = np.asarray(Xs, float)
    R, S, T = Xs.shape
    M = _normalise(Xs) if column.endswith("_norm") else Xs
    # the target of a normalised column: the normalised scores' maxima (1 per topic: Sec. 3.3's c = 1), or, as a
    # reading to test, the original scores' maxima
    target = Xs if norm_target == "original" else M
    base = column.removesuffix("_norm")
    if base == "original":
        c = target.max(axis=1).mean(axis=1)
        return _pearson_rows((M.mean(axis=2) - c[:, None]) ** 2, M.var(axis=2))
    if base == "random":
        order = np.broadcast_to(np.arange(T), (R, T))
        return _grouped(M, _group_weights(np.ascontiguousarray(order), order_size), target)
    order = (np.argsort(Xs.max(axis=1), axis=1, kind="stable") if difficulty_order is None
             else np.asarray(difficulty_order))
    return _grouped(M, _group_weights(order, difficulty_size), target)


def _range(samples, coverage: float):
    """``(low, high, how)`` of resampled cells: min-max at ``coverage`` >= 1 (an enumeration of readings); else the
    central ``coverage`` quantiles, each widened by its own Monte-Carlo error: the order statistics 2 binomial
    standard errors of the rank further out (the rank of the q-quantile among R draws has s.e. sqrt(R q (1 - q))),
    so a range from finitely many resamples is not narrower than the resampling can tell."""
    s = np.sort(np.asarray(samples, float))
    s = s[np.isfinite(s)]
    if not s.size:
        raise InputError("every resample gave an undefined cell")
    if coverage >= 1:
        return float(s[0]), float(s[-1]), "min-max"
    R, q = s.size, (1 - coverage) / 2
    k = 2.0 * np.sqrt(R * q * (1 - q))
    lo_i = max(int(np.floor(R * q - k)), 0)
    hi_i = R - 1 - lo_i
    return float(s[lo_i]), float(s[hi_i]), (f"{q:.1%}-{1 - q:.1%} quantiles widened by 2 s.e. of their rank among "
                                            f"{R} resamples (order statistics {lo_i + 1} and {hi_i + 1})")


def _table9_target(row, data):
    parts = row["item"].split("/")
    if len(parts) != 3 or parts[0] != "table9":
        raise InputError(f"{row['item']!r}: Table 9 evidence needs an item table9/<collection>/<column>")
    _, collection, column = parts
    m = (data.get("matrices") or {}).get(collection)
    if m is None:
        raise InputError(f"no score matrix of {collection!r} among the verify rule's evidence inputs")
    return collection, column, _check(m)


def _rng(data, salt: str):
    """A generator seeded by ``bv.seed`` and the row (stable across runs, distinct per row)."""
    return np.random.default_rng([int(data.get("seed", 0)), *salt.encode()])


def _insert_topics(X, at_positions, extra):
    """``R x S x (T + m)`` stacks: each matrix of ``extra`` (``R x S x m``) put at ``at_positions`` (an ``R x m``
    array of sorted positions in the topic order of n = T + m), the public topics of ``X`` in their order around."""
    R, S, m = extra.shape
    T = X.shape[1]
    n = T + m
    is_extra = np.zeros((R, n), bool)
    np.put_along_axis(is_extra, at_positions, True, axis=1)
    src = np.concatenate([np.broadcast_to(X, (R, S, T)), extra], axis=2)                # R x S x (T + m)
    # topic index into src per position: public topics in their order where not extra, extra ones in order
    idx = np.where(is_extra, T + np.cumsum(is_extra, axis=1) - 1, np.cumsum(~is_extra, axis=1) - 1)
    return np.take_along_axis(src, np.broadcast_to(idx[:, None, :], (R, S, n)), axis=2)


def missing_topics(row, data, values, missing: int | None = None, at=None, ids=None, fill: str = "zero",
                   resamples: int = 2000, coverage: float = 1.0):
    """A data difference in topics: the paper had topics the public matrix lacks, each ``fill``: ``"zero"`` (topics
    without relevant documents: every system scores 0) or ``"public"`` (a public topic's scores, drawn with
    replacement).

    Known facts are used, not drawn: with ``at`` (the missing topics' ids) and ``ids`` (``[first, last]``: the
    paper's topics, numbered consecutively, whose others are the public matrix's rows in topic order) the missing
    topics sit at their known places; with ``fill: zero`` the cell is then one value (low = high). Only where the
    places are really unknown (``missing``: how many, without ``at``) are they drawn: the cell over ``resamples``
    matrices with the missing topics at random places of the topic order (``coverage``: min-max at 1, else the
    central quantiles widened by their own Monte-Carlo error, :func:`_range`)."""
    collection, column, X = _table9_target(row, data)
    S, T = X.shape
    rng = _rng(data, row["item"])
    if at is not None:
        if ids is None or len(ids) != 2:
            raise InputError(f"{row['item']!r}: missing topics 'at' their ids need 'ids: [first, last]', the paper's "
                             "consecutive topic ids")
        paper_ids = list(range(int(ids[0]), int(ids[1]) + 1))
        at = sorted(int(t) for t in at)
        if not set(at) <= set(paper_ids) or len(set(at)) != len(at):
            raise InputError(f"{row['item']!r}: missing topics {at} are not distinct ids among {ids[0]}-{ids[1]}")
        if len(paper_ids) - len(at) != T:
            raise InputError(f"{row['item']!r}: {len(paper_ids)} paper topics ({ids[0]}-{ids[1]}) less the {len(at)} "
                             f"missing ones are {len(paper_ids) - len(at)}, but the public matrix of {collection} has "
                             f"{T} topics")
        missing = len(at)
        known = fill == "zero"  # zero topics at known places: nothing is left to draw
        positions = np.broadcast_to(np.array([paper_ids.index(t) for t in at]), (1 if known else resamples, missing))
    elif missing is None:
        raise InputError(f"{row['item']!r}: missing_topics needs 'at' (the missing topics' ids, with 'ids') or "
                         "'missing' (how many, at unknown places)")
    else:
        known = False
        n = T + missing
        positions = np.sort(np.argsort(rng.random((resamples, n)), axis=1)[:, :missing], axis=1)  # random places
    R = positions.shape[0]
    if fill == "zero":
        extra = np.zeros((R, S, missing))
    elif fill == "public":
        extra = np.moveaxis(X[:, rng.integers(0, T, (R, missing))], 0, 1)               # R x S x missing
    else:
        raise InputError(f"unknown fill {fill!r}; expected 'zero' or 'public'")
    Xs = _insert_topics(X, np.ascontiguousarray(positions), extra)
    cells = table9_cells(Xs, column, **(data.get("table9") or {}))
    what = "every system 0 (no relevant document)" if fill == "zero" else "a public topic's scores"
    if known:
        v = float(cells[0])
        return {"low": v, "high": v, "against": "paper",
                "how": f"{collection} {column} on the {T} public topics + topics {', '.join(map(str, at))} ({what}) at "
                       f"their known places in the topic order {ids[0]}-{ids[1]}"}
    lo, hi, span = _range(cells, coverage)
    where = (f"topics {', '.join(map(str, at))} at their known places, each {what} drawn" if at is not None
             else f"{missing} topics ({what}) at random places (their places are unknown)")
    return {"low": lo, "high": hi, "against": "paper",
            "how": f"{collection} {column} over {R} matrices of the {T} public topics + {where}, {span}"}


def run_resamples(row, data, values, resamples: int = 2000, coverage: float = 0.99):
    """A data difference in runs: the paper's run set differs from the public one. The cell over ``resamples``
    run sets of the public size drawn with replacement from the public runs (a system bootstrap)."""
    collection, column, X = _table9_target(row, data)
    S, T = X.shape
    rng = _rng(data, row["item"])
    Xs = X[rng.integers(0, S, (resamples, S))]                                          # R x S x T
    lo, hi, span = _range(table9_cells(Xs, column, **(data.get("table9") or {})), coverage)
    return {"low": lo, "high": hi, "against": "paper",
            "how": f"{collection} {column} over {resamples} run sets of {S} runs drawn with replacement from the "
                   f"{S} public runs, {span}"}


def tie_orders(row, data, values, resamples: int = 2000, tolerance: float | None = None):
    """An ambiguous order: topics with tied per-topic maxima can be taken hardest first in any order. One order is
    one reading, and it must hold for every query-difficulty cell of the collection at once (``difficulty`` and
    ``difficulty_norm`` group the same topics): over ``resamples`` random orders of the tied topics, the orders
    that give each of the collection's printed difficulty cells (``data["reference"]``) within ``tolerance`` (the
    row's own, else half a printed unit, 5e-5) are kept, and the row's cell over them (min-max) is the evidence.
    ``InputError`` when no maxima are tied (the order is unique: nothing to explain) and when no single order gives
    every printed cell (the paper's cells then come from different orders, or from none), naming what the orders
    that give each printed cell give for the others."""
    collection, column, X = _table9_target(row, data)
    if not column.startswith("difficulty"):
        raise InputError(f"{row['item']!r}: tie orders concern the query-difficulty columns")
    mx = X.max(axis=0)
    _, inverse, counts = np.unique(mx, return_inverse=True, return_counts=True)
    n_tied = int((counts[inverse] > 1).sum())
    if n_tied == 0:
        raise InputError(f"{collection}: no tied per-topic maxima, the hardest-first order is unique")
    tol = float(row.get("tolerance") or 5e-5) if tolerance is None else float(tolerance)
    rng = _rng(data, row["item"])
    # sort by the maximum, ties by a random key: rank of the maximum + a uniform in [0, 1)
    keys = inverse[None, :] + rng.random((resamples, X.shape[1]))
    order = np.argsort(keys, axis=1)
    settings = data.get("table9") or {}
    stack = np.broadcast_to(X, (resamples, *X.shape))
    printed = {c: float(_paper(data, f"table9/{collection}/{c}")) for c in ("difficulty", "difficulty_norm")
               if any(r["item"] == f"table9/{collection}/{c}" for r in data.get("reference") or [])}
    printed.setdefault(column, float(row["paper"]))
    cells = {c: table9_cells(stack, c, difficulty_order=order, **settings) for c in printed}
    # distinct readings: which group of the hardest-first order each topic falls in
    size = int(settings.get("difficulty_size", 5))
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.broadcast_to(np.arange(X.shape[1]), order.shape), axis=1)
    n_readings = len(np.unique(pos // size, axis=0))
    gives = {c: np.abs(v - printed[c]) <= tol + 1e-12 for c, v in cells.items()}
    every = np.logical_and.reduce(list(gives.values()))
    what = (f"{collection} over {resamples} random orders of the {n_tied} topics with tied per-topic maxima "
            f"({n_readings} distinct groupings)")
    if not every.any():
        parts = []
        for c in printed:
            others = [f"{o} {', '.join(f'{x:.4f}' for x in np.unique(np.round(cells[o][gives[c]], 4)))} "
                      f"(paper {printed[o]:.4f})" for o in printed if o != c]
            parts.append(f"{int(gives[c].sum())} orders give {c} as printed ({printed[c]:.4f})"
                         + (f" and give {'; '.join(others)}" if gives[c].any() and others else ""))
        raise InputError(f"no single tie order gives every printed difficulty cell of {collection}: {what}, "
                         f"{'; '.join(parts)}")
    lo, hi = float(cells[column][every].min()), float(cells[column][every].max())
    return {"low": lo, "high": hi, "against": "paper",
            "how": f"{column} over the {int(every.sum())} orders that give every printed difficulty cell of "
                   f"{collection} (one order for all of them), {what}, min-max"}


def norm_target_reading(row, data, values, tolerance: float = 5e-5):
    """A reading found by recomputation, tested as one reading for every cell it concerns: the normalised columns'
    target taken from the original scores' per-topic maxima instead of the normalised ones (Sec. 3.3: c = 1). It is
    applied to every normalised cell of every collection whose matrix is at hand (``data["matrices"]``, printed
    values from ``data["reference"]``); a cell counts as given by a reading when within ``tolerance`` (half a
    printed unit) of the paper. When the reading gives some cells that c = 1 does not but breaks a cell that c = 1
    gives, it is not one reading for all cells: InputError naming both lists (the row stays unexplained with that
    reason). Otherwise the row's own cell under the reading (low = high), said to contradict Sec. 3.3."""
    collection, column, X = _table9_target(row, data)
    if not column.endswith("_norm"):
        raise InputError(f"{row['item']!r}: the target reading concerns the normalised columns")
    settings = dict(data.get("table9") or {})
    gained, broken = [], []
    for r in data.get("reference") or []:
        parts = str(r["item"]).split("/")
        if len(parts) != 3 or parts[0] != "table9" or not parts[2].endswith("_norm") \
                or parts[1] not in (data.get("matrices") or {}):
            continue
        M = np.asarray(data["matrices"][parts[1]], float)[None]
        default = float(table9_cells(M, parts[2], **settings)[0])
        reading = float(table9_cells(M, parts[2], norm_target="original", **settings)[0])
        paper = float(r["paper"])
        d_ok, r_ok = abs(default - paper) <= tolerance + 1e-12, abs(reading - paper) <= tolerance + 1e-12
        if r_ok and not d_ok:
            gained.append(f"{parts[1]}/{parts[2]} {reading:.4f}")
        if d_ok and not r_ok:
            broken.append(f"{parts[1]}/{parts[2]} {reading:.4f} (paper {paper:.4f})")
    if broken:
        raise InputError("the normalised columns' target from the original maxima (Sec. 3.3 says c = 1) gives "
                         f"{', '.join(gained) or 'no cell'} as printed but breaks {len(broken)} cells that c = 1 "
                         f"gives ({', '.join(broken[:3])}{' …' if len(broken) > 3 else ''}): not one reading for "
                         "all cells")
    v = float(table9_cells(X[None], column, norm_target="original", **settings)[0])
    return {"low": v, "high": v, "against": "paper",
            "how": f"{collection} {column} with the target of the original maxima (a reading Sec. 3.3 contradicts: "
                   f"c = 1), applied to every normalised cell without breaking one c = 1 gives"}


def _paper(data, item):
    for r in data.get("reference") or []:
        if r["item"] == item:
            return r["paper"]
    raise InputError(f"no reference row {item!r} (the paper's printed value this evidence reads)")


def copied_cell(row, data, values, source: str):
    """A transcription: the printed cell repeats the paper's printed ``source`` cell; low = high = that value."""
    v = float(_paper(data, source))
    return {"low": v, "high": v, "against": "paper", "how": f"the paper's printed {source} ({v:g})"}


def own_identity(row, data, values, identity: str, rounding=None):
    """A paper inconsistency proven from the paper alone (``against: paper_bound``: the row is "paper inconsistent"
    when its printed value lies outside, whatever ours): the range of values the paper's own printed cells allow
    for this cell under its own identity, each printed number taken as anywhere within half a unit of its last
    printed digit (``rounding``) and the error propagated.

    ``identity``: ``"bias2_plus_var"`` (SIGIR 2013 Table 1, ``<prefix>/<system>/{bias,var,total}``: total = bias^2 +
    var, so var = total - bias^2 and total = bias^2 + var from the row's other printed cells; ``rounding``: the half
    unit of each cell, ``{bias, var, total}``); ``"eq16_var_rho"`` (BV-Test Table 8, ``table8/<run>/var_rho``:
    Var(rho) = Var(x_T) + Var(x_i) - 2 Cov, with Var(x_T), one target for all runs, from Eq. 16 on every other
    run's printed row: the min-max over them; ``rounding``: the half unit of every printed number)."""
    parts = row["item"].split("/")
    prefix, cell = "/".join(parts[:-1]), parts[-1]
    if identity == "bias2_plus_var":
        r = {"bias": 0.0, "var": 0.0, "total": 0.0, **(rounding or {})}
        bias = float(_paper(data, f"{prefix}/bias"))
        b_lo, b_hi = sorted(((abs(bias) - r["bias"]) ** 2, (abs(bias) + r["bias"]) ** 2))
        if cell == "var":
            total = float(_paper(data, f"{prefix}/total"))
            lo, hi = total - r["total"] - b_hi, total + r["total"] - b_lo
            how = f"the paper's total - bias^2 = {total} - {bias}^2"
        elif cell == "total":
            var = float(_paper(data, f"{prefix}/var"))
            lo, hi = b_lo + var - r["var"], b_hi + var + r["var"]
            how = f"the paper's bias^2 + var = {bias}^2 + {var}"
        else:
            raise InputError(f"{row['item']!r}: identity bias2_plus_var gives a var or a total cell")
        return {"low": lo, "high": hi, "against": "paper_bound",
                "how": f"{how}, each printed number within half a unit of its last digit: {lo:.6g}-{hi:.6g}"}
    if identity == "eq16_var_rho":
        if parts[0] != "table8" or cell != "var_rho":
            raise InputError(f"{row['item']!r}: identity eq16_var_rho gives a table8/<run>/var_rho cell")
        runs = sorted({r["item"].split("/")[1] for r in data.get("reference") or []
                       if r["item"].startswith("table8/") and r["item"].endswith("/var_rho")} - {parts[1]})
        var_t = [float(_paper(data, f"table8/{r}/var_rho")) - float(_paper(data, f"table8/{r}/var_x"))
                 + 2 * float(_paper(data, f"table8/{r}/cov")) for r in runs]
        if not var_t:
            raise InputError("identity eq16_var_rho needs the printed rows of other Table 8 runs")
        rest = float(_paper(data, f"{prefix}/var_x")) - 2 * float(_paper(data, f"{prefix}/cov"))
        h = float(rounding or 0.0)
        widen = 4 * h + 3 * h  # Var(x_T): var_rho, var_x, 2 Cov; this run: var_x, 2 Cov
        lo, hi = min(var_t) + rest - widen, max(var_t) + rest + widen
        return {"low": lo, "high": hi, "against": "paper_bound",
                "how": f"Eq. 16 on the paper's printed rows: Var(x_T) = {min(var_t):.4f}-{max(var_t):.4f} from "
                       f"the {len(runs)} other runs, + this run's Var(x_i) - 2 Cov ({rest:.4f}), ± {widen:.5f} for the "
                       f"printed numbers' rounding: {lo:.5f}-{hi:.5f}"}
    raise InputError(f"unknown identity {identity!r}; expected 'bias2_plus_var' or 'eq16_var_rho'")


def evidence_data(frames, settings) -> dict:
    """``data`` for the evidence functions from the verify rule's inputs: ``frames`` (collection -> the per-topic
    score table, ``irrepro.core.scores.read_scores``) and ``settings`` (``table9``: collection -> measure and the
    ``bv.table9`` settings; ``table8``: ``[collection, measure]`` or None; ``seed``). Systems without scores and
    topics with a missing score are dropped as Tables 8 and 9 drop them (``complete_matrix``)."""
    from irrepro.core.scores import to_matrix
    from irrepro.papers.bv.biasvariance import complete_matrix

    def matrix(c, m):
        if c not in frames:
            raise InputError(f"no score table of {c!r} among the verify rule's evidence inputs")
        X, systems, _, _ = complete_matrix(to_matrix(frames[c], m))
        return X, systems
    data = {"matrices": {}, "table9": dict(settings.get("table9_settings") or {}),
            "seed": int(settings.get("seed", 0))}
    for c, m in (settings.get("table9") or {}).items():
        data["matrices"][c] = matrix(c, m)[0]
    if settings.get("table8"):
        X, systems = matrix(*settings["table8"])
        data["table8"] = {"matrix": X, "systems": list(systems)}
    return data


EVIDENCE = {f.__name__: f for f in (missing_topics, run_resamples, tie_orders, copied_cell, own_identity,
                                    norm_target_reading)}
