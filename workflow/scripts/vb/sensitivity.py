"""VB@k of every run across the sensitivity knobs of Sec. 3.5: temperature of the mass prior, truncation rule."""
import json

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.papers.vb import analysis as an

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    runs = {s: read_run(path, system=s) for s, path in zip(p.systems, sm.input.runs)}
    k = int(p.k)
    df = an.sensitivity(runs, read_qrels(sm.input.qrels, subtopics=True), json.loads(p.base), p.temperatures,
                        json.loads(p.truncations), k, p.gains, p.alphas)
    df.to_csv(sm.output.csv, index=False, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write(an.sensitivity_markdown(df, sm.wildcards.collection, k, p.alphas))
