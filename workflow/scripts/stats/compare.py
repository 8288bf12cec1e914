"""One collection × measure: the per-pair table of every test and correction, the per-system summary and the p-value
heat map."""
import json

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.plots import pvalue_heatmap
from irrepro.stats.stage import compare_measure, summary_markdown

sm = snakemake  # noqa: F821
c, m = sm.wildcards.collection, sm.wildcards.measure
with log_to(sm.log[0]) as log:
    s = json.loads(sm.params.settings)
    r = compare_measure(read_scores(sm.input[0]), c, m, s)
    for n in r.notes:
        log.warning("%s %s: %s", c, m, n)
    write_table(r.table, csv=sm.output.csv, float_format="%.12g")
    with open(sm.output.md, "w") as f:
        f.write(f"No comparison: {r.notes[0]}.\n" if r.summary is None else summary_markdown(r))
    save(pvalue_heatmap(r.table, r.systems, c, m, s.get("baseline")), sm.output.pdf, sm.output.png)
