"""The pairs to label: the top `depth` of the configured system's run per judged query (at most `max_queries`
queries, a seeded sample), with human grades."""
from irrepro.labels.agreement import sample_queries
from irrepro.papers.ci.ranking import labelled_ranking
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    pairs = labelled_ranking(read_run(sm.input.run), read_qrels(sm.input.qrels), sm.params.depth,
                             judged_only=sm.params.judged_only)
    pairs = sample_queries(pairs, sm.params.max_queries, sm.params.seed)
    pairs.to_csv(sm.output[0], sep="\t", index=False)
    log.info("%s: %d pairs on %d queries (depth %d, judged only: %s, max queries: %s, seed %d)",
             sm.wildcards.collection, len(pairs), pairs.query_id.nunique(), sm.params.depth, sm.params.judged_only,
             sm.params.max_queries, sm.params.seed)
