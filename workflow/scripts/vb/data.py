"""Topics, per-subtopic qrels and the intent table of one TREC Web diversity collection (ir_datasets)."""
import json

from irrepro.papers.vb.diversity import intents_from_qrels, load_diversity
from irrepro.core.logs import log_to
from irrepro.datasets.mirror import ensure_ir_datasets_home, ir_datasets_error
from irrepro.core.trec import write_qrels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    ensure_ir_datasets_home(sm.params.home, sm.params.mirror)
    try:
        topics, qrels = load_diversity(sm.params.dataset)
    except Exception as e:  # ir_datasets' downloader errors are not user-actionable as they are
        if e.__class__.__name__ in ("InputError",):
            raise
        raise ir_datasets_error(sm.params.dataset, e) from e
    p = sm.params
    tr = json.loads(p.truncation) or {}
    intents = intents_from_qrels(qrels, min_relevance=p.min_relevance, mass=p.mass, temperature=p.temperature,
                                 tau=tr.get("tau"), top_k=tr.get("top_k"), rho=tr.get("rho"))
    topics.to_csv(sm.output.topics, sep="\t", index=False)
    write_qrels(qrels, sm.output.qrels)
    intents.to_csv(sm.output.intents, index=False, float_format="%.10g")
    log.info("%s: %d topics, %d qrels, %d intents on %d topics", sm.params.dataset, len(topics), len(qrels),
             len(intents), intents.query_id.nunique())
