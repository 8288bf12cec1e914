"""Per-topic scores of every run of a collection (ir_measures), as the canonical long table."""
from pathlib import Path

import pandas as pd

from irrepro.core.evaluation import evaluate_run
from irrepro.core.logs import log_to
from irrepro.core.scores import write_scores
from irrepro.core.trec import check_run_topics, read_qrels, read_run

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    qrels = read_qrels(sm.input.qrels)
    frames = []
    for i, path in enumerate(sm.input.runs, 1):
        system = Path(path).name[: -len(".run")]
        run = read_run(path, system=system)
        check_run_topics(run, qrels, path, sm.input.qrels)
        df = evaluate_run(run, qrels, sm.params.measures)
        df["system"], df["collection"] = system, sm.wildcards.collection
        frames.append(df)
        log.info("[%d/%d] evaluated %s", i, len(sm.input.runs), system)
    write_scores(pd.concat(frames, ignore_index=True), sm.output[0])
