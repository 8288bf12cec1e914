"""Per-topic ES/VB of every run, collection VB@k with bootstrap CIs (over queries, over pooled intents), and the
Monte Carlo replicas of Algorithm 1."""
import numpy as np
import pandas as pd

from irrepro.papers.vb import diversity as dv
from irrepro.papers.vb import vbscore as vbs
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
P = sm.params.vb
with log_to(sm.log[0]) as log:
    qrels = read_qrels(sm.input.qrels)
    intents = pd.read_csv(sm.input.intents, dtype={"query_id": str, "subtopic": str})
    topics = list(dict.fromkeys(intents.query_id))
    alphas = [float(a) for a in P["alphas"]]
    tr = P.get("truncation") or {}
    level, B = P["ci_level"], P["n_boot"]
    ss = np.random.SeedSequence(P["seed"])
    runs = {}
    frames = []
    for system, path in zip(sm.params.systems, sm.input.runs):
        run = read_run(path, system=system)
        extra = set(run.query_id) - set(topics)
        if extra:
            log.info("%s: %d topic(s) without intents ignored: %s", system, len(extra), sorted(extra)[:10])
        runs[system] = run
        es = dv.per_topic_es(run, qrels, intents, P["ks"], P["gains"], P["priors"], P["min_relevance"])
        es.insert(0, "system", system)
        frames.append(es)
        log.info("%s: %d topics scored", system, es.topic.nunique())
    es = pd.concat(frames, ignore_index=True)
    long = pd.concat([es.assign(alpha=a, vb=vbs.vb_score(es.es.to_numpy(), a)) for a in alphas], ignore_index=True)
    long.to_csv(sm.output.per_topic, index=False, float_format="%.8g")

    # --- collection VB@k = mean over topics of VB(Q, S@k), percentile CIs by resampling topics (paired) ---------
    keys = ["system", "gain", "prior", "k", "alpha"]
    wide_vb = long.pivot_table(index="topic", columns=keys, values="vb")
    wide_es = long.pivot_table(index="topic", columns=keys, values="es")
    boot_vb = vbs.bootstrap_over_queries(wide_vb.to_numpy(), B, np.random.default_rng(ss.spawn(1)[0]))
    boot_es = vbs.bootstrap_over_queries(wide_es.to_numpy(), B, np.random.default_rng(ss.spawn(1)[0]))
    vlo, vhi = vbs.percentile_ci(boot_vb, level)
    elo, ehi = vbs.percentile_ci(boot_es, level)
    summary = wide_vb.columns.to_frame(index=False)
    summary["n_topics"] = wide_vb.shape[0]
    summary["ES"] = wide_es.mean().to_numpy()
    summary["ES_lo"], summary["ES_hi"] = elo, ehi
    summary["VB"] = wide_vb.mean().to_numpy()
    summary["VB_lo"], summary["VB_hi"] = vlo, vhi
    summary["VB_of_mean_ES"] = vbs.vb_score(summary["ES"].to_numpy(), summary["alpha"].to_numpy())
    summary.to_csv(sm.output.summary, index=False, float_format="%.6g")
    with open(sm.output.summary_md, "w") as f:
        f.write(f"# VB@k on {sm.wildcards.vbcoll}: mean over topics of VB_alpha(Q, S@k)\n\n"
                f"{int(level * 100)}% percentile bootstrap CIs over topics ({B} resamples, paired across systems). "
                "`VB_of_mean_ES` applies the penalty to the mean ES instead (the pooled reading of Table 1).\n\n")
        f.write(to_markdown(summary))

    # --- forest-plot data at forest_k: CIs over queries (above) and over pooled intents ----------------------------
    k = int(P["forest_k"])
    rows = []
    s_k = summary[summary.k == k]
    for r in s_k.itertuples(index=False):
        rows.append(dict(system=r.system, gain=r.gain, prior=r.prior, k=k, alpha=r.alpha, ci_over="queries",
                         n=r.n_topics, ES=r.ES, ES_lo=r.ES_lo, ES_hi=r.ES_hi, VB=r.VB, VB_lo=r.VB_lo, VB_hi=r.VB_hi))
    for system, run in runs.items():
        for gain in P["gains"]:
            g = dv.pooled_intent_gains(run, qrels, intents, k, gain, P["min_relevance"])
            pi = np.full(g.size, 1.0 / g.size)
            rng = np.random.default_rng(ss.spawn(1)[0])
            es_b, _ = vbs.bootstrap_over_intents(pi, g, B, rng)
            e = float(g.mean())
            elo_, ehi_ = vbs.percentile_ci(es_b, level)
            for a in alphas:
                vb_b = vbs.vb_score(es_b, a)
                lo_, hi_ = vbs.percentile_ci(vb_b, level)
                rows.append(dict(system=system, gain=gain, prior="pooled", k=k, alpha=a, ci_over="intents", n=g.size,
                                 ES=e, ES_lo=elo_, ES_hi=ehi_, VB=float(vbs.vb_score(e, a)), VB_lo=lo_, VB_hi=hi_))
    pd.DataFrame(rows).to_csv(sm.output.forest, index=False, float_format="%.6g")

    # --- per-query CIs across intents at forest_k (Sec. 3.6 D2; degenerate for single-intent topics) --------------
    rows = []
    for system, run in runs.items():
        tps, pi, n_rel, rel = dv.relevance_tensor(run, qrels, intents, k, P["min_relevance"])
        for gain in P["gains"]:
            g = dv.gains_at(rel, n_rel, k, gain)
            for prior in P["priors"]:
                rng = np.random.default_rng(ss.spawn(1)[0])
                for qi, topic in enumerate(tps):
                    es_b, _ = vbs.bootstrap_over_intents(pi[prior][qi], g[qi], B, rng)
                    e = float(vbs.expected_success(pi[prior][qi], g[qi]))
                    for a in alphas:
                        lo_, hi_ = vbs.percentile_ci(vbs.vb_score(es_b, a), level)
                        rows.append(dict(system=system, topic=topic, gain=gain, prior=prior, k=k, alpha=a,
                                         n_intents=int((pi[prior][qi] > 0).sum()), ES=e,
                                         VB=float(vbs.vb_score(e, a)), VB_lo=lo_, VB_hi=hi_))
    pd.DataFrame(rows).to_csv(sm.output.per_topic_ci, index=False, float_format="%.6g")

    # --- Algorithm 1: Monte Carlo replicas (pi ~ Dirichlet(c pi), truncation, optional tag flips) -------------------
    rows = []
    for system, run in runs.items():
        tps, pi, n_rel, rel = dv.relevance_tensor(run, qrels, intents, k, P["min_relevance"])
        for gain in P["gains"]:
            g = dv.gains_at(rel, n_rel, k, gain)
            for prior in P["priors"]:
                rng = np.random.default_rng(ss.spawn(1)[0])
                es_r, _ = vbs.monte_carlo_replicas(pi[prior], g, P["replicas"], rng, concentration=P["concentration"],
                                                   tau=tr.get("tau"), top_k=tr.get("top_k"), rho=tr.get("rho"),
                                                   flip_prob=P["flip_prob"])
                exact_es = vbs.expected_success(pi[prior], g)
                for a in alphas:
                    coll = vbs.vb_score(es_r, a).mean(axis=1)  # replica b's collection score, mean over topics
                    m, lo_, hi_ = vbs.replica_ci(coll, level)
                    rows.append(dict(system=system, gain=gain, prior=prior, k=k, alpha=a, replicas=P["replicas"],
                                     concentration=P["concentration"], exact=float(vbs.vb_score(exact_es, a).mean()),
                                     mc_mean=float(m), mc_sd=float(coll.std(ddof=1)), mc_lo=float(lo_),
                                     mc_hi=float(hi_)))
    pd.DataFrame(rows).to_csv(sm.output.replicas, index=False, float_format="%.6g")
    log.info("done: %d systems", len(runs))
