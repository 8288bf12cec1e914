"""How many label shards a collection's pairs make (the checkpoint the gather's inputs are read from)."""
import json

from irrepro.core.logs import log_to
from irrepro.labels.shards import shard_plan
from irrepro.labels.stage import read_pairs

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    plan = shard_plan(read_pairs(sm.input[0]), sm.params.size)
    with open(sm.output[0], "w") as f:
        f.write(json.dumps(plan, sort_keys=True) + "\n")
    log.info("%s: %d pairs in %d shards of %s", sm.wildcards.collection, plan["pairs"], plan["shards"], plan["shard_size"])
