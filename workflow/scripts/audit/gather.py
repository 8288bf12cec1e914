"""labels.audit: every audited collection and labeler in one rankings table and one decisions table, the Markdown
summary (with the ranks of the systems that share a labeler's model) and the figure of the first measure."""
import json

import pandas as pd

from irrepro.audit.report import audit_figure, same_model_ranks, summary_markdown
from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to

sm = snakemake  # noqa: F821
p = sm.params
with log_to(sm.log[0]):
    tables = {what: pd.concat([pd.read_csv(sm.input[f"{what}_{c}_{n}"], dtype={"top": str}) for c, n in p.units],
                              ignore_index=True) for what in ("rankings", "decisions", "means")}
    write_table(tables["rankings"], csv=sm.output.rankings)
    write_table(tables["decisions"], csv=sm.output.decisions)
    same = same_model_ranks(tables["means"], json.loads(p.same_model))
    with open(sm.output.md, "w") as f:
        f.write(summary_markdown(tables["rankings"], tables["decisions"], same, alpha=p.alpha, n_boot=p.n_boot))
    save(audit_figure(tables["means"], tables["rankings"], p.measures[0]), sm.output.pdf, sm.output.png)
