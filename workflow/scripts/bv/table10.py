"""BV-Test Table 10: Pearson correlation across systems of the per-topic Bias² and Var averaged over topics
(Eqs. 13–14), on simulated collections (Sec. 3.4), one row per collection."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.bv.simulated import read_per_topic, table10

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    t, values = table10([(c, read_per_topic(p)) for p, c in zip(sm.input, sm.params.collections)])
    write_table(t.round(6), csv=sm.output.csv)
    write_table(t.round(4), md=sm.output.md)
    write_values(values, sm.output.values)
