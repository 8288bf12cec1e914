"""Label every pair of a collection's ranking with one labeler, through the persistent cache."""
import json
import os

import pandas as pd

from irrepro.labels import label_pairs, make_labeler
from irrepro.core.logs import log_to
from irrepro.labels.prompts import get_prompt

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    spec = json.loads(sm.params.spec)
    spec.pop("artifact", None)
    if spec["backend"] == "file":
        spec["path"] = sm.input.files[0]
    if spec["backend"] in ("smollm2", "hf"):
        # a fixed torch thread count (not the job's cores): float sums, hence the labels' last digits, depend on it
        spec.setdefault("threads", 2)
    labeler = make_labeler(spec)
    prompt = get_prompt(sm.params.prompt)
    pairs = pd.read_csv(sm.input.pairs, sep="\t", dtype={"query_id": str, "doc_id": str})
    topics = pd.read_csv(sm.input.topics, sep="\t", dtype=str, keep_default_na=False)
    pairs["query"] = pairs.query_id.map(dict(zip(topics.query_id, topics.text))).fillna("")
    if spec["backend"] == "file":  # labels looked up by id: no need for the texts
        pairs["text"] = ""
    else:
        os.environ["IR_DATASETS_HOME"] = os.path.abspath(sm.params.home)
        from irrepro.datasets.collections import DocText
        doc_text = DocText(sm.params.dataset, jsonl=sm.input.docs[0] if sm.input.docs else None)
        texts = doc_text(sorted(set(pairs.doc_id)))
        doc_text.close()
        missing = sorted(set(pairs.doc_id) - set(texts))
        if missing:
            raise ValueError(f"{len(missing)} ranked documents have no text, e.g. {missing[:3]}")
        pairs["text"] = pairs.doc_id.map(texts)
    log.info("%s on %s: %d pairs, prompt %s (%s), cache %s", sm.wildcards.labeler, sm.wildcards.collection,
             len(pairs), prompt.id, prompt.hash, sm.params.cache)
    out = label_pairs(labeler, prompt, pairs, cache_path=sm.params.cache)
    out["labeler"] = sm.wildcards.labeler  # the config's name; the cache keys on the labeler's full identity
    out.insert(0, "collection", sm.wildcards.collection)
    out.to_csv(sm.output[0], sep="\t", index=False, float_format="%.10g")
