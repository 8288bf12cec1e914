"""Fig 4: per-query CRC intervals on the test half of one random split, for several oracle weights zeta."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrix products: one BLAS thread is fastest here

from irrepro.core.io import write_table, write_values  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402
from irrepro.papers.ci.analysis import fig4_per_query  # noqa: E402
from irrepro.papers.ci.claims import fig4_claims  # noqa: E402
from irrepro.papers.ci.data import load  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    p, c, lab = sm.params, sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, _ = load(sm.input.pairs, sm.input.labels, p.k, p.label_gain)
    per_query, n_cal = fig4_per_query(qids, grades, dists, weights, u_true, zetas=p.zetas, seed=p.seed,
                                      n_cal=p.n_cal, alpha=p.alpha, label_gain=p.label_gain)
    write_table(per_query, csv=sm.output.csv, float_format="%.6g")
    fig = plots.fig4(per_query, f"{c}, labels: {lab}: per-query CRC, calibrated on {n_cal} queries")
    plots.save(fig, sm.output.pdf, sm.output.png)
    write_values(fig4_claims(per_query, c, lab, p.zetas, p.alpha), sm.output.values)
