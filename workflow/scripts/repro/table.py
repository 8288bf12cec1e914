"""A collection's reproducibility table (irrepro.repro.table) and its per-topic differences figure."""
import json
from pathlib import Path

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.core.trec import read_run
from irrepro.repro.plots import plot_differences
from irrepro.repro.table import Comparison, repro_table

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    comps = [Comparison(c["name"], tuple(c["original"]), tuple(c["reproduced"]))
             for c in json.loads(sm.params.comparisons)]
    runs = {Path(p).name[: -len(".run")]: read_run(p) for p in sm.input.runs}
    scores = read_scores(sm.input.scores)
    table = repro_table(comps, runs, scores, sm.params.measures, depth=sm.params.depth, rbo_p=sm.params.rbo_p,
                        tolerance=sm.params.tolerance)
    write_table(table, sm.output.csv, sm.output.md, float_format="%.6g")
    shown = [m for m in ("AP", "nDCG@10") if m in sm.params.measures] or list(sm.params.measures)[:2]
    save(plot_differences(table, scores, shown, title=sm.wildcards.collection), sm.output.pdf, sm.output.png)
    for _, r in table[table.measure == shown[0]].iterrows():
        log.info("%s, %s: %s %.4f -> %s %.4f (%s), KTU %.3f, RBO %.3f, ER %s", r.comparison, r.setting, r.original,
                 r.original_score, r.reproduced, r.reproduced_score, r.verdict, r.ktu, r.rbo, r.er)
