"""Gather a (collection, labeler)'s label shards into its labels table and the central cache."""
import json

from irrepro.core.logs import log_to
from irrepro.labels.prompts import get_prompt
from irrepro.labels.shards import gather_shards, merge_into_cache, read_shard, shard_hashes
from irrepro.labels.stage import finish_labels, read_pairs, sampled, scored_prompt, write_labels, write_timing

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    spec, prompt = json.loads(sm.params.spec), get_prompt(sm.params.prompt)
    pairs = sampled(read_pairs(sm.input.pairs), sm.params.queries, sm.params.seed)
    shards = [read_shard(p) for p in sm.input.shards]
    table = gather_shards(pairs, shards)
    new = merge_into_cache(table, shard_hashes(shards), scored_prompt(spec, prompt), sm.params.cache)
    write_labels(finish_labels(table, pairs, spec, prompt, log), sm.wildcards.collection, sm.wildcards.labeler,
                 sm.output.labels)
    # the labelling happened in the shard jobs (their benchmark files time them): no pairs/s here
    write_timing(sm.output.timing, {"pairs": len(table.drop_duplicates(["query_id", "doc_id"]))}, 0.0)
    log.info("%s on %s: %d rows from %d shards; %d new pairs in the central cache %s", sm.wildcards.labeler,
             sm.wildcards.collection, len(table), len(sm.input.shards), new, sm.params.cache)
