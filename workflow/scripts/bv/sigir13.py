"""SIGIR 2013 Figs 1–2 on the query-model family: Bias²(AP), Var(AP) and their sum per model; the target value is
the MAP of the target query model (the paper's third upper-bound setting, a real target model)."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores, to_matrix
from irrepro.papers.bv.plots import save, sigir13_figs
from irrepro.papers.bv.sigir13 import family_bias_variance

sm = snakemake  # noqa: F821
c = sm.wildcards.collection
with log_to(sm.log[0]) as log:
    t, c_target, values = family_bias_variance(to_matrix(read_scores(sm.input[0]), "AP"), c)
    write_table(t.round(6), csv=sm.output.csv, index=True)
    log.info("%s", values)
    write_values(values, sm.output.values)
    save(sigir13_figs(t, c_target, c), sm.output.pdf, sm.output.png)
