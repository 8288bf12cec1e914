"""Compare the systems of one collection (every measure): per-pair tables, summaries, p-value heat maps, the
G-study with its D-study figure, discriminative power and swap rates, into results/<version>/stats/<collection>/."""
import json
import os

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.plots import dstudy_figure, pvalue_heatmap
from irrepro.stats.stage import analyse, file_stem

sm = snakemake  # noqa: F821
c = sm.wildcards.collection
with log_to(sm.log[0]) as log:
    settings = json.loads(sm.params.settings)
    r = analyse(read_scores(sm.input[0]), c, settings, log)
    out = sm.output[0]
    os.makedirs(out, exist_ok=True)
    for m, t in r.tables.items():
        f = f"{out}/{file_stem(m)}"
        write_table(t, csv=f"{f}.csv", float_format="%.12g")
        write_table(r.summaries[m], md=f"{f}.md")
        save(pvalue_heatmap(t, r.systems[m], c, m, settings.get("baseline")), f"{f}.pdf", f"{f}.png")
    write_table(r.reliability, csv=f"{out}/reliability.csv", md=f"{out}/reliability.md",
                float_format="%.10g")
    write_table(r.power, csv=f"{out}/power.csv", md=f"{out}/power.md", float_format="%.6g")
    write_table(r.swaps, csv=f"{out}/swaps.csv", md=f"{out}/swaps.md", float_format="%.6g")
    save(dstudy_figure(r.reliability, r.curves, c, settings["reliability_target"]), f"{out}/dstudy.pdf",
         f"{out}/dstudy.png")
    for n in r.notes:
        log.warning("%s: %s", c, n)
