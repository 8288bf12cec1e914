"""How many intents TREC Web topics have, and how peaked the judged-mass prior is, per collection."""
import numpy as np
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    rows = []
    for c, ipath, tpath in zip(sm.params.collections, sm.input.intents, sm.input.topics):
        it = pd.read_csv(ipath, dtype={"query_id": str, "subtopic": str})
        topics = pd.read_csv(tpath, sep="\t", dtype={"query_id": str})
        n = it.groupby("query_id").size()
        pm = it[it.pi_mass > 0].groupby("query_id")["pi_mass"]
        ent = pm.apply(lambda p: float(-(p * np.log(p)).sum()))
        norm_ent = (ent / np.log(n.reindex(ent.index)).replace(0, np.nan)).dropna()
        rows.append(dict(collection=c, topics=len(topics), topics_with_intents=len(n), intents=len(it),
                         intents_per_topic_mean=n.mean(), intents_per_topic_min=n.min(), intents_per_topic_max=n.max(),
                         single_intent_topics=int((n == 1).sum()), mass_pi_max_mean=pm.max().mean(),
                         mass_pi_norm_entropy_mean=norm_ent.mean()))
    df = pd.DataFrame(rows)
    df.to_csv(sm.output.csv, index=False, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write("# Intents (subtopics with a relevant document) of the TREC Web diversity topics\n\n"
                "`mass_pi_*`: the judged-mass prior; max probability and entropy / log(n) (1 = uniform), "
                "means over topics with more than one intent for the entropy.\n\n")
        f.write(to_markdown(df))
