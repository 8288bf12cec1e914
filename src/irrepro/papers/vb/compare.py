"""VB and ES beside the intent-aware measures (alpha-nDCG, ERR-IA; ir_measures + pyndeval) on the same runs."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from scipy import stats

from irrepro.core.verify import to_markdown
from irrepro.papers.vb.diversity import diversity_measures

log = logging.getLogger(__name__)


def intent_aware_per_topic(runs: dict, qrels, measures) -> pd.DataFrame:
    """The intent-aware ``measures`` of every run (``system -> run frame``) per judged topic: columns
    ``system, topic, measure, value``."""
    frames = []
    for system, run in runs.items():
        frames.append(diversity_measures(run, qrels, measures).assign(system=system))
        log.info("%s evaluated", system)
    return pd.concat(frames, ignore_index=True)[["system", "topic", "measure", "value"]]


def compare(ia: pd.DataFrame, per_topic: pd.DataFrame, k: int, measures) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Means over the topics with intents of ES@k and VB_alpha@k (every gain and prior, alpha > 0) and of the
    intent-aware measures (restricted to the same topics); and their agreement with each intent-aware measure:
    Kendall tau between the system orderings, Pearson r over (system, topic). Returns ``(means, agreement)``."""
    pt = per_topic[per_topic.k == k]
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
    rows = []
    for ref in measures:
        for name in cols:
            if name == ref:
                continue
            tau = stats.kendalltau(means[ref], means[name]).statistic if len(means) > 1 else np.nan
            ok = per[[ref, name]].dropna()
            r = stats.pearsonr(ok[ref], ok[name]).statistic if len(ok) > 2 and ok[name].std() > 0 else np.nan
            rows.append(dict(reference=ref, measure=name, kendall_tau_systems=tau, pearson_r_topics=r))
    return means, pd.DataFrame(rows)


def compare_markdown(means: pd.DataFrame, agree: pd.DataFrame, collection: str, k: int) -> str:
    return (f"# VB beside intent-aware measures on {collection}\n\nMeans over the {int(means.n_topics.max())} "
            f"topics with intents; VB/ES at k = {k} (gain/prior in the column name).\n\n" + to_markdown(means)
            + "\n\n## Agreement (Kendall tau between system orderings; Pearson r over system x topic)\n\n"
            + to_markdown(agree))
