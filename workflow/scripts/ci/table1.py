"""Table 1: DCG@k of Random / BM25 / LLM / Perfect rankers, by human labels and by each labeler's labels."""
from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.ci.analysis import table1_dcg_ir_measures, table1_long, table1_wide, write_table1_md
from irrepro.papers.ci.claims import table1_values
from irrepro.labels.stage import read_labels, read_pairs

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    c, k, labelers = sm.wildcards.collection, sm.params.k, list(sm.params.labelers)
    pairs = read_pairs(sm.input.pairs)
    labels = {lab: read_labels(path) for lab, path in zip(labelers, sm.input.labels)}
    long, results = table1_long(pairs, labels, c, k, sm.params.label_gain)
    for lab, t in results.items():
        log.info("%s %s: %s", c, lab, {r: (round(v["human"], 2), round(v["llm"], 2)) for r, v in t.items()})
    write_table(long, csv=sm.output.csv, float_format="%.4f")
    write_table1_md(table1_wide(long, labelers), pairs, c, k, sm.output.md, sm.params.label_gain)
    write_values(table1_values(long, results, c, table1_dcg_ir_measures(pairs, k)), sm.output.values)
