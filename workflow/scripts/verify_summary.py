"""Summarise the per-paper verify tables into results/<version>/verify.md (+ CSV counts)."""
from pathlib import Path

import pandas as pd

from irrepro.core.logs import log_to
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    counts, sections = [], []
    for path in sm.input:
        paper = Path(path).parent.name
        t = pd.read_csv(path)
        judged = t[t["paper"].notna()]
        ok = judged["ok"].astype(str).str.lower().eq("true")
        counts.append({"paper": paper, "rows": len(judged), "ok": int(ok.sum()), "not_ok": int((~ok).sum()),
                       "extra_rows": len(t) - len(judged)})
        bad = judged[~ok]
        sections.append(f"## {paper}\n\n{int(ok.sum())} of {len(judged)} rows within tolerance "
                        f"(`{path}`).\n\n" + (to_markdown(bad) if len(bad) else "Every row within tolerance.\n"))
    c = pd.DataFrame(counts, columns=["paper", "rows", "ok", "not_ok", "extra_rows"])
    c.to_csv(sm.output.csv, index=False)
    with open(sm.output.md, "w") as f:
        f.write("# Verify: the papers' numbers against ours\n\n" + to_markdown(c) + "\n" + "\n".join(sections))
