"""Write results/<version>/provenance.json."""
import glob
import json
import os

from irrepro.core.logs import log_to
from irrepro.core.provenance import build_provenance

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    config = json.loads(sm.params.config)
    inputs = list(sm.input.qrels) + list(sm.input.artifacts)
    # the ir_datasets source files the collections were read from
    inputs += [f for f in glob.glob(os.path.join(sm.params.home, "**", "*"), recursive=True)
               if os.path.isfile(f) and "docs.pklz4" not in f and not f.endswith(".lock")]
    prov = build_provenance(config, inputs, extra={"outputs": sorted(map(str, sm.input.scores))})
    with open(sm.output[0], "w") as f:
        json.dump(prov, f, indent=2, sort_keys=True)
