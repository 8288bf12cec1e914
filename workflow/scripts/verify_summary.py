"""Summarise the per-paper verify tables into results/<version>/verify.md (+ CSV counts): a scorecard per paper
counted over `check` rows only (irrepro.core.verify.scorecard), then every check or claim row that is not ok."""
from pathlib import Path

import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.verify import SCORECARD_COLUMNS, scorecard, scorecard_line, summary_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    tables = {Path(p).parent.name: pd.read_csv(p) for p in sm.input}
    counts = pd.DataFrame([scorecard(t, paper) for paper, t in tables.items()], columns=SCORECARD_COLUMNS)
    counts.to_csv(sm.output.csv, index=False)
    for c in counts.to_dict(orient="records"):
        print(f"{c['paper']}: {scorecard_line(c)}")
    with open(sm.output.md, "w") as f:
        f.write(summary_markdown(tables, counts))
