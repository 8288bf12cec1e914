"""The verify items computed from per-topic tables: claim E1 and the intent-aware checks (irrepro.papers.vb.verify)."""
import pandas as pd

from irrepro.core.io import write_values
from irrepro.core.logs import log_to
from irrepro.papers.vb import verify

sm = snakemake  # noqa: F821
c = sm.wildcards.collection
with log_to(sm.log[0]):
    values = verify.e1_claims(pd.read_csv(sm.input.per_topic, dtype={"topic": str}), c)
    values.update(verify.intent_aware_checks(pd.read_csv(sm.input.intent_aware, dtype={"topic": str}), c))
    write_values(values, sm.output.values, sort_keys=False)
