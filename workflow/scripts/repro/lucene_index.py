"""Index a collection's documents with Lucene (the Anserini jar) and one analyzer."""
from irrepro.core.logs import log_to
from irrepro.datasets import collections as coll
from irrepro.datasets.mirror import ensure_ir_datasets_home
from irrepro.retrieval import lucene

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
    ds = coll.load(sm.params.dataset)
    jsonl = sm.input.docs[0] if sm.input.docs else None
    if not jsonl:
        coll.build_docstore(ds, sm.params.dataset)
    meta = lucene.index(coll.docs_iter(ds, sm.params.dataset, jsonl=jsonl), sm.output[0], analyzer=sm.params.analyzer)
    log.info("indexed %s documents of %s with Lucene (analyzer %s, fingerprint %s)", meta.get("documents"),
             sm.params.dataset, sm.params.analyzer, meta.get("fingerprint"))
