"""One collection, every measure: the per-pair table of every test and correction, the per-system summary and the
heat map of the differences of each, then all measures in one table (summary.csv / .md / .tex). A baseline from another collection or import (stats.baseline: <id>/<system>)
joins the compared systems first, its scores read from that id's score table."""
import json
from pathlib import Path

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.experiment import stage_summary
from irrepro.stats.plots import effect_heatmap
from irrepro.stats.stage import compare_measure, join_baselines, summary_markdown

sm = snakemake  # noqa: F821
c = sm.params.collection
with log_to(sm.log[0]) as log:
    s = json.loads(sm.params.settings)
    # results/<version>/scores/<id>.tsv of each id a baseline comes from
    others = {Path(f).name.removesuffix(".tsv"): read_scores(f) for f in sm.input.baselines}
    scores = join_baselines(read_scores(sm.input.scores), c, s.get("baseline"), others)
    done = {}
    for i, m in enumerate(sm.params.measures):
        r = done[m] = compare_measure(scores, c, m, s)
        for n in r.notes:
            log.warning("%s %s: %s", c, m, n)
        write_table(r.table, csv=sm.output.csv[i], float_format="%.12g")
        with open(sm.output.md[i], "w") as f:
            f.write(f"No comparison: {r.notes[0]}.\n" if r.summary is None else summary_markdown(r))
        save(effect_heatmap(r.table, r.systems, c, m, alpha=s["alpha"]), sm.output.pdf[i], sm.output.png[i])
        log.info("%s %s: %d pairs (%d of %d measures)", c, m, len(r.table), i + 1, len(sm.params.measures))
    table, md, tex = stage_summary({m: r for m, r in done.items() if r.summary is not None}, s, c)
    write_table(table, csv=sm.output.summary_csv, float_format="%.12g")
    Path(sm.output.summary_md).write_text(md)
    Path(sm.output.summary_tex).write_text(tex)
