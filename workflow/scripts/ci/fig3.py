"""Fig 3: interval width (and coverage) under adversarial label bias beta and oracle-improved labels zeta."""
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))
from common import dump, load, n_validation, settings  # noqa: E402

import pandas as pd  # noqa: E402

from irrepro.papers.ci.intervals import adversarial_bias, ci_experiment, oracle_mix  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = settings(sm)
    c, lab = sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, _ = load(sm.input.pairs, sm.input.labels, s["k"])
    n = min(s["fig3_n"] or n_validation(len(qids)), n_validation(len(qids)))
    log.info("%s / %s: %d queries, n = %d, betas %s, zetas %s", c, lab, len(qids), n, s["betas"], s["zetas"])
    frames = []
    for kind, xs, change in (("beta", s["betas"], lambda x: adversarial_bias(dists, x)),
                             ("zeta", s["zetas"], lambda x: oracle_mix(dists, grades, x))):
        for x in xs:
            # u_pred follows the changed labels (PPI's predictions change with them)
            r = ci_experiment(u_true, change(x), [n], weights=weights, repetitions=s["repetitions"], seed=s["seed"],
                              alpha=s["alpha"], n_boot=s["n_boot"], n_batches=s["batches"], target=s["target"])
            frames.append(r.assign(kind=kind, x=x))
            log.info("%s = %g done", kind, x)
    runs = pd.concat(frames, ignore_index=True)
    bs = plots.summarise(runs[runs.kind == "beta"].rename(columns={"x": "beta"}), "beta")
    zs = plots.summarise(runs[runs.kind == "zeta"].rename(columns={"x": "zeta"}), "zeta")
    pd.concat([bs.assign(kind="beta").rename(columns={"beta": "x"}), zs.assign(kind="zeta").rename(columns={"zeta": "x"})]
              ).to_csv(sm.output.csv, index=False, float_format="%.6g")
    fig = plots.fig3(bs, zs, f"{c}, labels: {lab}, n = {n} ({s['repetitions']} runs)")
    plots.save(fig, sm.output.pdf, sm.output.png)

    def w(summ, col, method, x):
        d = summ[(summ.method == method) & (summ[col].sub(x).abs() < 1e-9)]
        return float(d.width.iloc[0]) if len(d) else float("nan")

    target = 1 - s["alpha"]
    covers = bs[bs.method.isin(["ppi", "crc"])]
    b0, b1, z0, z1 = min(s["betas"]), max(s["betas"]), min(s["zetas"]), max(s["zetas"])
    worst = covers.loc[covers.coverage_hi.idxmin()] if len(covers) else None
    values = {
        f"fig3/{c}/{lab}/coverage_kept_under_bias": {
            "value": bool((covers.coverage_hi >= target).all()),
            "note": "" if worst is None else f"lowest: {worst.method} at beta={worst.beta:g}, coverage {worst.coverage:.3f} "
                                             f"(Wilson up to {worst.coverage_hi:.3f})"},
        f"fig3/{c}/{lab}/crc_wider_under_full_bias": {
            "value": bool(w(bs, "beta", "crc", b1) > w(bs, "beta", "crc", b0)),
            "note": f"CRC width {w(bs, 'beta', 'crc', b0):.2f} at beta={b0:g}, {w(bs, 'beta', 'crc', b1):.2f} at beta={b1:g}"},
        f"fig3/{c}/{lab}/crc_width_vanishes_with_oracle": {
            "value": bool(w(zs, "zeta", "crc", z1) < 0.05 * w(zs, "zeta", "crc", z0)),
            "note": f"CRC width {w(zs, 'zeta', 'crc', z0):.2f} at zeta={z0:g}, {w(zs, 'zeta', 'crc', z1):.3f} at zeta={z1:g}"},
        f"fig3/{c}/{lab}/ppi_narrows_with_oracle": {
            "value": bool(w(zs, "zeta", "ppi", z1) < w(zs, "zeta", "ppi", z0)),
            "note": f"PPI width {w(zs, 'zeta', 'ppi', z0):.2f} at zeta={z0:g}, {w(zs, 'zeta', 'ppi', z1):.2f} at zeta={z1:g}"},
    }
    dump(values, sm.output.values)
    log.info("beta:\n%s\nzeta:\n%s", bs.round(3).to_string(), zs.round(3).to_string())
