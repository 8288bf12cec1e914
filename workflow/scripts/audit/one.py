"""labels.audit for one collection and labeler: both populations (as they are, re-ranked by the judge) scored by
the labels and by the qrels, their rank correlations and pair decisions, and the per-topic scores of the systems as
they are by the labels and by the qrels (the same topics: the labeler's)."""
from irrepro.audit.labeler import audit_labeler
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.labels.stage import read_labels

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]) as log:
    c, lab = sm.wildcards.collection, sm.wildcards.labeler
    labels = read_labels(sm.input.labels)
    qrels = read_qrels(sm.input.qrels)
    qrels = qrels[qrels.query_id.astype(str).isin(set(labels.query_id))]  # the labeler's queries (its sample)
    runs = {s: read_run(sm.input[f"run_{s}"]) for s in p.systems}
    stats = dict(tests=list(p.tests), corrections=list(p.corrections), alpha=p.alpha, n_permutations=p.n_permutations,
                 n_bootstrap=p.n_bootstrap, seed=p.seed)
    out = audit_labeler(runs, qrels, labels, list(p.measures), collection=c, labeler=lab, depth=p.depth,
                        judged_only=p.judged_only, label_gain=p.label_gain, tops=list(p.tops), n_boot=p.n_boot,
                        seed=p.seed, alpha=p.alpha, stats=stats)
    out["scores"].to_csv(sm.output.scores, sep="\t", index=False)
    out["humans"].to_csv(sm.output.humans, sep="\t", index=False)
    for what in ("rankings", "decisions", "means", "pairs"):
        write_table(out[what], csv=sm.output[what])
    r = out["rankings"]
    for row in r[r.top == "all"].itertuples():
        log.info("%s, %s, %s, %s: tau_b %.3f [%.2f, %.2f], tau_AP %.3f over %d systems", c, lab, row.measure,
                 row.population, row.tau_b, row.low, row.high, row.tau_ap, row.systems)
