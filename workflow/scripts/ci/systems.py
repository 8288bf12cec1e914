"""ci.systems: bootstrap, PPI, PPI++ and CRC intervals of each system's metric, each system's difference from the
baseline and the labels' bias per system."""
import pandas as pd

from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.trec import read_qrels, read_run
from irrepro.papers.ci import plots
from irrepro.labels.stage import read_labels
from irrepro.papers.ci.systems import evaluate_systems, systems_long, topic_queries, write_systems_md

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p, c = sm.params, sm.wildcards.collection
    qrels = read_qrels(sm.input.qrels)
    runs = {s: read_run(path) for s, path in zip(p.systems, sm.input.runs)}
    labelled = pd.read_csv(sm.input.queries, sep="\t", dtype=str).query_id.tolist()
    queries = None
    if p.mode == "own":
        queries = topic_queries(pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False))
    for s in p.same_model:
        log.warning("%s shares a model with the labeler %s: its label-based intervals may be off (self-preference); "
                    "its label bias is in the table", s, p.labeler)
    table, diffs, per_query, bias = evaluate_systems(
        runs, qrels, read_labels(sm.input.labels), labelled, p.measures, alpha=p.alpha, n_boot=p.n_boot,
        n_batches=p.batches, seed=p.seed, label_gain=p.label_gain, queries=queries, baseline=p.baseline,
        correction=p.correction, same_model=p.same_model)
    for r in table.itertuples():
        log.info("%s %s %s: %.4f [%.4f, %.4f]%s", r.system, r.measure, r.method, r.estimate, r.low, r.high,
                 "" if pd.isna(r.truth) else f", all human labels {r.truth:.4f}")
        if r.note:
            log.warning("%s %s %s: %s", r.system, r.measure, r.method, r.note)
    write_table(systems_long(table, diffs, bias), csv=sm.output.csv, float_format="%.6g")
    write_table(per_query, csv=sm.output.per_query, float_format="%.6g")
    write_systems_md(table, diffs, c, p.labeler, labelled, p.alpha, sm.output.md, bias=bias)
    what = f"{len(labelled)} judged of {len(queries)} queries" if queries is not None else \
        f"{len(labelled)} human-labelled queries"
    fig = plots.systems_figure(table, f"{c}: {1 - p.alpha:.0%} intervals, {what}, labels: {p.labeler}")
    plots.save(fig, sm.output.pdf, sm.output.png)
