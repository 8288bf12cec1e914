"""VB and ES beside the intent-aware measures (alpha-nDCG, ERR-IA via pyndeval) on the same runs."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.papers.vb import compare as cmp

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    runs = {s: read_run(path, system=s) for s, path in zip(p.systems, sm.input.runs)}
    ia = cmp.intent_aware_per_topic(runs, read_qrels(sm.input.qrels, subtopics=True), p.measures)
    ia.to_csv(sm.output.per_topic, index=False, float_format="%.8g")
    k = int(p.k)
    means, agree = cmp.compare(ia, pd.read_csv(sm.input.per_topic, dtype={"topic": str}), k, p.measures)
    means.to_csv(sm.output.csv, index=False, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write(cmp.compare_markdown(means, agree, sm.wildcards.collection, k))
    agree.to_csv(sm.output.agreement, index=False, float_format="%.6g")
