"""Run one system of the population on one collection and write its TREC run file."""
import os

import pandas as pd

from irrepro.datasets import collections as coll
from irrepro.core.logs import log_to
from irrepro.retrieval.pisa import parse_system, run_system
from irrepro.core.trec import write_run

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    os.environ["IR_DATASETS_HOME"] = os.path.abspath(sm.params.home)
    from pyterrier_pisa import PisaIndex

    system = parse_system(sm.wildcards.system)
    topics = pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False)
    index = PisaIndex(sm.input.index, threads=1)
    doc_text = None
    if system.rm3 is not None:
        doc_text = coll.DocText(sm.params.dataset, jsonl=sm.input.docs[0] if sm.input.docs else None)

    run = run_system(index, system, topics, sm.params.depth, doc_text=doc_text, fb_weighting=sm.params.fb_weighting)
    write_run(run, sm.output[0], system=system.name, depth=sm.params.depth)
    if doc_text is not None:
        doc_text.close()  # close the docstore while the interpreter is alive
    log.info("%s on %s: %d topics, %d rows", system.name, sm.wildcards.collection, run.query_id.nunique(), len(run))
