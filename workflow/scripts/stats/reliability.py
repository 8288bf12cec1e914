"""One collection: G-study per measure with the D-study figure, discriminative power (from the per-pair tables) and
swap rates."""
import json

import pandas as pd

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.plots import dstudy_figure
from irrepro.stats.stage import reliability

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    s = json.loads(sm.params.settings)
    tables = {m: pd.read_csv(f) for m, f in zip(sm.params.measures, sm.input.tables)}
    r = reliability(read_scores(sm.input.scores), tables, s)
    write_table(r.reliability, csv=sm.output.csv, md=sm.output.md, float_format="%.10g")
    write_table(r.power, csv=sm.output.power_csv, md=sm.output.power_md, float_format="%.6g")
    write_table(r.swaps, csv=sm.output.swaps_csv, md=sm.output.swaps_md, float_format="%.6g")
    save(dstudy_figure(r.reliability, r.curves, sm.wildcards.collection, s["reliability_target"]), sm.output.pdf,
         sm.output.png)
