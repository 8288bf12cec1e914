"""Per-topic scores of every run of a collection (ir_measures), as the canonical long table."""
from pathlib import Path

from irrepro.core.evaluation import evaluate_runs
from irrepro.core.logs import log_to
from irrepro.core.scores import write_scores
from irrepro.core.trec import read_qrels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    runs = [(Path(p).name[: -len(".run")], p) for p in sm.input.runs]
    scores = evaluate_runs(runs, read_qrels(sm.input.qrels), sm.params.measures, sm.wildcards.collection,
                           qrels_path=sm.input.qrels, log=log)
    write_scores(scores, sm.output[0])
