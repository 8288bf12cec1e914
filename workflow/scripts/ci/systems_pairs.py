"""The pool to label for ci.systems: every chosen system's top k of each of the N queries (mode validation: the
judged queries of the collection; mode own: the topics' queries), and the human-labelled queries (validation: drawn
with the seed, or the configured list; own: the queries the qrels judge, or the configured list)."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels.stage import read_pairs
from irrepro.papers.ci.systems import (check_grade_scale, check_runs_cover, judged_queries, own_judged, systems_pairs,
                                       topic_queries, validation_labelled)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p = sm.params
    own = p.mode == "own"
    qrels = read_qrels(sm.input.qrels)
    if own:  # the judged queries: those the qrels judge, or the listed ones (no other query's qrels are read)
        topics_at = f"{sm.input.topics} (config key ci.systems.topics)"
        queries = topic_queries(pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False), topics_at)
        qrels, labelled = own_judged(qrels, queries, p.queries,
                                     f"{sm.input.qrels} (config keys ci.systems.qrels, ci.systems.queries)")
    check_grade_scale(qrels, p.n_grades, f"config key ci.systems.prompt: {p.prompt!r}", sm.wildcards.collection)
    runs = {s: read_run(path) for s, path in zip(p.systems, sm.input.runs)}
    if own:
        check_runs_cover(runs, queries, topics_at)
        pool = systems_pairs(runs, qrels, p.k, queries)
    else:
        queries = judged_queries(qrels)
        pool = systems_pairs(runs, qrels, p.k)
        labelled = validation_labelled(queries, p.queries, p.n, p.seed, "config key ci.systems.queries")
    known = 0
    for path in sm.input.labelled_pairs:
        seen = read_pairs(path)
        known = int(pool.merge(seen[["query_id", "doc_id"]].drop_duplicates(), on=["query_id", "doc_id"]).shape[0])
    what = f"{len(queries)} topics' queries, {len(labelled)} of them judged" if own else \
        f"{len(queries)} judged queries"
    log.info("mode %s: %d pairs (top %d of %d systems on %s), %d of them in the label stage's pairs (cached labels: "
             "free), %d new; labelled queries: %s", p.mode, len(pool), p.k, len(runs), what, known, len(pool) - known,
             ", ".join(labelled))
    if own:
        pool["relevance"] = pool["relevance"].astype("Int64")  # empty for the queries nobody judged
    pool.to_csv(sm.output.pairs, sep="\t", index=False)
    pd.DataFrame({"query_id": labelled}).to_csv(sm.output.queries, sep="\t", index=False)
