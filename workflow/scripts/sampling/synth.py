"""SYNTH: Tables 2–4 of Schnabel et al. (ICTIR 2016)."""
import json
import time

from irrepro.papers.sampling import estimators as sampling

from irrepro.papers.sampling import synth
from irrepro.core.logs import log_to
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
s = json.loads(sm.params.settings)
g = s["synth"]
with log_to(sm.log[0]) as log:
    t0 = time.perf_counter()
    u, ranks = synth.synth(g["users"], g["items"], tuple(g["alpha"]), g["dirichlet"], g["gain"], g["systems"],
                           seed=s["seed"])
    n = int(round(s["budget_per_query"] * g["users"]))
    log.info("SYNTH %d users x %d items generated in %.1f s; budget n = %d", g["users"], g["items"],
             time.perf_counter() - t0, n)
    t0 = time.perf_counter()
    df = sampling.single_system_experiment(u, ranks, n=n, trials=s["trials"], seed=s["seed"] + 1,
                                           base=g["log_base"], alpha=s["alpha"])
    log.info("experiment (%d systems x %d trials x 3 samplers + DeepPool) in %.1f s", len(ranks), s["trials"],
             time.perf_counter() - t0)
    df.round(6).to_csv(sm.output.csv, index=False)
    t2 = df[["system", "true", "shallow", "deep_mean", "deep_sd", "u_hat_mean", "u_hat_sd"]]
    t3 = df[["system", "sd_q_star", "sd_q_p", "sd_q_unif"]]
    t4 = df[["system", "u_hat_mean", "u_hat_sd", "ci_halfwidth", "coverage"]]
    for t, path in ((t2, sm.output.t2), (t3, sm.output.t3), (t4, sm.output.t4)):
        with open(path, "w") as f:
            f.write(to_markdown(t.round(3)))
    values = {}
    for r in df.to_dict(orient="records"):
        sy = r["system"]
        for k in ("true", "shallow", "deep_mean", "deep_sd", "u_hat_mean", "u_hat_sd", "sd_q_star", "sd_q_p",
                  "sd_q_unif", "ci_halfwidth", "coverage"):
            values[f"{k}/{sy}"] = float(r[k])
    true = df.set_index("system")["true"]
    se = df.set_index("system")["u_hat_sd"] / (s["trials"] ** 0.5)
    mean = df.set_index("system")["u_hat_mean"]
    values["claim/u_hat_unbiased"] = bool(((mean - true).abs() <= 3 * se).all())
    values["claim/shallow_pool_biased_low"] = bool((df["shallow"] < 0.5 * df["true"]).all())
    values["claim/q_star_lt_q_p_lt_q_unif"] = bool(((df.sd_q_star < df.sd_q_p) & (df.sd_q_p < df.sd_q_unif)).all())
    values["claim/true_order_as_paper"] = list(true.sort_values(ascending=False).index) == \
        ["OPT", "REV-75", "SHIFT-5", "REV-150", "SHIFT-7"]
    values["claim/coverage_near_95"] = bool(((df.coverage >= 0.88) & (df.coverage <= 1.0)).all())
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
