"""The pool one labeler labels (labels.self_preference, labels.audit): every compared system's top `depth` on the
labeler's queries (every judged query, or the label stage's sample of this labeler), within each query's judged
documents where judged_only, with human grades."""
from irrepro.audit.rerank import condensed
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels.stage import read_pairs, sampled
from irrepro.papers.ci.systems import judged_queries, systems_pairs

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p = sm.params
    qrels = read_qrels(sm.input.qrels)
    queries = judged_queries(qrels)
    if p.sample is not None:  # the queries of the label stage's sample (its labels are cached)
        stage = sampled(read_pairs(sm.input.stage_pairs), p.sample, p.seed)
        queries = [q for q in queries if q in set(stage.query_id)]
    runs = {s: read_run(sm.input[f"run_{s}"]) for s in p.systems}
    if p.judged_only:
        runs = {s: condensed(r, qrels) for s, r in runs.items()}
    pool = systems_pairs(runs, qrels, p.depth, queries)
    pool["relevance"] = pool["relevance"].astype(int)
    pool.to_csv(sm.output[0], sep="\t", index=False)
    log.info("%s, %s: %d pairs (top %d of %d systems%s on %d queries%s)", sm.wildcards.collection,
             sm.wildcards.labeler, len(pool), p.depth, len(runs), " within the judged documents" if p.judged_only
             else "", len(queries), f", the label stage's sample of {p.sample} drawn with seed {p.seed}"
             if p.sample is not None else "")
