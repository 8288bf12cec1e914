"""How many intents TREC Web topics have, and how peaked the judged-mass prior is, per collection."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.papers.vb import diversity as dv

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    intents = [pd.read_csv(p, dtype={"query_id": str, "subtopic": str}) for p in sm.input.intents]
    topics = [pd.read_csv(p, sep="\t", dtype={"query_id": str}) for p in sm.input.topics]
    df = dv.intents_summary(sm.params.collections, intents, topics)
    df.to_csv(sm.output.csv, index=False, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write(dv.intents_summary_markdown(df))
