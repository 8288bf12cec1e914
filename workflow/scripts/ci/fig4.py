"""Fig 4: per-query CRC intervals on the test half of one random split, for several oracle weights zeta."""
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))
from common import dump, load, n_validation, settings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from irrepro.papers.ci.intervals import covers, crc_per_query, oracle_mix, query_utility  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.papers.ci import plots  # noqa: E402
from irrepro.papers.ci.plots import wilson  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = settings(sm)
    c, lab = sm.wildcards.collection, sm.wildcards.labeler
    qids, grades, dists, weights, u_true, _ = load(sm.input.pairs, sm.input.labels, s["k"])
    N = len(qids)
    rng = np.random.default_rng(np.random.SeedSequence(s["seed"], spawn_key=(4,)))
    perm = rng.permutation(N)
    n_val = n_validation(N)
    val, test = perm[:n_val], perm[n_val:]
    cal = val[: min(s["fig4_n"] or n_val, n_val)]
    rows = []
    for z in s["fig4_zetas"]:
        dz = oracle_mix(dists, grades, z)
        iv, calib = crc_per_query(u_true[cal], dz[cal], dz[test], s["alpha"], weights_cal=weights[cal],
                                  weights_test=weights[test])
        pred = query_utility(dz[test], weights[test])
        for j, q in enumerate(test):
            lo, hi = float(iv.low[j]), float(iv.high[j])
            rows.append({"zeta": z, "query_id": qids[q], "true": float(u_true[q]), "predicted": float(pred[j]),
                         "low": lo, "high": hi, "width": hi - lo,
                         "covered": bool(covers(lo, hi, u_true[q])) if not calib.failed else False,
                         "lam_low": calib.lam_low, "lam_high": calib.lam_high, "failed": bool(calib.failed)})
        log.info("zeta %g: lambda_low %.4f lambda_high %.4f failed %s", z, calib.lam_low, calib.lam_high, calib.failed)
    per_query = pd.DataFrame(rows)
    per_query.to_csv(sm.output.csv, index=False, float_format="%.6g")
    fig = plots.fig4(per_query, f"{c}, labels: {lab}: per-query CRC, calibrated on {len(cal)} queries")
    plots.save(fig, sm.output.pdf, sm.output.png)
    z0, z1 = min(s["fig4_zetas"]), max(s["fig4_zetas"])
    d0 = per_query[per_query.zeta == z0]
    k, n = int(d0.covered.sum()), len(d0)
    widths = per_query.groupby("zeta").width.mean()
    values = {
        f"fig4/{c}/{lab}/per_query_coverage": {"value": bool(wilson(k, n)[1] >= 1 - s["alpha"]),
                                               "note": f"{k}/{n} test queries covered"},
        f"fig4/{c}/{lab}/per_query_widths_shrink_with_oracle": bool(widths.loc[z1] < widths.loc[z0]),
    }
    dump(values, sm.output.values)
