"""ir_metadata (PRIMAD) of every population run of one collection: runs/<collection>/ir-metadata/<system>.yml."""
import yaml

from irrepro.core.irmetadata import ir_metadata
from irrepro.core.logs import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    for system, run, out in zip(sm.params.systems, sm.input.runs, sm.output):
        meta = ir_metadata(system, sm.params.collection, run=run, topics=sm.input.topics, qrels=sm.input.qrels,
                           dataset=sm.params.dataset, depth=sm.params.depth, neural_models=sm.params.neural_models,
                           command=f"snakemake --cores 1 {run}")  # what rebuilds it, from the repository
        with open(out, "w") as f:
            yaml.safe_dump(meta, f, sort_keys=False, allow_unicode=True)
    log.info("%s: ir_metadata of %d runs", sm.params.collection, len(sm.output))
