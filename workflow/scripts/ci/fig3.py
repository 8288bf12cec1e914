"""Fig 3: interval width (and coverage) under adversarial label bias beta and oracle-improved labels zeta."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrix products: one BLAS thread is fastest here

from irrepro.core.io import write_table, write_values  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402
from irrepro.papers.ci.analysis import fig3_n, fig3_runs  # noqa: E402
from irrepro.papers.ci.claims import fig3_claims  # noqa: E402
from irrepro.papers.ci.data import load  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p, c, lab = sm.params, sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, _ = load(sm.input.pairs, sm.input.labels, p.k, p.label_gain)
    n = fig3_n(len(qids), p.fig3_n)
    log.info("%s / %s: %d queries, n = %d, betas %s, zetas %s", c, lab, len(qids), n, p.betas, p.zetas)
    bs, zs, table = fig3_runs(u_true, grades, dists, weights, n=n, betas=p.betas, zetas=p.zetas,
                              repetitions=p.repetitions, seed=p.seed, alpha=p.alpha, n_boot=p.n_boot,
                              batches=p.batches, target=p.target,
                              split=p.split, bootstrap=p.bootstrap, label_gain=p.label_gain)
    write_table(table, csv=sm.output.csv, float_format="%.6g")
    fig = plots.fig3(bs, zs, f"{c}, labels: {lab}, n = {n} ({p.repetitions} repetitions)")
    plots.save(fig, sm.output.pdf, sm.output.png)
    write_values(fig3_claims(bs, zs, c, lab, p.betas, p.zetas, p.alpha), sm.output.values)
    log.info("beta:\n%s\nzeta:\n%s", bs.round(3).to_string(), zs.round(3).to_string())
