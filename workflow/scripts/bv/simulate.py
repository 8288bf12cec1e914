"""BV-Test Sec. 3.4 on one collection: k simulated collections per topic from the population's run files (with
scores), then Eq. 12 per (system, topic) (irrepro.papers.bv.simulated.simulate_collection)."""
from irrepro.core.logs import log_to
from irrepro.papers.bv.simulated import simulate_collection, write_per_topic

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    df = simulate_collection(sm.wildcards.collection, sm.input.runs, sm.input.qrels, k=sm.params.k,
                             seed=sm.params.seed, unretrieved=sm.params.unretrieved,
                             rel_threshold=sm.params.rel_threshold, depth=sm.params.depth, shared=sm.params.shared)
    write_per_topic(df, sm.output[0])
