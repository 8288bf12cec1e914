"""The workflow's analyses of the sampling paper: SYNTH's Tables 2–4, Tables 5–7 and Figs 1–3 on SYNTH or on a
collection of our population (the TREC substitute), each from the keys of config section ``sampling`` it needs.

A data set is given by its matrices ``(u, ranks, Ps, approx)``: utilities, each system's 0-based ranks, its target
weights P (Eq. 2) and the approximate utilities ũ the samplers are built from (Eq. 4, Sec. 7).
"""
from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from irrepro.core.verify import to_markdown
from irrepro.errors import InputError
from irrepro.papers.sampling import readings as _readings
from irrepro.papers.sampling import synth as _synth
from irrepro.papers.sampling.estimators import approx_utility_rank, approx_utility_trec, target
from irrepro.papers.sampling.experiments import (PROBLEMS, comparative_accuracy, comparative_variances,
                                                 single_system_experiment)
from irrepro.papers.sampling.trec import target_depth, trec_matrices

log = logging.getLogger(__name__)

TABLE2 = ["system", "true", "shallow", "deep_mean", "deep_sd", "u_hat_mean", "u_hat_sd"]
TABLE3 = ["system", "sd_q_star", "sd_q_p", "sd_q_unif"]
TABLE4 = ["system", "u_hat_mean", "u_hat_sd", "ci_halfwidth", "coverage"]


def synth_data(synth: dict, seed: int):
    """SYNTH (Sec. 7.1) from config ``sampling.synth``: utilities u and ranks {system: 0-based ranks}."""
    return _synth.synth(synth["users"], synth["items"], tuple(synth["alpha"]), synth["dirichlet"], synth["gain"],
                        synth["systems"], seed=seed)


def synth_experiment(synth: dict, seed: int, budget_per_query: float, trials: int, alpha: float) -> pd.DataFrame:
    """Tables 2–4 on SYNTH: budget n = budget_per_query · |X|; DCG with the discount's log base ``synth.log_base``."""
    t0 = time.perf_counter()
    u, ranks = synth_data(synth, seed)
    n = int(round(budget_per_query * synth["users"]))
    log.info("SYNTH %d users x %d items generated in %.1f s; budget n = %d", synth["users"], synth["items"],
             time.perf_counter() - t0, n)
    t0 = time.perf_counter()
    df = single_system_experiment(u, ranks, n=n, trials=trials, seed=seed + 1, base=synth["log_base"], alpha=alpha)
    log.info("experiment (%d systems x %d trials x 3 samplers + DeepPool) in %.1f s", len(ranks), trials,
             time.perf_counter() - t0)
    return df


def synth_halfwidth_readings(synth: dict, seed: int, budget_per_query: float, trials: int, alpha: float,
                             other_seeds=()) -> pd.DataFrame:
    """Table 4's CI half-width under every reading of Eq. 6 (:mod:`.readings`) on the SYNTH of ``seed`` (draws
    seeded with ``seed + 1``, as Table 4's), and its expectation on the SYNTH of each of ``other_seeds``."""
    u, ranks = synth_data(synth, seed)
    n = int(round(budget_per_query * synth["users"]))
    other = [(f"seed {s}", *synth_data(synth, s)) for s in other_seeds]
    return _readings.halfwidth_readings(u, ranks, n, trials, seed + 1, base=synth["log_base"], alpha=alpha,
                                        other_data=other)


def readings_other_seeds(seed: int) -> tuple[int, int]:
    """The two further SYNTH draws of the half-width readings: seeds ``seed + 100`` and ``seed + 200``."""
    return seed + 100, seed + 200


def readings_markdown(df: pd.DataFrame) -> str:
    """The half-width readings as Markdown: one row per reading, one column per system (value and ratio to eq6)."""
    wide = df.assign(cell=[f"{v:.4f} (x{r:.5f})" for v, r in zip(df.ci_halfwidth, df.ratio_to_eq6)])
    wide = wide.pivot(index="reading", columns="system", values="cell")
    order = [k for k in df.reading.drop_duplicates()]
    wide = wide.loc[order, list(df.system.drop_duplicates())].reset_index()
    wide.insert(1, "what", [_readings.READINGS.get(k, "expected half-width on another SYNTH draw") for k in order])
    return to_markdown(wide)


def synth_markdown(df: pd.DataFrame) -> tuple[str, str, str]:
    """Tables 2, 3 and 4 as Markdown (3 decimals)."""
    return tuple(to_markdown(df[cols].round(3)) for cols in (TABLE2, TABLE3, TABLE4))


def synth_matrices(synth: dict, seed: int):
    """SYNTH as ``(u, ranks, Ps, approx)``: DCG@|items| with base ``synth.log_base``, ũ = 4 (1 − rank / |items|)."""
    u, ranks = synth_data(synth, seed)
    Ps = {k: target(r, base=synth["log_base"]) for k, r in ranks.items()}
    approx = {k: approx_utility_rank(r) for k, r in ranks.items()}
    return u, ranks, Ps, approx


def approx_trec(ranks, depth: int):
    """ũ = 16 / (rank + 34) (1-based rank) for retrieved items, 0 for items a run does not retrieve."""
    return np.where(ranks < depth, approx_utility_trec(ranks), 0.0)


def trec_substitute(runs: dict, qrels: pd.DataFrame, depth: int):
    """A collection of our population as ``(u, ranks, Ps, approx)``: runs cut at ``depth``, DCG@depth (base 2)."""
    u, ranks, _ = trec_matrices(runs, qrels, depth=depth)
    Ps = {k: target_depth(r, depth) for k, r in ranks.items()}
    approx = {k: approx_trec(r, depth) for k, r in ranks.items()}
    return u, ranks, Ps, approx


def comparative(u, Ps: dict, approx: dict, window: int, budgets_per_query, accuracy_trials: int, seed: int):
    """Tables 5–7 (Σ(Q)·n / |X|, Eqs. 8, 10) and Figs 1–3 (accuracy against the budget n = value · |X|).

    Returns ``(var, table, accuracy)``: the variances by ``"<problem>_<sampler>/<approx|true>"``, the rows of
    Tables 5–7 (``table, sampler, approx_u, true_u``) and the accuracy frame of :func:`comparative_accuracy`."""
    var = comparative_variances(u, Ps, approx, window=window)
    n_q = u.shape[0]
    budgets = [int(round(b * n_q)) for b in budgets_per_query]
    acc = comparative_accuracy(u, Ps, approx, budgets, accuracy_trials, seed + 7, window)
    rows = [{"table": table, "sampler": sampler, "approx_u": var[f"{prob}_{sampler}/approx"],
             "true_u": var[f"{prob}_{sampler}/true"]} for table, prob in PROBLEMS for sampler in ("naive", "qstar")]
    return var, pd.DataFrame(rows), acc


def replicate_seeds(seed: int, n: int) -> tuple[int, ...]:
    """The seeds of the further SYNTH draws of Tables 5–7's Monte-Carlo error: ``seed + 1000 i``, i = 1..n (apart
    from Tables 2–4's trials, ``seed + 1``, and the half-width readings' draws, ``seed + 100``, ``seed + 200``)."""
    return tuple(seed + 1000 * (i + 1) for i in range(n))


def synth_replicate_se(synth: dict, seeds, window: int) -> dict:
    """The Monte-Carlo error of Tables 5–7's analytic SYNTH cells: each variance of :func:`comparative_variances`
    on the SYNTH of every seed of ``seeds``; per key the standard error of (ours − the paper's), both one SYNTH
    draw: sqrt(2) × the sample sd over the draws (``InputError`` with fewer than two)."""
    seeds = list(seeds)
    if len(seeds) < 2:
        raise InputError(f"Tables 5-7's Monte-Carlo error needs two or more further SYNTH draws, got {len(seeds)}")
    draws = []
    for s in seeds:
        u, _, Ps, approx = synth_matrices(synth, s)
        draws.append(comparative_variances(u, Ps, approx, window=window))
        log.info("SYNTH draw of seed %d: Tables 5-7 recomputed", s)
    return {k: float(np.sqrt(2) * np.std([d[k] for d in draws], ddof=1)) for k in draws[0]}


def comparative_markdown(table: pd.DataFrame, data: str) -> str:
    """Tables 5–7 as Markdown with a title line."""
    return (f"Σ(Q)·n / |X| on {data} (Tables 5–7; k-system problems: mean over the k comparisons)\n\n"
            + to_markdown(table.round(4)))


def trec_single_system(u, ranks: dict, seed: int, budget_per_query: float, trials: int, alpha: float,
                       depth: int) -> pd.DataFrame:
    """Tables 2–4 on the TREC substitute for three randomly chosen systems (budget n = budget_per_query · |X|)."""
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(sorted(ranks), size=min(3, len(ranks)), replace=False))
    return single_system_experiment(
        u, {k: ranks[k] for k in chosen}, n=int(round(budget_per_query * u.shape[0])), trials=trials,
        seed=seed + 3, pool_depth=depth, alpha=alpha, target_fn=target_depth,
        approx=lambda r: approx_trec(r, depth), depth=depth)
