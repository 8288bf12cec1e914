"""Label the ci.systems pool with the configured labeler through the persistent cache; a calibrated labeler's
score-to-grade mapping is fitted on the human grades of the labelled queries only."""
import time

t0 = time.time()

import pandas as pd  # noqa: E402

from irrepro.core.logs import log_to  # noqa: E402
from irrepro.labels.stage import finish_labels, labelling_job, write_labels, write_timing  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    labelled = pd.read_csv(sm.input.queries, sep="\t", dtype=str).query_id.tolist()
    job = labelling_job(sm.params.spec, sm.input.files, sm.params.prompt, sm.input.pairs, sm.input.topics,
                        dataset=sm.params.dataset, home=sm.params.home, docs=sm.input.docs[0] if sm.input.docs else None,
                        cache=sm.params.cache, what=f"{sm.params.labeler} on {sm.wildcards.collection}", log=log)
    write_timing(sm.output.timing, job.stats, time.time() - t0, computed=job.spec["backend"] != "file")
    out = finish_labels(job.out, job.pairs, job.spec, job.prompt, log, fit_queries=labelled)
    write_labels(out, sm.wildcards.collection, sm.params.labeler, sm.output.labels)
