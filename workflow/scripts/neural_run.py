"""Run one neural system on one collection (a first stage over the document encodings, or a population system's
run file, then its re-ranking stages) and write its TREC run file."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import read_run, write_run
from irrepro.datasets import collections as coll
from irrepro.datasets.mirror import ensure_ir_datasets_home
from irrepro.retrieval import neural

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    system = neural.parse_system(sm.wildcards.system)
    topics = pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False)
    models, indexes = {}, {}
    for m, settings in sm.params.settings.items():
        models[m] = neural.load_model(m, threads=sm.threads, **settings)
        indexes[m] = neural.DocIndex.load(sm.input[f"index_{m}"], models[m], set_aside=True)
    if system.neural_first:
        run = neural.search(models[system.first], indexes[system.first], topics, sm.params.depth)
    else:
        # the first stage's ranking as it is evaluated (read_run's: equal scores by docno, trec_eval's order), as
        # the score re-ranking orders by: its top k are re-scored, the rest keep this order
        first = read_run(sm.input.first)
        run = first.assign(score=-first["rank"].astype(float))[["query_id", "doc_id", "score"]]
    # every document is in the models' indexes (nothing encoded again, no text read), unless they hold the first
    # population.neural.max_docs only: then the re-rankers read and encode the others
    doc_text = {}
    if system.rerank and sm.params.max_docs:
        ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
        doc_text = coll.DocText(sm.params.dataset, jsonl=sm.input.docs[0] if sm.input.docs else None)
    for stage in system.rerank:
        run = neural.rerank(run, doc_text, topics, models[stage.model], stage.k, index=indexes[stage.model])
    if isinstance(doc_text, coll.DocText):
        doc_text.close()  # close the docstore while the interpreter is alive
    write_run(run, sm.output[0], system=system.name, depth=sm.params.depth)
    log.info("%s on %s: %d topics, %d rows", system.name, sm.wildcards.collection, run.query_id.nunique(), len(run))
