"""Figs 2-4 of the VB-Score paper on real runs."""
import pandas as pd

from irrepro.core.logs import log_to
from irrepro.papers.vb import plots as pv

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    summary = pd.read_csv(sm.input.summary)
    forest = pd.read_csv(sm.input.forest)
    alphas = [float(a) for a in sm.params.alphas]
    c = sm.wildcards.collection
    pv.save(pv.fig_across_k(summary, sm.params.fig2_ks, alphas, collection=c), sm.output.fig2_pdf, sm.output.fig2_png)
    pv.save(pv.fig_forest(forest, "VB", float(sm.params.forest_alpha), level=sm.params.ci_level, collection=c),
            sm.output.fig3_pdf, sm.output.fig3_png)
    pv.save(pv.fig_forest(forest, "ES", min(alphas), level=sm.params.ci_level, collection=c),
            sm.output.fig4_pdf, sm.output.fig4_png)
