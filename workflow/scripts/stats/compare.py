"""One collection, every measure: the per-pair table of every test and correction, the per-system summary and the
p-value heat map of each."""
import json

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.plots import pvalue_heatmap
from irrepro.stats.stage import compare_measure, summary_markdown

sm = snakemake  # noqa: F821
c = sm.params.collection
with log_to(sm.log[0]) as log:
    s = json.loads(sm.params.settings)
    scores = read_scores(sm.input[0])
    for i, m in enumerate(sm.params.measures):
        r = compare_measure(scores, c, m, s)
        for n in r.notes:
            log.warning("%s %s: %s", c, m, n)
        write_table(r.table, csv=sm.output.csv[i], float_format="%.12g")
        with open(sm.output.md[i], "w") as f:
            f.write(f"No comparison: {r.notes[0]}.\n" if r.summary is None else summary_markdown(r))
        save(pvalue_heatmap(r.table, r.systems, c, m, s.get("baseline")), sm.output.pdf[i], sm.output.png[i])
        log.info("%s %s: %d pairs (%d of %d measures)", c, m, len(r.table), i + 1, len(sm.params.measures))
