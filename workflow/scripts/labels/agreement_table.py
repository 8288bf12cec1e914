"""Every labeler x collection in one agreement table and figure, with each label job's pairs/s."""
import json

import pandas as pd

from irrepro.core.figures import save
from irrepro.core.io import to_markdown, write_table
from irrepro.core.logs import log_to
from irrepro.labels.agreement import agreement_table
from irrepro.labels.plots import agreement_figure

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    summaries = {c: pd.read_csv(p) for c, p in zip(sm.params.collections, sm.input.summaries)}
    timings = {}
    for path in sm.input.timings:
        *_, c, name = path[: -len(".json")].split("/")
        timings[(c, name)] = json.load(open(path))
    table = agreement_table(summaries, timings)
    write_table(table, csv=sm.output.csv, float_format="%.6g")
    shown = table.assign(pairs_per_s=table.pairs_per_s.map(lambda v: "cached / file" if pd.isna(v) else f"{v:.1f}"))
    with open(sm.output.md, "w") as f:
        f.write("Agreement of every labeler with the human grades, per collection (pairs/s: the label job's, model "
                f"load included)\n\n{to_markdown(shown, '{:.3f}')}\n")
    save(agreement_figure(table, "labels against the human grades"), sm.output.pdf, sm.output.png)
    log.info("%s", table.to_string(index=False))
