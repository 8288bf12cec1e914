"""Label one shard of a collection's pairs with one labeler, through the shard's own cache file."""
from irrepro.core.logs import log_to
from irrepro.labels.prompts import get_prompt
from irrepro.labels.shards import label_shard, shard_pairs, with_input_hashes, write_shard
from irrepro.labels.stage import configured_labeler, pairs_with_texts, sampled, scored_prompt
from irrepro.labels.vllm import serving

sm = snakemake  # noqa: F821
i, n = int(sm.wildcards.shard), int(sm.wildcards.shards)
with log_to(sm.log[0]) as log:
    labeler, spec = configured_labeler(sm.params.spec, sm.input.files)
    prompt = get_prompt(sm.params.prompt)
    pairs = pairs_with_texts(sm.input.pairs, sm.input.topics, texts=spec["backend"] != "file",
                             dataset=sm.params.dataset, home=sm.params.home,
                             jsonl=sm.input.docs[0] if sm.input.docs else None,
                             subset=lambda t: shard_pairs(sampled(t, sm.params.queries, sm.params.seed), i, n, sm.params.size))
    log.info("%s on %s, shard %d of %d: %d pairs, prompt %s (%s), device %s, shard cache %s", sm.wildcards.labeler,
             sm.wildcards.collection, i, n, len(pairs), prompt.id, prompt.hash, spec.get("device", "-"),
             sm.params.shard_cache)
    with serving(labeler, log):  # a vLLM server for this job when the labeler's config has `serve`
        out, counts = label_shard(labeler, scored_prompt(spec, prompt), pairs, sm.params.shard_cache, sm.params.cache)
    log.info("shard %d of %d: %d pairs, %d resumed from the shard cache, %d from the central cache, %d labelled",
             i, n, counts["pairs"], counts["resumed"], counts["central"], counts["labelled"])
    write_shard(with_input_hashes(out, pairs), sm.output[0])
