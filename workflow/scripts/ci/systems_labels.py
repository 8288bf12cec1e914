"""Label the ci.systems pool with the configured labeler through the persistent cache; a calibrated labeler's
score-to-grade mapping is fitted on the human grades of the labelled queries only."""
import time

t0 = time.time()

import pandas as pd  # noqa: E402

from irrepro.core.logs import log_to  # noqa: E402
from irrepro.labels import label_pairs  # noqa: E402
from irrepro.labels.prompts import get_prompt  # noqa: E402
from irrepro.labels.stage import (configured_labeler, finish_labels, pairs_with_texts, scored_prompt,  # noqa: E402
                                  write_labels, write_timing)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    labeler, spec = configured_labeler(sm.params.spec, sm.input.files)
    prompt = get_prompt(sm.params.prompt)
    labelled = pd.read_csv(sm.input.queries, sep="\t", dtype=str).query_id.tolist()
    pairs = pairs_with_texts(sm.input.pairs, sm.input.topics, texts=spec["backend"] != "file",
                             dataset=sm.params.dataset, home=sm.params.home,
                             jsonl=sm.input.docs[0] if sm.input.docs else None)
    log.info("%s on %s: %d pairs, prompt %s (%s), cache %s", sm.params.labeler, sm.wildcards.collection, len(pairs),
             prompt.id, prompt.hash, sm.params.cache)
    stats = {}
    out = label_pairs(labeler, scored_prompt(spec, prompt), pairs, cache_path=sm.params.cache, stats=stats)
    log.info("%s pairs: %s cached, %s labelled now", stats.get("pairs"), stats.get("cached"), stats.get("labelled"))
    write_timing(sm.output.timing, stats, time.time() - t0, computed=spec["backend"] != "file")
    out = finish_labels(out, pairs, spec, prompt, log, fit_queries=labelled)
    write_labels(out, sm.wildcards.collection, sm.params.labeler, sm.output.labels)
