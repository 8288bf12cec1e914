"""One Lucene BM25 system on one collection's topics: a TREC run file."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.trec import write_run
from irrepro.retrieval import lucene

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    topics = pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False)
    system = lucene.parse_system(sm.wildcards.system)
    run = lucene.run_system(sm.input.index, system, topics, sm.params.depth)
    write_run(run, sm.output[0], system=system.name, depth=sm.params.depth)
    log.info("%s on %s: %d topics, %d rows", system.name, sm.wildcards.collection, run.query_id.nunique(), len(run))
