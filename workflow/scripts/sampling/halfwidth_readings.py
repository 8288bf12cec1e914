"""SYNTH: Table 4's CI half-width under every reading of Eq. 6 (Schnabel et al., ICTIR 2016)."""
import json

from irrepro.core.logs import log_to
from irrepro.papers.sampling import tables

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    df = tables.synth_halfwidth_readings(json.loads(p.synth), p.seed, p.budget_per_query, p.trials, p.alpha,
                                         other_seeds=tables.readings_other_seeds(p.seed))
    df.round(6).to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(tables.readings_markdown(df))
