"""BV-Test Table 10: Pearson correlation across systems of the per-topic Bias² and Var averaged over topics
(Eqs. 13–14), on simulated collections (Sec. 3.4), one row per collection."""
import json

import pandas as pd

from irrepro.core.logs import log_to
from irrepro.papers.bv.simulation import table10_row
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows, values = [], {}
    for path, c in zip(sm.input, sm.params.collections):
        r = table10_row(pd.read_csv(path, sep="\t", dtype={"topic": str, "system": str}))
        rows.append({"collection": c, **r})
        values[f"table10/{c}/pearson"] = {"value": r["pearson"], "data": c}
        values[f"table10/{c}/negative"] = bool(r["pearson"] < 0)
        values[f"table10/{c}/strong"] = bool(r["pearson"] < -0.8)
        log.info("%s: %s", c, r)
    t = pd.DataFrame(rows)
    t.round(6).to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write(to_markdown(t.round(4)))
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
