"""BV-Test Table 11: per topic, the Pearson correlation across systems of Bias² and Var on simulated collections
(Sec. 3.4), one block per collection (irrepro.papers.bv.simulated.table11)."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.bv.simulated import read_per_topic, table11

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    t, summary, md, values = table11([(c, read_per_topic(p)) for p, c in zip(sm.input, sm.params.collections)])
    write_table(t, csv=sm.output.csv)
    write_table(summary.round(6), csv=sm.output.summary)
    with open(sm.output.md, "w") as f:
        f.write(md)
    write_values(values, sm.output.values)
