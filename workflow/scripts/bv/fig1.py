"""BV-Test Fig 1: Bias², Var and their sum per system, systems sorted by Bias²."""
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.papers.bv.plots import fig1, save
from irrepro.papers.bv.tables import fig1_data

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    t, r, why = fig1_data(to_matrix(read_scores(sm.input[0]), sm.params.measure))
    save(fig1(t, r, why, sm.wildcards.collection, sm.params.measure), sm.output.pdf, sm.output.png)
