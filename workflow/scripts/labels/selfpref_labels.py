"""One labeler's labels of its labels.self_preference pool through the label cache: the grade distributions (a
calibrated labeler's cross-fitted over query folds, as in the label stage) and the raw labels (its scores, which
the coverage draws refit)."""
import time

t0 = time.time()

from irrepro.core.logs import log_to  # noqa: E402
from irrepro.labels import label_pairs  # noqa: E402
from irrepro.labels.prompts import get_prompt  # noqa: E402
from irrepro.labels.stage import (configured_labeler, finish_labels, pairs_with_texts, scored_prompt,  # noqa: E402
                                  write_labels, write_timing)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    labeler, spec = configured_labeler(sm.params.spec, sm.input.files)
    prompt = get_prompt(sm.params.prompt)
    pairs = pairs_with_texts(sm.input.pairs, sm.input.topics, texts=spec["backend"] != "file",
                             dataset=sm.params.dataset, home=sm.params.home,
                             jsonl=sm.input.docs[0] if sm.input.docs else None)
    log.info("%s on %s: %d pairs, prompt %s (%s), cache %s", sm.wildcards.labeler, sm.wildcards.collection,
             len(pairs), prompt.id, prompt.hash, sm.params.cache)
    stats = {}
    raw = label_pairs(labeler, scored_prompt(spec, prompt), pairs, cache_path=sm.params.cache, stats=stats)
    log.info("%s pairs: %s cached, %s labelled now", stats.get("pairs"), stats.get("cached"), stats.get("labelled"))
    write_timing(sm.output.timing, stats, time.time() - t0, computed=spec["backend"] != "file")
    write_labels(raw, sm.wildcards.collection, sm.wildcards.labeler, sm.output.raw)
    out = finish_labels(raw, pairs, spec, prompt, log)
    write_labels(out, sm.wildcards.collection, sm.wildcards.labeler, sm.output.labels)
