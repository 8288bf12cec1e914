"""BV-Test Table 8 (top systems of TREC Web 2012 by ERR@20)."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.papers.bv.tables import table8_tables

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    M = to_matrix(read_scores(sm.input[0]), sm.params.measure)
    t, values = table8_tables(M, top=sm.params.top, ddof=sm.params.ddof)
    write_table(t.round(6), csv=sm.output.csv)
    write_table(t.round(4), md=sm.output.md)
    # every system of the collection, for matching the paper's (named) runs to the anonymised matrix
    write_values(values, sm.output.values, sort_keys=False)
