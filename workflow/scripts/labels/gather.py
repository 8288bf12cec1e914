"""Gather a (collection, labeler)'s label shards into its labels table and the central cache."""
from irrepro.core.logs import log_to
from irrepro.labels.shards import gather_shards, merge_into_cache, read_shard
from irrepro.labels.stage import read_pairs, write_labels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    table = gather_shards(read_pairs(sm.input.pairs), [read_shard(p) for p in sm.input.shards])
    new = merge_into_cache(table, sm.params.prompt, sm.params.cache)
    write_labels(table, sm.wildcards.collection, sm.wildcards.labeler, sm.output[0])
    log.info("%s on %s: %d rows from %d shards; %d new pairs in the central cache %s", sm.wildcards.labeler,
             sm.wildcards.collection, len(table), len(sm.input.shards), new, sm.params.cache)
