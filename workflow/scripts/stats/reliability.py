"""One collection: G-study per measure with the D-study figure, discriminative power (from the per-pair tables) and
swap rates, over the systems compared (a baseline from another collection or import joined as in the tables)."""
import json
from pathlib import Path

import pandas as pd

from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to
from irrepro.core.scores import read_scores
from irrepro.stats.plots import dstudy_figure
from irrepro.stats.stage import join_baselines, reliability

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    s = json.loads(sm.params.settings)
    # results/<version>/scores/<id>.tsv of each id a baseline comes from
    others = {Path(f).name.removesuffix(".tsv"): read_scores(f) for f in sm.input.baselines}
    scores = join_baselines(read_scores(sm.input.scores), sm.wildcards.collection, s.get("baseline"), others)
    tables = {m: pd.read_csv(f) for m, f in zip(sm.params.measures, sm.input.tables)}
    r = reliability(scores, tables, s)
    write_table(r.reliability, csv=sm.output.csv, md=sm.output.md, float_format="%.10g")
    write_table(r.power, csv=sm.output.power_csv, md=sm.output.power_md, float_format="%.6g")
    write_table(r.swaps, csv=sm.output.swaps_csv, md=sm.output.swaps_md, float_format="%.6g")
    save(dstudy_figure(r.reliability, r.curves, sm.wildcards.collection, s["reliability_target"]), sm.output.pdf,
         sm.output.png)
