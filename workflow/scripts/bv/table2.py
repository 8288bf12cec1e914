"""BV-Test Table 2: the toy example, Bias² with c = mean of the target system (0.8) and with c = 1."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.bv.tables import table2

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    t, values = table2()
    write_table(t.round(6), csv=sm.output.csv)
    write_table(t.round(4), md=sm.output.md)
    write_values(values, sm.output.values)
