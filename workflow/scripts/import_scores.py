"""Import external per-topic data (TREC runs + qrels, trec_eval -q output, or score matrices) as a collection."""
import json

from irrepro.core.evaluation import import_scores
from irrepro.core.logs import log_to
from irrepro.core.scores import write_scores

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    df = import_scores(sm.wildcards.collection, json.loads(sm.params.spec), sm.params.res, sm.params.measures, log)
    write_scores(df, sm.output[0])
    log.info("%s: %d systems, %d topics, measures %s", sm.wildcards.collection, df.system.nunique(),
             df.topic.nunique(), sorted(df.measure.unique()))
