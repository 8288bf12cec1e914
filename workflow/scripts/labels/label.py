"""Label every pair of a collection's ranking with one labeler, through the persistent cache."""
import time

t0 = time.time()

from irrepro.core.logs import log_to  # noqa: E402
from irrepro.labels import label_pairs  # noqa: E402
from irrepro.labels.prompts import get_prompt  # noqa: E402
from irrepro.labels.stage import (configured_labeler, finish_labels, pairs_with_texts, sampled,  # noqa: E402
                                  scored_prompt, write_labels, write_timing)
from irrepro.labels.vllm import serving  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    labeler, spec = configured_labeler(sm.params.spec, sm.input.files)
    prompt = get_prompt(sm.params.prompt)
    pairs = pairs_with_texts(sm.input.pairs, sm.input.topics, texts=spec["backend"] != "file",
                             dataset=sm.params.dataset, home=sm.params.home,
                             jsonl=sm.input.docs[0] if sm.input.docs else None,
                             subset=lambda t: sampled(t, sm.params.queries, sm.params.seed))
    log.info("%s on %s: %d pairs, prompt %s (%s), device %s, cache %s", sm.wildcards.labeler, sm.wildcards.collection,
             len(pairs), prompt.id, prompt.hash, spec.get("device", "-"), sm.params.cache)
    stats = {}
    with serving(labeler, log):  # a vLLM server for this job when the labeler's config has `serve`
        out = label_pairs(labeler, scored_prompt(spec, prompt), pairs, cache_path=sm.params.cache, stats=stats)
    write_timing(sm.output.timing, stats, time.time() - t0, computed=spec["backend"] != "file")
    out = finish_labels(out, pairs, spec, prompt, log)
    write_labels(out, sm.wildcards.collection, sm.wildcards.labeler, sm.output.labels)
