"""VB and ES beside the intent-aware measures (alpha-nDCG, ERR-IA via pyndeval) on the same runs."""
import numpy as np
import pandas as pd
from scipy import stats

from irrepro.papers.vb.diversity import diversity_measures
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    qrels = read_qrels(sm.input.qrels)
    frames = []
    for system, path in zip(sm.params.systems, sm.input.runs):
        m = diversity_measures(read_run(path, system=system), qrels, sm.params.measures)
        frames.append(m.assign(system=system))
        log.info("%s evaluated", system)
    ia = pd.concat(frames, ignore_index=True)[["system", "topic", "measure", "value"]]
    ia.to_csv(sm.output.per_topic, index=False, float_format="%.8g")
    pt = pd.read_csv(sm.input.per_topic, dtype={"topic": str})
    k = int(sm.params.k)
    pt = pt[pt.k == k]
    # topics: those with intents (VB's topics); intent-aware measures restricted to the same topics
    cols = {}
    for (gain, prior), d in pt.groupby(["gain", "prior"]):
        es = d[d.alpha == d.alpha.min()].assign(measure=f"ES@{k}/{gain}/{prior}", value=lambda x: x.es)
        cols[f"ES@{k}/{gain}/{prior}"] = es
        for a in sorted(d.alpha.unique()):
            if a == 0:
                continue
            cols[f"VB{a:g}@{k}/{gain}/{prior}"] = d[d.alpha == a].assign(value=lambda x: x.vb)
    topics = set(pt.topic)
    for meas, d in ia.groupby("measure"):
        cols[meas] = d[d.topic.isin(topics)]
    per = pd.DataFrame({name: d.set_index(["system", "topic"])["value"] for name, d in cols.items()})
    means = per.groupby(level="system").mean()
    means.insert(0, "n_topics", per.groupby(level="system").size())
    means = means.reset_index()
    # agreement with each intent-aware measure: Kendall tau between system orderings, Pearson r over (system, topic)
    rows = []
    for ref in sm.params.measures:
        for name in cols:
            if name == ref:
                continue
            tau = stats.kendalltau(means[ref], means[name]).statistic if len(means) > 1 else np.nan
            ok = per[[ref, name]].dropna()
            r = stats.pearsonr(ok[ref], ok[name]).statistic if len(ok) > 2 and ok[name].std() > 0 else np.nan
            rows.append(dict(reference=ref, measure=name, kendall_tau_systems=tau, pearson_r_topics=r))
    agree = pd.DataFrame(rows)
    means.to_csv(sm.output.csv, index=False, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write(f"# VB beside intent-aware measures on {sm.wildcards.vbcoll}\n\nMeans over the {int(means.n_topics.max())} "
                f"topics with intents; VB/ES at k = {k} (gain/prior in the column name).\n\n")
        f.write(to_markdown(means))
        f.write("\n\n## Agreement (Kendall tau between system orderings; Pearson r over system x topic)\n\n")
        f.write(to_markdown(agree))
    agree.to_csv(sm.output.agreement, index=False, float_format="%.6g")
