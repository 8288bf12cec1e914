"""BV-Test Table 11: per topic, the Pearson correlation across systems of Bias² and Var on simulated collections
(Sec. 3.4). One block per collection; topics without a relevant retrieved document are left out (the paper leaves
out Ad-hoc 1995's topic 201); a topic with an undefined correlation is listed with the reason, never as NaN."""
import json

import pandas as pd

from irrepro.core.logs import log_to
from irrepro.papers.bv.simulation import table11_rows, table11_summary
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    blocks, summaries, values = [], [], {}
    for path, c in zip(sm.input, sm.params.collections):
        df = pd.read_csv(path, sep="\t", dtype={"topic": str, "system": str})
        t = table11_rows(df)
        t.insert(0, "collection", c)
        blocks.append(t)
        s = table11_summary(t)
        summaries.append({"collection": c, **s})
        for k in ("share_negative", "share_strong", "median"):
            values[f"table11/{c}/{k}"] = {"value": s[k], "data": c}
        values[f"table11/{c}/all_negative"] = bool(s["share_negative"] == 1.0)
        values[f"table11/{c}/mostly_strong"] = bool(s["share_strong"] > 0.5)
        log.info("%s: %s", c, s)
    t = pd.concat(blocks, ignore_index=True)
    t["pearson"] = pd.Series([None if v is None or pd.isna(v) else round(float(v), 6) for v in t["pearson"]],
                             dtype=object)
    t.to_csv(sm.output.csv, index=False)
    summary = pd.DataFrame(summaries)
    summary.round(6).to_csv(sm.output.summary, index=False)
    with open(sm.output.md, "w") as f:
        f.write("Summary (share of topics with r < 0 and with r < -0.8, over topics with a defined correlation)\n\n")
        f.write(to_markdown(summary.round(4)))
        for c, b in zip(sm.params.collections, blocks):
            f.write(f"\n{c}\n\n")
            f.write(to_markdown(b.drop(columns="collection").assign(
                pearson=lambda d: d["pearson"].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.4f}"))))
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
