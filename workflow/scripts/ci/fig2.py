"""Fig 2: width and coverage of bootstrap, PPI and CRC intervals against n, the number of human-labelled queries."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrix products: one BLAS thread is fastest here

from irrepro.core.io import write_table, write_values  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402
from irrepro.papers.ci.analysis import fig2_runs, write_runs  # noqa: E402
from irrepro.papers.ci.claims import fig2_claims  # noqa: E402
from irrepro.papers.ci.data import load, n_validation  # noqa: E402
from irrepro.papers.ci.summary import summarise  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    p, c, lab = sm.params, sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, u_pred = load(sm.input.pairs, sm.input.labels, p.k, p.label_gain)
    ns, runs = fig2_runs(u_true, dists, weights, u_pred, n_values=p.n_values, repetitions=p.repetitions,
                         seed=p.seed, alpha=p.alpha, n_boot=p.n_boot, batches=p.batches, target=p.target,
                         split=p.split, bootstrap=p.bootstrap, label_gain=p.label_gain)
    write_runs(runs, sm.output.runs)
    summ = summarise(runs, "n")
    write_table(summ, csv=sm.output.csv, float_format="%.6g")
    fig = plots.fig2(summ, f"{c}, labels: {lab} ({len(qids)} queries, {p.repetitions} repetitions)", p.alpha)
    plots.save(fig, sm.output.pdf, sm.output.png)
    write_values(fig2_claims(summ, c, lab, ns, p.alpha, n_validation(len(qids))), sm.output.values)
    log.info("\n%s", summ.round(3).to_string())
