"""ci.systems planning: interval width against the number of human-labelled queries, and the number a target
width needs, per system and method, from the labels at hand."""
import pandas as pd

from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.papers.ci import plots
from irrepro.papers.ci.planning import plan_markdown, plan_tables

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p, c = sm.params, sm.wildcards.collection
    long = pd.read_csv(sm.input.systems)
    per_query = pd.read_csv(sm.input.per_query, dtype={"query_id": str})
    need, curves = plan_tables(long, per_query, p.plan_widths, p.alpha)
    log.info("planning: %d rows", len(need))
    write_table(need, csv=sm.output.csv, float_format="%.6g")
    with open(sm.output.md, "w") as f:
        f.write(plan_markdown(need, c, p.alpha))
    fig = plots.systems_plan_figure(curves, f"{c}: predicted interval width vs human-labelled queries")
    plots.save(fig, sm.output.pdf, sm.output.png)
