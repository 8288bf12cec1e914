"""One labeler's labels of a pool (labels.self_preference's or labels.audit's) through the label cache: the grade
distributions (a calibrated labeler's cross-fitted over query folds, as in the label stage) and the raw labels (its
scores, which the self-preference coverage draws refit)."""
import time

t0 = time.time()

from irrepro.core.logs import log_to  # noqa: E402
from irrepro.labels.stage import finish_labels, labelling_job, write_labels, write_timing  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    job = labelling_job(sm.params.spec, sm.input.files, sm.params.prompt, sm.input.pairs, sm.input.topics,
                        dataset=sm.params.dataset, home=sm.params.home, docs=sm.input.docs[0] if sm.input.docs else None,
                        cache=sm.params.cache, what=f"{sm.wildcards.labeler} on {sm.wildcards.collection}", log=log)
    write_timing(sm.output.timing, job.stats, time.time() - t0, computed=job.spec["backend"] != "file")
    write_labels(job.out, sm.wildcards.collection, sm.wildcards.labeler, sm.output.raw)
    out = finish_labels(job.out, job.pairs, job.spec, job.prompt, log)
    write_labels(out, sm.wildcards.collection, sm.wildcards.labeler, sm.output.labels)
