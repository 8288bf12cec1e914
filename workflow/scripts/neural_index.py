"""Encode every document of a collection with one neural model and save the encodings (a DocIndex folder)."""
from irrepro.core.logs import log_to
from irrepro.datasets import collections as coll
from irrepro.datasets.mirror import ensure_ir_datasets_home
from irrepro.retrieval import neural

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
    ds = coll.load(sm.params.dataset)
    jsonl = sm.input.docs[0] if sm.input.docs else None
    model = neural.load_model(sm.wildcards.model, threads=sm.threads, **sm.params.settings)
    index = neural.encode_docs(model, coll.docs_iter(ds, sm.params.dataset, jsonl=jsonl), sm.params.max_docs)
    index.save(sm.output[0])
    log.info("%s: %d documents of %s encoded (%s, %s); encodings key %s", sm.wildcards.model, len(index),
             sm.params.dataset, index.kind, index.settings, index.key[:16])
