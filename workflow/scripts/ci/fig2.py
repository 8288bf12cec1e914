"""Fig 2: width and coverage of bootstrap, PPI and CRC intervals against n, the number of human-labelled queries."""
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrix products: one BLAS thread is fastest here
sys.path.insert(0, str(Path(__file__).parent))
from common import dump, load, n_validation, settings  # noqa: E402

from irrepro.papers.ci.intervals import ci_experiment  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = settings(sm)
    c, lab = sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, u_pred = load(sm.input.pairs, sm.input.labels, s["k"])
    n_val = n_validation(len(qids))
    ns = [n for n in s["n_values"] if n <= n_val] or [n_val]
    log.info("%s / %s: %d queries (validation half %d), n = %s, %d repetitions", c, lab, len(qids), n_val, ns,
             s["repetitions"])
    runs = ci_experiment(u_true, dists, ns, weights=weights, u_pred=u_pred, repetitions=s["repetitions"],
                         seed=s["seed"], alpha=s["alpha"], n_boot=s["n_boot"], n_batches=s["batches"], target=s["target"])
    runs.to_csv(sm.output.runs, index=False, float_format="%.6g", compression={"method": "gzip", "mtime": 0})  # no clock in the gzip header
    summ = plots.summarise(runs, "n")
    summ.to_csv(sm.output.csv, index=False, float_format="%.6g")
    fig = plots.fig2(summ, f"{c}, labels: {lab} ({len(qids)} queries, {s['repetitions']} runs)", s["alpha"])
    plots.save(fig, sm.output.pdf, sm.output.png)

    def at(method, n):
        return summ[(summ.method == method) & (summ.n == n)].iloc[0]

    lo, hi = min(ns), max(ns)
    target = 1 - s["alpha"]

    def cov(m, n):
        r = at(m, n)
        return f"{m} coverage at n={n}: {r.coverage:.3f} (Wilson {r.coverage_lo:.3f}-{r.coverage_hi:.3f})"

    values = {
        f"fig2/{c}/{lab}/ppi_covers_at_max_n": {"value": bool(at("ppi", hi).coverage_hi >= target), "note": cov("ppi", hi)},
        f"fig2/{c}/{lab}/crc_covers_at_max_n": {"value": bool(at("crc", hi).coverage_hi >= target), "note": cov("crc", hi)},
        f"fig2/{c}/{lab}/bootstrap_undercovers_at_min_n": {"value": bool(at("bootstrap", lo).coverage < target),
                                                           "note": cov("bootstrap", lo)},
        f"fig2/{c}/{lab}/crc_narrower_than_bootstrap_at_max_n": {
            "value": bool(at("crc", hi).width < at("bootstrap", hi).width),
            "note": f"mean width at n={hi}: CRC {at('crc', hi).width:.2f}, bootstrap {at('bootstrap', hi).width:.2f}, "
                    f"PPI {at('ppi', hi).width:.2f}"},
    }
    dump(values, sm.output.values)
    log.info("\n%s", summ.round(3).to_string())
