"""Per-topic ES/VB of every run, collection VB@k with bootstrap CIs (over queries, over pooled intents), per-topic
CIs across intents, and the Monte Carlo replicas of Algorithm 1 (irrepro.papers.vb.analysis)."""
import json

import numpy as np
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.papers.vb import analysis as an

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]) as log:
    qrels = read_qrels(sm.input.qrels, subtopics=True)
    intents = pd.read_csv(sm.input.intents, dtype={"query_id": str, "subtopic": str})
    runs = {s: read_run(path, system=s) for s, path in zip(p.systems, sm.input.runs)}
    alphas = [float(a) for a in p.alphas]
    k = int(p.forest_k)
    ss = np.random.SeedSequence(p.seed)  # one child per bootstrap / replica set, in the order below
    long = an.per_topic_scores(runs, qrels, intents, p.ks, p.gains, p.priors, p.min_relevance, alphas)
    long.to_csv(sm.output.per_topic, index=False, float_format="%.8g")
    summary = an.collection_summary(long, p.n_boot, p.ci_level, ss)
    summary.to_csv(sm.output.summary, index=False, float_format="%.6g")
    with open(sm.output.summary_md, "w") as f:
        f.write(an.summary_markdown(summary, sm.wildcards.collection, p.ci_level, p.n_boot))
    an.forest_table(summary, runs, qrels, intents, k, p.gains, alphas, p.min_relevance, p.n_boot, p.ci_level,
                    ss).to_csv(sm.output.forest, index=False, float_format="%.6g")
    an.per_topic_cis(runs, qrels, intents, k, p.gains, p.priors, alphas, p.min_relevance, p.n_boot, p.ci_level,
                     ss).to_csv(sm.output.per_topic_ci, index=False, float_format="%.6g")
    an.mc_replicas(runs, qrels, intents, k, p.gains, p.priors, alphas, p.min_relevance, p.replicas, p.concentration,
                   p.flip_prob, json.loads(p.truncation), p.ci_level, ss).to_csv(sm.output.replicas, index=False,
                                                                     float_format="%.6g")
    log.info("done: %d systems", len(runs))
