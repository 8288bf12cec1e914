"""BV-Test Table 12 and Figs 2–3 on user-supplied TREC Session-track runs (config bv.table12.tracks): every run
evaluated per session, then per condition the Bias²–Var correlation across systems (irrepro.papers.bv.session)."""
import json

from irrepro.core.io import write_table, write_values
from irrepro.core.logs import log_to
from irrepro.papers.bv.plots import save, session_figs
from irrepro.papers.bv.session import table12

sm = snakemake  # noqa: F821
tracks = json.loads(sm.params.tracks)
with log_to(sm.log[0]):
    table, per, md, values = table12(tracks, sm.params.measure, sm.params.target, sm.params.pattern)
    write_table(table, csv=sm.output.csv)
    write_table(per, csv=sm.output.systems, float_format="%.6f")
    with open(sm.output.md, "w") as f:
        f.write(md)
    save(session_figs(per, tracks, sm.params.measure), sm.output.pdf, sm.output.png)
    write_values(values, sm.output.values)
