"""Figure: the system population of one collection."""
from irrepro.core.logs import log_to
from irrepro.retrieval.plots import population_figure
from irrepro.core.scores import read_scores

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    fig = population_figure(read_scores(sm.input[0]), sm.params.measures, sm.wildcards.collection)
    fig.savefig(sm.output.pdf, bbox_inches="tight")
    fig.savefig(sm.output.png, dpi=150, bbox_inches="tight")
