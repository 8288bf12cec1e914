"""Run the SIGIR 2013 query-model family on one collection and score every model per topic."""
from irrepro.core.logs import log_to
from irrepro.core.scores import write_scores
from irrepro.papers.bv.querymodels import run_collection

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    scores = run_collection(sm.wildcards.collection, sm.input.index, sm.input.topics, sm.input.qrels, p.dataset,
                            sm.input.docs[0] if sm.input.docs else None, p.home, lambdas=p.lambdas, rns=p.rns,
                            fb_docs=p.fb_docs, n_terms=p.n_terms, depth=p.depth, mu=p.mu,
                            fb_weighting=p.fb_weighting, measures=p.measures)
    write_scores(scores, sm.output[0])
