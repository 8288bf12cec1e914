"""SIGIR 2013 (Zhang, Song, Wang, Hou) Tables 1 and 2: the toy AP example of two queries and four models
(irrepro.papers.bv.sigir13.toy_tables), with the text's variant and claims."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.bv.sigir13 import toy_tables

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    t1, t2, values = toy_tables()
    for t, csv, md in ((t1, sm.output.t1_csv, sm.output.t1_md), (t2, sm.output.t2_csv, sm.output.t2_md)):
        write_table(t.round(6), csv=csv)
        write_table(t.round(4), md=md)
    log.info("Table 1:\n%s\nTable 2:\n%s", t1.round(4), t2.round(4))
    write_values(values, sm.output.values)
