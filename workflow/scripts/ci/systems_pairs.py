"""The pool to label for ci.systems: every chosen system's top k of each judged query, and the human-labelled
queries (drawn with the seed, or the configured list)."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.errors import InputError
from irrepro.papers.ci.systems import check_grade_scale, draw_queries, judged_queries, systems_pairs

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p = sm.params
    qrels = read_qrels(sm.input.qrels)
    check_grade_scale(qrels, p.n_grades, f"config key ci.systems.prompt: {p.prompt!r}", sm.wildcards.collection)
    runs = {s: read_run(path) for s, path in zip(p.systems, sm.input.runs)}
    pool = systems_pairs(runs, qrels, p.k)
    queries = judged_queries(qrels)
    if p.queries is not None:
        missing = sorted(set(p.queries) - set(queries))
        if missing:
            raise InputError(f"config key ci.systems.queries: {missing[:5]} have no judgment in the qrels")
        labelled = list(p.queries)
    else:
        labelled = draw_queries(queries, p.n, p.seed)
    known = 0
    for path in sm.input.labelled_pairs:
        seen = pd.read_csv(path, sep="\t", dtype={"query_id": str, "doc_id": str})
        known = int(pool.merge(seen[["query_id", "doc_id"]].drop_duplicates(), on=["query_id", "doc_id"]).shape[0])
    log.info("%d pairs (top %d of %d systems on %d judged queries), %d of them in the label stage's pairs "
             "(cached labels: free), %d new; labelled queries: %s", len(pool), p.k, len(runs), len(queries), known,
             len(pool) - known, ", ".join(labelled))
    pool.to_csv(sm.output.pairs, sep="\t", index=False)
    pd.DataFrame({"query_id": labelled}).to_csv(sm.output.queries, sep="\t", index=False)
