"""Label one shard of a collection's pairs with one labeler, through the shard's own cache file."""
from irrepro.core.logs import log_to
from irrepro.labels.shards import label_shard, shard_pairs, with_input_hashes, write_shard
from irrepro.labels.stage import labelling_job, sampled

sm = snakemake  # noqa: F821
i, n = int(sm.wildcards.shard), int(sm.wildcards.shards)
with log_to(sm.log[0]) as log:
    job = labelling_job(sm.params.spec, sm.input.files, sm.params.prompt, sm.input.pairs, sm.input.topics,
                        dataset=sm.params.dataset, home=sm.params.home, docs=sm.input.docs[0] if sm.input.docs else None,
                        cache=sm.params.shard_cache, log=log,
                        what=f"{sm.wildcards.labeler} on {sm.wildcards.collection}, shard {i} of {n}",
                        subset=lambda t: shard_pairs(sampled(t, sm.params.queries, sm.params.seed), i, n, sm.params.size),
                        label=lambda lab, prompt, pairs, stats: label_shard(lab, prompt, pairs, sm.params.shard_cache,
                                                                            sm.params.cache))
    out, counts = job.out
    log.info("shard %d of %d: %d pairs, %d resumed from the shard cache, %d from the central cache, %d labelled",
             i, n, counts["pairs"], counts["resumed"], counts["central"], counts["labelled"])
    write_shard(with_input_hashes(out, job.pairs), sm.output[0])
