"""ci.systems planning: interval width against the number of human-labelled queries, and the number a target
width needs, per system and method, from the labels at hand."""
import pandas as pd

from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.papers.ci import plots
from irrepro.papers.ci.planning import plan_tables

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p, c = sm.params, sm.wildcards.collection
    long = pd.read_csv(sm.input.systems)
    per_query = pd.read_csv(sm.input.per_query, dtype={"query_id": str})
    need, curves = plan_tables(long, per_query, p.plan_widths, p.alpha)
    log.info("planning: %d rows", len(need))
    write_table(need, csv=sm.output.csv, md=sm.output.md, float_format="%.6g")
    m = p.measures[0]
    fig = plots.systems_plan_figure(curves[curves.measure == m], f"{c}: width vs human-labelled queries ({m})")
    plots.save(fig, sm.output.pdf, sm.output.png)
