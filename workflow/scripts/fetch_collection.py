"""Topics and qrels of an ir_datasets collection, written in irrepro's formats (grades mapped as configured)."""
import json

from irrepro.datasets import collections as coll
from irrepro.core.logs import log_to
from irrepro.datasets.mirror import ensure_ir_datasets_home
from irrepro.core.trec import write_qrels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
    ds = coll.load(sm.params.dataset)
    with coll.store_lock(sm.params.dataset):  # ir_datasets may extract the topics and qrels on first use
        topics, raw = coll.topics(ds, sm.params.dataset), coll.qrels(ds, sm.params.dataset)
    qrels = coll.map_grades(raw, json.loads(sm.params.grades), f"collections.{sm.wildcards.collection}.grades")
    topics = coll.select_topics(topics, qrels, sm.params.topics, sm.params.dataset, log)
    topics.to_csv(sm.output.topics, sep="\t", index=False)
    write_qrels(qrels, sm.output.qrels)
    log.info("%s: %d topics, %d judgments", sm.params.dataset, len(topics), len(qrels))
