"""Label every pair of a collection's ranking with one labeler, through the persistent cache."""
from irrepro.core.logs import log_to
from irrepro.labels import label_pairs
from irrepro.labels.prompts import get_prompt
from irrepro.labels.stage import configured_labeler, pairs_with_texts, write_labels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    labeler, spec = configured_labeler(sm.params.spec, sm.input.files)
    prompt = get_prompt(sm.params.prompt)
    pairs = pairs_with_texts(sm.input.pairs, sm.input.topics, texts=spec["backend"] != "file",
                             dataset=sm.params.dataset, home=sm.params.home,
                             jsonl=sm.input.docs[0] if sm.input.docs else None)
    log.info("%s on %s: %d pairs, prompt %s (%s), device %s, cache %s", sm.wildcards.labeler, sm.wildcards.collection,
             len(pairs), prompt.id, prompt.hash, spec.get("device", "-"), sm.params.cache)
    out = label_pairs(labeler, prompt, pairs, cache_path=sm.params.cache)
    write_labels(out, sm.wildcards.collection, sm.wildcards.labeler, sm.output[0])
