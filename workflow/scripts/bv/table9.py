"""BV-Test Table 9 on every configured collection (per-topic score tables)."""
import json

from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.papers.bv.tables import table9

sm = snakemake  # noqa: F821
cols = json.loads(sm.params.collections)
with log_to(sm.log[0]):
    matrices = [(c, m, to_matrix(read_scores(p), m)) for p, (c, m) in zip(sm.input, sorted(cols.items()))]
    t9, md, values = table9(matrices, seed=sm.params.seed, **json.loads(sm.params.settings))
    write_table(t9, csv=sm.output.csv)
    write_table(md, md=sm.output.md)
    write_values(values, sm.output.values)
