"""ci.systems planning: interval width against the number of human-labelled queries and the number a target width
needs, per system and method; and the judged queries needed to detect a difference from the baseline."""
import pandas as pd

from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.papers.ci import plots
from irrepro.papers.ci.sample_size import difference_power, plan_markdown, plan_tables, power_markdown

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
    power = difference_power(long, per_query, p.plan_deltas, p.alpha, p.plan_power)
    log.info("power table: %d rows", len(power))
    write_table(power, csv=sm.output.power_csv, float_format="%.6g")
    with open(sm.output.power_md, "w") as f:
        f.write(power_markdown(power, c, p.alpha))
    fig = plots.systems_plan_figure(curves, f"{c}: predicted interval width vs human-labelled queries")
    plots.save(fig, sm.output.pdf, sm.output.png)
