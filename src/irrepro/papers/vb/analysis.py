"""VB-Score on real runs (P4, Ding 2025): the per-topic scores of every run and what is computed from them.

* per-topic ES(Q, S@k) (Eq. 1) and VB_alpha(Q, S@k) (Sec. 3.4) for gains x priors x k x alpha
  (:func:`per_topic_scores`);
* collection VB@k = mean over topics (Sec. 3.5, Sec. 4) with percentile bootstrap CIs over topics, paired across
  systems (:func:`collection_summary`);
* the forest-plot data of Figs 3-4: CIs over topics and over pooled intents (:func:`forest_table`);
* per-topic CIs across intents (Sec. 3.6 D2; :func:`per_topic_cis`);
* Monte Carlo replicas of Algorithm 1 (pi ~ Dirichlet(c pi), truncation, tag flips; :func:`mc_replicas`);
* the sensitivity knobs of Sec. 3.5: temperature of the mass prior, truncation (:func:`sensitivity`).

Randomness: one ``numpy.random.SeedSequence`` per collection, a child spawned per bootstrap or replica set in the
order summary (VB, ES), forest, per-topic CIs, replicas; call the functions in that order with the same sequence.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from irrepro.core.verify import to_markdown
from irrepro.papers.vb import diversity as dv
from irrepro.papers.vb import vbscore as vbs

log = logging.getLogger(__name__)

SUMMARY_KEYS = ["system", "gain", "prior", "k", "alpha"]


def _rng(ss: np.random.SeedSequence) -> np.random.Generator:
    return np.random.default_rng(ss.spawn(1)[0])


def per_topic_scores(runs: dict, qrels, intents, ks, gains, priors, min_relevance, alphas) -> pd.DataFrame:
    """ES and VB_alpha of every run (``system -> run frame``) on every topic with intents: columns
    ``system, topic, gain, prior, k, es, alpha, vb``, alpha-major."""
    topics = set(intents.query_id)
    frames = []
    for system, run in runs.items():
        extra = set(run.query_id) - topics
        if extra:
            log.info("%s: %d topic(s) without intents ignored: %s", system, len(extra), sorted(extra)[:10])
        es = dv.per_topic_es(run, qrels, intents, ks, gains, priors, min_relevance)
        es.insert(0, "system", system)
        frames.append(es)
        log.info("%s: %d topics scored", system, es.topic.nunique())
    es = pd.concat(frames, ignore_index=True)
    return pd.concat([es.assign(alpha=a, vb=vbs.vb_score(es.es.to_numpy(), a)) for a in alphas], ignore_index=True)


def collection_summary(long: pd.DataFrame, n_boot: int, level: float, ss) -> pd.DataFrame:
    """Collection ES and VB@k (mean over topics) per system x gain x prior x k x alpha, with percentile bootstrap
    CIs over topics (paired across systems), and ``VB_of_mean_ES``, the penalty applied to the mean ES."""
    wide_vb = long.pivot_table(index="topic", columns=SUMMARY_KEYS, values="vb")
    wide_es = long.pivot_table(index="topic", columns=SUMMARY_KEYS, values="es")
    boot_vb = vbs.bootstrap_over_queries(wide_vb.to_numpy(), n_boot, _rng(ss))
    boot_es = vbs.bootstrap_over_queries(wide_es.to_numpy(), n_boot, _rng(ss))
    vlo, vhi = vbs.percentile_ci(boot_vb, level)
    elo, ehi = vbs.percentile_ci(boot_es, level)
    summary = wide_vb.columns.to_frame(index=False)
    summary["n_topics"] = wide_vb.shape[0]
    summary["ES"] = wide_es.mean().to_numpy()
    summary["ES_lo"], summary["ES_hi"] = elo, ehi
    summary["VB"] = wide_vb.mean().to_numpy()
    summary["VB_lo"], summary["VB_hi"] = vlo, vhi
    summary["VB_of_mean_ES"] = vbs.vb_score(summary["ES"].to_numpy(), summary["alpha"].to_numpy())
    return summary


def summary_markdown(summary: pd.DataFrame, collection: str, level: float, n_boot: int) -> str:
    return (f"# VB@k on {collection}: mean over topics of VB_alpha(Q, S@k)\n\n"
            f"{int(level * 100)}% percentile bootstrap CIs over topics ({n_boot} resamples, paired across systems). "
            "`VB_of_mean_ES` applies the penalty to the mean ES instead (the pooled reading of Table 1).\n\n"
            + to_markdown(summary))


def forest_table(summary, runs: dict, qrels, intents, k: int, gains, alphas, min_relevance, n_boot, level, ss):
    """Figs 3-4 at cut-off k: the CIs over topics (from ``summary``) and bootstrap CIs over pooled intents (every
    topic-subtopic pair, uniform prior: the paper's student-pipeline setting)."""
    rows = []
    for r in summary[summary.k == k].itertuples(index=False):
        rows.append(dict(system=r.system, gain=r.gain, prior=r.prior, k=k, alpha=r.alpha, ci_over="queries",
                         n=r.n_topics, ES=r.ES, ES_lo=r.ES_lo, ES_hi=r.ES_hi, VB=r.VB, VB_lo=r.VB_lo, VB_hi=r.VB_hi))
    for system, run in runs.items():
        for gain in gains:
            g = dv.pooled_intent_gains(run, qrels, intents, k, gain, min_relevance)
            pi = np.full(g.size, 1.0 / g.size)
            es_b, _ = vbs.bootstrap_over_intents(pi, g, n_boot, _rng(ss))
            e = float(g.mean())
            elo, ehi = vbs.percentile_ci(es_b, level)
            for a in alphas:
                lo, hi = vbs.percentile_ci(vbs.vb_score(es_b, a), level)
                rows.append(dict(system=system, gain=gain, prior="pooled", k=k, alpha=a, ci_over="intents", n=g.size,
                                 ES=e, ES_lo=elo, ES_hi=ehi, VB=float(vbs.vb_score(e, a)), VB_lo=lo, VB_hi=hi))
    return pd.DataFrame(rows)


def per_topic_cis(runs: dict, qrels, intents, k: int, gains, priors, alphas, min_relevance, n_boot, level, ss):
    """Per topic, ES and VB_alpha at cut-off k with bootstrap CIs across the topic's intents (Sec. 3.6 D2;
    degenerate for single-intent topics)."""
    rows = []
    for system, run in runs.items():
        tps, pi, n_rel, rel = dv.relevance_tensor(run, qrels, intents, k, min_relevance)
        for gain in gains:
            g = dv.gains_at(rel, n_rel, k, gain)
            for prior in priors:
                rng = _rng(ss)
                for qi, topic in enumerate(tps):
                    es_b, _ = vbs.bootstrap_over_intents(pi[prior][qi], g[qi], n_boot, rng)
                    e = float(vbs.expected_success(pi[prior][qi], g[qi]))
                    for a in alphas:
                        lo, hi = vbs.percentile_ci(vbs.vb_score(es_b, a), level)
                        rows.append(dict(system=system, topic=topic, gain=gain, prior=prior, k=k, alpha=a,
                                         n_intents=int((pi[prior][qi] > 0).sum()), ES=e,
                                         VB=float(vbs.vb_score(e, a)), VB_lo=lo, VB_hi=hi))
    return pd.DataFrame(rows)


def mc_replicas(runs: dict, qrels, intents, k: int, gains, priors, alphas, min_relevance, replicas, concentration,
                flip_prob, truncation, level, ss):
    """Algorithm 1 (Sec. 3.5): collection VB@k over Monte Carlo replicas of the intent distribution, beside the
    exact value; mean, sd and the normal-approximation interval of the replicas."""
    tr = truncation or {}
    rows = []
    for system, run in runs.items():
        tps, pi, n_rel, rel = dv.relevance_tensor(run, qrels, intents, k, min_relevance)
        for gain in gains:
            g = dv.gains_at(rel, n_rel, k, gain)
            for prior in priors:
                es_r, _ = vbs.monte_carlo_replicas(pi[prior], g, replicas, _rng(ss), concentration=concentration,
                                                   tau=tr.get("tau"), top_k=tr.get("top_k"), rho=tr.get("rho"),
                                                   flip_prob=flip_prob)
                exact_es = vbs.expected_success(pi[prior], g)
                for a in alphas:
                    coll = vbs.vb_score(es_r, a).mean(axis=1)  # replica b's collection score, mean over topics
                    m, lo, hi = vbs.replica_ci(coll, level)
                    rows.append(dict(system=system, gain=gain, prior=prior, k=k, alpha=a, replicas=replicas,
                                     concentration=concentration, exact=float(vbs.vb_score(exact_es, a).mean()),
                                     mc_mean=float(m), mc_sd=float(coll.std(ddof=1)), mc_lo=float(lo),
                                     mc_hi=float(hi)))
    return pd.DataFrame(rows)


def sensitivity_variants(base: dict, temperatures, truncations) -> list[tuple[str, dict]]:
    """The intent-distribution variants of the sensitivity analysis: the configured one (``base``: temperature and
    truncation), each other temperature of the mass prior, and each truncation rule alone (Sec. 3.5)."""
    tr = base.get("truncation") or {}
    variants = [("base", dict(temperature=base["temperature"], **{x: tr.get(x) for x in ("tau", "top_k", "rho")}))]
    variants += [(f"T={t:g}", dict(temperature=t)) for t in temperatures if t != base["temperature"]]
    variants += [(" ".join(f"{a}={b:g}" for a, b in t.items()), dict(temperature=base["temperature"], **t))
                 for t in truncations]
    return variants


def sensitivity(runs: dict, qrels, base: dict, temperatures, truncations, k: int, gains, alphas) -> pd.DataFrame:
    """VB@k of every run (both priors) under each variant of :func:`sensitivity_variants`; ``base`` holds the
    configured ``min_relevance, mass, temperature, truncation``."""
    rows = []
    for label, kw in sensitivity_variants(base, temperatures, truncations):
        intents = dv.intents_from_qrels(qrels, min_relevance=base["min_relevance"], mass=base["mass"], **kw)
        for system, run in runs.items():
            es = dv.per_topic_es(run, qrels, intents, [k], gains, dv.PRIORS, base["min_relevance"])
            for (gain, prior), d in es.groupby(["gain", "prior"]):
                for a in alphas:
                    rows.append(dict(variant=label, system=system, gain=gain, prior=prior, k=k, alpha=a,
                                     VB=float(vbs.vb_score(d.es.to_numpy(), a).mean())))
        log.info("variant %s done", label)
    return pd.DataFrame(rows)


def sensitivity_markdown(df: pd.DataFrame, collection: str, k: int, alphas) -> str:
    """VB@k at the largest alpha, one column per variant."""
    wide = df[(df.alpha == max(alphas))].pivot_table(index=["gain", "prior", "system"], columns="variant",
                                                      values="VB").reset_index()
    return (f"# Sensitivity of VB@{k} on {collection} (alpha = {max(alphas):g})\n\n"
            "Columns: the intent-distribution variant (temperature T of the mass prior; truncation rule applied to "
            "both priors). Uniform-prior rows change only under truncation.\n\n" + to_markdown(wide))
