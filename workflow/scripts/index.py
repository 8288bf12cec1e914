"""Index a collection with PISA (and build ir_datasets' docstore, which RM3 reads feedback documents from)."""
from irrepro.datasets import collections as coll
from irrepro.core.logs import log_to
from irrepro.datasets.mirror import ensure_ir_datasets_home
from irrepro.retrieval.pisa import build_index

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
    ds = coll.load(sm.params.dataset)
    jsonl = sm.input.docs[0] if sm.input.docs else None
    if not jsonl:  # build the docstore (and whatever ir_datasets extracts first) once, under the store lock
        coll.build_docstore(ds, sm.params.dataset)
    idx = build_index(coll.docs_iter(ds, sm.params.dataset, jsonl=jsonl), sm.output[0], stemmer=sm.params.stemmer,
                      stopwords=sm.params.stopwords, threads=sm.threads)
    log.info("indexed %d documents of %s", idx.num_docs(), sm.params.dataset)
