"""SYNTH: Tables 2–4 of Schnabel et al. (ICTIR 2016)."""
import json

from irrepro.core.logs import log_to
from irrepro.papers.sampling import claims, tables

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    df = tables.synth_experiment(json.loads(p.synth), p.seed, p.budget_per_query, p.trials, p.alpha)
    df.round(6).to_csv(sm.output.csv, index=False)
    for md, path in zip(tables.synth_markdown(df), (sm.output.t2, sm.output.t3, sm.output.t4)):
        with open(path, "w") as f:
            f.write(md)
    with open(sm.output.values, "w") as f:
        json.dump(claims.synth_values(df, p.trials), f, indent=1, sort_keys=True)
