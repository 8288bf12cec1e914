"""Run the SIGIR 2013 query-model family on one collection and score every model per topic."""
import json
import os

import pandas as pd

from irrepro.datasets import collections as coll
from irrepro.core.evaluation import evaluate_run
from irrepro.core.logs import log_to
from irrepro.papers.bv.querymodels import family, run_family
from irrepro.core.scores import write_scores
from irrepro.core.trec import read_qrels

sm = snakemake  # noqa: F821
s = json.loads(sm.params.settings)
with log_to(sm.log[0]) as log:
    os.environ["IR_DATASETS_HOME"] = os.path.abspath(sm.params.home)
    from pyterrier_pisa import PisaIndex

    topics = pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False)
    qrels = read_qrels(sm.input.qrels)
    doc_text = coll.DocText(sm.params.dataset, jsonl=sm.input.docs[0] if sm.input.docs else None)
    models = family(s["lambdas"], s["rns"])
    runs = run_family(PisaIndex(sm.input.index, threads=1), topics, qrels, models, doc_text,
                      fb_docs=s["fb_docs"], n_terms=s["n_terms"], depth=s["depth"], mu=s["mu"],
                      fb_weighting=s["fb_weighting"],
                      progress=lambda i, n, name: log.info("[%d/%d] ran %s", i, n, name))
    doc_text.close()
    frames = []
    for name, run in runs.items():
        ev = evaluate_run(run, qrels, s["measures"])
        ev["system"], ev["collection"] = name, sm.wildcards.collection
        frames.append(ev)
    write_scores(pd.concat(frames, ignore_index=True), sm.output[0])
    ap = pd.concat(frames).query("measure == @s['measures'][0]").groupby("system")["value"].mean()
    log.info("mean %s per model:\n%s", s["measures"][0], ap.round(4).to_string())
